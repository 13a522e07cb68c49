package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/ruckus/ruckus/app/dataset/synth"
	"github.com/ruckus/ruckus/app/store"
)

// CheckGenerated normalises and validates a Generated request: its name
// (the spec's default when empty), visibility and spec. The errors name
// the field (name, visibility, or the spec's own); the trace lines are
// the spec's trace, read.
func CheckGenerated(req *Request) ([]synth.TraceLine, synth.Errors) {
	req.Spec.Normalize()
	req.Name = strings.TrimSpace(req.Name)
	if req.Name == "" {
		req.Name = synth.DefaultName(req.Spec)
	}
	if req.Visibility == "" {
		req.Visibility = store.VisibilityPrivate
	}
	lines, errs := req.Spec.Validate()
	if le := CheckSettings(req.Name, req.Visibility); le != nil {
		errs = append(synth.Errors{{Path: le.Field, Message: le.Message}}, errs...)
	}
	return lines, errs
}

// generate stores req's generated dataset as an ordinary dataset, through
// the same store call as an upload, with the spec it was made from; the
// size and checksum are over the items as JSONL lines.
func generate(ctx context.Context, q *store.Queries, req Request, res *Result) error {
	lines, errs := CheckGenerated(&req)
	if len(errs) > 0 {
		return errs
	}
	traceSum := sha256.Sum256([]byte(req.Spec.Trace))
	spec, err := json.Marshal(req.Spec.Stored(hex.EncodeToString(traceSum[:])))
	if err != nil {
		return err
	}
	sum := sha256.New()
	var size int64
	items := func(yield func(store.DatasetItem, error) bool) {
		n := 0
		for it := range req.Spec.Items(lines) {
			sum.Write(it.Line)
			sum.Write([]byte{'\n'})
			size += int64(len(it.Line) + 1)
			if !yield(store.DatasetItem{Idx: n, CustomID: it.CustomID, Request: it.Request}, nil) {
				return
			}
			n++
		}
	}
	id, err := q.WriteDataset(ctx, store.NewDataset{OwnerID: req.Viewer.UserID, Name: "generating", Format: "pending",
		Visibility: store.VisibilityPrivate}, items,
		func(*store.Queries, int64) (store.DatasetTotals, error) {
			return store.DatasetTotals{Name: req.Name, Visibility: req.Visibility, Format: synth.Format, TaskKind: "synthetic",
				Bytes: size, SHA256: hex.EncodeToString(sum.Sum(nil)), Generator: spec}, nil
		})
	if err != nil {
		return err
	}
	res.Dataset, err = q.DatasetByID(ctx, req.Viewer, id)
	return err
}
