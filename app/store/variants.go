package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// VariantRun is a scored run on a dataset with what makes it a variant of
// its model family: the model, its direct base and whether it is a LoRA
// adapter (the registry's base_model_id and adapter), the family's root
// (the model reached by following base models up), and the k-shot prompts
// its benchmark used.
type VariantRun struct {
	RunID     int64
	ModelID   int64
	Model     string
	BaseModel string // "" for a model without a base
	Adapter   bool
	FamilyID  int64
	Family    string
	// Shots is the run's few-shot k (its benchmark's fewshot setting) or,
	// without one, the dataset's k-shot prompts from its upload.
	Shots    int
	Runtime  string
	Hardware string
	Mode     string
}

// maxBaseDepth bounds the walk up a model's base models (a cycle written
// into the registry ends there rather than looping).
const maxBaseDepth = 16

// DatasetVariantRuns returns the viewer's readable completed runs on a
// dataset that have a quality, newest first, at most limit, each with its
// model family and shots.
func (q *Queries) DatasetVariantRuns(ctx context.Context, v Viewer, datasetID int64, limit int) ([]VariantRun, error) {
	rows, _ := q.db.Query(ctx, `WITH RECURSIVE fam AS (
			SELECT id, id AS root, 0 AS depth FROM models WHERE base_model_id IS NULL
			UNION ALL
			SELECT m.id, f.root, f.depth + 1 FROM models m JOIN fam f ON m.base_model_id = f.id WHERE f.depth < @depth
		)
		SELECT r.id, m.id, m.name, coalesce(bm.name, ''), m.adapter, f.root, rm.name,
			CASE WHEN r.fewshot_k > 0 THEN r.fewshot_k ELSE d.shots END,
			r.runtime, r.hardware_profile, r.mode
		FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id JOIN datasets d ON d.id = b.dataset_id
			JOIN models m ON m.id = r.model_id LEFT JOIN models bm ON bm.id = m.base_model_id
			JOIN fam f ON f.id = m.id JOIN models rm ON rm.id = f.root
		WHERE b.dataset_id = @ds AND r.state = 'completed' AND`+benchmarkReadable+`
			AND EXISTS (SELECT 1 FROM run_qualities rq WHERE rq.run_id = r.id)
		ORDER BY r.id DESC LIMIT @limit`,
		pgx.NamedArgs{"ds": datasetID, "viewer": v.UserID, "admin": v.Admin, "limit": max(limit, 1), "depth": maxBaseDepth})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (VariantRun, error) {
		var r VariantRun
		err := row.Scan(&r.RunID, &r.ModelID, &r.Model, &r.BaseModel, &r.Adapter, &r.FamilyID, &r.Family, &r.Shots,
			&r.Runtime, &r.Hardware, &r.Mode)
		return r, err
	})
	return out, mapErr(err, "dataset variant runs")
}

// ItemScores is a run's item scores under one scorer identity: the item
// indices, ascending, and their scores (the first answer of each).
type ItemScores struct {
	Idx    []int32
	Scores []float64
}

// RunItemScores returns each run's item scores under scorer identity key,
// as kept with its quality (run_qualities); a run without a quality under
// key is absent.
func (q *Queries) RunItemScores(ctx context.Context, key string, runIDs []int64) (map[int64]ItemScores, error) {
	rows, _ := q.db.Query(ctx, `SELECT run_id, idx, scores FROM run_qualities WHERE scorer_key = @key AND run_id = ANY(@ids)`,
		pgx.NamedArgs{"key": key, "ids": runIDs})
	out := map[int64]ItemScores{}
	var id int64
	var v ItemScores
	_, err := pgx.ForEachRow(rows, []any{&id, &v.Idx, &v.Scores}, func() error {
		out[id] = v
		v = ItemScores{}
		return nil
	})
	return out, mapErr(err, "quality item scores")
}

// DatasetItemCategories returns the category of each of a dataset's items
// that has one, by index.
func (q *Queries) DatasetItemCategories(ctx context.Context, datasetID int64) (map[int32]string, error) {
	rows, _ := q.db.Query(ctx, `SELECT idx, category FROM dataset_items WHERE dataset_id = @ds AND category IS NOT NULL`,
		pgx.NamedArgs{"ds": datasetID})
	out := map[int32]string{}
	var idx int32
	var cat string
	_, err := pgx.ForEachRow(rows, []any{&idx, &cat}, func() error {
		out[idx] = cat
		return nil
	})
	return out, mapErr(err, "item categories")
}
