// Package ingest is Ruckus's one upload path: an uploaded dataset, a
// generated one and results made elsewhere all come in through Upload (or
// UploadTx, in the caller's transaction), streamed into PostgreSQL with
// COPY inside one transaction, so a file is stored whole or not at all and
// memory does not grow with its size (docs/datasets.md#one-upload-path).
// What an upload makes is its Request's Kind; every dataset is written by
// the store's one call for it, store.WriteDataset.
package ingest

import (
	"context"
	"errors"
	"io"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/dataset/synth"
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

// Kind is what an upload makes.
type Kind int

const (
	// Dataset is a JSONL dataset read from Source.File.
	Dataset Kind = iota
	// Generated is a synthetic dataset made from Request.Spec; it has no
	// file.
	Generated
	// Results are results made elsewhere (app/resultimport reads them)
	// stored as a finished run on Request.DatasetID.
	Results
)

// Request is what to make and its settings. Fields may still change while
// the file is read (multipart fields after the file); see Source.Rest.
type Request struct {
	Kind   Kind
	Viewer store.Viewer
	// Name is the dataset's or the imported run's; empty for the default
	// (the file's name, the spec's, "Imported: <model>").
	Name string
	// Visibility is a dataset's, private when empty.
	Visibility string
	// Scorer is a dataset's default scorer instead of the one its shape
	// suggests (the starter summaries take ROUGE-L), or the scorer of
	// imported results.
	Scorer string

	// FileName is the uploaded file's name (Dataset).
	FileName       string
	AllowDuplicate bool
	Starter        bool
	// Shots is the k of k-shot prompts (the suites, GSM8K and
	// prompt/reference lines), 0 to dataset.MaxShots; checked before the
	// file is read.
	Shots int
	// Exemplars names a fixed example set (dataset.ExemplarSets) written
	// before each question instead of k-shot examples; the dataset's
	// shots is then the set's size.
	Exemplars string

	// Spec is what to generate (Generated).
	Spec synth.Spec

	// DatasetID is the dataset imported results answer (Results), and
	// Model the registry model that made them.
	DatasetID int64
	Model     string
}

// Source is where an upload's content comes from, and what else the
// caller does within its transaction.
type Source struct {
	// File is the uploaded file; nil for Generated.
	File io.Reader
	// Rest, when not nil, runs once the file is read and before anything
	// is final, so the caller can read settings that came after the file
	// (it may change the request's names, visibility, duplicate choice,
	// model and scorer) and check them.
	Rest func(*Request) error
	// Then, when not nil, runs in the same transaction once the upload is
	// stored, with the request as finally read (an import queues its
	// scoring job here).
	Then func(tx pgx.Tx, res Result, req Request) error
}

// Result is what an upload made, or why it made nothing.
type Result struct {
	// Dataset is the dataset stored (Dataset, Generated).
	Dataset store.Dataset
	// Run is the run imported results were stored as (Results).
	Run store.ImportedRun
	// Errors are a dataset file's bad lines (the first of them, up to
	// the parser's limit), ErrorCount all of them.
	Errors     []dataset.LineError
	ErrorCount int
	// Duplicates are the viewer's datasets with the same content.
	Duplicates []store.Dataset
}

// Uploader makes datasets and imported runs.
type Uploader struct {
	Store *store.Store
	// Limits bound an uploaded dataset file.
	Limits dataset.Limits
}

// Upload makes what req asks for from src in one transaction, committed
// only when all of it is stored.
//
// A dataset file's bad lines and wrong settings are ErrInvalid with
// Result.Errors; a spec's errors are synth.Errors; an import's bad line or
// setting is a *resultimport.Error (Line 0 for a setting or the file as a
// whole), an empty one or one matching no item wraps store.ErrImportEmpty
// or store.ErrImportNoMatch; an upload that could not be read to its end
// wraps ErrUnreadable.
func (u *Uploader) Upload(ctx context.Context, src Source, req Request) (Result, error) {
	var res Result
	err := u.Store.InTxWith(ctx, func(tx pgx.Tx, q *store.Queries) error {
		var err error
		res, err = u.UploadTx(ctx, tx, q, src, req)
		return err
	})
	return res, err
}

// UploadTx is Upload within the caller's transaction (a benchmark
// manifest that generates its dataset creates it with the benchmark).
func (u *Uploader) UploadTx(ctx context.Context, tx pgx.Tx, q *store.Queries, src Source, req Request) (Result, error) {
	// Settings that came before the file are checked before it is read,
	// so a wrong one does not cost a gigabyte's parse and copy.
	var res Result
	if err := checkBefore(&req, &res); err != nil {
		return res, err
	}
	var err error
	switch req.Kind {
	case Dataset:
		err = u.uploadDataset(ctx, q, src, &req, &res)
	case Generated:
		err = generate(ctx, q, req, &res)
	case Results:
		err = importResults(ctx, q, src, &req, &res)
	default:
		return res, errors.New("ingest: unknown kind of upload")
	}
	if err == nil && src.Then != nil {
		err = src.Then(tx, res, req)
	}
	return res, err
}

// checkBefore checks the settings known before the file is read, and sets
// their defaults (a spec is checked where it is expanded, by generate).
func checkBefore(req *Request, res *Result) error {
	switch req.Kind {
	case Dataset:
		return checkDataset(req, res)
	case Results:
		return CheckImportSettings(*req, false)
	}
	return nil
}
