package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// PairedScore is two runs' scores compared item by item over the items
// both scored: how many, and the mean and sample standard deviation of A's
// score minus B's.
type PairedScore struct {
	A, B int64
	N    int
	Mean float64
	SD   float64
}

// PairedScores compares every two of the runs (of one dataset) item by
// item, for a paired test of their quality. Pairs with no item scored by
// both are left out; A is the lower run id.
func (q *Queries) PairedScores(ctx context.Context, runIDs []int64) ([]PairedScore, error) {
	rows, _ := q.db.Query(ctx, `SELECT a.run_id, b.run_id, count(*), avg(a.score - b.score), coalesce(stddev_samp(a.score - b.score), 0)
		FROM results a JOIN results b ON b.idx = a.idx AND b.run_id = ANY(@ids) AND b.run_id > a.run_id
		WHERE a.run_id = ANY(@ids) AND a.score IS NOT NULL AND b.score IS NOT NULL
		GROUP BY a.run_id, b.run_id ORDER BY a.run_id, b.run_id`, pgx.NamedArgs{"ids": runIDs})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (PairedScore, error) {
		var p PairedScore
		err := row.Scan(&p.A, &p.B, &p.N, &p.Mean, &p.SD)
		return p, err
	})
	return out, mapErr(err, "paired scores")
}

// QuantileInterval is a run's p95 end-to-end latency (ms) over its
// successful requests with a distribution-free 95 % interval: the
// quantiles at 0.95 ± 1.96·√(0.95·0.05/n), the order statistics a
// binomial count of values below the true p95 lands between 95 % of the
// time.
type QuantileInterval struct {
	N           int
	P95, Lo, Hi float64
}

// E2EP95Intervals returns the p95 E2E interval of each run that has a
// successful request, by run id.
func (q *Queries) E2EP95Intervals(ctx context.Context, runIDs []int64) (map[int64]QuantileInterval, error) {
	rows, _ := q.db.Query(ctx, `WITH n AS (SELECT run_id, count(*) AS n FROM results
			WHERE run_id = ANY(@ids) AND status = 'ok' AND e2e_ms IS NOT NULL GROUP BY run_id)
		SELECT r.run_id, n.n::int, percentile_cont(ARRAY[greatest(0, 0.95 - 1.96 * sqrt(0.0475 / n.n)), 0.95,
				least(1, 0.95 + 1.96 * sqrt(0.0475 / n.n))]) WITHIN GROUP (ORDER BY r.e2e_ms)
		FROM results r JOIN n ON n.run_id = r.run_id
		WHERE r.run_id = ANY(@ids) AND r.status = 'ok' AND r.e2e_ms IS NOT NULL
		GROUP BY r.run_id, n.n`, pgx.NamedArgs{"ids": runIDs})
	out := map[int64]QuantileInterval{}
	var id int64
	var n int
	var qs []float64
	_, err := pgx.ForEachRow(rows, []any{&id, &n, &qs}, func() error {
		if len(qs) == 3 {
			out[id] = QuantileInterval{N: n, Lo: qs[0], P95: qs[1], Hi: qs[2]}
		}
		return nil
	})
	return out, mapErr(err, "e2e p95 intervals")
}

// Scoring is how a benchmark's runs are scored: the scorer its manifest
// names, else its dataset's default ("" when neither: nothing is
// scored), and its succeeded runs not scored yet with when they finished.
type Scoring struct {
	Scorer  string
	Pending map[int64]time.Time
}

// BenchmarkScoring reads how benchmark id's runs are scored.
func (q *Queries) BenchmarkScoring(ctx context.Context, id int64) (Scoring, error) {
	s := Scoring{Pending: map[int64]time.Time{}}
	err := q.db.QueryRow(ctx, `SELECT coalesce(nullif(b.manifest->>'scorer', ''), d.default_scorer)
		FROM benchmarks b JOIN datasets d ON d.id = b.dataset_id WHERE b.id = @id`, pgx.NamedArgs{"id": id}).Scan(&s.Scorer)
	if err != nil {
		return s, mapErr(err, "benchmark scoring")
	}
	rows, _ := q.db.Query(ctx, `SELECT id, coalesce(finished_at, now()) FROM runs
		WHERE benchmark_id = @id AND state = 'succeeded' AND scored_at IS NULL`, pgx.NamedArgs{"id": id})
	var run int64
	var at time.Time
	_, err = pgx.ForEachRow(rows, []any{&run, &at}, func() error {
		s.Pending[run] = at
		return nil
	})
	return s, mapErr(err, "benchmark scoring")
}
