package store

import (
	"context"
	"iter"

	"github.com/jackc/pgx/v5"
)

// SimAnswer is the answer the simulated runtime gives to one item of a
// run: decided by the server from the item's reference, so the agent that
// streams it never reads the reference.
type SimAnswer struct {
	Idx    int
	Answer string
}

// CopySimAnswers writes a run's simulated answers with COPY, in the
// transaction that creates the run. It returns how many were written.
func (q *Queries) CopySimAnswers(ctx context.Context, runID int64, answers iter.Seq[SimAnswer]) (int64, error) {
	n, err := copySeq(ctx, q, "sim_answers", []string{"run_id", "idx", "answer"}, answers, func(a SimAnswer, row []any) {
		row[0], row[1], row[2] = runID, a.Idx, a.Answer
	})
	return n, mapErr(err, "copy sim answers")
}

// SimAnswers returns a run's simulated answers by item index; empty when
// the server wrote none (the runtime then streams filler). An agent role
// sees only the answers of the runs it holds.
func (q *Queries) SimAnswers(ctx context.Context, runID int64) (map[int]string, error) {
	rows, _ := q.db.Query(ctx, `SELECT idx, answer FROM sim_answers WHERE run_id = @run ORDER BY idx`,
		pgx.NamedArgs{"run": runID})
	out := map[int]string{}
	var idx int
	var answer string
	_, err := pgx.ForEachRow(rows, []any{&idx, &answer}, func() error {
		out[idx] = answer
		return nil
	})
	return out, mapErr(err, "sim answers")
}

// ItemReferences calls fn with each item's index and reference, in index
// order, paging by key so memory does not grow with the dataset. The
// server reads them to decide simulated answers; agents cannot.
func (q *Queries) ItemReferences(ctx context.Context, datasetID int64, limit int, fn func(idx int, ref []byte) error) error {
	after := -1
	for {
		rows, _ := q.db.Query(ctx, `SELECT idx, reference FROM dataset_items
			WHERE dataset_id = @id AND idx > @after AND (@limit <= 0 OR idx < @limit) ORDER BY idx LIMIT 1000`,
			pgx.NamedArgs{"id": datasetID, "after": after, "limit": limit})
		var idx int
		var ref []byte
		n := 0
		_, err := pgx.ForEachRow(rows, []any{&idx, &ref}, func() error {
			n++
			after = idx
			return fn(idx, ref)
		})
		if err != nil {
			return mapErr(err, "item references")
		}
		if n < 1000 {
			return nil
		}
	}
}
