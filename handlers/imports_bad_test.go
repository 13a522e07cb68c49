package handlers_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// importBody is a multipart import with fields before or after the file.
func importBody(t *testing.T, content string, before, after map[string]string) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range before {
		_ = mw.WriteField(k, v)
	}
	fw, err := mw.CreateFormFile("file", "out.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write([]byte(content))
	for k, v := range after {
		_ = mw.WriteField(k, v)
	}
	_ = mw.Close()
	return &buf, mw.FormDataContentType()
}

// An import that cannot be stored whole is refused with 422 naming the
// line and field (or the file), and nothing is stored: no benchmark, run
// or result. Before, a \u0000 in an output failed in PostgreSQL (500), a
// completion_tokens of 1e12 was stored as a negative number, and an empty
// import or one matching no item made an empty run.
func TestBadImportsAreRefusedAndStoreNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	ds := e.upload(tok, "q.jsonl", []byte(simpleJSONL), nil)
	testkit.Model(t.Context(), t, e.store, &testkit.ModelOpts{Name: "outside/model", ParamsB: 7, Quantization: "bf16"})
	path := fmt.Sprintf("/api/v1/datasets/%v/imports", ds.body["dataset_id"])
	good := `{"custom_id":"q1","output":"4"}` + "\n"
	batch := func(id, usage string) string {
		return `{"custom_id":"` + id + `","response":{"status_code":200,"body":{"choices":[{"message":{"content":"Paris"},"finish_reason":"stop"}],"usage":` + usage + `}},"error":null}` + "\n"
	}
	for _, tc := range []struct {
		name          string
		file          string
		before, after map[string]string
		line          float64 // 0: no line
		field, want   string
	}{
		{"NUL in an output", good + `{"custom_id":"q2","output":"a\u0000b"}` + "\n", nil, nil, 2, "output", `contains \u0000 (a NUL character)`},
		{"NUL in a batch output", good + `{"custom_id":"q3","response":{"status_code":200,"body":{"choices":[{"message":{"content":"\u0000"}}]}}}` + "\n", nil, nil, 2,
			"response.body.choices[0].message.content", `\u0000`},
		{"completion_tokens 1e12", good + batch("q3", `{"prompt_tokens":5,"completion_tokens":1e12}`), nil, nil, 2,
			"response.body.usage.completion_tokens", "must be a whole number from 0 to 10000000 (got 1e12)"},
		{"completion_tokens beyond int32", batch("q3", `{"prompt_tokens":5,"completion_tokens":1000000000000}`), nil, nil, 1,
			"response.body.usage.completion_tokens", "got 1000000000000"},
		{"empty", "", nil, nil, 0, "file", "the file has no results: nothing was imported"},
		{"blank lines only", "\n\n  \n", nil, nil, 0, "file", "the file has no results"},
		{"no matching item", `{"custom_id":"zz","output":"x"}` + "\n", nil, nil, 0, "file", `no result matches an item of the dataset (1 results, none with a custom_id of the dataset's, such as "zz")`},
		{"unknown scorer after the file", good, map[string]string{"model": "outside/model"}, map[string]string{"scorer": "vibes"}, 0, "scorer", `"vibes"`},
		{"unknown model after the file", good, nil, map[string]string{"model": "outside/other"}, 0, "model", "no such model"},
		{"model that is not a model id", good, map[string]string{"model": "--x"}, nil, 0, "model", "is not a model id"},
		{"no model at all", good, nil, nil, 0, "model", "name the registry model"},
		{"NUL in the name", good, map[string]string{"model": "outside/model", "name": "a\x00"}, nil, 0, "name", "without NUL"},
	} {
		before := tc.before
		if before == nil && tc.field != "model" && tc.after == nil {
			before = map[string]string{"model": "outside/model"}
		}
		body, ct := importBody(t, tc.file, before, tc.after)
		r := e.api(http.MethodPost, path, tok, body, ct)
		errs := asList(r.body["errors"])
		if r.status != 422 || len(errs) != 1 {
			t.Errorf("%s: %d %v; want 422 with one error", tc.name, r.status, r.body)
			continue
		}
		got := errs[0].(map[string]any)
		line, _ := got["line"].(float64)
		if line != tc.line || got["field"] != tc.field || !strings.Contains(fmt.Sprint(got["message"]), tc.want) {
			t.Errorf("%s: error %v; want line %v, field %q, saying %q", tc.name, got, tc.line, tc.field, tc.want)
		}
	}
	if n := e.countRows("benchmarks") + e.countRows("runs") + e.countRows("results"); n != 0 {
		t.Fatalf("%d benchmarks, runs and results stored by refused imports", n)
	}

	// Settings may follow the file; the import then matches, with bounded
	// token counts, and its scoring is queued with the scorer given last.
	body, ct := importBody(t, batch("q1", `{"prompt_tokens":5,"completion_tokens":10000000}`)+`{"custom_id":"zz","output":"x"}`+"\n",
		nil, map[string]string{"model": "outside/model", "scorer": "exact", "name": "Late fields"})
	r := e.api(http.MethodPost, path, tok, body, ct)
	if r.status != 201 || r.body["matched"] != float64(1) || r.body["unmatched"] != float64(1) || fmt.Sprint(r.body["unmatched_ids"]) != "[zz]" {
		t.Fatalf("import with fields after the file: %d %v", r.status, r.body)
	}
	var tokens int64
	var scorer, name string
	if err := e.store.Pool().QueryRow(t.Context(), `SELECT r.output_tokens, j.args->>'scorer', b.name FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id
		JOIN river_job j ON j.kind = 'score_run' AND (j.args->>'run_id')::bigint = r.id WHERE r.id = $1`, int64(r.body["run_id"].(float64))).
		Scan(&tokens, &scorer, &name); err != nil {
		t.Fatal(err)
	}
	if tokens != 10_000_000 || scorer != "exact" || name != "Late fields" {
		t.Fatalf("run: %d tokens, scorer %q, name %q", tokens, scorer, name)
	}
}
