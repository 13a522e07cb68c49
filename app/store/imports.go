package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
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
var ErrImportModel = errors.New("no such model in the registry")

// ErrImportEmpty is returned for an import without a single result, and
// ErrImportNoMatch for one whose results match none of the dataset's items:
// either would be a run with nothing in it.
var (
	ErrImportEmpty   = errors.New("the file has no results")
	ErrImportNoMatch = errors.New("no result matches an item of the dataset")
)

// ImportLine is one imported result and the line it came from, as the
// results parser (app/resultimport) reads it.
type ImportLine struct {
	// Line is the line's number in the file, from 1.
	Line             int
	CustomID         string
	Status           string // jobs.StatusOK or jobs.StatusError
	Output           string
	FinishReason     string
	PromptTokens     int
	CompletionTokens int
	// TokensEstimated: the line had no usage.
	TokensEstimated bool
	HTTPStatus      int
	RequestID       string
	ErrorClass      string
	Error           string
}

// importColumns are the columns of the transaction's import_lines table,
// in the order of CopyImportLines' rows.
var importColumns = []string{"line", "custom_id", "status", "output", "finish_reason", "prompt_tokens", "completion_tokens",
	"tokens_estimated", "http_status", "request_id", "error_class", "error"}

// CopyImportLines streams imported results into a temporary table of the
// transaction q runs in (it goes at commit), with COPY, so an import of any
// size passes through the server in constant memory; FinishImport then
// makes the run from it. An error lines yields ends the copy and is
// returned as it is (copySeq2). q must be in a transaction.
func (q *Queries) CopyImportLines(ctx context.Context, lines iter.Seq2[ImportLine, error]) (int64, error) {
	if _, err := q.db.Exec(ctx, `CREATE TEMPORARY TABLE import_lines (
			line int NOT NULL, custom_id text NOT NULL, status text NOT NULL, output text NOT NULL, finish_reason text NOT NULL,
			prompt_tokens int NOT NULL, completion_tokens int NOT NULL, tokens_estimated bool NOT NULL, http_status int,
			request_id text NOT NULL, error_class text NOT NULL, error text NOT NULL) ON COMMIT DROP`); err != nil {
		return 0, mapErr(err, "import: lines table")
	}
	n, err := copySeq2(ctx, q, "import_lines", importColumns, lines, func(l ImportLine, row []any) {
		row[0], row[1], row[2], row[3], row[4] = int32(l.Line), l.CustomID, l.Status, l.Output, l.FinishReason
		row[5], row[6], row[7], row[8] = int32(l.PromptTokens), int32(l.CompletionTokens), l.TokensEstimated, nil
		row[9], row[10], row[11] = l.RequestID, l.ErrorClass, l.Error
		if l.HTTPStatus != 0 {
			row[8] = int32(l.HTTPStatus)
		}
	})
	return n, copyErr(err, "import: copy lines")
}

