package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/store"
)

// multipartBody builds an upload: fields first (a CSRF token first of
// all, as the page's forms send it), then the file.
func multipartBody(t *testing.T, fileName string, content []byte, fields map[string]string) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if tok, ok := fields["_csrf"]; ok {
		if err := mw.WriteField("_csrf", tok); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range fields {
		if k == "_csrf" {
			continue
		}
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if fileName != "" {
		fw, err := mw.CreateFormFile("file", fileName)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fw.Write(content); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, mw.FormDataContentType()
}

func (e *env) token(u store.User) string {
	e.t.Helper()
	tok, prefix, hash := auth.NewAPIToken()
	if _, err := e.store.CreateAPIToken(context.Background(), u.ID, "t", prefix, hash); err != nil {
		e.t.Fatal(err)
	}
	return tok
}

type apiResult struct {
	status int
	body   map[string]any
}

func (e *env) api(method, path, token string, body io.Reader, contentType string) apiResult {
	e.t.Helper()
	req := httptest.NewRequest(method, path, body)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := e.app.Test(req, -1)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	out := apiResult{status: res.StatusCode, body: map[string]any{}}
	b, _ := io.ReadAll(res.Body)
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out.body); err != nil {
			e.t.Fatalf("%s %s: not JSON: %s", method, path, b)
		}
	}
	return out
}

func (e *env) upload(token, fileName string, content []byte, fields map[string]string) apiResult {
	e.t.Helper()
	body, ct := multipartBody(e.t, fileName, content, fields)
	return e.api(http.MethodPost, "/api/v1/datasets", token, body, ct)
}

