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

	"github.com/PuerkitoBio/goquery"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// fakeConfig is one configuration of configBenchmark: its engine settings
// (JSON), the measured window its requests took, and each request's E2E.
type fakeConfig struct {
	engine  string
	seconds float64
	e2e     func(i int) time.Duration
	failed  bool
}

// configBenchmark makes a benchmark of n items, one model on the sim
// runtime and a 2-GPU profile priced $4 per hour, one target per
// configuration differing only in engine settings, with an end-to-end
// SLO of 500 ms; each run answers its requests one after another over
// its window (a failed one fails). It returns the benchmark and the run
// of each configuration, in order.
func configBenchmark(t *testing.T, e *env, tok string, n int, cfgs []fakeConfig) (string, []int64) {
	t.Helper()
	ctx := context.Background()
	var ds strings.Builder
	for i := range n {
		fmt.Fprintf(&ds, "{\"custom_id\":\"c%02d\",\"prompt\":\"q%d\",\"reference\":\"%d\"}\n", i, i, i)
	}
	up := e.upload(tok, "cfg.jsonl", []byte(ds.String()), nil)
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "m/one", Quantization: "bf16"})
	agent := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "gpu-1",
		Profile: store.HardwareProfile{Slug: "gpu-2x", GPUName: "L4", GPUCount: 2, GPUMemoryBytes: 24 << 30, CPUCores: 8}})
	price := 4.0
	if err := e.store.SetHardwarePrice(ctx, "gpu-2x", &price); err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, c := range cfgs {
		targets = append(targets, fmt.Sprintf(`{"model":"m/one","runtime":"sim","hardware":"gpu-2x","engine":%s}`, c.engine))
	}
	slo := jobs.SLO{E2E: jobs.Duration(500 * time.Millisecond)}
	manifest := fmt.Sprintf(`{"name":"configs","dataset":%v,"targets":[%s],"load":{"profile":"sequential"},"sampling":{"max_tokens":32},"slo":{"e2e":"500ms"}}`,
		up.body["dataset_id"], strings.Join(targets, ","))
	res := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json")
	if res.status != 201 {
		t.Fatalf("create: %d %v", res.status, res.body)
	}
	ids := make([]int64, len(cfgs))
	for _, rr := range res.body["runs"].([]any) {
		id := int64(rr.(map[string]any)["run_id"].(float64))
		got, _ := json.Marshal(rr.(map[string]any)["engine"])
		k := 0
		for k < len(cfgs) && !sameJSON(cfgs[k].engine, string(got)) {
			k++
		}
		if k == len(cfgs) {
			t.Fatalf("run %d's engine %s is no configuration's", id, got)
		}
		ids[k] = id
		var job int64
		_ = e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, id).Scan(&job)
		claim, err := e.store.ClaimRun(ctx, id, agent.ID, job, "sim")
		if err != nil {
			t.Fatal(err)
		}
		f := cfgs[k]
		if f.failed {
			if err := e.store.FinishRun(ctx, claim.Lease, store.Finish{State: "failed", StoppedBy: "error", Error: "the runtime did not start"}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		window := time.Duration(f.seconds * float64(time.Second))
		start := time.Now().Add(-time.Minute)
		var rs []store.ResultRecord
		for i := range n {
			rs = append(rs, store.ResultRecord{Result: jobs.Result{Idx: i, CustomID: fmt.Sprintf("c%02d", i), Status: jobs.StatusOK, Output: "x",
				CompletionTokens: 10, ContentEvents: 10, TTFT: 10 * time.Millisecond, E2E: f.e2e(i)}, SentAt: start.Add(window * time.Duration(i) / time.Duration(n))})
		}
		if _, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil {
			t.Fatal(err)
		}
		sum, err := summary.Run(ctx, e.store, id, slo, window)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(sum)
		if err := e.store.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", StoppedBy: "completed", Segment: window, Summary: raw,
			Throughput: sum.OutputTokensPerS}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET scored_at = now() WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		concludeRun(t, e, id)
	}
	return fmt.Sprint(res.body["benchmark_id"]), ids
}

// sameJSON says whether two JSON texts hold the same value.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// threeConfigs are one model's configurations on gpu-2x ($4 per hour):
// a batch of 2 serving a request a second, half of them past the SLO; a
// batch of 16 serving four a second within it; the same over one GPU
// (tensor_parallel_size 1: half the price) serving 2.5 a second within
// it, which wins on requests per dollar (4,500 against 3,600); and a
// fourth that failed.
var threeConfigs = []fakeConfig{
	{engine: `{"max_num_seqs":2}`, seconds: 40, e2e: func(i int) time.Duration { return time.Duration(300+10*i) * time.Millisecond }},
	{engine: `{"max_num_seqs":16}`, seconds: 10, e2e: millis(100)},
	{engine: `{"max_num_seqs":16,"tensor_parallel_size":1}`, seconds: 16, e2e: millis(150)},
	{engine: `{"max_num_seqs":64}`, failed: true},
}

