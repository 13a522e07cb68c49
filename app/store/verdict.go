package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// QuantileInterval is a run's p95 latency (ms) over its successful
// requests with a distribution-free interval of at least 95 % coverage:
// the exact binomial order statistics (stats.QuantileInterval), Coverage
// their exact coverage (0 for intervals kept before, the normal
// approximation's, read as 95 %). Kept in run_stats by conclude.ComputeRunStats;
// nil when the run had too few requests for one.
type QuantileInterval struct {
	N           int
	P95, Lo, Hi float64
	Coverage    float64
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
