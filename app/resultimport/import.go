package resultimport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// ImportResults stores results made elsewhere (see Parse) as a
// run on in.DatasetID, the way Upload stores a dataset: the file is parsed
// as it arrives and copied into PostgreSQL with COPY inside one
// transaction, so the server's memory does not grow with the file, and
// nothing is stored unless all of it is.
//
// rest, when not nil, runs once the file is read and before the run is
// made, so the caller can read settings that came after the file (it may
// change in's Name, Model and Scorer) and check them. queue runs in the
// same transaction once the run exists (its scoring job), with the
// settings as finally read.
//
// A line Ruckus cannot take, or a setting that is wrong, is an
// *Error (Line 0 for a setting or the file as a whole); an empty
// import or one matching no item wraps store.ErrImportEmpty or
// store.ErrImportNoMatch; an upload that could not be read to its end
// wraps ingest.ErrUnreadable.
func ImportResults(ctx context.Context, st *store.Store, v store.Viewer, in store.NewImport, file io.Reader,
	rest func(*store.NewImport) error, queue func(tx pgx.Tx, runID int64, in store.NewImport) error) (store.ImportedRun, error) {
	var out store.ImportedRun
	// Settings that came before the file are checked before reading it.
	if err := CheckImportSettings(in, false); err != nil {
		return out, err
	}
	err := st.InTxWith(ctx, func(tx pgx.Tx, q *store.Queries) error {
		p := NewParser(file)
		// Why the copy was aborted: PostgreSQL answers an aborted COPY
		// with its own error, which does not wrap ours.
		var abort error
		_, err := q.CopyImportLines(ctx, func() (store.ImportLine, bool, error) {
			l, ok := p.Next()
			if !ok {
				if err := p.Err(); err != nil {
					var le *Error
					if errors.As(err, &le) {
						abort = le
					} else {
						abort = fmt.Errorf("%w: %v", ingest.ErrUnreadable, err)
					}
				}
				return store.ImportLine{}, false, abort
			}
			return store.ImportLine{Line: l.Line, CustomID: l.CustomID, Status: l.Status, Output: l.Output,
				FinishReason: l.FinishReason, PromptTokens: l.PromptTokens, CompletionTokens: l.CompletionTokens,
				TokensEstimated: l.TokensEstimated, HTTPStatus: l.HTTPStatus, RequestID: l.RequestID,
				ErrorClass: l.ErrorClass, Error: l.Error}, true, nil
		})
		if abort != nil {
			return abort
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "22") {
			// A value the parser let through that PostgreSQL refuses: still
			// the file's fault, not ours.
			return &Error{Field: "file", Message: "PostgreSQL refused a value in the file: " + pgErr.Message}
		}
		if err != nil {
			return err
		}
		if rest != nil {
			if err := rest(&in); err != nil {
				return err
			}
		}
		if err := CheckImportSettings(in, true); err != nil {
			return err
		}
		if in.Name == "" {
			in.Name = "Imported: " + in.Model
		}
		if out, err = q.FinishImport(ctx, v, in); err != nil {
			return err
		}
		if queue != nil {
			return queue(tx, out.RunID, in)
		}
		return nil
	})
	return out, err
}

// CheckImportSettings checks an import's name and model; final is false
// while fields may still come (an absent model is not yet an error).
func CheckImportSettings(in store.NewImport, final bool) error {
	switch {
	case len(in.Name) > 200:
		return &Error{Field: "name", Message: "at most 200 characters"}
	case !dataset.IsText(in.Name):
		return &Error{Field: "name", Message: "must be UTF-8 text without NUL characters"}
	case in.Model == "" && final:
		return &Error{Field: "model", Message: "name the registry model that made these results"}
	case in.Model != "":
		if err := jobs.CheckModelName(in.Model); err != nil {
			return &Error{Field: "model", Message: err.Error()}
		}
	}
	return nil
}