// The best configuration's API ranks configurations that differ only in
// engine settings by goodput per dollar (a replica with tensor
// parallelism 1 on 2 GPUs priced at half), tests the winner's lead,
// lists the failed one with its reason and opens the planner on the
// winner; the page says the same in English and German and is linked
// from the benchmark; a stranger gets 404.
func TestBestConfigurationAPIAndPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	b, ids := configBenchmark(t, e, tok, 40, threeConfigs)
	res := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/configurations", tok, nil, "")
	ranked, _ := res.body["ranked"].([]any)
	if res.status != 200 || len(ranked) != 3 {
		t.Fatalf("configurations: %d %v", res.status, res.body)
	}
	order := make([]int64, len(ranked))
	for i, r := range ranked {
		order[i] = int64(r.(map[string]any)["run_id"].(float64))
	}
	if fmt.Sprint(order) != fmt.Sprint([]int64{ids[2], ids[1], ids[0]}) {
		t.Errorf("ranked %v, want %v", order, []int64{ids[2], ids[1], ids[0]})
	}
	win := ranked[0].(map[string]any)
	if win["price_per_hour"] != 2.0 || fmt.Sprint(win["engine"]) != "map[max_num_seqs:16 tensor_parallel_size:1]" || win["rank"] != 1.0 {
		t.Errorf("winner %v", win)
	}
	lead, _ := res.body["lead"].(map[string]any)
	if lead == nil || lead["test"] != "t-log-goodput-per-dollar" || lead["tie"] != false || lead["p"].(float64) >= 0.05 || lead["comparable"] != true {
		t.Errorf("lead %v", lead)
	}
	if rec, _ := res.body["recommendation"].(string); !strings.Contains(rec, "m/one on sim/gpu-2x with max_num_seqs=16 tensor_parallel_size=1") || !strings.Contains(rec, "significant") {
		t.Errorf("recommendation %q", rec)
	}
	left, _ := res.body["left_out"].([]any)
	if len(left) != 1 || left[0].(map[string]any)["run_id"].(float64) != float64(ids[3]) || !strings.Contains(left[0].(map[string]any)["reason"].(string), "failed") {
		t.Errorf("left out %v", left)
	}
	plan, _ := res.body["capacity_url"].(string)
	if !strings.Contains(plan, "config_engine=max_num_seqs%3D16%2C+tensor_parallel_size%3D1") || !strings.Contains(plan, "e2e_ms=500") ||
		!strings.Contains(plan, "ttft_ms=0") || len(res.body["pareto_front"].([]any)) == 0 {
		t.Errorf("capacity url %q, front %v", plan, res.body["pareto_front"])
	}
	stranger := e.token(e.createUser("eve@example.com", "correct horse", store.RoleUser))
	if r := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/configurations", stranger, nil, ""); r.status != 404 {
		t.Errorf("a stranger's configurations: %d", r.status)
	}

	cl := e.client()
	cl.signIn("ada@example.com", "correct horse")
	for lang, want := range map[string]string{"en": "requests within the SLOs per dollar", "de": "Anfragen innerhalb der SLOs je Dollar"} {
		page := cl.getIn("/benchmarks/"+b+"/configurations", lang)
		rows := page.doc.Find(`[data-testid="configuration-row"]`)
		rec := page.text(`[data-testid="configurations-recommendation"]`)
		if page.status != 200 || rows.Length() != 3 || rows.First().AttrOr("data-run", "") != fmt.Sprint(ids[2]) ||
			!strings.Contains(rec, want) || !strings.Contains(rec, "tensor_parallel_size=1") {
			t.Errorf("%s page: %d, %d rows, recommendation %q", lang, page.status, rows.Length(), rec)
		}
		if page.doc.Find(`[data-testid="configurations-chart"] svg`).Length() != 1 {
			t.Errorf("%s: no chart of the Pareto front", lang)
		}
		if l := page.text(`[data-testid="configurations-left-out"]`); !strings.Contains(l, "max_num_seqs=64") {
			t.Errorf("%s: left out %q", lang, l)
		}
		if href := page.doc.Find(`[data-testid="configurations-plan"]`).AttrOr("href", ""); href != plan {
			t.Errorf("%s: planner link %q, want %q", lang, href, plan)
		}
	}
	if cl.get("/benchmarks/"+b).doc.Find(`[data-testid="verdict-configurations"]`).Length() != 1 {
		t.Error("the benchmark page does not link its configurations")
	}
	// The planner opened on the winner sizes it alone and keeps it in the form.
	capPage := cl.get(plan + "&peak_rps=1")
	if capPage.doc.Find(`input[type="hidden"][name="config_engine"]`).AttrOr("value", "") != "max_num_seqs=16, tensor_parallel_size=1" ||
		capPage.doc.Find(`[data-testid="capacity-configuration"]`).Length() != 1 || capPage.doc.Find(`[data-testid="capacity-engine"]`).Length() != 1 {
		t.Errorf("planner page on the winner: %d %q", capPage.status, capPage.doc.Find("main").Text())
	}
	// The summary CSV names each run's settings.
	status, _, body := e.raw("/api/v1/benchmarks/"+b+"/summary?format=csv", tok)
	recs, _ := csv.NewReader(strings.NewReader(body)).ReadAll()
	if status != 200 || len(recs) < 2 {
		t.Fatalf("summary csv: %d %q", status, body)
	}
	engines := map[string]string{}
	for _, r := range recs[1:] {
		engines[r[0]] = r[len(r)-1]
	}
	if recs[0][len(recs[0])-1] != "engine" || engines[fmt.Sprint(ids[2])] != "max_num_seqs=16 tensor_parallel_size=1" || engines[fmt.Sprint(ids[0])] != "max_num_seqs=2" {
		t.Errorf("summary csv engines %v", engines)
	}
}

