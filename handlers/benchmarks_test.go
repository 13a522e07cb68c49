package handlers_test

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

func TestBenchmarkAPIPlansAndQueuesRunsInOneTransaction(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	ds := e.upload(tok, "q.jsonl", []byte(simpleJSONL), nil)
	if ds.status != 201 {
		t.Fatalf("dataset: %v", ds.body)
	}
	datasetID := int64(ds.body["dataset_id"].(float64))
	for _, m := range []store.ModelFields{
		{Name: "Qwen/Qwen2.5-0.5B-Instruct", ParamsB: 0.5, Quantization: "bf16", ContextLength: 32768},
		{Name: "Qwen/Qwen2.5-7B-Instruct", ParamsB: 7.6, Quantization: "bf16", ContextLength: 32768},
		{Name: "meta-llama/Llama-3.1-70B-Instruct", ParamsB: 70, Quantization: "bf16", ContextLength: 131072},
	} {
		if _, err := e.store.CreateModel(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	// A CPU agent serving sim; an H100 profile whose only agent is drained.
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	gpu := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "gpu-1", Runtimes: []string{"vllm"}, Profile: store.HardwareProfile{Slug: "h100-80gb-x1", GPUName: "NVIDIA H100", GPUCount: 1, GPUMemoryBytes: 80e9}})
	if err := e.store.SetAgentDrained(ctx, gpu.ID, true); err != nil {
		t.Fatal(err)
	}
	// An agent of another protocol version does not count as serving.
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "gpu-old", ProtocolVersion: 99, Runtimes: []string{"vllm"}, Profile: store.HardwareProfile{Slug: "h100-80gb-x1", GPUName: "NVIDIA H100", GPUCount: 1, GPUMemoryBytes: 80e9}})

	manifest := fmt.Sprintf(`name: Small vs 7B
dataset: %d
targets:
  - {model: Qwen/Qwen2.5-0.5B-Instruct, runtime: sim, hardware: cpu-2c}
  - {model: Qwen/Qwen2.5-7B-Instruct, runtime: vllm, hardware: h100-80gb-x1}
load: {profile: concurrency, concurrency: 2, max_requests: 2}
sampling: {temperature: 0, max_tokens: 32}
scorer: exact
`, datasetID)
	post := func(path, body string) apiResult {
		return e.api(http.MethodPost, path, tok, strings.NewReader(body), "application/yaml")
	}

	r := post("/api/v1/benchmarks?dry_run=true", manifest)
	if r.status != 200 || r.body["dry_run"] != true {
		t.Fatalf("dry run: %d %v", r.status, r.body)
	}
	runs := r.body["runs"].([]any)
	first, second := runs[0].(map[string]any), runs[1].(map[string]any)
	if first["waiting_for_agent"] != false || second["waiting_for_agent"] != true || first["queue"] != "cpu-2c_sim" ||
		second["memory_gb"] != 18.3 || first["items"] != 2.0 {
		t.Fatalf("plan: %v", runs)
	}
	if n := e.countRows("benchmarks") + e.countRows("runs") + e.countRows("river_job"); n != 0 {
		t.Fatalf("a dry run created %d rows", n)
	}

	r = post("/api/v1/benchmarks", manifest)
	if r.status != 201 || len(r.body["runs"].([]any)) != 2 || r.body["runs"].([]any)[0].(map[string]any)["state"] != "queued" ||
		r.body["runs"].([]any)[0].(map[string]any)["run_id"] == nil {
		t.Fatalf("create: %d %v", r.status, r.body)
	}
	var queues []string
	rows, err := e.store.Pool().Query(ctx, `SELECT j.queue FROM runs r JOIN river_job j ON j.id = r.river_job_id ORDER BY r.id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var q string
		if err := rows.Scan(&q); err != nil {
			t.Fatal(err)
		}
		queues = append(queues, q)
	}
	if strings.Join(queues, ",") != "cpu-2c_sim,h100-80gb-x1_vllm" {
		t.Fatalf("run jobs on queues %v", queues)
	}
	id := fmt.Sprint(r.body["benchmark_id"])
	g := e.api(http.MethodGet, "/api/v1/benchmarks/"+id, tok, nil, "")
	if g.status != 200 || g.body["name"] != "Small vs 7B" || len(g.body["runs"].([]any)) != 2 ||
		g.body["runs"].([]any)[1].(map[string]any)["waiting_for_agent"] != true {
		t.Fatalf("get benchmark: %d %v", g.status, g.body)
	}
	other := e.token(e.createUser("bob@example.com", "correct horse", store.RoleUser))
	if g := e.api(http.MethodGet, "/api/v1/benchmarks/"+id, other, nil, ""); g.status != 404 {
		t.Fatalf("another user's benchmark: %d", g.status)
	}

	// Errors name the field path; nothing is created.
	before := e.countRows("runs")
	for name, tc := range map[string]struct{ body, path string }{
		"unknown model":        {strings.Replace(manifest, "Qwen/Qwen2.5-0.5B-Instruct", "nobody/nothing", 1), "targets[0].model"},
		"does not fit":         {strings.Replace(manifest, "Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", 1), "targets[1]"},
		"unknown profile":      {strings.Replace(manifest, "hardware: cpu-2c", "hardware: tpu-v5", 1), "targets[0].hardware"},
		"bad runtime":          {strings.Replace(manifest, "runtime: sim", "runtime: magic", 1), "targets[0].runtime"},
		"no dataset":           {strings.Replace(manifest, fmt.Sprintf("dataset: %d", datasetID), "dataset: 999999", 1), "dataset"},
		"unknown dataset name": {strings.Replace(manifest, fmt.Sprintf("dataset: %d", datasetID), "dataset: nothing-by-this-name", 1), "dataset"},
		"unknown field":        {manifest + "colour: blue\n", "colour"},
	} {
		r := post("/api/v1/benchmarks", tc.body)
		errs, _ := r.body["errors"].([]any)
		if r.status != 422 || len(errs) == 0 || errs[0].(map[string]any)["path"] != tc.path || errs[0].(map[string]any)["message"] == "" {
			t.Errorf("%s: %d %v, want 422 at %q", name, r.status, r.body, tc.path)
		}
	}
	if e.countRows("runs") != before {
		t.Fatal("a refused manifest created runs")
	}
}

func TestCreateBenchmarkPagePreviewsThenLaunches(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	u := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	ds := e.upload(e.token(u), "q.jsonl", []byte(simpleJSONL), nil)
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "Qwen/Qwen2.5-0.5B-Instruct", Quantization: "bf16", ContextLength: 32768})
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get("/benchmarks/new")
	if page.doc.Find(`select[name="target_0_model"] option[value="Qwen/Qwen2.5-0.5B-Instruct"]`).Length() != 1 ||
		page.doc.Find(`select[name="target_0_hardware"] option[value="cpu-2c"]`).Length() != 1 {
		t.Fatal("the form does not offer the registry's models and the known hardware")
	}
	form := url.Values{"name": {"First"}, "dataset_id": {fmt.Sprint(ds.body["dataset_id"])},
		"target_0_model": {"Qwen/Qwen2.5-0.5B-Instruct"}, "target_0_runtime": {"sim"}, "target_0_hardware": {"cpu-2c"},
		"target_1_model": {"Qwen/Qwen2.5-0.5B-Instruct"}, "target_1_runtime": {"ollama"}, "target_1_hardware": {"cpu-2c"},
		"load_kind": {"concurrency"}, "concurrency": {"lots"}, "max_tokens": {"64"}, "action": {"preview"}}

	res := c.post("/benchmarks/new", form)
	if res.status != 422 || !strings.Contains(res.text(`[data-testid="benchmark-errors"]`), `load.concurrency: "lots" is not a whole number`) {
		t.Fatalf("bad number: %d %q", res.status, res.text(`[data-testid="benchmark-errors"]`))
	}
	form.Set("concurrency", "2")
	res = c.post("/benchmarks/new", form)
	if res.status != 200 || res.doc.Find(`[data-testid="plan-run"]`).Length() != 2 ||
		!strings.Contains(res.doc.Find(`[data-testid="plan-run"]`).Eq(1).Text(), "waiting for an agent") {
		t.Fatalf("preview: %d %.400s", res.status, res.text(`[data-testid="plan"]`))
	}
	if e.countRows("benchmarks") != 0 {
		t.Fatal("a preview created a benchmark")
	}
	form.Set("action", "launch")
	res = c.post("/benchmarks/new", form)
	if res.status != 303 {
		t.Fatalf("launch: %d %.300s", res.status, res.text(`[data-testid="benchmark-errors"]`))
	}
	detail := c.get(res.header.Get("Location"))
	if detail.text(`[data-testid="benchmark-name"]`) != "First" || detail.doc.Find(`[data-testid="run-waiting"]`).Length() != 1 ||
		detail.doc.Find(`table[data-testid="runs"] tbody tr`).Length() != 2 || !strings.Contains(detail.text(`[data-testid="flash"]`), "2 runs queued") {
		t.Fatalf("benchmark page: %.500s", detail.text("main"))
	}
	// Queued runs are listed live under Active, not under Completed.
	if list := c.get("/benchmarks"); !strings.Contains(list.text(`table[data-testid="active-runs"]`), "First") ||
		list.doc.Find(`#active-runs[data-polling="on"]`).Length() != 1 || strings.Contains(list.text(`table[data-testid="completed-benchmarks"]`), "First") {
		t.Fatal("the queued benchmark is not listed under Active")
	}
}

func TestCancelAndRetryRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	u := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	tok := e.token(u)
	ds := e.upload(tok, "q.jsonl", []byte(simpleJSONL), nil)
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "m/small", Quantization: "bf16"})
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Runtimes: []string{"sim", "ollama"}, Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	manifest := fmt.Sprintf(`{"name":"c","dataset":%v,"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"},
		{"model":"m/small","runtime":"ollama","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":8}}`, ds.body["dataset_id"])
	r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json")
	if r.status != 201 {
		t.Fatalf("create: %v", r.body)
	}
	b := fmt.Sprint(r.body["benchmark_id"])
	runs := r.body["runs"].([]any)
	run0, run1 := fmt.Sprint(runs[0].(map[string]any)["run_id"]), fmt.Sprint(runs[1].(map[string]any)["run_id"])
	jobState := func(run string) string {
		var s string
		if err := e.store.Pool().QueryRow(ctx, `SELECT j.state FROM runs r JOIN river_job j ON j.id = r.river_job_id WHERE r.id = $1`, run).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}

	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	c.get("/benchmarks/" + b)
	if res := c.post("/benchmarks/"+b+"/runs/"+run0+"/retry", nil); res.status != 409 {
		t.Fatalf("retry a queued run: %d", res.status)
	}
	if res := c.post("/benchmarks/"+b+"/runs/"+run0+"/cancel", nil); res.status != 303 {
		t.Fatalf("cancel run: %d", res.status)
	}
	page := c.get("/benchmarks/" + b)
	if page.text(`[data-testid="run-`+run0+`"] [data-testid="run-state"]`) != "cancelled" || jobState(run0) != "cancelled" {
		t.Fatalf("after cancel: run %q, job %q", page.text(`[data-testid="run-`+run0+`"] [data-testid="run-state"]`), jobState(run0))
	}
	oldJob := 0
	if err := e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, run0).Scan(&oldJob); err != nil {
		t.Fatal(err)
	}
	if res := c.post("/benchmarks/"+b+"/runs/"+run0+"/retry", nil); res.status != 303 {
		t.Fatalf("retry: %d", res.status)
	}
	var state string
	var attempt, newJob int
	if err := e.store.Pool().QueryRow(ctx, `SELECT state, attempt, river_job_id FROM runs WHERE id = $1`, run0).Scan(&state, &attempt, &newJob); err != nil {
		t.Fatal(err)
	}
	if state != "queued" || attempt != 1 || newJob == oldJob || jobState(run0) != "available" {
		t.Fatalf("after retry: %s attempt %d job %d→%d (%s)", state, attempt, oldJob, newJob, jobState(run0))
	}

	// Cancel the whole benchmark: both queued runs.
	if res := c.post("/benchmarks/"+b+"/cancel", nil); res.status != 303 {
		t.Fatalf("cancel benchmark: %d", res.status)
	}
	if page := c.get("/benchmarks/" + b); !strings.Contains(page.text(`[data-testid="flash"]`), "2 runs cancelled") ||
		jobState(run1) != "cancelled" || jobState(run0) != "cancelled" {
		t.Fatalf("cancel benchmark: %q, jobs %s %s", page.text(`[data-testid="flash"]`), jobState(run0), jobState(run1))
	}
	// The same through the API.
	apiPost := func(path string) apiResult { return e.api(http.MethodPost, path, tok, nil, "") }
	if r := apiPost("/api/v1/runs/" + run1 + "/retry"); r.status != 200 || jobState(run1) != "available" {
		t.Fatalf("API retry: %d %v", r.status, r.body)
	}
	if r := apiPost("/api/v1/runs/" + run1 + "/retry"); r.status != 409 {
		t.Fatalf("API retry of a queued run: %d", r.status)
	}
	if r := apiPost("/api/v1/runs/" + run1 + "/cancel"); r.status != 200 || jobState(run1) != "cancelled" {
		t.Fatalf("API cancel: %d %v", r.status, r.body)
	}
	if r := apiPost("/api/v1/runs/999999/cancel"); r.status != 404 {
		t.Fatalf("API cancel of no run: %d", r.status)
	}
	if r := apiPost("/api/v1/benchmarks/" + b + "/cancel"); r.status != 200 || r.body["changed"] != 0.0 {
		t.Fatalf("API cancel of a finished benchmark: %d %v", r.status, r.body)
	}
	if r := e.api(http.MethodGet, "/api/v1/benchmarks", tok, nil, ""); len(r.body["benchmarks"].([]any)) != 1 {
		t.Fatalf("API list: %v", r.body)
	}
	if r := e.api(http.MethodGet, "/api/v1/models", tok, nil, ""); r.status != 200 || r.body["models"].([]any)[0].(map[string]any)["memory_gb"] != 1.2 {
		t.Fatalf("API models: %v", r.body)
	}
	if r := e.api(http.MethodGet, "/api/v1/agents", tok, nil, ""); r.status != 200 || r.body["agents"].([]any)[0].(map[string]any)["state"] != "online" {
		t.Fatalf("API agents: %v", r.body)
	}

	// Someone else cannot.
	e.createUser("eve@example.com", "correct horse", store.RoleUser)
	eve := e.client()
	eve.signIn("eve@example.com", "correct horse")
	eve.get("/benchmarks")
	if res := eve.post("/benchmarks/"+b+"/runs/"+run0+"/retry", nil); res.status != 404 {
		t.Fatalf("another user's retry: %d", res.status)
	}
}

