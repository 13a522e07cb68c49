package store

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/jackc/pgx/v5"
)

// RunPrompt is one item's request as a run sends it (its few-shot prompt).
type RunPrompt struct {
	Idx     int
	Request json.RawMessage
}

// CopyRunPrompts writes a run's own requests with COPY, in the
// transaction that creates the run; the agent sends them instead of the
// dataset's (PendingItems).
func (q *Queries) CopyRunPrompts(ctx context.Context, runID int64, prompts iter.Seq[RunPrompt]) (int64, error) {
	n, err := copySeq(ctx, q, "run_prompts", []string{"run_id", "idx", "request"}, prompts, func(p RunPrompt, row []any) {
		row[0], row[1], row[2] = runID, p.Idx, string(p.Request)
	})
	return n, mapErr(err, "copy run prompts")
}

// ItemShots calls fn with each item's prompt pieces (dataset.Shot as
// JSON), in item order; for an item that keeps none, its request and
// reference instead, which GSM8K's and prompt/reference lines' pieces
// are read from (dataset.ShotOf).
func (q *Queries) ItemShots(ctx context.Context, datasetID int64, fn func(idx int, shot, request, reference []byte) error) error {
	rows, _ := q.db.Query(ctx, `SELECT idx, shot, CASE WHEN shot IS NULL THEN request END, CASE WHEN shot IS NULL THEN reference END
		FROM dataset_items WHERE dataset_id = @ds ORDER BY idx`, pgx.NamedArgs{"ds": datasetID})
	var idx int
	var shot, request, reference []byte
	_, err := pgx.ForEachRow(rows, []any{&idx, &shot, &request, &reference}, func() error { return fn(idx, shot, request, reference) })
	return mapErr(err, "item shots")
}
