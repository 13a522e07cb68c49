package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
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
	if _, err := e.store.RegisterAgent(ctx, store.AgentRegistration{Name: "cpu-1", ProtocolVersion: 1, Runtimes: []string{"sim"},
		Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}}); err != nil {
		t.Fatal(err)
	}
	gpu, err := e.store.RegisterAgent(ctx, store.AgentRegistration{Name: "gpu-1", ProtocolVersion: 1, Runtimes: []string{"vllm"},
		Profile: store.HardwareProfile{Slug: "h100-80gb-x1", GPUName: "NVIDIA H100", GPUCount: 1, GPUMemoryBytes: 80e9}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetAgentDrained(ctx, gpu.ID, true); err != nil {
		t.Fatal(err)
	}

	manifest := fmt.Sprintf(`name: Small vs 7B
dataset_id: %d
targets:
  - {model: Qwen/Qwen2.5-0.5B-Instruct, runtime: sim, hardware: cpu-2c}
  - {model: Qwen/Qwen2.5-7B-Instruct, runtime: vllm, hardware: h100-80gb-x1}
load: {kind: concurrency, concurrency: 2, max_requests: 2}
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
	if r.status != 201 || len(r.body["run_ids"].([]any)) != 2 {
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
		"unknown model":   {strings.Replace(manifest, "Qwen/Qwen2.5-0.5B-Instruct", "nobody/nothing", 1), "targets[0].model"},
		"does not fit":    {strings.Replace(manifest, "Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", 1), "targets[1]"},
		"unknown profile": {strings.Replace(manifest, "hardware: cpu-2c", "hardware: tpu-v5", 1), "targets[0].hardware"},
		"bad runtime":     {strings.Replace(manifest, "runtime: sim", "runtime: magic", 1), "targets[0].runtime"},
		"no dataset":      {strings.Replace(manifest, fmt.Sprintf("dataset_id: %d", datasetID), "dataset_id: 999999", 1), "dataset_id"},
		"unknown field":   {manifest + "colour: blue\n", ""},
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