// The planner's API sizes replicas from one configuration alone, its
// replica holding the GPUs its tensor parallelism sets, and refuses a
// setting the runtime lacks naming it.
func TestCapacityPlannerTakesAConfiguration(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	b, ids := configBenchmark(t, e, tok, 40, threeConfigs)
	var ds int64
	if err := e.store.Pool().QueryRow(context.Background(), `SELECT dataset_id FROM benchmarks WHERE id = $1`, b).Scan(&ds); err != nil {
		t.Fatal(err)
	}
	ask := func(engine string) apiResult {
		body := fmt.Sprintf(`{"dataset_id":%d,"traffic":{"peak_rps":1,"average_rps":1,"input_tokens":10,"output_tokens":10},"slo":{"e2e_ms":1000},
			"configuration":{"model":"m/one","runtime":"sim","hardware":"gpu-2x","engine":%s}}`, ds, engine)
		return e.api(http.MethodPost, "/api/v1/capacity", tok, strings.NewReader(body), "application/json")
	}
	res := ask(`{"tensor_parallel_size":1,"max_num_seqs":16}`)
	var sized []any
	for _, k := range []string{"feasible", "excluded"} {
		xs, _ := res.body[k].([]any)
		sized = append(sized, xs...)
	}
	if res.status != 200 || len(sized) != 1 {
		t.Fatalf("planner on one configuration: %d %v", res.status, res.body)
	}
	if a := sized[0].(map[string]any); a["run_id"].(float64) != float64(ids[2]) || a["gpus_per_replica"] != 1.0 || a["price_per_hour"] != 2.0 ||
		a["engine"] != "max_num_seqs=16 tensor_parallel_size=1" {
		t.Errorf("sized %v", a)
	}
	if r := ask(`{"bogus":1}`); r.status != 422 || !strings.Contains(fmt.Sprint(r.body), "configuration.engine.bogus") {
		t.Errorf("unknown setting: %d %v", r.status, r.body)
	}
	// The model's history draws each configuration as its own line.
	h := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/history?model=m/one&metric=throughput", ds), tok, nil, "")
	engines := map[string]bool{}
	for _, p := range h.body["points"].([]any) {
		engines[fmt.Sprint(p.(map[string]any)["engine"])] = true
	}
	if h.status != 200 || len(engines) != 3 || !engines["max_num_seqs=16 tensor_parallel_size=1"] {
		t.Errorf("history points' engines %v (%d)", engines, h.status)
	}
}

// The form's plan preview shows each planned run's engine settings: two
// configurations of one model are two rows, told apart by them.
func TestPlanPreviewShowsEngineSettings(t *testing.T) {
	t.Parallel()
	_, c, ds := formEnv(t)
	form := url.Values{"name": {"Two"}, "dataset_id": {ds}, "max_tokens": {"64"}, "load_kind": {"sequential"}, "action": {"preview"},
		"target_0_model": {"acme/small-1b"}, "target_0_runtime": {"vllm"}, "target_0_hardware": {"l4-24gb-x1"},
		"target_0_engine_max_num_seqs": {"64"},
		"target_1_model":               {"acme/small-1b"}, "target_1_runtime": {"vllm"}, "target_1_hardware": {"l4-24gb-x1"},
		"target_1_engine_max_num_seqs": {"256"}, "target_1_engine_enable_prefix_caching": {"true"}}
	c.get("/benchmarks/new")
	res := c.post("/benchmarks/new", form)
	var got []string
	res.doc.Find(`[data-testid="plan-run"] [data-testid="plan-engine"]`).Each(func(_ int, s *goquery.Selection) { got = append(got, s.Text()) })
	if res.status != 200 || fmt.Sprint(got) != "[max_num_seqs=64 enable_prefix_caching=true max_num_seqs=256]" {
		t.Errorf("preview: %d, engine badges %q", res.status, got)
	}
}