func (e *env) countRows(table string) int {
	e.t.Helper()
	var n int
	if err := e.store.Pool().QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

const simpleJSONL = `{"id":"q1","prompt":"What is 2+2?","reference":"4"}
{"id":"q2","messages":[{"role":"user","content":"Name a colour."}]}
{"id":"q3","prompt":"Capital of France?","answer":"Paris"}
`

func TestDatasetAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ada := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	bob := e.token(e.createUser("bob@example.com", "correct horse", store.RoleUser))

	if r := e.upload("", "a.jsonl", []byte(simpleJSONL), nil); r.status != 401 {
		t.Fatalf("upload without token: %d", r.status)
	}
	if r := e.api(http.MethodPost, "/api/v1/datasets", ada, strings.NewReader(simpleJSONL), "application/json"); r.status != 415 {
		t.Fatalf("upload not multipart: %d %v", r.status, r.body)
	}
	if r := e.upload(ada, "", nil, map[string]string{"name": "x"}); r.status != 422 {
		t.Fatalf("upload without file: %d %v", r.status, r.body)
	}

	r := e.upload(ada, "quiz.jsonl", []byte(simpleJSONL), nil)
	if r.status != 201 {
		t.Fatalf("upload: %d %v", r.status, r.body)
	}
	for _, k := range []string{"dataset_id", "name", "format", "count", "bytes", "sha256", "uploaded_at"} {
		if _, ok := r.body[k]; !ok {
			t.Errorf("201 body lacks %q: %v", k, r.body)
		}
	}
	if r.body["name"] != "quiz" || r.body["format"] != "simple" || r.body["count"] != 3.0 || r.body["bytes"] != float64(len(simpleJSONL)) {
		t.Fatalf("upload result: %v", r.body)
	}
	id := int64(r.body["dataset_id"].(float64))
	path := "/api/v1/datasets/" + itoa(id)

	// Identical content: offered for reuse, or stored as a copy when asked.
	if r := e.upload(ada, "again.jsonl", []byte(simpleJSONL), nil); r.status != 409 || len(r.body["existing"].([]any)) != 1 {
		t.Fatalf("duplicate upload: %d %v", r.status, r.body)
	}
	if r := e.upload(ada, "again.jsonl", []byte(simpleJSONL), map[string]string{"allow_duplicate": "true", "visibility": "shared", "name": "Quiz copy"}); r.status != 201 || r.body["visibility"] != "shared" || r.body["name"] != "Quiz copy" {
		t.Fatalf("duplicate allowed: %d %v", r.status, r.body)
	}

	// Items, keyset-paged.
	r = e.api(http.MethodGet, path+"/items?limit=2", ada, nil, "")
	items := r.body["items"].([]any)
	if r.status != 200 || len(items) != 2 || r.body["next"] == nil {
		t.Fatalf("items page 1: %d %v", r.status, r.body)
	}
	first := items[0].(map[string]any)
	if first["custom_id"] != "q1" || first["reference"].(map[string]any)["answer"] != "4" {
		t.Fatalf("first item: %v", first)
	}
	r = e.api(http.MethodGet, path+"/items?limit=2&after="+r.body["next"].(string), ada, nil, "")
	if items := r.body["items"].([]any); len(items) != 1 || items[0].(map[string]any)["custom_id"] != "q3" || r.body["next"] != nil {
		t.Fatalf("items page 2: %v", r.body)
	}
	if r := e.api(http.MethodGet, path+"/items?limit=0", ada, nil, ""); r.status != 400 {
		t.Fatalf("bad limit: %d", r.status)
	}

	// Privacy: bob sees only the shared copy, and may not delete it.
	if r := e.api(http.MethodGet, path, bob, nil, ""); r.status != 404 {
		t.Fatalf("bob reads ada's private dataset: %d", r.status)
	}
	r = e.api(http.MethodGet, "/api/v1/datasets", bob, nil, "")
	if list := r.body["datasets"].([]any); len(list) != 1 || list[0].(map[string]any)["name"] != "Quiz copy" {
		t.Fatalf("bob's list: %v", r.body)
	}
	shared := int64(r.body["datasets"].([]any)[0].(map[string]any)["dataset_id"].(float64))
	if r := e.api(http.MethodDelete, "/api/v1/datasets/"+itoa(shared), bob, nil, ""); r.status != 403 {
		t.Fatalf("bob deletes ada's shared dataset: %d", r.status)
	}
	if r := e.api(http.MethodDelete, path, ada, nil, ""); r.status != 204 {
		t.Fatalf("delete: %d %v", r.status, r.body)
	}
	if r := e.api(http.MethodGet, path, ada, nil, ""); r.status != 404 {
		t.Fatalf("get after delete: %d", r.status)
	}
}

func TestDatasetUploadWithErrorsStoresNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	bad := `{"id":"a","prompt":"ok"}
{"id":"b","prompt":
{"id":"a","prompt":"dup"}
{"id":"c"}
`
	r := e.upload(tok, "bad.jsonl", []byte(bad), nil)
	if r.status != 422 {
		t.Fatalf("status %d %v", r.status, r.body)
	}
	errs := r.body["errors"].([]any)
	want := []struct {
		line  float64
		field string
	}{{2, ""}, {3, "custom_id"}, {4, "prompt"}}
	if len(errs) != len(want) {
		t.Fatalf("errors: %v", errs)
	}
	for i, w := range want {
		got := errs[i].(map[string]any)
		if got["line"] != w.line || got["field"] != w.field || got["message"] == "" {
			t.Errorf("error %d = %v, want line %v field %q", i, got, w.line, w.field)
		}
	}
	if r := e.upload(tok, "ok.jsonl", []byte(simpleJSONL), map[string]string{"visibility": "public"}); r.status != 422 ||
		r.body["errors"].([]any)[0].(map[string]any)["field"] != "visibility" {
		t.Fatalf("bad visibility: %d %v", r.status, r.body)
	}
	// A value PostgreSQL refuses (NUL in a string) is the file's error too.
	if r := e.upload(tok, "nul.jsonl", []byte(`{"prompt":"a\u0000b"}`+"\n"), nil); r.status != 422 || len(r.body["errors"].([]any)) != 1 {
		t.Fatalf("NUL in a string: %d %v", r.status, r.body)
	}
	if n := e.countRows("datasets") + e.countRows("dataset_items"); n != 0 {
		t.Fatalf("%d rows stored after a failed upload", n)
	}
}

