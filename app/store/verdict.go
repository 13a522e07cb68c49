package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

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
		WHERE benchmark_id = @id AND state = 'completed' AND scored_at IS NULL`, pgx.NamedArgs{"id": id})
	var run int64
	var at time.Time
	_, err = pgx.ForEachRow(rows, []any{&run, &at}, func() error {
		s.Pending[run] = at
		return nil
	})
	return s, mapErr(err, "benchmark scoring")
}

// ItemScore is one scored item of a run.
type ItemScore struct {
	Idx   int
	Score float64
}

// RunItemScores returns the scored items of each run, in item order, for
// paired tests of their quality (McNemar, paired bootstrap). Runs with no
// scored item are absent.
func (q *Queries) RunItemScores(ctx context.Context, runIDs []int64) (map[int64][]ItemScore, error) {
	rows, _ := q.db.Query(ctx, `SELECT run_id, idx, score FROM results
		WHERE run_id = ANY(@ids) AND score IS NOT NULL ORDER BY run_id, idx`, pgx.NamedArgs{"ids": runIDs})
	out := map[int64][]ItemScore{}
	var id int64
	var it ItemScore
	_, err := pgx.ForEachRow(rows, []any{&id, &it.Idx, &it.Score}, func() error {
		out[id] = append(out[id], it)
		return nil
	})
	return out, mapErr(err, "run item scores")
}
