package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/agentd/openai"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// batchJSONL is an OpenAI batch input whose items ask for their own
// answer lengths, or none.
const batchJSONL = `{"custom_id":"own","method":"POST","url":"/v1/chat/completions","body":{"model":"x","messages":[{"role":"user","content":"a"}],"max_tokens":7}}
{"custom_id":"none","method":"POST","url":"/v1/chat/completions","body":{"model":"x","messages":[{"role":"user","content":"b"}]}}
{"custom_id":"completion","method":"POST","url":"/v1/chat/completions","body":{"model":"x","messages":[{"role":"user","content":"c"}],"max_completion_tokens":9}}
`

func postJSON(e *env, path, tok, body string) apiResult {
	e.t.Helper()
	return e.api(http.MethodPost, path, tok, strings.NewReader(body), "application/json")
}

func firstError(r apiResult) (path, message string) {
	errs, _ := r.body["errors"].([]any)
	if len(errs) == 0 {
		return "", ""
	}
	fe := errs[0].(map[string]any)
	return fmt.Sprint(fe["path"]), fmt.Sprint(fe["message"])
}

// The quick start ({"model_id", "dataset_id"}) creates a benchmark on a
// target a live agent serves, with the form's defaults; the items' own
// max_tokens reach the runtime; without a live agent that can load the
// model it is a 422 naming the model and what is missing.
func TestAPIQuickStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	up := e.upload(tok, "batch.jsonl", []byte(batchJSONL), nil)
	if up.status != 201 {
		t.Fatalf("dataset: %d %v", up.status, up.body)
	}
	dsID := int64(up.body["dataset_id"].(float64))
	tiny := testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "org/tiny", DisplayName: "Tiny", Quantization: "bf16"})
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "org/huge", ParamsB: 70, Quantization: "bf16"})

	// No agent at all.
	r := postJSON(e, "/api/v1/benchmarks", tok, fmt.Sprintf(`{"model_id":"org/tiny","dataset_id":%d}`, dsID))
	if path, msg := firstError(r); r.status != 422 || path != "model_id" || !strings.Contains(msg, `no live agent serves model "org/tiny"`) {
		t.Fatalf("without agents: %d %v", r.status, r.body)
	}
	// A 24 GB GPU agent serving vLLM; an H100 agent that is drained and one
	// whose heartbeat is stale serve nothing.
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "l4", Runtimes: []string{"vllm"}, Profile: store.HardwareProfile{Slug: "l4-24gb-x1", GPUName: "NVIDIA L4", GPUCount: 1, GPUMemoryBytes: 24e9}})
	h100 := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "h100", Runtimes: []string{"vllm"}, Profile: store.HardwareProfile{Slug: "h100-80gb-x4", GPUName: "NVIDIA H100", GPUCount: 4, GPUMemoryBytes: 80e9}})
	if err := e.store.SetAgentDrained(ctx, h100.ID, true); err != nil {
		t.Fatal(err)
	}
	stale := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "h100-b", Runtimes: []string{"sglang"}, Profile: store.HardwareProfile{Slug: "h100-80gb-x4", GPUName: "NVIDIA H100", GPUCount: 4, GPUMemoryBytes: 80e9}})
	if _, err := e.store.Pool().Exec(ctx, `UPDATE agents SET last_heartbeat_at = now() - interval '1 hour' WHERE id = $1`, stale.ID); err != nil {
		t.Fatal(err)
	}
	before := e.countRows("runs")
	r = postJSON(e, "/api/v1/benchmarks", tok, fmt.Sprintf(`{"model_id":"org/huge","dataset_id":%d}`, dsID))
	if path, msg := firstError(r); r.status != 422 || path != "model_id" || !strings.Contains(msg, `"org/huge"`) ||
		!strings.Contains(msg, "needs about") || !strings.Contains(msg, "vllm on l4-24gb-x1 (24.0 GB)") || strings.Contains(msg, "h100") {
		t.Fatalf("a model no live agent can load: %d %v", r.status, r.body)
	}
	if e.countRows("runs") != before {
		t.Fatal("a refused quick start created runs")
	}

	// A simulated agent too: the real runtime still comes first. The
	// model by its numeric id.
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "sim"})
	dry := postJSON(e, "/api/v1/benchmarks?dry_run=true", tok, fmt.Sprintf(`{"model_id":%d,"dataset_id":%d}`, tiny, dsID))
	if dry.status != 200 || dry.body["dry_run"] != true || e.countRows("runs") != before {
		t.Fatalf("dry run: %d %v", dry.status, dry.body)
	}
	r = postJSON(e, "/api/v1/benchmarks", tok, fmt.Sprintf(`{"model_id":%d,"dataset_id":%d}`, tiny, dsID))
	if r.status != 201 {
		t.Fatalf("quick start: %d %v", r.status, r.body)
	}
	runIDs, _ := r.body["run_ids"].([]any)
	runs, _ := r.body["runs"].([]any)
	if r.body["status"] != "queued" || r.body["started_at"] != nil || r.body["created_at"] == nil || len(runIDs) != 1 || len(runs) != 1 ||
		runs[0].(map[string]any)["run_id"] != runIDs[0] || r.body["name"] != "org/tiny on batch" || r.body["benchmark_id"] == nil {
		t.Fatalf("created: %v", r.body)
	}
	m := r.body["manifest"].(map[string]any)
	target := m["targets"].([]any)[0].(map[string]any)
	if target["model"] != "org/tiny" || target["runtime"] != "vllm" || target["hardware"] != "l4-24gb-x1" ||
		m["load"].(map[string]any)["profile"] != "sequential" || m["sampling"].(map[string]any)["max_tokens"] != 256.0 {
		t.Fatalf("defaults: %v", m)
	}

	// What the agent is handed: the job's arguments and the dataset's
	// items, turned into requests as agentd turns them.
	runID := int64(runIDs[0].(float64))
	var rawArgs []byte
	if err := e.store.Pool().QueryRow(ctx, `SELECT j.args FROM runs r JOIN river_job j ON j.id = r.river_job_id WHERE r.id = $1`, runID).Scan(&rawArgs); err != nil {
		t.Fatal(err)
	}
	var args jobs.RunArgs
	if err := json.Unmarshal(rawArgs, &args); err != nil {
		t.Fatal(err)
	}
	items, err := e.store.PendingItems(ctx, runID, dsID, 3)
	if err != nil || len(items) != 3 {
		t.Fatalf("items: %v %v", items, err)
	}
	want := map[string]struct{ maxTokens, maxCompletion any }{
		"own": {7.0, nil}, "none": {256.0, nil}, "completion": {nil, 9.0},
	}
	for _, it := range items {
		req, err := openai.BuildRequest(it.Request, args.Model, openai.ItemSampling(it.Request, args.Sampling))
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		if err := json.Unmarshal(req.Body, &body); err != nil {
			t.Fatal(err)
		}
		w := want[it.CustomID]
		if body["max_tokens"] != w.maxTokens || body["max_completion_tokens"] != w.maxCompletion || body["model"] != "org/tiny" {
			t.Errorf("%s is sent with max_tokens %v, max_completion_tokens %v; want %v, %v", it.CustomID, body["max_tokens"],
				body["max_completion_tokens"], w.maxTokens, w.maxCompletion)
		}
	}

	// The dataset by its name, the model by its name, a name of one's own.
	r = postJSON(e, "/api/v1/benchmarks", tok, `{"model_id":"org/tiny","dataset_id":"batch","name":"mine"}`)
	if r.status != 201 || r.body["name"] != "mine" || r.body["dataset_id"] != float64(dsID) {
		t.Fatalf("by names: %d %v", r.status, r.body)
	}

	// Bad requests name the field.
	for body, wantPath := range map[string]string{
		`{"model_id":1.5,"dataset_id":1}`:                                 "model_id",
		`{"model_id":-3,"dataset_id":1}`:                                  "model_id",
		`{"model_id":"","dataset_id":1}`:                                  "model_id",
		`{"model_id":[1],"dataset_id":1}`:                                 "model_id",
		`{"model_id":"org/tiny","dataset_id":{}}`:                         "dataset_id",
		`{"model_id":"org/tiny"}`:                                         "dataset_id",
		`{"model_id":"org/tiny","dataset_id":1,"colour":"blue"}`:          "colour",
		`{"model_id":"org/tiny","dataset_id":1,"name":7}`:                 "name",
		`{"model_id":"nobody/nothing","dataset_id":"batch"}`:              "model_id",
		fmt.Sprintf(`{"model_id":"org/tiny","dataset_id":%d}`, dsID+1000): "dataset_id",
		`{"model_id":"org/tiny","dataset_id":"batch","name":"a\u0000b"}`:  "name",
	} {
		r := postJSON(e, "/api/v1/benchmarks", tok, body)
		if path, msg := firstError(r); r.status != 422 || path != wantPath || msg == "" || strings.Contains(msg, "bench.") {
			t.Errorf("%s: %d %v, want 422 at %q", body, r.status, r.body, wantPath)
		}
	}
}