func TestPublicDatasetsUpload(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	for _, tc := range []struct {
		path, format string
		count        float64
	}{
		{"../../shared/datasets/gsm8k/test.jsonl", "gsm8k", 1319},
		{"../../shared/datasets/humaneval/HumanEval.jsonl.gz", "humaneval", 164},
	} {
		b, err := os.ReadFile(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		r := e.upload(tok, tc.path[strings.LastIndex(tc.path, "/")+1:], b, nil)
		if r.status != 201 || r.body["format"] != tc.format || r.body["count"] != tc.count || r.body["bytes"] != float64(len(b)) {
			t.Errorf("%s: %d %v", tc.path, r.status, r.body)
		}
	}
}

func TestDatasetPagesShowLineNumberedErrorsAndPreview(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get("/datasets")
	if page.doc.Find(`[data-testid="no-datasets"]`).Length() != 1 {
		t.Fatal("datasets page does not say there are none")
	}
	action, _ := page.doc.Find(`form[data-testid="upload-form"]`).Attr("action")

	post := func(content string) response {
		body, ct := multipartBody(t, "mixed.jsonl", []byte(content), map[string]string{"_csrf": c.csrf, "name": "Mixed"})
		req := httptest.NewRequest(http.MethodPost, action, body)
		req.Header.Set("Content-Type", ct)
		return c.do(req)
	}
	res := post("{\"prompt\":\"fine\"}\nnot json\n{\"prompt\":42}\n")
	if res.status != 422 {
		t.Fatalf("upload with errors: %d", res.status)
	}
	var lines []string
	res.doc.Find(`[data-testid="upload-error"]`).Each(func(_ int, s *goquery.Selection) {
		lines = append(lines, s.Find("td").First().Text())
	})
	if strings.Join(lines, ",") != "2,3" {
		t.Fatalf("error lines shown = %v, want 2,3: %.500s", lines, res.body)
	}
	if !strings.Contains(res.text(`[data-testid="upload-errors"]`), "Nothing was stored") {
		t.Error("the page does not say nothing was stored")
	}

	res = post(simpleJSONL)
	if res.status != 303 || !strings.HasPrefix(res.header.Get("Location"), "/datasets/") {
		t.Fatalf("good upload: %d %q", res.status, res.header.Get("Location"))
	}
	detail := c.get(res.header.Get("Location"))
	if detail.text(`[data-testid="dataset-name"]`) != "Mixed" || detail.text(`[data-testid="dataset-count"]`) != "3" ||
		detail.doc.Find(`table[data-testid="preview"] tbody tr`).Length() != 3 {
		t.Fatalf("detail page: %.600s", detail.body)
	}
	if !strings.Contains(detail.text(`table[data-testid="preview"]`), "What is 2+2?") {
		t.Error("preview does not show the prompt")
	}
	// Without the CSRF token in the action, the upload is refused.
	body, ct := multipartBody(t, "x.jsonl", []byte(simpleJSONL), nil)
	req := httptest.NewRequest(http.MethodPost, "/datasets", body)
	req.Header.Set("Content-Type", ct)
	if res := c.do(req); res.status != 403 {
		t.Fatalf("upload without CSRF token: %d", res.status)
	}
	// Delete.
	delAction, _ := detail.doc.Find(`form[action$="/delete"]`).Attr("action")
	if res := c.post(delAction, nil); res.status != 303 {
		t.Fatalf("delete: %d", res.status)
	}
	if e.countRows("datasets") != 0 || e.countRows("dataset_items") != 0 {
		t.Fatal("delete left rows behind")
	}
}
