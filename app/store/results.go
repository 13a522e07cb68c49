package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// ResultRow is one stored result as the viewer and exports read it.
type ResultRow struct {
	RunID            int64
	Idx              int
	CustomID         string
	Status           string
	Output           string
	FinishReason     string
	PromptTokens     int
	CompletionTokens int
	TokensEstimated  bool
	SentAt           time.Time
	TTFTms           *float64
	E2Ems            *float64
	TPOTms           *float64
	ITLMeanms        *float64
	HTTPStatus       *int
	RequestID        string
	ErrorClass       string
	Error            string
	Phase            string
	Score            *float64
	// Endpoint is the item's API path (/v1/chat/completions or
	// /v1/completions), which decides the shape of a JSONL export.
	Endpoint string
}

const resultColumns = `r.run_id, r.idx, r.custom_id, r.status, r.output, r.finish_reason, r.prompt_tokens, r.completion_tokens,
	r.tokens_estimated, r.sent_at, r.ttft_ms, r.e2e_ms, r.tpot_ms, r.itl_mean_ms, r.http_status, r.request_id, r.error_class,
	r.error, r.phase, r.score, coalesce(i.request->>'url', '')`

const resultFrom = ` FROM results r JOIN runs ru ON ru.id = r.run_id JOIN benchmarks b ON b.id = ru.benchmark_id
	LEFT JOIN dataset_items i ON i.dataset_id = b.dataset_id AND i.idx = r.idx `

func scanResult(row pgx.CollectableRow) (ResultRow, error) {
	var r ResultRow
	err := row.Scan(&r.RunID, &r.Idx, &r.CustomID, &r.Status, &r.Output, &r.FinishReason, &r.PromptTokens, &r.CompletionTokens,
		&r.TokensEstimated, &r.SentAt, &r.TTFTms, &r.E2Ems, &r.TPOTms, &r.ITLMeanms, &r.HTTPStatus, &r.RequestID, &r.ErrorClass,
		&r.Error, &r.Phase, &r.Score, &r.Endpoint)
	return r, err
}

// StreamResults calls fn for every result of the given runs, in run and
// item order, reading them row by row (constant memory whatever the size).
func (q *Queries) StreamResults(ctx context.Context, runIDs []int64, fn func(ResultRow) error) error {
	rows, err := q.db.Query(ctx, `SELECT `+resultColumns+resultFrom+`WHERE r.run_id = ANY(@runs) ORDER BY r.run_id, r.idx`,
		pgx.NamedArgs{"runs": runIDs})
	if err != nil {
		return mapErr(err, "stream results")
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanResult(rows)
		if err != nil {
			return mapErr(err, "stream results")
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return mapErr(rows.Err(), "stream results")
}

// RunSummaryJSON returns the stored summary and GPU summary of a run (nil
// until it finished).
func (q *Queries) RunSummaryJSON(ctx context.Context, runID int64) (summary, gpu json.RawMessage, err error) {
	err = q.db.QueryRow(ctx, `SELECT summary, gpu_summary FROM runs WHERE id = @id`, pgx.NamedArgs{"id": runID}).Scan(&summary, &gpu)
	return summary, gpu, mapErr(err, "run summary")
}
