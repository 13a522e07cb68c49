package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// NewImport is results made elsewhere, to store as a run on a dataset.
type NewImport struct {
	DatasetID int64
	Name      string
	Model     string // a registry name
	Scorer    string
}

// ImportedRun is what an import matched.
type ImportedRun struct {
	BenchmarkID int64 `json:"benchmark_id"`
	RunID       int64 `json:"run_id"`
	Matched     int   `json:"matched"`
	Unmatched   int   `json:"unmatched"`
	Missing     int   `json:"missing"`
	// UnmatchedIDs are the first custom_ids that matched no item.
	UnmatchedIDs []string `json:"unmatched_ids"`
}

// ErrImportModel is returned when the import names a model that is not
// in the registry.
var ErrImportModel = fmt.Errorf("no such model in the registry")

// ImportRun stores results made outside Ruckus as a finished run of a new
// benchmark on the dataset (runtime and hardware "imported", no timings),
// matching lines to items by custom_id, in one transaction; queue runs in
// the same transaction (the scoring job).
func (s *Store) ImportRun(ctx context.Context, v Viewer, in NewImport, recs []ResultRecord, queue func(tx pgx.Tx, runID int64) error) (ImportedRun, error) {
	var out ImportedRun
	err := s.InTxWith(ctx, func(tx pgx.Tx, q *Queries) error {
		var items int
		err := tx.QueryRow(ctx, `SELECT item_count FROM datasets WHERE id = @ds AND deleted_at IS NULL
			AND (owner_id = @viewer OR visibility = 'shared' OR @admin)`,
			pgx.NamedArgs{"ds": in.DatasetID, "viewer": v.UserID, "admin": v.Admin}).Scan(&items)
		if err != nil {
			return mapErr(err, "import: dataset")
		}
		var modelID int64
		if err := tx.QueryRow(ctx, `SELECT id FROM models WHERE name = @name`, pgx.NamedArgs{"name": in.Model}).Scan(&modelID); err != nil {
			if err == pgx.ErrNoRows {
				return fmt.Errorf("model %q: %w", in.Model, ErrImportModel)
			}
			return mapErr(err, "import: model")
		}
		if _, err := tx.Exec(ctx, `INSERT INTO hardware_profiles (slug) VALUES ('imported') ON CONFLICT (slug) DO NOTHING`); err != nil {
			return mapErr(err, "import: hardware profile")
		}
		manifest, _ := json.Marshal(map[string]any{"name": in.Name, "dataset": in.DatasetID, "imported": true, "model": in.Model, "scorer": in.Scorer})
		if out.BenchmarkID, err = q.CreateBenchmark(ctx, v.UserID, in.Name, in.DatasetID, manifest); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO runs (benchmark_id, model_id, runtime, hardware_profile, state, mode, total, started_at, finished_at, stopped_by)
			VALUES (@b, @m, 'imported', 'imported', 'succeeded', 'imported', @total, now(), now(), 'imported') RETURNING id`,
			pgx.NamedArgs{"b": out.BenchmarkID, "m": modelID, "total": items}).Scan(&out.RunID); err != nil {
			return mapErr(err, "import: run")
		}
		idxOf := make(map[string]int, items)
		rows, _ := tx.Query(ctx, `SELECT idx, custom_id FROM dataset_items WHERE dataset_id = @ds`, pgx.NamedArgs{"ds": in.DatasetID})
		var idx int
		var id string
		if _, err := pgx.ForEachRow(rows, []any{&idx, &id}, func() error { idxOf[id] = idx; return nil }); err != nil {
			return mapErr(err, "import: items")
		}
		matched := make([]ResultRecord, 0, len(recs))
		now := time.Now()
		for _, r := range recs {
			i, ok := idxOf[r.CustomID]
			if !ok {
				out.Unmatched++
				if len(out.UnmatchedIDs) < 20 {
					out.UnmatchedIDs = append(out.UnmatchedIDs, r.CustomID)
				}
				continue
			}
			r.Idx, r.SentAt = i, now
			matched = append(matched, r)
		}
		out.Matched, out.Missing = len(matched), items-len(matched)
		n := len(matched)
		idxs, promptT, complT, httpS := make([]int32, n), make([]int32, n), make([]int32, n), make([]*int32, n)
		cid, status, output, finish, reqID, errClass, errMsg := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		est := make([]bool, n)
		for k, r := range matched {
			idxs[k], promptT[k], complT[k] = int32(r.Idx), int32(r.PromptTokens), int32(r.CompletionTokens)
			if r.HTTPStatus != 0 {
				h := int32(r.HTTPStatus)
				httpS[k] = &h
			}
			cid[k], status[k], output[k], finish[k], reqID[k], errClass[k], errMsg[k] = r.CustomID, r.Status, r.Output, r.FinishReason, r.RequestID, r.ErrorClass, r.Error
			est[k] = r.TokensEstimated
		}
		if _, err := tx.Exec(ctx, `INSERT INTO results (run_id, idx, custom_id, status, output, finish_reason, prompt_tokens,
				completion_tokens, tokens_estimated, sent_at, http_status, request_id, error_class, error)
			SELECT @run, u.idx, u.cid, u.status, u.output, u.finish, u.pt, u.ct, u.est, @now, u.http, u.req, u.ec, u.err
			FROM unnest(@idx::int4[], @cid::text[], @status::text[], @output::text[], @finish::text[], @pt::int4[], @ct::int4[],
				@est::bool[], @http::int4[], @req::text[], @ec::text[], @err::text[])
				AS u(idx, cid, status, output, finish, pt, ct, est, http, req, ec, err)`,
			pgx.NamedArgs{"run": out.RunID, "now": now, "idx": idxs, "cid": cid, "status": status, "output": output, "finish": finish,
				"pt": promptT, "ct": complT, "est": est, "http": httpS, "req": reqID, "ec": errClass, "err": errMsg}); err != nil {
			return mapErr(err, "import: results")
		}
		if _, err := tx.Exec(ctx, `UPDATE runs SET completed = @n,
				errors = (SELECT count(*) FROM results WHERE run_id = @run AND status = 'error'),
				prompt_tokens = (SELECT coalesce(sum(prompt_tokens), 0) FROM results WHERE run_id = @run),
				output_tokens = (SELECT coalesce(sum(completion_tokens), 0) FROM results WHERE run_id = @run)
			WHERE id = @run`, pgx.NamedArgs{"run": out.RunID, "n": n}); err != nil {
			return mapErr(err, "import: counters")
		}
		if err := q.AddRunEvent(ctx, out.RunID, nil, "imported", fmt.Sprintf("%d results matched, %d unmatched, %d items missing", out.Matched, out.Unmatched, out.Missing)); err != nil {
			return err
		}
		if queue != nil {
			return queue(tx, out.RunID)
		}
		return nil
	})
	return out, err
}