func TestManifestUploadOnThePage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	u := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	ds := e.upload(e.token(u), "q.jsonl", []byte(simpleJSONL), nil)
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "m/small", Quantization: "bf16"})
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	c.get("/benchmarks/new")
	send := func(action, manifest string) response {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("_csrf", c.csrf)
		_ = mw.WriteField("action", action)
		fw, _ := mw.CreateFormFile("manifest", "bench.yaml")
		_, _ = fw.Write([]byte(manifest))
		_ = mw.Close()
		req := httptest.NewRequest(http.MethodPost, "/benchmarks/manifest", &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		return c.do(req)
	}
	manifest := fmt.Sprintf("name: From a file\ndataset: %v\ntargets: [{model: m/small, runtime: sim, hardware: cpu-2c}]\nload: {profile: sequential}\nsampling: {max_tokens: 8}\n", ds.body["dataset_id"])
	if res := send("preview", manifest+"colour: blue\n"); res.status != 422 || !strings.Contains(res.text(`[data-testid="benchmark-errors"]`), `unknown field "colour"`) {
		t.Fatalf("bad manifest: %d %q", res.status, res.text(`[data-testid="benchmark-errors"]`))
	}
	if res := send("preview", manifest); res.status != 200 || res.doc.Find(`[data-testid="plan-run"]`).Length() != 1 {
		t.Fatalf("preview: %d", res.status)
	}
	res := send("launch", manifest)
	if res.status != 303 {
		t.Fatalf("launch: %d", res.status)
	}
	if page := c.get(res.header.Get("Location")); page.text(`[data-testid="benchmark-name"]`) != "From a file" {
		t.Fatalf("benchmark page: %q", page.text("main"))
	}
}

