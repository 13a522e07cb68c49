package ingest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/store"
)

// DefaultName derives a dataset name from a file name: the base name
// without .jsonl/.json/.gz.
func DefaultName(fileName string) string {
	n := path.Base(strings.ReplaceAll(fileName, `\`, "/"))
	for _, ext := range []string{".gz", ".jsonl", ".json", ".ndjson"} {
		n = strings.TrimSuffix(n, ext)
	}
	if n == "" || n == "." || n == "/" {
		return "dataset"
	}
	for len(n) > 200 {
		_, size := utf8.DecodeLastRuneInString(n)
		n = n[:len(n)-size]
	}
	return n
}

// CheckSettings validates a dataset's name and visibility.
func CheckSettings(name, visibility string) *dataset.LineError {
	if !dataset.IsText(name) {
		return dataset.NewLineError("name", "dataset_err.name_utf_8_text")
	}
	if len(name) > 200 {
		return dataset.NewLineError("name", "dataset_err.name_may_at_most")
	}
	if visibility != store.VisibilityPrivate && visibility != store.VisibilityShared {
		return dataset.NewLineError("visibility", "dataset_err.visibility_private_shared")
	}
	return nil
}

// CheckExemplars validates a fixed example set's name beside the shots.
func CheckExemplars(name string, shots int) *dataset.LineError {
	if name == "" {
		return nil
	}
	if _, ok := dataset.Exemplars(name); !ok {
		var names []string
		for _, s := range dataset.ExemplarSets() {
			names = append(names, strconv.Quote(s.Name))
		}
		return dataset.NewLineError("exemplars", "dataset_err.exemplars_unknown", "A", strings.Join(names, ", "), "B", strconv.Quote(name))
	}
	if shots > 0 {
		return dataset.NewLineError("exemplars", "dataset_err.exemplars_with_shots")
	}
	return nil
}

// CheckShots validates the k of k-shot prompts.
func CheckShots(k int) *dataset.LineError {
	if k < 0 || k > dataset.MaxShots {
		return dataset.NewLineError("shots", "dataset_err.shots_whole_number_from", "A", dataset.MaxShots)
	}
	return nil
}

// checkDataset checks a dataset upload's settings that came before the
// file; a wrong one is the upload's only error.
func checkDataset(req *Request, res *Result) error {
	if req.Visibility == "" {
		req.Visibility = store.VisibilityPrivate
	}
	if le := CheckSettings(strings.TrimSpace(req.Name), req.Visibility); le != nil {
		return res.invalid(*le)
	}
	if le := CheckShots(req.Shots); le != nil {
		return res.invalid(*le)
	}
	if le := CheckExemplars(req.Exemplars, req.Shots); le != nil {
		return res.invalid(*le)
	}
	return nil
}

// uploadDataset parses src's file into a new dataset, reads the settings
// that follow it and finishes the dataset (finishUpload).
func (u *Uploader) uploadDataset(ctx context.Context, q *store.Queries, src Source, req *Request, res *Result) error {
	p := dataset.NewParserWith(src.File, u.Limits, dataset.Options{Shots: req.Shots, Exemplars: req.Exemplars})
	id, err := q.WriteDataset(ctx, store.NewDataset{
		OwnerID: req.Viewer.UserID, Name: "uploading", Format: "pending", Visibility: store.VisibilityPrivate, Starter: req.Starter,
	}, parsedItems(p), func(q *store.Queries, _ int64) (store.DatasetTotals, error) {
		if src.Rest != nil {
			if err := src.Rest(req); err != nil {
				var le *dataset.LineError
				if errors.As(err, &le) {
					return store.DatasetTotals{}, res.invalid(*le)
				}
				return store.DatasetTotals{}, err
			}
		}
		return finishUpload(ctx, q, p, *req, res)
	})
	if p.ErrorCount() > 0 {
		// The copy stopped at the bad lines, before any setting was read.
		res.Errors, res.ErrorCount = p.Errors(), p.ErrorCount()
	}
	if err != nil {
		return refusedValue(err, res)
	}
	res.Dataset, err = q.DatasetByID(ctx, req.Viewer, id)
	return err
}

// invalid makes le the upload's only error, and returns ErrInvalid.
func (r *Result) invalid(le dataset.LineError) error {
	r.Errors, r.ErrorCount = []dataset.LineError{le}, 1
	return ErrInvalid
}

// parsedItems are the items p reads, as the store takes them. At the
// first bad line it stops yielding items but reads on, so every error is
// reported; it ends with ErrInvalid then, or with ErrUnreadable when the
// file could not be read to its end: either way nothing is stored.
func parsedItems(p *dataset.Parser) iter.Seq2[store.DatasetItem, error] {
	return func(yield func(store.DatasetItem, error) bool) {
		for {
			it, ok := p.Next()
			if !ok {
				break
			}
			if p.ErrorCount() > 0 {
				continue // keep reading to report every error, but store nothing more
			}
			if !yield(store.DatasetItem{Idx: it.Index, CustomID: it.CustomID, Request: it.Request, Reference: it.Reference,
				Category: it.Category, Shot: it.Shot}, nil) {
				return
			}
		}
		switch {
		case p.Err() != nil:
			yield(store.DatasetItem{}, fmt.Errorf("%w: %v", ErrUnreadable, p.Err()))
		case p.ErrorCount() > 0:
			yield(store.DatasetItem{}, ErrInvalid)
		}
	}
}

// refusedValue is err, or ErrInvalid naming the value when PostgreSQL
// refused one the parser let through (such as \u0000 in a string): still
// the file's fault, not ours.
func refusedValue(err error, res *Result) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "22") {
		return res.invalid(*dataset.NewLineError("", "dataset_err.postgresql_refused_value_in", "A", pgErr.Message))
	}
	return err
}

// finishUpload names the dataset, refuses a duplicate unless allowed,
// and gives the totals the parse found.
func finishUpload(ctx context.Context, q *store.Queries, p *dataset.Parser, req Request, res *Result) (store.DatasetTotals, error) {
	name := strings.TrimSpace(req.Name)
	if name == "" {
		name = DefaultName(req.FileName)
	}
	if le := CheckSettings(name, req.Visibility); le != nil {
		return store.DatasetTotals{}, res.invalid(*le)
	}
	if !req.AllowDuplicate {
		dups, err := q.DatasetsBySHA256(ctx, req.Viewer, p.SHA256())
		if err != nil {
			return store.DatasetTotals{}, err
		}
		if len(dups) > 0 {
			res.Duplicates = dups
			return store.DatasetTotals{}, ErrDuplicate
		}
	}
	scorer := p.SuggestedScorer()
	if req.Scorer != "" {
		scorer = req.Scorer
	}
	return store.DatasetTotals{
		Name: name, Visibility: req.Visibility, Format: string(p.Format()), TaskKind: p.TaskKind(),
		DefaultScorer: scorer, Bytes: p.Bytes(), SHA256: p.SHA256(), Shots: shotsOf(req),
	}, nil
}

// shotsOf is the dataset's shots: the k asked for, or the size of the
// exemplar set its prompts carry.
func shotsOf(req Request) int {
	if set, ok := dataset.Exemplars(req.Exemplars); ok {
		return len(set.Examples)
	}
	return req.Shots
}
