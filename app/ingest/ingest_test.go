package ingest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/dataset/synth"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/resultimport"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// rows counts a table's rows.
func rows(t *testing.T, st *store.Store, table string) int {
	t.Helper()
	var n int
	if err := st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Every kind of upload is one transaction with what the caller does in
// Then and what Rest reads: an error from either leaves nothing behind,
// and each kind's own errors keep naming the line and field.
func TestEveryKindIsWholeOrNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(pgtest.NewDB(t))
	u := testkit.User(ctx, t, st, nil)
	v := store.Viewer{UserID: u.ID}
	ds := testkit.Dataset(ctx, t, st, &testkit.DatasetOpts{Owner: u.ID, Items: 2})
	testkit.Model(ctx, t, st, &testkit.ModelOpts{Name: "outside/model"})
	datasetsBefore, itemsBefore := rows(t, st, "datasets"), rows(t, st, "dataset_items")
	up := &ingest.Uploader{Store: st, Limits: dataset.DefaultLimits()}
	refused := errors.New("refused by the caller")
	then := func(pgx.Tx, ingest.Result, ingest.Request) error { return refused }
	file := `{"custom_id":"a","prompt":"q"}` + "\n"
	results := `{"custom_id":"item-0","output":"a0"}` + "\n"
	spec := synth.Spec{Count: 3, Input: synth.Fixed(4), Output: synth.Fixed(2)}
	for name, c := range map[string]struct {
		src ingest.Source
		req ingest.Request
	}{
		"dataset, then":   {ingest.Source{File: strings.NewReader(file), Then: then}, ingest.Request{Viewer: v, FileName: "a.jsonl"}},
		"dataset, rest":   {ingest.Source{File: strings.NewReader(file), Rest: func(*ingest.Request) error { return refused }}, ingest.Request{Viewer: v}},
		"generated, then": {ingest.Source{Then: then}, ingest.Request{Kind: ingest.Generated, Viewer: v, Spec: spec}},
		"results, then":   {ingest.Source{File: strings.NewReader(results), Then: then}, ingest.Request{Kind: ingest.Results, Viewer: v, DatasetID: ds.ID, Model: "outside/model"}},
		"results, rest":   {ingest.Source{File: strings.NewReader(results), Rest: func(*ingest.Request) error { return refused }}, ingest.Request{Kind: ingest.Results, Viewer: v, DatasetID: ds.ID, Model: "outside/model"}},
	} {
		if _, err := up.Upload(ctx, c.src, c.req); !errors.Is(err, refused) {
			t.Errorf("%s: %v, want the caller's error", name, err)
		}
	}
	if d, i, r := rows(t, st, "datasets"), rows(t, st, "dataset_items"), rows(t, st, "runs"); d != datasetsBefore || i != itemsBefore || r != 0 {
		t.Errorf("refused uploads left %d datasets, %d items, %d runs; want %d, %d, 0", d, i, r, datasetsBefore, itemsBefore)
	}

	// A bad line of results is the parser's error, with its line and field.
	_, err := up.Upload(ctx, ingest.Source{File: strings.NewReader(results + `{"custom_id":"item-1"}` + "\n")},
		ingest.Request{Kind: ingest.Results, Viewer: v, DatasetID: ds.ID, Model: "outside/model"})
	var le *resultimport.Error
	if !errors.As(err, &le) || le.Line != 2 || le.Field != "output" {
		t.Fatalf("a bad result line: %v, want line 2, field output", err)
	}
	// A bad dataset line is ErrInvalid with its line.
	res, err := up.Upload(ctx, ingest.Source{File: strings.NewReader(file + "not json\n")}, ingest.Request{Viewer: v})
	if !errors.Is(err, ingest.ErrInvalid) || res.ErrorCount != 1 || res.Errors[0].Line != 2 {
		t.Fatalf("a bad dataset line: %v %+v, want ErrInvalid on line 2", err, res.Errors)
	}
	if r := rows(t, st, "runs"); r != 0 {
		t.Errorf("a refused import left %d runs", r)
	}
}

// UploadTx writes in the caller's transaction: its dataset is there to
// the caller before the commit, and gone when the caller rolls back.
func TestUploadTxIsTheCallersTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(pgtest.NewDB(t))
	u := testkit.User(ctx, t, st, nil)
	up := &ingest.Uploader{Store: st}
	rollback := errors.New("the caller rolls back")
	err := st.InTxWith(ctx, func(tx pgx.Tx, q *store.Queries) error {
		res, err := up.UploadTx(ctx, tx, q, ingest.Source{}, ingest.Request{Kind: ingest.Generated, Viewer: store.Viewer{UserID: u.ID},
			Spec: synth.Spec{Count: 4, Input: synth.Fixed(3), Output: synth.Fixed(2)}})
		if err != nil {
			return err
		}
		if seen, err := q.DatasetByID(ctx, store.Viewer{UserID: u.ID}, res.Dataset.ID); err != nil || seen.ItemCount != 4 {
			t.Errorf("inside the transaction: %+v %v", seen, err)
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	if d := rows(t, st, "datasets"); d != 0 {
		t.Errorf("%d datasets after the caller rolled back", d)
	}
}
