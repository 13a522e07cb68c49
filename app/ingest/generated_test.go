package ingest_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/ruckus/ruckus/app/dataset/synth"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
)

func TestGeneratedIsAnOrdinaryDataset(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(pgtest.NewDB(t))
	u, err := st.CreateUser(ctx, store.NewUser{Email: "s@example.com", PasswordHash: "x", Role: store.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	v := store.Viewer{UserID: u.ID}
	spec := synth.Spec{Kind: synth.KindSharedPrefix, Seed: 9, Prefixes: 3, SuffixesPerPrefix: 4, PrefixTokens: 20,
		Input: synth.Fixed(5), Output: synth.Dist{Kind: synth.DistUniform, Min: 4, Max: 8}}
	ds, err := generate(ctx, st, ingest.Request{Viewer: v, Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	if ds.ItemCount != 12 || ds.Format != synth.Format || ds.Name == "" || ds.Visibility != store.VisibilityPrivate || len(ds.SHA256) != 64 || ds.Bytes == 0 {
		t.Fatalf("dataset %+v", ds)
	}
	items, err := st.DatasetItems(ctx, ds.ID, -1, 100)
	if err != nil || len(items) != 12 {
		t.Fatalf("%d items, %v", len(items), err)
	}
	var req struct {
		URL       string     `json:"url"`
		Synthetic synth.Meta `json:"synthetic"`
	}
	if err := json.Unmarshal(items[0].Request, &req); err != nil || req.URL != "/v1/chat/completions" || req.Synthetic.InputTokens != 25 {
		t.Fatalf("item %s: %v", items[0].Request, err)
	}
	gen, err := st.DatasetGenerator(ctx, v, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	var kept synth.Spec
	if err := json.Unmarshal(gen, &kept); err != nil || kept.Kind != synth.KindSharedPrefix || kept.Seed != 9 || kept.Endpoint != synth.EndpointChat {
		t.Fatalf("generator %s: %v", gen, err)
	}
	// The same spec again is the same content.
	again, err := generate(ctx, st, ingest.Request{Viewer: v, Spec: spec, Name: "again"})
	if err != nil || again.SHA256 != ds.SHA256 || again.Name != "again" {
		t.Fatalf("again: %+v %v", again, err)
	}

	// An invalid spec stores nothing and names the field.
	before, _ := st.ListDatasets(ctx, v)
	_, err = generate(ctx, st, ingest.Request{Viewer: v, Spec: synth.Spec{Count: 5, Input: synth.Fixed(0), Output: synth.Fixed(1)}})
	var errs synth.Errors
	if !errors.As(err, &errs) || errs[0].Path != "input.value" {
		t.Fatalf("want an error on input.value, got %v", err)
	}
	after, _ := st.ListDatasets(ctx, v)
	if len(after) != len(before) {
		t.Fatalf("an invalid spec stored a dataset")
	}
	_, err = generate(ctx, st, ingest.Request{Viewer: v, Visibility: "public", Spec: spec})
	if !errors.As(err, &errs) || errs[0].Path != "visibility" {
		t.Fatalf("want an error on visibility, got %v", err)
	}
}

// generate is an upload of a generated dataset, as the handlers make it.
func generate(ctx context.Context, st *store.Store, req ingest.Request) (store.Dataset, error) {
	req.Kind = ingest.Generated
	res, err := (&ingest.Uploader{Store: st}).Upload(ctx, ingest.Source{}, req)
	return res.Dataset, err
}
