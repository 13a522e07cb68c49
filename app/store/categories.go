package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// CategoryScores is the scores of a run's items in one category of its
// dataset (MMLU's subject, HellaSwag's activity label, …).
type CategoryScores struct {
	Category string
	Scores   []float64
}

// RunCategoryScores returns a run's scored items grouped by their
// dataset item's category, in category order; nil when no item of the
// run's dataset has a category. Items without one are grouped under "".
func (q *Queries) RunCategoryScores(ctx context.Context, runID int64) ([]CategoryScores, error) {
	rows, _ := q.db.Query(ctx, `SELECT coalesce(di.category, ''), r.score
		FROM results r
		JOIN runs ru ON ru.id = r.run_id
		JOIN benchmarks b ON b.id = ru.benchmark_id
		JOIN dataset_items di ON di.dataset_id = b.dataset_id AND di.idx = r.idx
		WHERE r.run_id = @run AND r.score IS NOT NULL
			AND EXISTS (SELECT 1 FROM dataset_items c WHERE c.dataset_id = b.dataset_id AND c.category IS NOT NULL)
		ORDER BY 1, r.idx`, pgx.NamedArgs{"run": runID})
	var out []CategoryScores
	var cat string
	var s float64
	_, err := pgx.ForEachRow(rows, []any{&cat, &s}, func() error {
		if len(out) == 0 || out[len(out)-1].Category != cat {
			out = append(out, CategoryScores{Category: cat})
		}
		out[len(out)-1].Scores = append(out[len(out)-1].Scores, s)
		return nil
	})
	return out, mapErr(err, "category scores")
}
