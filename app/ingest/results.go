package ingest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/resultimport"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// importResults stores the results in src's file (see resultimport.Parse)
// as a run on req.DatasetID: the lines are copied into the transaction's
// import table as they are parsed, then the settings that follow the file
// are read and checked, then the run is made from the table.
func importResults(ctx context.Context, q *store.Queries, src Source, req *Request, res *Result) error {
	_, err := q.CopyImportLines(ctx, importLines(resultimport.NewParser(src.File)))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "22") {
		// A value the parser let through that PostgreSQL refuses: still
		// the file's fault, not ours.
		return &resultimport.Error{Field: "file", Message: "PostgreSQL refused a value in the file: " + pgErr.Message}
	}
	if err != nil {
		return err
	}
	if src.Rest != nil {
		if err := src.Rest(req); err != nil {
			return err
		}
	}
	if err := CheckImportSettings(*req, true); err != nil {
		return err
	}
	if req.Name == "" {
		req.Name = "Imported: " + req.Model
	}
	res.Run, err = q.FinishImport(ctx, req.Viewer, store.NewImport{DatasetID: req.DatasetID, Name: req.Name, Model: req.Model, Scorer: req.Scorer})
	return err
}

// importLines are the lines p reads; it ends with the line Ruckus cannot
// take (a *resultimport.Error), or ErrUnreadable when the file could not be
// read to its end.
func importLines(p *resultimport.Parser) iter.Seq2[store.ImportLine, error] {
	return func(yield func(store.ImportLine, error) bool) {
		for {
			l, ok := p.Next()
			if !ok {
				break
			}
			if !yield(l, nil) {
				return
			}
		}
		var le *resultimport.Error
		switch err := p.Err(); {
		case errors.As(err, &le):
			yield(store.ImportLine{}, le)
		case err != nil:
			yield(store.ImportLine{}, fmt.Errorf("%w: %v", ErrUnreadable, err))
		}
	}
}

// CheckImportSettings checks an import's name and model; final is false
// while fields may still come (an absent model is not yet an error).
func CheckImportSettings(req Request, final bool) error {
	switch {
	case len(req.Name) > 200:
		return &resultimport.Error{Field: "name", Message: "at most 200 characters"}
	case !dataset.IsText(req.Name):
		return &resultimport.Error{Field: "name", Message: "must be UTF-8 text without NUL characters"}
	case req.Model == "" && final:
		return &resultimport.Error{Field: "model", Message: "name the registry model that made these results"}
	case req.Model != "":
		if err := jobs.CheckModelName(req.Model); err != nil {
			return &resultimport.Error{Field: "model", Message: err.Error()}
		}
	}
	return nil
}
