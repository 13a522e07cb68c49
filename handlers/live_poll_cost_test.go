package handlers_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/handlers"
)

// roundTrips counts the statements and batches the server sends
// PostgreSQL: each is one round trip.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// countedStore is the test database's store over a pool that counts its
// round trips.
func countedStore(t *testing.T, st *store.Store, count *roundTrips) *store.Store {
	t.Helper()
	cfg := st.Pool().Config()
	cfg.ConnConfig.Tracer = count
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return store.New(pool)
}

// A poll of the live runs table that renders (nothing shared yet) reads
// the session and the benchmark with its runs: two round trips. Its
// estimate, while every run runs with its agent's ETA, comes from those
// runs; it was two more statements (the benchmark's status list and the
// estimate's agents and paces) at every render, which halved the runs
// tables 100 browsers got on 20 running benchmarks
// (docs/self-benchmarks.md#live-pages).
func TestLiveRunsTablePollReadsTheDatabaseTwice(t *testing.T) {
	t.Parallel()
	var count roundTrips
	var counted *store.Store
	e := newEnv(t, func(d *handlers.Deps) {
		d.LiveFragmentTTL = 0 // every poll renders
		counted = countedStore(t, d.Store.(*store.Store), &count)
		d.Store = counted
	})
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	b, runID := runWithResults(t, e, tok, 10, func(i int) string { return "x" })
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET state = 'running', finished_at = NULL, completed = 4, eta_seconds = 90
		WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	ada := e.client()
	ada.signIn("ada@example.com", "correct horse")
	runsURL := "/benchmarks/" + b + "/runs"
	ada.get(runsURL) // the session's first read marks it seen

	count.n.Store(0)
	res := ada.get(runsURL)
	if got := count.n.Load(); got != 2 {
		t.Errorf("a runs table poll took %d round trips to PostgreSQL, want 2 (the session; the benchmark and its runs)", got)
	}
	if res.status != 200 || res.text(`[data-testid="benchmark-eta"]`) != "1m30s" || res.text(`[data-testid="benchmark-progress"]`) != "40 %" {
		t.Fatalf("runs table: %d, ETA %q, progress %q", res.status, res.text(`[data-testid="benchmark-eta"]`), res.text(`[data-testid="benchmark-progress"]`))
	}
	// The estimate is the API's.
	status, err := counted.BenchmarkStatusByID(ctx, store.Viewer{UserID: 1, Admin: true}, mustID(t, b), 0)
	if err != nil || status.Estimate.ETASeconds == nil || *status.Estimate.ETASeconds != 90 || status.Estimate.Progress != 40 {
		t.Fatalf("the API's estimate: %+v %v", status.Estimate, err)
	}
}

func mustID(t *testing.T, s string) int64 {
	t.Helper()
	var id int64
	if _, err := fmt.Sscan(s, &id); err != nil {
		t.Fatal(err)
	}
	return id
}