// The list answers each benchmark in the Benchmark Runner's shape, with
// its status aggregated over mixed runs, and pages without gaps or
// duplicates.
func TestAPIBenchmarkList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	up := e.upload(tok, "q.jsonl", []byte(simpleJSONL), nil)
	for _, m := range []store.ModelFields{
		{Name: "org/a", DisplayName: "Model A", ParamsB: 0.5, Quantization: "bf16", ContextLength: 4096},
		{Name: "org/b", ParamsB: 0.5, Quantization: "bf16", ContextLength: 4096},
	} {
		if _, err := e.store.CreateModel(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	agent := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	manifest := fmt.Sprintf(`{"name":"two","dataset":%v,"targets":[{"model":"org/a","runtime":"sim","hardware":"cpu-2c"},
		{"model":"org/b","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":8}}`, up.body["dataset_id"])
	created := postJSON(e, "/api/v1/benchmarks", tok, manifest)
	if created.status != 201 {
		t.Fatalf("create: %v", created.body)
	}
	id := created.body["benchmark_id"].(float64)
	ids := created.body["run_ids"].([]any)
	first, second := int64(ids[0].(float64)), int64(ids[1].(float64))
	get := func() map[string]any {
		t.Helper()
		r := e.api(http.MethodGet, "/api/v1/benchmarks", tok, nil, "")
		if r.status != 200 {
			t.Fatalf("list: %d %v", r.status, r.body)
		}
		for _, b := range r.body["benchmarks"].([]any) {
			if b.(map[string]any)["benchmark_id"] == id {
				return b.(map[string]any)
			}
		}
		t.Fatalf("benchmark %v not listed: %v", id, r.body)
		return nil
	}
	// GET /benchmarks/{id} says the same status, progress and ETA.
	detail := func(b map[string]any) {
		t.Helper()
		r := e.api(http.MethodGet, fmt.Sprintf("/api/v1/benchmarks/%v", id), tok, nil, "")
		if r.status != 200 {
			t.Fatalf("detail: %d %v", r.status, r.body)
		}
		for _, k := range []string{"status", "progress", "eta_seconds", "eta_reason", "completed", "total", "errors", "started_at", "finished_at"} {
			if v, ok := r.body[k]; !ok || fmt.Sprint(v) != fmt.Sprint(b[k]) {
				t.Errorf("detail %s = %v, the list's %v", k, v, b[k])
			}
		}
	}
	b := get()
	detail(b)
	if b["status"] != "queued" || b["progress"] != 0.0 || b["completed"] != 0.0 || b["total"] != 6.0 || b["eta_seconds"] != nil ||
		b["eta_reason"] != "no run of this benchmark has finished yet to time one" ||
		b["started_at"] != nil || b["total_time_seconds"] != nil || b["model_name"] != "Model A" || b["model"] != "org/a" ||
		b["dataset_name"] != "q" || b["dataset_id"] != up.body["dataset_id"] || len(b["models"].([]any)) != 2 || b["runs"] != 2.0 {
		t.Fatalf("queued: %v", b)
	}
	if b["models"].([]any)[1].(map[string]any)["model"] != "org/b" {
		t.Fatalf("models: %v", b["models"])
	}

	// The first run works two items at 40 tokens/s with 12 s to go; the
	// second waits for the one agent: running, 2 of 6 done, the ETA the
	// first run's 11.2 s and then the second's 3 requests at the first's
	// projected pace ((elapsed + 11.2 s) / 3 a request): 22.4 s and the
	// time the first has run, rounded up.
	var job int64
	_ = e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, first).Scan(&job)
	claim, err := e.store.ClaimRun(ctx, first, agent.ID, job, "sim")
	if err != nil {
		t.Fatal(err)
	}
	var rs []store.ResultRecord
	for i := range 2 {
		rs = append(rs, store.ResultRecord{Result: jobs.Result{Idx: i, CustomID: fmt.Sprint(i), Status: jobs.StatusOK, Output: "x",
			CompletionTokens: 4, ContentEvents: 4, TTFT: time.Millisecond, E2E: 2 * time.Millisecond}, SentAt: time.Now()})
	}
	if _, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET throughput = 40, eta_seconds = 11.2 WHERE id = $1`, first); err != nil {
		t.Fatal(err)
	}
	b = get()
	detail(b)
	if b["status"] != "running" || b["progress"] != 33.0 || b["completed"] != 2.0 || b["throughput"] != 40.0 || b["eta_reason"] != nil ||
		b["started_at"] == nil || b["total_time_seconds"] != nil {
		t.Fatalf("running with one waiting: %v", b)
	}
	if eta, ok := b["eta_seconds"].(float64); !ok || eta != float64(int64(eta)) || eta < 23 || eta > 30 {
		t.Fatalf("ETA with one run waiting: %v, want about 23 s", b["eta_seconds"])
	}
	// With the agent drained nothing serves the waiting run's queue.
	if err := e.store.SetAgentDrained(ctx, agent.ID, true); err != nil {
		t.Fatal(err)
	}
	if b = get(); b["eta_seconds"] != nil || b["eta_reason"] != "no agent serves queue cpu-2c_sim" {
		t.Fatalf("no agent: %v %v", b["eta_seconds"], b["eta_reason"])
	}
	detail(b)
	if err := e.store.SetAgentDrained(ctx, agent.ID, false); err != nil {
		t.Fatal(err)
	}
	// With the second run's ETA known too, the benchmark's is the longer,
	// rounded up to whole seconds.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET state = 'running', eta_seconds = 3.5, started_at = now() WHERE id = $1`, second); err != nil {
		t.Fatal(err)
	}
	if b = get(); b["eta_seconds"] != 12.0 {
		t.Fatalf("ETA over two running runs: %v", b["eta_seconds"])
	}
	// The first completes, the second is cancelled: completed, with the
	// completed run's throughput and the time from the first start to the
	// last finish.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET state = 'queued', started_at = NULL, eta_seconds = NULL WHERE id = $1`, second); err != nil {
		t.Fatal(err)
	}
	if err := e.store.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", StoppedBy: "completed", Throughput: 38.5}); err != nil {
		t.Fatal(err)
	}
	if b = get(); b["status"] != "running" || b["eta_seconds"] == nil {
		t.Fatalf("one completed, one queued: %v, ETA %v (%v)", b["status"], b["eta_seconds"], b["eta_reason"])
	}
	if err := e.store.SetRunCancelled(ctx, second); err != nil {
		t.Fatal(err)
	}
	b = get()
	detail(b)
	if b["status"] != "completed" || b["throughput"] != 38.5 || b["eta_seconds"] != 0.0 || b["eta_reason"] != nil || b["total_time_seconds"] == nil ||
		b["total_time_seconds"].(float64) < 0 || b["finished_at"] == nil {
		t.Fatalf("finished: %v", b)
	}
	// The run's own state says completed too.
	if r := e.api(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", first), tok, nil, ""); r.status != 200 || r.body["state"] != "completed" {
		t.Fatalf("run: %d %v", r.status, r.body["state"])
	}

	// Seven benchmarks in pages of 3: each once, none missing, the last
	// page's next null.
	for range 6 {
		if r := postJSON(e, "/api/v1/benchmarks", tok, manifest); r.status != 201 {
			t.Fatal(r.body)
		}
	}
	seen := map[float64]bool{}
	path, pages := "/api/v1/benchmarks?limit=3", 0
	for path != "" {
		r := e.api(http.MethodGet, path, tok, nil, "")
		if r.status != 200 {
			t.Fatalf("%s: %d %v", path, r.status, r.body)
		}
		for _, b := range r.body["benchmarks"].([]any) {
			bid := b.(map[string]any)["benchmark_id"].(float64)
			if seen[bid] {
				t.Fatalf("benchmark %v on two pages", bid)
			}
			seen[bid] = true
		}
		pages++
		path = ""
		if next, ok := r.body["next"].(string); ok {
			path = "/api/v1/benchmarks?limit=3&after=" + next
		}
	}
	if len(seen) != 7 || pages != 3 {
		t.Fatalf("%d benchmarks over %d pages", len(seen), pages)
	}
	other := e.token(e.createUser("bob@example.com", "correct horse", store.RoleUser))
	if r := e.api(http.MethodGet, "/api/v1/benchmarks", other, nil, ""); r.status != 200 || len(r.body["benchmarks"].([]any)) != 0 {
		t.Fatalf("another user: %v", r.body)
	}
	for _, q := range []string{"limit=0", "limit=1001", "limit=x", "after=0", "after=-1", "after=99999999999999999999"} {
		if r := e.api(http.MethodGet, "/api/v1/benchmarks?"+q, tok, nil, ""); r.status != 400 || r.body["error"] == nil {
			t.Errorf("?%s: %d %v", q, r.status, r.body)
		}
	}

	// The benchmarks page shows the same status.
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get("/benchmarks")
	if got := page.text(fmt.Sprintf(`[data-testid="benchmark-%d"] [data-testid="benchmark-status"]`, int64(id))); got != "completed" {
		t.Fatalf("the list page says %q", got)
	}
	if got := c.get(fmt.Sprintf("/benchmarks/%d", int64(id))).text(`[data-testid="benchmark-status"]`); got != "completed" {
		t.Fatalf("the benchmark page says %q", got)
	}
}

