package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// QuantileInterval is a run's p95 latency (ms) over its successful
// requests with a distribution-free 95 % interval: the quantiles at
// 0.95 ± 1.96·√(0.95·0.05/n), the order statistics a binomial count of
// values below the true p95 lands between 95 % of the time (kept in
// run_stats by ComputeRunStats).
type QuantileInterval struct {
	N           int
	P95, Lo, Hi float64
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
