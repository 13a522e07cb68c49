package handlers_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/jobs"
)

// A length sweep's steps on the run page (table, where the runtime began
// to queue and to preempt, the curves; in English and German), in GET
// /api/v1/runs/{id}/steps and GET /api/v1/runs/{id}, and in the summary
// CSV: the runtime's state at each step is read from the run's samples
// within the step's window. Three steps of 10 requests, 1 s apart: input
// 128 (nothing waits), 512 (2 wait), 2048 (3 wait, 6 preemptions).
func TestLengthSweepOnPageAPIAndCSV(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	benchmarkID, runID := runWithResults(t, e, tok, 30, func(i int) string { return "x" })
	if _, err := e.store.Pool().Exec(ctx, `UPDATE results SET
		phase = CASE WHEN idx < 10 THEN 'input 128' WHEN idx < 20 THEN 'input 512' ELSE 'input 2048' END,
		prompt_tokens = CASE WHEN idx < 10 THEN 128 WHEN idx = 15 THEN 514 WHEN idx < 20 THEN 512 ELSE 2048 END,
		ttft_ms = CASE WHEN idx < 10 THEN 10 WHEN idx < 20 THEN 32 ELSE 100 + idx END,
		sent_at = '2026-01-01T00:00:00Z'::timestamptz + make_interval(secs => idx), status = 'ok', error_class = '', error = '', e2e_ms = 900, tpot_ms = 20,
		itl_gaps_us = ARRAY[20000, 20000]::int4[], completion_tokens = 3
		WHERE run_id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Pool().Exec(ctx, `INSERT INTO run_samples (run_id, t, running, waiting, kv_cache, preemptions)
		SELECT $1, '2026-01-01T00:00:00Z'::timestamptz + make_interval(secs => s), r, w, k, p
		FROM (VALUES (5, 4, 0, 0.2, 0), (15, 4, 2, 0.9, 0), (25, 2, 3, 1.0, 4), (26, 2, 1, 0.95, 6)) v(s, r, w, k, p)`, runID); err != nil {
		t.Fatal(err)
	}
	sum, err := summary.Run(ctx, e.store, runID, jobs.SLO{}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(sum)
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET summary = $2, state = 'completed' WHERE id = $1`, runID, raw); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get(fmt.Sprintf("/runs/%d", runID))
	if n := page.doc.Find(`[data-testid="length-steps-table"] tbody tr`).Length(); n != 3 || page.doc.Find(`[data-testid="steps-table"]`).Length() != 0 {
		t.Fatalf("%d length step rows (and a rate sweep's table: %d)", n, page.doc.Find(`[data-testid="steps-table"]`).Length())
	}
	for sel, want := range map[string]string{
		`[data-testid="length-limits"]`:                                       "The runtime began to queue requests at input 512 tokens (input 512) and began to preempt at input 2048 tokens (input 2048) (3 steps measured from its /metrics).",
		`[data-testid="length-step-input 512"] [data-testid="prompt-tokens"]`: "512 (off by at most 2)",
		`[data-testid="length-step-input 128"] [data-testid="prefill"]`:       "12800 (12800–12800)",
		`[data-testid="length-step-input 128"] [data-testid="waiting"]`:       "0",
		`[data-testid="length-step-input 2048"] [data-testid="kv-cache"]`:     "100.0 %",
		`[data-testid="length-step-input 2048"] [data-testid="preemptions"]`:  "6",
	} {
		if got := page.text(sel); got != want {
			t.Errorf("%s: %q, want %q", sel, got, want)
		}
	}
	for _, id := range []string{"length-ttft", "length-prefill", "length-itl", "length-kv", "length-waiting"} {
		if page.doc.Find(`[data-testid="chart-`+id+`"] svg`).Length() != 1 {
			t.Errorf("no %s chart", id)
		}
	}
	de := c.getIn(fmt.Sprintf("/runs/%d", runID), "de")
	if got := de.text(`[data-testid="length-limits"]`); !strings.HasPrefix(got, "Die Runtime ließ ab 512 Eingabe-Tokens Anfragen warten") {
		t.Errorf("German limits: %q", got)
	}

	r := e.api(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d/steps", runID), tok, nil, "")
	steps, _ := r.body["steps"].([]any)
	lim, _ := r.body["length_limits"].(map[string]any)
	if r.status != 200 || len(steps) != 3 || r.body["saturation"] != nil || lim["preempting_input_tokens"] != 2048.0 || lim["queueing_step"] != "input 512" {
		t.Fatalf("steps API: %d %v", r.status, r.body)
	}
	first := steps[0].(map[string]any)
	pf, _ := first["prefill_tokens_per_s"].(map[string]any)
	rt, _ := steps[2].(map[string]any)["runtime"].(map[string]any)
	if first["input_tokens_target"] != 128.0 || first["prompt_tokens_off"] != 0.0 || pf["median"] != 12800.0 || pf["n"] != 10.0 ||
		rt["preemptions"] != 6.0 || rt["max_waiting"] != 3.0 || rt["readings"] != 2.0 {
		t.Fatalf("steps API's first step %v, last step's runtime %v", first, rt)
	}
	if r := e.api(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", runID), tok, nil, ""); !strings.Contains(fmt.Sprint(r.body), "preempting_step:input 2048") {
		t.Errorf("the run API leaves out the limits: %v", r.body)
	}
	status, _, body := e.raw("/api/v1/benchmarks/"+benchmarkID+"/summary?format=csv", tok)
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || status != 200 || len(recs) != 5 {
		t.Fatalf("summary CSV: %d %v %q", status, err, recs)
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	if recs[4][col["step"]] != "input 2048" || recs[4][col["input_tokens_target"]] != "2048" || recs[4][col["runtime_preemptions"]] != "6.000" ||
		recs[3][col["prompt_tokens_off"]] != "2.000" || recs[2][col["runtime_waiting_max"]] != "0.000" || recs[1][col["input_tokens_target"]] != "" {
		t.Fatalf("summary CSV rows: %q", recs)
	}
}

// The form takes a length sweep: its lengths beside their fields (each
// entry named), then a preview and a launch whose run keeps them; the API
// refuses a bad length sweep with 422 naming the field. The form's
// messages are in the reader's language.
func TestLengthSweepFormAndAPI(t *testing.T) {
	t.Parallel()
	e, c, ds := formEnv(t)
	c.get("/benchmarks/new")
	form := url.Values{"name": {"Lengths"}, "dataset_id": {ds}, "max_tokens": {"16"}, "load_kind": {"length-sweep"}, "concurrency": {"2"},
		"lengths_input": {"128, lots, 0"}, "lengths_output": {"32"},
		"target_0_model": {"acme/small-1b"}, "target_0_runtime": {"sim"}, "target_0_hardware": {"cpu-2c"}, "action": {"preview"}}
	res := c.post("/benchmarks/new", form)
	if res.status != 422 || res.text(`[data-path="load.lengths.input[1]"]`) != `"lots" is not a whole number` {
		t.Fatalf("bad length: %d %q", res.status, res.text(`[data-testid="field-error"]`))
	}
	form.Set("lengths_input", "128, 0")
	if res = c.post("/benchmarks/new", form); res.status != 422 || res.text(`[data-path="load.lengths.input[1]"]`) != "a length from 1 to 131072 tokens" {
		t.Fatalf("zero length: %d %q", res.status, res.text(`[data-testid="field-error"]`))
	}
	if de := c.postIn("/benchmarks/new", "de", form); de.status != 422 || de.text(`[data-path="load.lengths.input[1]"]`) != "eine Länge von 1 bis 131072 Tokens" {
		t.Fatalf("zero length, in German: %d %q", de.status, de.text(`[data-testid="field-error"]`))
	}
	form.Set("lengths_input", "128, 512")
	if res = c.post("/benchmarks/new", form); res.status != 200 || res.doc.Find(`[data-testid="plan-run"]`).Length() != 1 {
		t.Fatalf("preview: %d %q", res.status, res.text(`[data-testid="benchmark-errors"]`))
	}
	form.Set("action", "launch")
	if res = c.post("/benchmarks/new", form); res.status != 303 && res.status != 302 {
		t.Fatalf("launch: %d %q", res.status, res.text(`[data-testid="benchmark-errors"]`))
	}
	var raw []byte
	if err := e.store.Pool().QueryRow(context.Background(), `SELECT args FROM river_job WHERE kind = 'benchmark_run' ORDER BY id DESC LIMIT 1`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var args jobs.RunArgs
	if err := json.Unmarshal(raw, &args); err != nil || args.Load.Profile != jobs.LoadLengthSweep || len(args.Load.Lengths.Steps()) != 2 ||
		args.Load.Lengths.Steps()[1].Phase() != "input 512 output 32" {
		t.Fatalf("the run's load: %s (%v)", raw, err)
	}

	tok := e.token(e.createUser("bo@example.com", "correct horse", store.RoleUser))
	manifest := `{"name":"L","dataset":` + ds + `,"targets":[{"model":"acme/small-1b","runtime":"sim","hardware":"cpu-2c"}],` +
		`"load":{"profile":"length-sweep","lengths":{"input":[128,128]}},"sampling":{"max_tokens":8}}`
	r := e.api(http.MethodPost, "/api/v1/benchmarks?dry_run=true", tok, strings.NewReader(manifest), "application/json")
	if r.status != 422 || !strings.Contains(fmt.Sprint(r.body["errors"]), "path:load.lengths.input[1]") ||
		!strings.Contains(fmt.Sprint(r.body["errors"]), "the same length as load.lengths.input[0]") {
		t.Fatalf("API: %d %v", r.status, r.body)
	}
}

// A concurrency sweep's run page says at which concurrency the runtime
// began to queue and to preempt, from its /metrics within each step's
// window (in English and German), and the steps API carries each step's
// runtime state: concurrency 1 (nothing waits), 4 (2 wait), 8 (3 wait, 6
// preemptions).
func TestConcurrencySweepSaysWhereTheRuntimeQueues(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	_, runID := runWithResults(t, e, tok, 30, func(i int) string { return "x" })
	if _, err := e.store.Pool().Exec(ctx, `UPDATE results SET
		phase = CASE WHEN idx < 10 THEN 'concurrency 1' WHEN idx < 20 THEN 'concurrency 4' ELSE 'concurrency 8' END,
		sent_at = '2026-01-01T00:00:00Z'::timestamptz + make_interval(secs => idx), status = 'ok', error_class = '', error = '',
		ttft_ms = 10, e2e_ms = 900, tpot_ms = 20, itl_gaps_us = ARRAY[20000, 20000]::int4[], completion_tokens = 3
		WHERE run_id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Pool().Exec(ctx, `INSERT INTO run_samples (run_id, t, running, waiting, kv_cache, preemptions)
		SELECT $1, '2026-01-01T00:00:00Z'::timestamptz + make_interval(secs => s), r, w, k, p
		FROM (VALUES (5, 1, 0, 0.2, 0), (15, 4, 2, 0.9, 0), (25, 6, 3, 1.0, 4), (26, 6, 1, 0.95, 6)) v(s, r, w, k, p)`, runID); err != nil {
		t.Fatal(err)
	}
	sum, err := summary.Run(ctx, e.store, runID, jobs.SLO{}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(sum)
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET summary = $2, state = 'completed' WHERE id = $1`, runID, raw); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	want := "The runtime began to queue requests at 4 requests in flight and began to preempt at 8 requests in flight (3 steps measured from its /metrics)."
	if got := c.get(fmt.Sprintf("/runs/%d", runID)).text(`[data-testid="sweep-limits"]`); got != want {
		t.Errorf("sweep limits: %q, want %q", got, want)
	}
	if got := c.getIn(fmt.Sprintf("/runs/%d", runID), "de").text(`[data-testid="sweep-limits"]`); !strings.HasPrefix(got, "Die Runtime ließ ab 4 gleichzeitigen Anfragen weitere warten und begann ab 8 gleichzeitigen Anfragen zu verdrängen") {
		t.Errorf("German sweep limits: %q", got)
	}
	r := e.api(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d/steps", runID), tok, nil, "")
	steps, _ := r.body["steps"].([]any)
	if r.status != 200 || len(steps) != 3 {
		t.Fatalf("steps API: %d %v", r.status, r.body)
	}
	if st, _ := steps[1].(map[string]any)["runtime"].(map[string]any); st == nil || st["max_waiting"] != 2.0 {
		t.Errorf("step 2's runtime state: %v", steps[1])
	}
}
