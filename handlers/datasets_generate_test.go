package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/auth"
)

func apiPostJSON(e *env, path, token, body string) (int, map[string]any) {
	e.t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := e.app.Test(req, -1)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		e.t.Fatalf("POST %s: response is not JSON: %v", path, err)
	}
	return res.StatusCode, out
}

func TestAPIGenerateDataset(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.createUser("gen@example.com", "password-123", "user")
	token, prefix, hash := auth.NewAPIToken()
	if _, err := e.store.CreateAPIToken(context.Background(), u.ID, "t", prefix, hash); err != nil {
		t.Fatal(err)
	}
	status, body := apiPostJSON(e, "/api/v1/datasets/generate", token,
		`{"name":"sizing","kind":"shared-prefix","seed":4,"prefixes":2,"suffixes_per_prefix":3,"prefix_tokens":50,
		  "input":{"dist":"normal","mean":100,"stddev":10},"output":{"dist":"fixed","value":32}}`)
	if status != 201 || body["count"] != 6.0 || body["format"] != "synthetic" || body["name"] != "sizing" {
		t.Fatalf("%d %v", status, body)
	}
	gen, _ := body["generator"].(map[string]any)
	if gen["kind"] != "shared-prefix" || gen["seed"] != 4.0 {
		t.Fatalf("generator %v", body["generator"])
	}
	id := int64(body["dataset_id"].(float64))
	// GET answers the same spec, and an upload has none.
	got := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d", id), token, nil, "")
	if g, _ := got.body["generator"].(map[string]any); got.status != 200 || g["kind"] != "shared-prefix" || g["seed"] != 4.0 || g["prefixes"] != 2.0 {
		t.Fatalf("GET the generated dataset: %d %v", got.status, got.body)
	}
	up := e.upload(token, "q.jsonl", []byte(simpleJSONL), nil)
	if got := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%v", up.body["dataset_id"]), token, nil, ""); got.status != 200 || got.body["generator"] != nil {
		t.Fatalf("GET an upload: %d %v", got.status, got.body)
	}
	items, err := e.store.DatasetItems(context.Background(), id, -1, 10)
	if err != nil || len(items) != 6 || !strings.Contains(string(items[0].Request), `"ignore_eos": true`) && !strings.Contains(string(items[0].Request), `"ignore_eos":true`) {
		t.Fatalf("items %v %v", items, err)
	}

	bad := []struct{ body, field string }{
		{`{"kind":"random","count":0,"input":{"dist":"fixed","value":5},"output":{"dist":"fixed","value":5}}`, "count"},
		{`{"kind":"random","count":5,"input":{"dist":"normal","mean":5,"stddev":-1},"output":{"dist":"fixed","value":5}}`, "input.stddev"},
		{`{"kind":"random","count":5,"input":{"dist":"fixed","value":5},"output":{"dist":"fixed","value":5},"colour":1}`, "colour"},
		{`{"kind":"random","count":"many"}`, "count"},
		{`{"kind":"trace","trace":"{\"timestamp\":1}\n","output":{"dist":"fixed","value":5}}`, "trace"},
		{`{"kind":"random","count":5,"visibility":"public","input":{"dist":"fixed","value":5},"output":{"dist":"fixed","value":5}}`, "visibility"},
	}
	for _, b := range bad {
		status, out := apiPostJSON(e, "/api/v1/datasets/generate", token, b.body)
		errs, _ := out["errors"].([]any)
		if status != 422 || len(errs) == 0 || errs[0].(map[string]any)["path"] != b.field {
			t.Errorf("%s: %d %v, want 422 naming %s", b.body, status, out, b.field)
		}
	}
	if status, _ := apiPostJSON(e, "/api/v1/datasets/generate", "", `{}`); status != 401 {
		t.Errorf("anonymous: %d, want 401", status)
	}
}

func TestGenerateForm(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("form@example.com", "password-123", "user")
	c := e.client()
	c.signIn("form@example.com", "password-123")
	page := c.get("/datasets")
	if page.status != 200 || page.doc.Find(`[data-testid="generate-form"]`).Length() != 1 {
		t.Fatalf("datasets page %d without the generate form", page.status)
	}
	form := url.Values{"kind": {"random"}, "count": {"12"}, "seed": {"3"}, "endpoint": {"chat"},
		"input.dist": {"uniform"}, "input.min": {"20"}, "input.max": {"40"}, "output.dist": {"fixed"}, "output.value": {"16"}}

	// Errors beside the fields, 422, as a fragment for htmx.
	badForm := url.Values{}
	for k, v := range form {
		badForm[k] = v
	}
	badForm.Set("input.max", "10")
	badForm.Set("count", "lots")
	badForm.Set("_csrf", c.csrf)
	req := httptest.NewRequest(http.MethodPost, "/datasets/generate", strings.NewReader(badForm.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	res := c.do(req)
	if res.status != 422 || res.text(`[data-testid="error-input.max"]`) == "" || res.text(`[data-testid="error-count"]`) == "" {
		t.Fatalf("bad form: %d %s", res.status, res.body)
	}
	if res.doc.Find("html").Length() != 0 && strings.Contains(res.body, "<html") {
		t.Fatal("the htmx answer is a whole page")
	}
	if v, _ := res.doc.Find(`input[name="input.max"]`).Attr("value"); v != "10" {
		t.Fatalf("the form lost what was entered: input.max %q", v)
	}
	// Without htmx, the whole page with the errors.
	res = c.post("/datasets/generate", badForm)
	if res.status != 422 || res.text(`[data-testid="error-input.max"]`) == "" || res.doc.Find(`[data-testid="upload-form"]`).Length() != 1 {
		t.Fatalf("bad form without htmx: %d", res.status)
	}

	res = c.post("/datasets/generate", form)
	if res.status != 303 {
		t.Fatalf("generate: %d %s", res.status, res.body)
	}
	detail := c.get(res.header.Get("Location"))
	if detail.status != 200 || detail.text(`[data-testid="dataset-count"]`) != "12" {
		t.Fatalf("dataset page %d, count %q", detail.status, detail.text(`[data-testid="dataset-count"]`))
	}
	// Anonymous users are sent to sign in.
	if res := e.client().postRaw("/datasets/generate", form); res.status != 303 && res.status != 401 && res.status != 403 {
		t.Fatalf("anonymous: %d", res.status)
	}
}
