package handlers_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// GSM8K's test split imported as outside results made from its own
// answers scores 1,319/1,319 with the numeric scorer; with every final
// number perturbed, 0. Unmatched and missing ids are reported.
func TestImportGSM8KResultsAndScoreThem(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../shared/datasets/gsm8k/test.jsonl")
	if err != nil {
		t.Skipf("GSM8K test split not beside the checkout: %v", err)
	}
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	ds := e.upload(tok, "gsm8k.jsonl", raw, nil)
	if ds.status != 201 {
		t.Fatalf("dataset: %v", ds.body)
	}
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "outside/model", ParamsB: 7, Quantization: "bf16"})
	// Batch output lines made from the dataset's own answers.
	build := func(perturb bool, extra string, skipFirst bool) []byte {
		var b bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			if skipFirst && n == 1 {
				continue
			}
			var line struct{ Answer string }
			_ = json.Unmarshal(sc.Bytes(), &line)
			answer := line.Answer
			if perturb {
				answer += "1" // "#### 18" becomes "#### 181"
			}
			out, _ := json.Marshal(map[string]any{"id": fmt.Sprint("b", n), "custom_id": fmt.Sprint("gsm8k-", n), "error": nil,
				"response": map[string]any{"status_code": 200, "request_id": "r", "body": map[string]any{
					"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": answer}, "finish_reason": "stop"}},
					"usage":   map[string]int{"prompt_tokens": 50, "completion_tokens": 60}}}})
			b.Write(out)
			b.WriteByte('\n')
		}
		b.WriteString(extra)
		return b.Bytes()
	}
	imp := func(content []byte, fields map[string]string) apiResult {
		body, ct := multipartBody(t, "out.jsonl", content, fields)
		return e.api(http.MethodPost, fmt.Sprintf("/api/v1/datasets/%v/imports", ds.body["dataset_id"]), tok, body, ct)
	}
	svc := &score.Service{Store: e.store}
	quality := func(run float64) (float64, int) {
		if err := svc.ScoreRun(ctx, int64(run), ""); err != nil {
			t.Fatal(err)
		}
		var q float64
		var right int
		if err := e.store.Pool().QueryRow(ctx, `SELECT quality, (SELECT count(*) FROM results WHERE run_id = $1 AND score = 1) FROM runs WHERE id = $1`, int64(run)).Scan(&q, &right); err != nil {
			t.Fatal(err)
		}
		return q, right
	}

	r := imp(build(false, "", false), map[string]string{"model": "outside/model", "scorer": "numeric", "name": "Batch API run"})
	if r.status != 201 || r.body["matched"] != 1319.0 || r.body["unmatched"] != 0.0 || r.body["missing"] != 0.0 {
		t.Fatalf("import: %d %v", r.status, r.body)
	}
	if q, right := quality(r.body["run_id"].(float64)); q != 1 || right != 1319 {
		t.Fatalf("own answers: quality %v, %d right", q, right)
	}
	var n int
	if err := e.store.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'score_run' AND (args->>'run_id')::bigint = $1`, int64(r.body["run_id"].(float64))).Scan(&n); err != nil || n != 1 {
		t.Fatalf("scoring not queued with the import: %d %v", n, err)
	}

	r = imp(build(true, `{"custom_id":"not-in-the-dataset","output":"7"}`+"\n", true), map[string]string{"model": "outside/model", "scorer": "numeric"})
	if r.status != 201 || r.body["matched"] != 1318.0 || r.body["unmatched"] != 1.0 || r.body["missing"] != 1.0 ||
		!strings.Contains(fmt.Sprint(r.body["unmatched_ids"]), "not-in-the-dataset") {
		t.Fatalf("perturbed import: %d %v", r.status, r.body)
	}
	if q, right := quality(r.body["run_id"].(float64)); q != 0 || right != 0 {
		t.Fatalf("perturbed answers: quality %v, %d right", q, right)
	}

	// Bad input: the line and field are named, nothing is stored.
	runsBefore := e.countRows("runs")
	r = imp([]byte("{\"custom_id\":\"gsm8k-1\",\"output\":\"1\"}\n{\"output\":\"2\"}\n"), map[string]string{"model": "outside/model"})
	errs := fmt.Sprint(r.body["errors"])
	if r.status != 422 || !strings.Contains(errs, "line:2") || !strings.Contains(errs, "field:custom_id") || e.countRows("runs") != runsBefore {
		t.Fatalf("bad line: %d %v", r.status, r.body)
	}
	if r = imp(build(false, "", false), map[string]string{"model": "nobody/knows"}); r.status != 422 || !strings.Contains(fmt.Sprint(r.body["errors"]), "field:model") {
		t.Fatalf("unknown model: %d %v", r.status, r.body)
	}
	if r = imp(build(false, "", false), map[string]string{"model": "outside/model", "scorer": "meteor"}); r.status != 422 {
		t.Fatalf("unknown scorer: %d %v", r.status, r.body)
	}
	if e.countRows("runs") != runsBefore {
		t.Fatal("a refused import left a run behind")
	}
}

// The dataset page's import form does the same from the browser.
func TestImportFromTheDatasetPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	ds := e.upload(tok, "q.jsonl", []byte(simpleJSONL), nil)
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "outside/model", ParamsB: 7, Quantization: "bf16"})
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get(fmt.Sprintf("/datasets/%v", ds.body["dataset_id"]))
	action, ok := page.doc.Find(`[data-testid="import-form"]`).Attr("action")
	if !ok || strings.Contains(action, "_csrf") {
		t.Fatalf("import form action %q: want no token in the URL", action)
	}
	if first, _ := page.doc.Find(`[data-testid="import-form"] input`).First().Attr("name"); first != "_csrf" {
		t.Fatalf("the import form's first field is %q, want the CSRF token", first)
	}
	post := func(content string, model string) response {
		body, ct := multipartBody(t, "out.jsonl", []byte(content), map[string]string{"_csrf": c.csrf, "model": model, "scorer": "exact"})
		req := httptest.NewRequest(http.MethodPost, action, body)
		req.Header.Set("Content-Type", ct)
		return c.do(req)
	}
	res := post(`{"custom_id":"q1","output":"4"}`+"\n", "outside/model")
	loc := res.header.Get("Location")
	if res.status != 303 || !strings.HasPrefix(loc, "/runs/") {
		t.Fatalf("import: %d %q", res.status, loc)
	}
	run := c.get(loc)
	if !strings.Contains(run.text(`[data-testid="flash"]`), "1 results matched") || run.text(`[data-testid="results"] tbody tr td`) == "" {
		t.Fatalf("run page after import: %q", run.text("main"))
	}
	res = post(`{"custom_id":"q1"}`+"\n", "outside/model")
	back := c.get(res.header.Get("Location"))
	if res.status != 303 || !strings.Contains(back.text(`[data-testid="flash"]`), "line 1, output") {
		t.Fatalf("refused import: %d %q", res.status, back.text(`[data-testid="flash"]`))
	}
}

// Results imported from elsewhere rank on quality in the dataset's
// recommendation beside the runs measured here, instead of silently
// missing from it.
func TestImportedRunsAreInTheDatasetRecommendation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	ds := e.upload(tok, "d.jsonl", []byte(simpleJSONL), nil)
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "outside/model", ParamsB: 7, Quantization: "bf16"})
	var b bytes.Buffer
	for id, answer := range map[string]string{"q1": "4", "q3": "Paris"} {
		out, _ := json.Marshal(map[string]any{"id": "b-" + id, "custom_id": id, "error": nil,
			"response": map[string]any{"status_code": 200, "request_id": "r", "body": map[string]any{
				"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": answer}, "finish_reason": "stop"}},
				"usage":   map[string]int{"prompt_tokens": 5, "completion_tokens": 2}}}})
		b.Write(out)
		b.WriteByte('\n')
	}
	body, ct := multipartBody(t, "out.jsonl", b.Bytes(), map[string]string{"model": "outside/model", "scorer": "exact", "name": "elsewhere"})
	r := e.api(http.MethodPost, fmt.Sprintf("/api/v1/datasets/%v/imports", ds.body["dataset_id"]), tok, body, ct)
	if r.status != 201 {
		t.Fatalf("import: %d %v", r.status, r.body)
	}
	run := int64(r.body["run_id"].(float64))
	if err := (&score.Service{Store: e.store}).ScoreRun(ctx, run, ""); err != nil {
		t.Fatal(err)
	}
	rec := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%v/recommendation", ds.body["dataset_id"]), tok, nil, "")
	if rec.status != 200 {
		t.Fatalf("recommendation: %d %v", rec.status, rec.body)
	}
	found := false
	for _, list := range []string{"feasible", "excluded", "not_comparable"} {
		xs, _ := rec.body[list].([]any)
		for _, x := range xs {
			if int64(x.(map[string]any)["run_id"].(float64)) == run {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("the imported run %d is missing from the dataset's recommendation: %v", run, rec.body)
	}
}
