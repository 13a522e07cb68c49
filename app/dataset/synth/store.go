package synth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"
	"strings"

	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/store"
)

// Format is the format a generated dataset is stored under.
const Format = "synthetic"

// Request is a dataset to generate for a user.
type Request struct {
	Viewer     store.Viewer
	Name       string // empty: DefaultName
	Visibility string // empty: private
	Spec       Spec
}

// DefaultName names a generated dataset after its spec.
func DefaultName(s Spec) string {
	switch s.Kind {
	case KindSharedPrefix:
		return fmt.Sprintf("synthetic shared-prefix %d×%d seed %d", s.Prefixes, s.SuffixesPerPrefix, s.Seed)
	case KindMultiTurn:
		return fmt.Sprintf("synthetic multi-turn %d conversations seed %d", s.Count, s.Seed)
	case KindTrace:
		if s.Trace != "" {
			return "synthetic trace replay"
		}
		return fmt.Sprintf("synthetic trace %d at %g/s seed %d", s.Count, s.Rate, s.Seed)
	}
	return fmt.Sprintf("synthetic %d items seed %d", s.Count, s.Seed)
}

// Check normalises and validates req; the errors name the field (name,
// visibility, or the spec's own).
func Check(req *Request) ([]TraceLine, Errors) {
	req.Spec.Normalize()
	req.Name = strings.TrimSpace(req.Name)
	if req.Name == "" {
		req.Name = DefaultName(req.Spec)
	}
	if req.Visibility == "" {
		req.Visibility = store.VisibilityPrivate
	}
	lines, errs := req.Spec.Validate()
	if le := ingest.CheckSettings(req.Name, req.Visibility); le != nil {
		errs = append(Errors{{Path: le.Field, Message: le.Message}}, errs...)
	}
	return lines, errs
}

// Transactor runs a function in one transaction; *store.Store is one.
type Transactor interface {
	InTx(ctx context.Context, fn func(q *store.Queries) error) error
}

// Create generates req's dataset and stores it as an ordinary dataset,
// through the same statements and COPY as an upload, in one transaction:
// whole or not at all. Invalid requests return Errors.
func Create(ctx context.Context, st Transactor, req Request) (store.Dataset, error) {
	var ds store.Dataset
	err := st.InTx(ctx, func(q *store.Queries) error {
		var err error
		ds, err = CreateTx(ctx, q, req)
		return err
	})
	return ds, err
}

// CreateTx is Create within the caller's transaction (a benchmark manifest
// that generates its dataset creates it with the benchmark).
func CreateTx(ctx context.Context, q *store.Queries, req Request) (store.Dataset, error) {
	lines, errs := Check(&req)
	if len(errs) > 0 {
		return store.Dataset{}, errs
	}
	id, err := q.CreateDataset(ctx, store.NewDataset{OwnerID: req.Viewer.UserID, Name: "generating", Format: "pending", Visibility: store.VisibilityPrivate})
	if err != nil {
		return store.Dataset{}, err
	}
	sum := sha256.New()
	var n int
	var size int64
	next, stop := iter.Pull(req.Spec.Items(lines))
	defer stop()
	_, err = q.CopyDatasetItems(ctx, id, func() (store.DatasetItem, bool, error) {
		it, ok := next()
		if !ok {
			return store.DatasetItem{}, false, nil
		}
		sum.Write(it.Line)
		sum.Write([]byte{'\n'})
		size += int64(len(it.Line) + 1)
		n++
		return store.DatasetItem{Idx: n - 1, CustomID: it.CustomID, Request: it.Request}, true, nil
	})
	if err != nil {
		return store.Dataset{}, err
	}
	traceSum := sha256.Sum256([]byte(req.Spec.Trace))
	spec, err := json.Marshal(req.Spec.Stored(hex.EncodeToString(traceSum[:])))
	if err != nil {
		return store.Dataset{}, err
	}
	if err := q.SetDatasetGenerator(ctx, id, spec); err != nil {
		return store.Dataset{}, err
	}
	if err := q.FinishDataset(ctx, id, store.DatasetTotals{Name: req.Name, Visibility: req.Visibility, Format: Format,
		TaskKind: "synthetic", ItemCount: n, Bytes: size, SHA256: hex.EncodeToString(sum.Sum(nil))}); err != nil {
		return store.Dataset{}, err
	}
	return q.DatasetByID(ctx, req.Viewer, id)
}
