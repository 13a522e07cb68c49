// Package ingest stores an uploaded dataset: it streams the file through the
// parser into PostgreSQL with COPY inside one transaction, so a file is
// stored whole or not at all and memory does not grow with its size.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/store"
)

// ErrInvalid means some lines are wrong; Result.Errors says which.
var ErrInvalid = errors.New("the file has errors; nothing was stored")

// ErrUnreadable means the upload could not be read to its end (the
// connection broke, the body was cut short); nothing was stored. Broken
// gzip data in an upload that arrived whole is the file's content, and an
// ErrInvalid.
var ErrUnreadable = errors.New("the upload could not be read to its end")

// ErrDuplicate means the viewer can already see a dataset with the same
// content; Result.Duplicates lists them.
var ErrDuplicate = errors.New("an identical dataset exists")

// Request is an upload's settings. Fields may still change while the file
// is read (multipart fields after the file); see Upload's rest argument.
type Request struct {
	Viewer         store.Viewer
	FileName       string
	Name           string
	Visibility     string
	AllowDuplicate bool
	Starter        bool
	// Shots is the k of k-shot prompts (the suites, GSM8K and
	// prompt/reference lines), 0 to
	// dataset.MaxShots; checked before the file is read.
	Shots int
	// Exemplars names a fixed example set (dataset.ExemplarSets) written
	// before each question instead of k-shot examples; the dataset's
	// shots is then the set's size.
	Exemplars string
	// Scorer, when set, is the default scorer instead of the one the
	// file's shape suggests (the starter summaries take ROUGE-L).
	Scorer string
}

// Result is what an upload produced.
type Result struct {
	Dataset    store.Dataset
	Errors     []dataset.LineError
	ErrorCount int
	Duplicates []store.Dataset
}

// Uploader stores datasets.
type Uploader struct {
	Store  *store.Store
	Limits dataset.Limits
}

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

// Upload parses file and stores it. rest, when not nil, runs after the file
// is read and before the commit, so the caller can read settings that came
// after the file (it may change req's Name, Visibility, AllowDuplicate).
func (u *Uploader) Upload(ctx context.Context, file io.Reader, req Request, rest func(*Request) error) (Result, error) {
	var res Result
	if req.Visibility == "" {
		req.Visibility = store.VisibilityPrivate
	}
	// Settings that came before the file are checked before reading it, so
	// a wrong visibility does not cost a gigabyte's parse and copy.
	if le := CheckSettings(strings.TrimSpace(req.Name), req.Visibility); le != nil {
		return res, res.invalid(*le)
	}
	if le := CheckShots(req.Shots); le != nil {
		return res, res.invalid(*le)
	}
	if le := CheckExemplars(req.Exemplars, req.Shots); le != nil {
		return res, res.invalid(*le)
	}
	err := u.Store.InTx(ctx, func(q *store.Queries) error {
		id, err := q.CreateDataset(ctx, store.NewDataset{
			OwnerID: req.Viewer.UserID, Name: "uploading", Format: "pending", Visibility: store.VisibilityPrivate, Starter: req.Starter,
		})
		if err != nil {
			return err
		}
		p := dataset.NewParserWith(file, u.Limits, dataset.Options{Shots: req.Shots, Exemplars: req.Exemplars})
		if err := copyItems(ctx, q, id, p, &res); err != nil {
			return err
		}
		if rest != nil {
			if err := rest(&req); err != nil {
				var le *dataset.LineError
				if errors.As(err, &le) {
					return res.invalid(*le)
				}
				return err
			}
		}
		return finishUpload(ctx, q, id, p, req, &res)
	})
	return res, err
}

// invalid makes le the upload's only error, and returns ErrInvalid.
func (r *Result) invalid(le dataset.LineError) error {
	r.Errors, r.ErrorCount = []dataset.LineError{le}, 1
	return ErrInvalid
}

// copyItems parses the file into dataset id's items, with COPY; the
// parser's errors go to res. An invalid or unreadable file stores
// nothing.
func copyItems(ctx context.Context, q *store.Queries, id int64, p *dataset.Parser, res *Result) error {
	// The reason a copy was aborted is kept here: PostgreSQL answers an
	// aborted COPY with its own error, which does not wrap ours.
	var abort error
	_, err := q.CopyDatasetItems(ctx, id, func() (store.DatasetItem, bool, error) {
		for {
			it, ok := p.Next()
			if !ok {
				if err := p.Err(); err != nil {
					abort = fmt.Errorf("%w: %v", ErrUnreadable, err)
					return store.DatasetItem{}, false, abort
				}
				if p.ErrorCount() > 0 {
					abort = ErrInvalid
					return store.DatasetItem{}, false, abort
				}
				return store.DatasetItem{}, false, nil
			}
			if p.ErrorCount() > 0 {
				continue // keep reading to report every error, but store nothing more
			}
			return store.DatasetItem{Idx: it.Index, CustomID: it.CustomID, Request: it.Request, Reference: it.Reference, Category: it.Category, Shot: it.Shot}, true, nil
		}
	})
	res.Errors, res.ErrorCount = p.Errors(), p.ErrorCount()
	if abort != nil {
		return abort
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "22") {
		// A value the parser let through that PostgreSQL refuses (such
		// as \u0000 in a string): still the file's fault, not ours.
		return res.invalid(*dataset.NewLineError("", "dataset_err.postgresql_refused_value_in", "A", pgErr.Message))
	}
	return err
}

// finishUpload names the dataset, refuses a duplicate unless allowed,
// and stores the totals the parse found; res gets the dataset.
func finishUpload(ctx context.Context, q *store.Queries, id int64, p *dataset.Parser, req Request, res *Result) error {
	name := strings.TrimSpace(req.Name)
	if name == "" {
		name = DefaultName(req.FileName)
	}
	if le := CheckSettings(name, req.Visibility); le != nil {
		return res.invalid(*le)
	}
	if !req.AllowDuplicate {
		dups, err := q.DatasetsBySHA256(ctx, req.Viewer, p.SHA256())
		if err != nil {
			return err
		}
		if len(dups) > 0 {
			res.Duplicates = dups
			return ErrDuplicate
		}
	}
	scorer := p.SuggestedScorer()
	if req.Scorer != "" {
		scorer = req.Scorer
	}
	if err := q.FinishDataset(ctx, id, store.DatasetTotals{
		Name: name, Visibility: req.Visibility, Format: string(p.Format()), TaskKind: p.TaskKind(),
		DefaultScorer: scorer, ItemCount: p.Count(), Bytes: p.Bytes(), SHA256: p.SHA256(),
		Shots: shotsOf(req),
	}); err != nil {
		return err
	}
	var err error
	res.Dataset, err = q.DatasetByID(ctx, req.Viewer, id)
	return err
}

// shotsOf is the dataset's shots: the k asked for, or the size of the
// exemplar set its prompts carry.
func shotsOf(req Request) int {
	if set, ok := dataset.Exemplars(req.Exemplars); ok {
		return len(set.Examples)
	}
	return req.Shots
}