// The manifest the project promises to accept, by dataset name, on a
// CPU-only agent's "cpu" profile with the simulated runtime (which loads
// nothing, so a 7B model is no memory problem there).
func TestReferenceManifest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	if r := e.upload(tok, "gsm8k.jsonl", []byte(simpleJSONL), map[string]string{"name": "gsm8k-test"}); r.status != 201 {
		t.Fatalf("dataset: %v", r.body)
	}
	for _, m := range []store.ModelFields{
		{Name: "Qwen/Qwen2.5-7B-Instruct", ParamsB: 7.6, Quantization: "bf16", ContextLength: 32768},
		{Name: "meta-llama/Llama-3.1-8B-Instruct", ParamsB: 8, Quantization: "bf16", ContextLength: 131072},
	} {
		if _, err := e.store.CreateModel(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "laptop"})
	manifest := `name: gsm8k-on-sim
dataset: gsm8k-test
targets:
  - {model: Qwen/Qwen2.5-7B-Instruct, runtime: sim, hardware: cpu}
  - {model: meta-llama/Llama-3.1-8B-Instruct, runtime: sim, hardware: cpu}
load: {profile: concurrency, concurrency: 8, max_requests: 200}
sampling: {max_tokens: 64, temperature: 0}
scorer: numeric
`
	r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/yaml")
	if r.status != 201 || len(r.body["runs"].([]any)) != 2 {
		t.Fatalf("reference manifest: %d %v", r.status, r.body)
	}
	for _, run := range r.body["runs"].([]any) {
		if run := run.(map[string]any); run["queue"] != "cpu_sim" || run["waiting_for_agent"] != false {
			t.Errorf("run %v", run)
		}
	}
}