// FinishImport stores the lines CopyImportLines copied as a finished run
// of a new benchmark on the dataset (runtime and hardware "imported", no
// timings), matching lines to items by custom_id. It refuses an import
// without lines (ErrImportEmpty) or matching no item (ErrImportNoMatch).
func (q *Queries) FinishImport(ctx context.Context, v Viewer, in NewImport) (ImportedRun, error) {
	var out ImportedRun
	var items int
	err := q.db.QueryRow(ctx, `SELECT item_count FROM datasets WHERE id = @ds AND deleted_at IS NULL
		AND (owner_id = @viewer OR visibility = 'shared' OR @admin)`,
		pgx.NamedArgs{"ds": in.DatasetID, "viewer": v.UserID, "admin": v.Admin}).Scan(&items)
	if err != nil {
		return out, mapErr(err, "import: dataset")
	}
	var modelID int64
	if err := q.db.QueryRow(ctx, `SELECT id FROM models WHERE name = @name`, pgx.NamedArgs{"name": in.Model}).Scan(&modelID); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return out, fmt.Errorf("model %q: %w", in.Model, ErrImportModel)
		}
		return out, mapErr(err, "import: model")
	}
	var lines int
	if err := q.db.QueryRow(ctx, `SELECT count(*), count(i.idx) FROM import_lines l
			LEFT JOIN dataset_items i ON i.dataset_id = @ds AND i.custom_id = l.custom_id`,
		pgx.NamedArgs{"ds": in.DatasetID}).Scan(&lines, &out.Matched); err != nil {
		return out, mapErr(err, "import: match")
	}
	out.Unmatched, out.Missing = lines-out.Matched, items-out.Matched
	rows, _ := q.db.Query(ctx, `SELECT l.custom_id FROM import_lines l
		WHERE NOT EXISTS (SELECT FROM dataset_items i WHERE i.dataset_id = @ds AND i.custom_id = l.custom_id)
		ORDER BY l.line LIMIT 20`, pgx.NamedArgs{"ds": in.DatasetID})
	if out.UnmatchedIDs, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return out, mapErr(err, "import: unmatched")
	}
	switch {
	case lines == 0:
		return out, ErrImportEmpty
	case out.Matched == 0:
		return out, fmt.Errorf("%w (%d results, none with a custom_id of the dataset's, such as %q)", ErrImportNoMatch, lines, out.UnmatchedIDs[0])
	}
	if _, err := q.db.Exec(ctx, `INSERT INTO hardware_profiles (slug) VALUES ('imported') ON CONFLICT (slug) DO NOTHING`); err != nil {
		return out, mapErr(err, "import: hardware profile")
	}
	manifest, _ := json.Marshal(map[string]any{"name": in.Name, "dataset": in.DatasetID, "imported": true, "model": in.Model, "scorer": in.Scorer})
	if out.BenchmarkID, err = q.CreateBenchmark(ctx, v.UserID, in.Name, in.DatasetID, manifest); err != nil {
		return out, err
	}
	if err := q.db.QueryRow(ctx, `INSERT INTO runs (benchmark_id, model_id, runtime, hardware_profile, state, mode, total, started_at, finished_at, stopped_by)
		VALUES (@b, @m, 'imported', 'imported', 'completed', 'imported', @total, now(), now(), 'imported') RETURNING id`,
		pgx.NamedArgs{"b": out.BenchmarkID, "m": modelID, "total": items}).Scan(&out.RunID); err != nil {
		return out, mapErr(err, "import: run")
	}
	if _, err := q.db.Exec(ctx, `INSERT INTO results (run_id, idx, custom_id, status, output, finish_reason, prompt_tokens,
			completion_tokens, tokens_estimated, sent_at, http_status, request_id, error_class, error)
		SELECT @run, i.idx, l.custom_id, l.status, l.output, l.finish_reason, l.prompt_tokens, l.completion_tokens,
			l.tokens_estimated, @now, l.http_status, l.request_id, l.error_class, l.error
		FROM import_lines l JOIN dataset_items i ON i.dataset_id = @ds AND i.custom_id = l.custom_id`,
		pgx.NamedArgs{"run": out.RunID, "ds": in.DatasetID, "now": time.Now()}); err != nil {
		return out, mapErr(err, "import: results")
	}
	// The counters and the event that reports them, in one statement.
	if _, err := q.db.Exec(ctx, `WITH upd AS (
			UPDATE runs SET completed = @n,
				errors = (SELECT count(*) FROM results WHERE run_id = @run AND status = 'error'),
				prompt_tokens = (SELECT coalesce(sum(prompt_tokens), 0) FROM results WHERE run_id = @run),
				output_tokens = (SELECT coalesce(sum(completion_tokens), 0) FROM results WHERE run_id = @run)
			WHERE id = @run
			RETURNING id
		)
		INSERT INTO run_events (run_id, kind, message) SELECT id, 'imported', @msg FROM upd`,
		pgx.NamedArgs{"run": out.RunID, "n": out.Matched,
			"msg": fmt.Sprintf("%d results matched, %d unmatched, %d items missing", out.Matched, out.Unmatched, out.Missing)}); err != nil {
		return out, mapErr(err, "import: counters")
	}
	return out, nil
}