// A benchmark's results are one JSON document in the Benchmark Runner's
// shape, every answer with its OpenAI-shaped response, paged by cursor in
// (run, item, sample) order.
func TestAPIBenchmarkResults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	id, runIDs := finishedBenchmark(t, e, tok, 12, nil, []fakeRun{
		{model: "m/one", seconds: 2, tokens: 10, e2e: millis(20), score: func(int) float64 { return 1 }},
		{model: "m/two", seconds: 4, tokens: 10, e2e: millis(30), score: func(int) float64 { return 0 }},
	})
	// Two failures of the second run: one the runtime answered with 503,
	// one that never got an HTTP answer.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE results SET status = 'error', output = '', error_class = 'http_5xx', error = 'overloaded',
		http_status = 503 WHERE run_id = $1 AND idx = 3`, runIDs[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE results SET status = 'error', output = '', error_class = 'timeout', error = 'no answer in 60s',
		http_status = NULL WHERE run_id = $1 AND idx = 4`, runIDs[1]); err != nil {
		t.Fatal(err)
	}

	var all []map[string]any
	path, pages := "/api/v1/benchmarks/"+id+"/results?limit=5", 0
	var doc map[string]any
	for path != "" {
		r := e.api(http.MethodGet, path, tok, nil, "")
		if r.status != 200 {
			t.Fatalf("%s: %d %v", path, r.status, r.body)
		}
		doc = r.body
		for _, x := range r.body["results"].([]any) {
			all = append(all, x.(map[string]any))
		}
		pages++
		path = ""
		if next, ok := r.body["next"].(string); ok {
			path = "/api/v1/benchmarks/" + id + "/results?limit=5&after=" + next
		}
	}
	if len(all) != 24 || pages != 5 {
		t.Fatalf("%d results over %d pages", len(all), pages)
	}
	if doc["benchmark_id"] != json.Number(id) && fmt.Sprint(doc["benchmark_id"]) != id || doc["name"] != "verdict" || doc["model_name"] != "m/one" ||
		doc["dataset_name"] != "d" || doc["status"] != "completed" || doc["total_time_seconds"] == nil || doc["throughput"] == nil {
		t.Fatalf("document: %v", doc)
	}
	// In run, item order, each once.
	for k, x := range all {
		wantRun, wantIdx := runIDs[k/12], k%12
		if int64(x["run_id"].(float64)) != wantRun || x["idx"] != float64(wantIdx) || x["custom_id"] != fmt.Sprintf("c%02d", wantIdx) {
			t.Fatalf("result %d: %v, want run %d item %d", k, x, wantRun, wantIdx)
		}
	}
	ok := all[0]
	resp := ok["response"].(map[string]any)
	body := resp["body"].(map[string]any)
	choice := body["choices"].([]any)[0].(map[string]any)
	if ok["model"] != "m/one" || resp["status_code"] != 200.0 || body["object"] != "chat.completion" ||
		choice["message"].(map[string]any)["content"] != "x" || body["usage"].(map[string]any)["completion_tokens"] != 10.0 || ok["error"] != nil {
		t.Fatalf("an answer: %v", ok)
	}
	http503, timeout := all[12+3], all[12+4]
	if r := http503["response"].(map[string]any); r["status_code"] != 503.0 ||
		r["body"].(map[string]any)["error"].(map[string]any)["message"] != "overloaded" || http503["error"].(map[string]any)["code"] != "http_5xx" {
		t.Fatalf("a 503: %v", http503)
	}
	if r := timeout["response"].(map[string]any); r["status_code"] != nil ||
		r["body"].(map[string]any)["error"].(map[string]any)["type"] != "timeout" || timeout["status"] != "error" {
		t.Fatalf("a timeout: %v", timeout)
	}

	other := e.token(e.createUser("bob@example.com", "correct horse", store.RoleUser))
	if r := e.api(http.MethodGet, "/api/v1/benchmarks/"+id+"/results", other, nil, ""); r.status != 404 {
		t.Fatalf("another user: %d", r.status)
	}
	for _, q := range []string{"limit=0", "limit=1001", "after=1-2", "after=a-b-c", "after=0-0-0", "after=1-2-100", "after=1-99999999999-0", "after=1--2-0"} {
		if r := e.api(http.MethodGet, "/api/v1/benchmarks/"+id+"/results?"+q, tok, nil, ""); r.status != 400 || r.body["error"] == nil {
			t.Errorf("?%s: %d %v", q, r.status, r.body)
		}
	}
	// The default page is 100: everything, with no next.
	if r := e.api(http.MethodGet, "/api/v1/benchmarks/"+id+"/results", tok, nil, ""); len(r.body["results"].([]any)) != 24 || r.body["next"] != nil {
		t.Fatalf("default page: %d results, next %v", len(r.body["results"].([]any)), r.body["next"])
	}
}
