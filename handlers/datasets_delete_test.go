package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// Deleting a dataset a benchmark used (its owner's run, or another user's
// import into a shared dataset) answers 204, not a foreign-key 500: the
// dataset leaves every list and cannot be used for new benchmarks or
// imports, and its items stay for the results that refer to them. A
// dataset nobody used goes with its items.
func TestDeletingAUsedDatasetHidesItAndKeepsItsResults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ada := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	tok := e.token(ada)
	bob := e.token(e.createUser("bob@example.com", "battery staple", store.RoleUser))
	b, run := runWithResults(t, e, tok, 12, func(i int) string { return fmt.Sprint(i) })
	var ds int64
	if err := e.store.Pool().QueryRow(t.Context(), `SELECT dataset_id FROM benchmarks WHERE id = $1`, b).Scan(&ds); err != nil {
		t.Fatal(err)
	}
	dsPath := fmt.Sprintf("/api/v1/datasets/%d", ds)

	// Another user cannot delete it; the owner can, although a run used it.
	if r := e.api(http.MethodDelete, dsPath, bob, nil, ""); r.status != 404 && r.status != 403 {
		t.Fatalf("bob deletes ada's private dataset: %d %v", r.status, r.body)
	}
	if r := e.api(http.MethodDelete, dsPath, tok, nil, ""); r.status != 204 {
		t.Fatalf("delete a used dataset: %d %v", r.status, r.body)
	}
	var items int
	var deleted bool
	if err := e.store.Pool().QueryRow(t.Context(), `SELECT (SELECT count(*) FROM dataset_items WHERE dataset_id = $1),
		(SELECT deleted_at IS NOT NULL FROM datasets WHERE id = $1)`, ds).Scan(&items, &deleted); err != nil {
		t.Fatal(err)
	}
	if items != 12 || !deleted {
		t.Errorf("after deleting a used dataset: %d items kept, marked deleted %v; want 12, true", items, deleted)
	}
	// Gone from the list, readable by id, its run's results intact.
	_, list := apiGet(e, "/api/v1/datasets", tok)
	for _, d := range list["datasets"].([]any) {
		if int64(d.(map[string]any)["dataset_id"].(float64)) == ds {
			t.Errorf("the deleted dataset is still listed: %v", d)
		}
	}
	if st, body := apiGet(e, dsPath, tok); st != 200 {
		t.Errorf("reading the deleted dataset: %d %v", st, body)
	}
	if st, _, body := e.raw(fmt.Sprintf("/api/v1/runs/%d/results?format=csv", run), tok); st != 200 || strings.Count(body, "\n") != 13 {
		t.Errorf("the run's results after the delete: %d, %d lines", st, strings.Count(body, "\n"))
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	if page := c.get(fmt.Sprintf("/datasets/%d", ds)); page.status != 200 || !strings.Contains(page.text("main"), "deleted") {
		t.Errorf("dataset page after the delete: %d %q", page.status, page.text("main"))
	}
	if page := c.get("/datasets"); strings.Contains(page.text("main"), "big.jsonl") {
		t.Errorf("the datasets page still lists it")
	}
	// No new benchmark, no import, no second delete.
	manifest := fmt.Sprintf(`{"name":"again","dataset":%d,"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}],
		"load":{"profile":"sequential"},"sampling":{"max_tokens":8}}`, ds)
	if r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json"); r.status != 422 || !strings.Contains(fmt.Sprint(r.body), "dataset") {
		t.Errorf("a benchmark on the deleted dataset: %d %v", r.status, r.body)
	}
	body, ct := multipartBody(t, "out.jsonl", []byte(`{"custom_id":"c001","output":"1"}`+"\n"), map[string]string{"model": "m/small"})
	if r := e.api(http.MethodPost, dsPath+"/imports", tok, body, ct); r.status < 400 || r.status >= 500 {
		t.Errorf("an import into the deleted dataset: %d %v", r.status, r.body)
	}
	if r := e.api(http.MethodDelete, dsPath, tok, nil, ""); r.status != 404 {
		t.Errorf("deleting it again: %d %v", r.status, r.body)
	}

	// A shared dataset another user imported into stays deletable by its
	// owner; an unused one goes with its items.
	shared := e.upload(tok, "shared.jsonl", []byte(`{"custom_id":"s1","prompt":"p","reference":"1"}`+"\n"), map[string]string{"visibility": "shared"})
	unused := e.upload(tok, "unused.jsonl", []byte(`{"custom_id":"u1","prompt":"p"}`+"\n"), nil)
	if shared.status != 201 || unused.status != 201 {
		t.Fatalf("uploads: %d %v, %d %v", shared.status, shared.body, unused.status, unused.body)
	}
	var s1 string
	if err := e.store.Pool().QueryRow(t.Context(), `SELECT custom_id FROM dataset_items WHERE dataset_id = $1`, shared.body["dataset_id"]).Scan(&s1); err != nil {
		t.Fatal(err)
	}
	body, ct = multipartBody(t, "out.jsonl", []byte(`{"custom_id":"`+s1+`","output":"1"}`+"\n"), map[string]string{"model": "m/small"})
	if r := e.api(http.MethodPost, fmt.Sprintf("/api/v1/datasets/%v/imports", shared.body["dataset_id"]), bob, body, ct); r.status != 201 {
		t.Fatalf("bob imports into the shared dataset: %d %v", r.status, r.body)
	}
	if r := e.api(http.MethodDelete, fmt.Sprintf("/api/v1/datasets/%v", shared.body["dataset_id"]), tok, nil, ""); r.status != 204 {
		t.Errorf("deleting a shared dataset another user imported into: %d %v", r.status, r.body)
	}
	if r := e.api(http.MethodDelete, fmt.Sprintf("/api/v1/datasets/%v", unused.body["dataset_id"]), tok, nil, ""); r.status != 204 {
		t.Errorf("deleting an unused dataset: %d %v", r.status, r.body)
	}
	var rows int
	if err := e.store.Pool().QueryRow(t.Context(), `SELECT count(*) FROM datasets WHERE id = $1`, unused.body["dataset_id"]).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("the unused dataset's row: %d (%v); want it gone", rows, err)
	}
}
