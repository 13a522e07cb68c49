package handlers_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/sandbox"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// A HumanEval run of two answers per item, executed in the sandbox: the
// run page shows pass@1 and the counts by class, an item's page its
// class, stderr and the program run, the API and the CSV carry them.
func TestExecutedRunOnPagesAPIAndCSV(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	const ds = `{"task_id":"H/0","prompt":"def inc(x):\n","test":"def check(f):\n    assert f(1) == 2\n","entry_point":"inc","canonical_solution":"    return x + 1\n"}
{"task_id":"H/1","prompt":"def dbl(x):\n","test":"def check(f):\n    assert f(2) == 4\n","entry_point":"dbl","canonical_solution":"    return 2 * x\n"}
`
	up := e.upload(tok, "he.jsonl", []byte(ds), nil)
	if up.body["default_scorer"] != "humaneval" {
		t.Fatalf("default scorer %v, want humaneval", up.body["default_scorer"])
	}
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "m/small", Quantization: "bf16"})
	agent := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	manifest := func(extra string) string {
		return fmt.Sprintf(`{"name":"code","dataset":%v,"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}],
		"load":{"profile":"sequential"},"sampling":{"max_tokens":64%s},"scorer":"humaneval","scorer_options":{"exec":{"timeout":"5s"}}}`, up.body["dataset_id"], extra)
	}
	// Bounds named by field.
	for extra, field := range map[string]string{`,"n":101`: "sampling.n", `,"n":-1`: "sampling.n"} {
		r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest(extra)), "application/json")
		if r.status != 422 || !strings.Contains(fmt.Sprint(r.body), field) {
			t.Fatalf("%s: %d %v", extra, r.status, r.body)
		}
	}
	bad := strings.Replace(manifest(""), `"timeout":"5s"`, `"timeout":"5s","truncate":"sometimes"`, 1)
	if r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(bad), "application/json"); r.status != 422 ||
		!strings.Contains(fmt.Sprint(r.body), "scorer_options.exec.truncate") {
		t.Fatalf("bad truncate: %d %v", r.status, r.body)
	}
	r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest(`,"n":2`)), "application/json")
	if r.status != 201 {
		t.Fatalf("create: %v", r.body)
	}
	runID := int64(r.body["runs"].([]any)[0].(map[string]any)["run_id"].(float64))
	var jobID int64
	_ = e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, runID).Scan(&jobID)
	claim, err := e.store.ClaimRun(ctx, runID, agent.ID, jobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	if claim.Samples != 2 || claim.Total != 4 {
		t.Fatalf("claimed %d samples, total %d", claim.Samples, claim.Total)
	}
	pending, err := e.store.PendingItems(ctx, runID, claim.DatasetID, claim.Total)
	if err != nil || len(pending) != 4 {
		t.Fatalf("pending: %d %v", len(pending), err)
	}
	// Item 0: right twice. Item 1: right once, then an exception.
	outputs := map[[2]int]string{{0, 0}: "    return x + 1\n", {0, 1}: "    return 1 + x\n", {1, 0}: "    return 2 * x\n", {1, 1}: "    return x[0]\n"}
	var rs []store.ResultRecord
	for _, p := range pending {
		rs = append(rs, store.ResultRecord{Result: jobs.Result{Idx: p.Idx, Sample: p.Sample, CustomID: p.CustomID, Status: jobs.StatusOK,
			Output: outputs[[2]int{p.Idx, p.Sample}], CompletionTokens: 5, ContentEvents: 5, TTFT: time.Millisecond, E2E: 2 * time.Millisecond}, SentAt: time.Now()})
	}
	if n, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil || n != 4 {
		t.Fatalf("write: %d %v", n, err)
	}
	if err := e.store.QueueExecution(ctx, runID, "humaneval"); err != nil {
		t.Fatal(err)
	}
	if err := sandbox.NewExecutor(e.store, sandbox.NewRunner(), 2, nil).ExecuteRun(ctx, runID, "humaneval"); err != nil {
		t.Fatal(err)
	}

	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get(fmt.Sprintf("/runs/%d", runID))
	// pass@1 = mean(2/2, 1/2) = 0.75; pass@2 is not reported (k in 1, 10, 100).
	if got := page.text(`[data-testid="run-pass-at"]`); !strings.HasPrefix(got, "pass@1 0.750 (2 answers per item") {
		t.Fatalf("pass@k: %q", got)
	}
	if got := page.text(`[data-testid="run-exec-counts"]`); got != "passed 3 · failed 0 · exception 1 · syntax_error 0 · timeout 0 · killed 0" {
		t.Fatalf("counts: %q", got)
	}
	if n := page.doc.Find(`[data-testid="result-exec"]`).Length(); n != 4 {
		t.Fatalf("%d results show their class, want 4", n)
	}
	item := c.get(fmt.Sprintf("/runs/%d/items/1?sample=1", runID))
	if item.status != 200 || item.text(`[data-testid="item-exec-status"]`) != "exception" ||
		!strings.Contains(item.text(`[data-testid="item-exec-stderr"]`), "TypeError") ||
		item.text(`[data-testid="item-program"] pre`) != "def dbl(x):\n    return x[0]\n\ndef check(f):\n    assert f(2) == 4\n\ncheck(dbl)" {
		t.Fatalf("item page: %d %q %q %q", item.status, item.text(`[data-testid="item-exec-status"]`), item.text(`[data-testid="item-exec-stderr"]`), item.text(`[data-testid="item-program"] pre`))
	}
	if res := c.get(fmt.Sprintf("/runs/%d/items/1?sample=100", runID)); res.status != 400 {
		t.Fatalf("sample 100: %d", res.status)
	}

	api := e.api(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", runID), tok, nil, "")
	ex, _ := api.body["execution"].(map[string]any)
	if api.status != 200 || ex["state"] != "done" || ex["pass_at"].(map[string]any)["1"] != 0.75 || api.body["samples"] != 2.0 {
		t.Fatalf("API: %d %v", api.status, api.body)
	}

	st, _, body := e.raw(fmt.Sprintf("/api/v1/runs/%d/results?format=csv", runID), tok)
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if st != 200 || err != nil || len(recs) != 5 {
		t.Fatalf("CSV: %d %v %d rows", st, err, len(recs))
	}
	head := strings.Join(recs[0], ",")
	if !strings.HasSuffix(head, ",sample,exec_status,exec_stderr,exec_ms") {
		t.Fatalf("CSV header %s", head)
	}
	if last := recs[4]; last[len(last)-4] != "1" || last[len(last)-3] != "exception" || !strings.Contains(last[len(last)-2], "TypeError") {
		t.Fatalf("CSV last row %v", last)
	}
}
