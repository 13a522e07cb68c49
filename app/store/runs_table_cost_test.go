package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// batchRecorder keeps the statements (as sent, with their arguments) of
// the batches a pool sends.
type batchRecorder struct {
	mu   sync.Mutex
	sql  []string
	args [][]any
}

func (r *batchRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (r *batchRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *batchRecorder) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}
func (r *batchRecorder) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sql, r.args = append(r.sql, d.SQL), append(r.args, d.Args)
}
func (r *batchRecorder) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// A runs table's read costs what its own runs cost, not what its owner's
// other benchmarks do: the statement that reads a benchmark's runs (every
// poll of its runs table) touches no more buffers for an owner with 19
// other benchmarks of two runs each (the live-pages bench's owner; tables
// this small autovacuum never analyses) than for one with none. Which of
// a run's regressions its readers may see was asked in an EXISTS that
// PostgreSQL made a semi-join over every run of every benchmark of the
// owner, for each run, with no regression at all: 131 buffers against 24
// (docs/self-benchmarks.md#live-pages).
func TestRunsTableReadDoesNotGrowWithTheOwnersBenchmarks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testkit.Store(t)
	w := testkit.NewWorld(ctx, t, st, nil)
	var rec batchRecorder
	cfg := st.Pool().Config()
	cfg.ConnConfig.Tracer = &rec
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	traced := store.New(pool)

	// Buffers the runs statement of BenchmarkByID touches, as sent.
	hits := func() float64 {
		t.Helper()
		rec.mu.Lock()
		rec.sql, rec.args = nil, nil
		rec.mu.Unlock()
		if _, err := traced.BenchmarkByID(ctx, w.Viewer, w.Benchmark); err != nil {
			t.Fatal(err)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for i, sql := range rec.sql {
			if !strings.Contains(sql, "FROM runs r") {
				continue
			}
			var plan []struct {
				Plan struct {
					Hits float64 `json:"Shared Hit Blocks"`
				} `json:"Plan"`
			}
			var out []byte
			if err := st.Pool().QueryRow(ctx, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) `+sql, rec.args[i]...).Scan(&out); err != nil {
				t.Fatalf("explain the runs statement: %v", err)
			}
			if err := json.Unmarshal(out, &plan); err != nil || len(plan) != 1 {
				t.Fatalf("explain's answer %s: %v", out, err)
			}
			return plan[0].Plan.Hits
		}
		t.Fatalf("BenchmarkByID sent no statement reading runs: %q", rec.sql)
		return 0
	}
	alone := hits()
	// 19 more benchmarks of the same owner, with two runs each.
	if _, err := st.Pool().Exec(ctx, `INSERT INTO benchmarks OVERRIDING SYSTEM VALUE
		SELECT (jsonb_populate_record(b, jsonb_build_object('id', nextval(pg_get_serial_sequence('benchmarks', 'id')), 'name', b.name || ' ' || i))).*
		FROM benchmarks b, generate_series(1, 19) i WHERE b.id = $1`, w.Benchmark); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `INSERT INTO runs OVERRIDING SYSTEM VALUE
		SELECT (jsonb_populate_record(r, jsonb_build_object('id', nextval(pg_get_serial_sequence('runs', 'id')), 'benchmark_id', b.id,
			'river_job_id', NULL, 'fleet_run_id', NULL))).*
		FROM runs r, benchmarks b, generate_series(1, 2) WHERE r.id = $1 AND b.owner_id = $2 AND b.id <> $3`, w.Run, w.Owner.ID, w.Benchmark); err != nil {
		t.Fatal(err)
	}
	crowded := hits()
	if crowded > 2*alone+20 {
		t.Errorf("reading a benchmark's runs touched %.0f buffers beside 19 other benchmarks of its owner, %.0f without: it grows with them", crowded, alone)
	}
	t.Logf("buffers touched reading a benchmark's runs: %.0f alone, %.0f beside 19 of its owner's benchmarks", alone, crowded)
}
