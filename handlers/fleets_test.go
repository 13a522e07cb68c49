package handlers_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/fleet"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// fleetFixture is a dataset of four items in two categories, a local
// model on the simulated runtime (cpu-2c, with a price) and a remote
// provider's model served by an agent started with --runtime openai (cpu,
// without a price).
type fleetFixture struct {
	dataset   any
	simAgent  int64
	openAgent int64
}

func newFleetFixture(t *testing.T, e *env, tok string) fleetFixture {
	t.Helper()
	ctx := context.Background()
	var ds strings.Builder
	for i := range 4 {
		fmt.Fprintf(&ds, "{\"custom_id\":\"q%d\",\"prompt\":\"question %d\",\"reference\":\"%d\"}\n", i, i, i)
	}
	up := e.upload(tok, "fleet.jsonl", []byte(ds.String()), nil)
	if up.status != 201 {
		t.Fatalf("upload: %d %v", up.status, up.body)
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE dataset_items SET category = CASE WHEN idx < 2 THEN 'math' ELSE 'chat' END
		WHERE dataset_id = $1`, up.body["dataset_id"]); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"m/small", "gpt-4o-mini"} {
		testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: name, Quantization: "bf16"})
	}
	sim := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "sim-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	remote := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "remote-1", Runtimes: []string{"openai"}, Profile: store.HardwareProfile{Slug: "cpu", CPUCores: 4}})
	price := 3.6 // USD per hour: a measured second costs $0.001
	if err := e.store.SetHardwarePrice(ctx, "cpu-2c", &price); err != nil {
		t.Fatal(err)
	}
	return fleetFixture{dataset: up.body["dataset_id"], simAgent: sim.ID, openAgent: remote.ID}
}

func (f fleetFixture) manifest(name string) string {
	return fmt.Sprintf(`{"name":%q,
		"scenarios":[
			{"name":"exact-seq","dataset":%v,"load":{"profile":"sequential"},"sampling":{"max_tokens":8},"scorer":"exact"},
			{"name":"conc-2","dataset":%v,"load":{"profile":"concurrency","concurrency":2},"sampling":{"max_tokens":16}}],
		"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"},"openai:gpt-4o-mini"]}`, name, f.dataset, f.dataset)
}

// finish works a run as its agent would: every item answered (the last
// one an error when fail), scored, and the run closed.
func (f fleetFixture) finish(t *testing.T, e *env, runID, agentID int64, seconds float64, fail bool) {
	t.Helper()
	ctx := context.Background()
	var job int64
	if err := e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, runID).Scan(&job); err != nil {
		t.Fatal(err)
	}
	claim, err := e.store.ClaimRun(ctx, runID, agentID, job, "sim")
	if err != nil {
		t.Fatal(err)
	}
	var rs []store.ResultRecord
	for i := range 4 {
		res := jobs.Result{Idx: i, CustomID: fmt.Sprintf("q%d", i), Status: jobs.StatusOK, Output: fmt.Sprint(i), PromptTokens: 5, CompletionTokens: 10,
			ContentEvents: 10, TTFT: time.Duration(10+i) * time.Millisecond, E2E: time.Duration(100+10*i) * time.Millisecond}
		if fail && i == 3 {
			res = jobs.Result{Idx: i, CustomID: "q3", Status: jobs.StatusError, ErrorClass: jobs.ErrHTTP429, Error: "slow down"}
		}
		rs = append(rs, store.ResultRecord{Result: res, SentAt: time.Now()})
	}
	if _, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil {
		t.Fatal(err)
	}
	// Items 0 and 2 right, 1 wrong (3 is right unless it failed).
	if _, err := e.store.Pool().Exec(ctx, `UPDATE results SET score = CASE WHEN idx = 1 THEN 0 ELSE 1 END WHERE run_id = $1 AND status = 'ok'`, runID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET quality = (SELECT avg(score) FROM results WHERE run_id = $1), scored = 4 WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	window := time.Duration(seconds * float64(time.Second))
	sum, err := summary.Run(ctx, e.store, runID, jobs.SLO{}, window)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(sum)
	state, why := "completed", ""
	if fail {
		state, why = "failed", "every request failed with HTTP 429"
	}
	if err := e.store.FinishRun(ctx, claim.Lease, store.Finish{State: state, StoppedBy: state, Error: why, Segment: window, Summary: raw,
		Throughput: sum.OutputTokensPerS, RequestsPerS: sum.RequestsPerS}); err != nil {
		t.Fatal(err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestFleetDryRunCreateAndReport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	f := newFleetFixture(t, e, tok)

	// Validation errors name the field.
	bad := strings.Replace(f.manifest("nightly"), `"openai:gpt-4o-mini"`, `"openai:gpt-4o-mini","groq:llama"`, 1)
	bad = strings.Replace(bad, `"concurrency":2`, `"concurrency":0`, 1)
	res := e.api(http.MethodPost, "/api/v1/fleets", tok, strings.NewReader(bad), "application/json")
	errs, _ := json.Marshal(res.body["errors"])
	if res.status != 422 || !strings.Contains(string(errs), `{"message":"unknown provider \"groq\": the remote providers are anthropic, openai`) ||
		!strings.Contains(string(errs), `"path":"targets[2]"}`) ||
		!strings.Contains(string(errs), `{"message":"between 1 and 4096 requests in flight","path":"scenarios[1].load.concurrency"}`) {
		t.Fatalf("invalid fleet: %d %s", res.status, errs)
	}
	// A model the registry does not have is named once, not per scenario.
	res = e.api(http.MethodPost, "/api/v1/fleets", tok, strings.NewReader(strings.Replace(f.manifest("nightly"), "gpt-4o-mini", "gpt-5-nano", 1)), "application/json")
	errs, _ = json.Marshal(res.body["errors"])
	if res.status != 422 || string(errs) != `[{"message":"no active model \"gpt-5-nano\" in the registry","path":"targets[1].model"}]` {
		t.Fatalf("unknown remote model: %d %s", res.status, errs)
	}

	// A dry run plans four runs and creates nothing.
	res = e.api(http.MethodPost, "/api/v1/fleets?dry_run=true", tok, strings.NewReader(f.manifest("nightly")), "application/json")
	if res.status != 200 || res.body["dry_run"] != true || len(res.body["runs"].([]any)) != 4 {
		t.Fatalf("dry run: %d %v", res.status, res.body)
	}
	if n := e.countRows("fleets") + e.countRows("runs") + e.countRows("benchmarks"); n != 0 {
		t.Fatalf("a dry run created %d rows", n)
	}

	// The fleet: a benchmark per scenario, a run per scenario × target,
	// each with the id fleet.RunID gives, the remote target's runs on the
	// openai runtime's queue.
	res = e.api(http.MethodPost, "/api/v1/fleets", tok, strings.NewReader(f.manifest("nightly")), "application/json")
	if res.status != 201 {
		t.Fatalf("create: %d %v", res.status, res.body)
	}
	fleetID := int64(res.body["fleet_id"].(float64))
	submitted, err := time.Parse(time.RFC3339, res.body["submitted_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if bs := res.body["benchmark_ids"].([]any); len(bs) != 2 {
		t.Fatalf("benchmarks: %v", bs)
	}
	type runInfo struct {
		id                               int64
		fleetRunID, scenario, model, rtm string
	}
	var runs []runInfo
	targets := []fleet.Target{{Model: "m/small", Runtime: "sim", Hardware: "cpu-2c"}, {Model: "gpt-4o-mini", Runtime: "openai", Hardware: "cpu", Provider: "openai"}}
	for i, r := range res.body["runs"].([]any) {
		m := r.(map[string]any)
		ri := runInfo{id: int64(m["run_id"].(float64)), fleetRunID: m["fleet_run_id"].(string), scenario: m["scenario"].(string),
			model: m["model"].(string), rtm: m["runtime"].(string)}
		scenario := []string{"exact-seq", "conc-2"}[i/2]
		if want := fleet.RunID("nightly", submitted, scenario, targets[i%2]); ri.fleetRunID != want || ri.scenario != scenario {
			t.Fatalf("run %d: id %q scenario %q, want %q %q", i, ri.fleetRunID, ri.scenario, want, scenario)
		}
		var queue, runtime, fid string
		if err := e.store.Pool().QueryRow(ctx, `SELECT j.queue, r.runtime, r.fleet_run_id FROM runs r JOIN river_job j ON j.id = r.river_job_id
			WHERE r.id = $1`, ri.id).Scan(&queue, &runtime, &fid); err != nil {
			t.Fatal(err)
		}
		if wantQ := []string{"cpu-2c_sim", "cpu_openai"}[i%2]; queue != wantQ || fid != ri.fleetRunID || (i%2 == 1 && (runtime != "openai" || ri.model != "gpt-4o-mini" || m["provider"] != "openai")) {
			t.Fatalf("run %d: queue %q runtime %q fleet run id %q: %v", i, queue, runtime, fid, m)
		}
		runs = append(runs, ri)
	}
	// The id is also on the run itself, and the fleet lists.
	if st, body := apiGet(e, fmt.Sprintf("/api/v1/runs/%d", runs[1].id), tok); st != 200 || body["fleet_run_id"] != runs[1].fleetRunID {
		t.Fatalf("GET run: %d %v", st, body["fleet_run_id"])
	}
	if st, body := apiGet(e, "/api/v1/fleets", tok); st != 200 || len(body["fleets"].([]any)) != 1 ||
		body["fleets"].([]any)[0].(map[string]any)["runs"] != 4.0 {
		t.Fatalf("list: %d %v", st, body)
	}
	st, body := apiGet(e, fmt.Sprintf("/api/v1/fleets/%d", fleetID), tok)
	if st != 200 || len(body["runs"].([]any)) != 4 || body["runs"].([]any)[3].(map[string]any)["fleet_run_id"] != runs[3].fleetRunID ||
		body["runs"].([]any)[3].(map[string]any)["scenario"] != "conc-2" || len(body["benchmarks"].([]any)) != 2 {
		t.Fatalf("GET fleet: %d %v", st, body)
	}

	// Three runs complete, the remote one of conc-2 fails on its last item.
	f.finish(t, e, runs[0].id, f.simAgent, 2, false)
	f.finish(t, e, runs[1].id, f.openAgent, 1, false)
	f.finish(t, e, runs[2].id, f.simAgent, 4, false)
	f.finish(t, e, runs[3].id, f.openAgent, 1, true)

	st, body = apiGet(e, fmt.Sprintf("/api/v1/fleets/%d/report", fleetID), tok)
	var rep fleet.Report
	b, _ := json.Marshal(body)
	if err := json.Unmarshal(b, &rep); err != nil || st != 200 {
		t.Fatalf("report: %d %v", st, err)
	}
	// 3 of 4 runs completed; cost is the cpu-2c runs' 2 s + 4 s at $3.60/h;
	// the two cpu runs have no price.
	if rep.Runs != 4 || rep.Completed != 3 || rep.Failed != 1 || !near(rep.SuccessRate, 0.75) || rep.TotalCost == nil ||
		!near(*rep.TotalCost, 0.006) || rep.CostUnknown != 2 {
		t.Fatalf("totals: %+v", rep)
	}
	if len(rep.Providers) != 2 || rep.Providers[0].Provider != "sim" || rep.Providers[0].Runs != 2 || !near(rep.Providers[0].SuccessRate, 1) ||
		rep.Providers[1].Provider != "openai" || rep.Providers[1].Completed != 1 || !near(rep.Providers[1].SuccessRate, 0.5) ||
		rep.Providers[1].Requests != 8 || rep.Providers[1].OK != 7 || rep.Providers[1].Cost != nil || !near(*rep.Providers[0].Cost, 0.006) {
		t.Fatalf("providers: %+v", rep.Providers)
	}
	// chat is items 2 and 3: 8 answers, one failed; scored right except
	// the failed one (unscored). math is items 0 (right) and 1 (wrong).
	if len(rep.Categories) != 2 || rep.Categories[0].Category != "chat" || rep.Categories[0].Requests != 8 || rep.Categories[0].OK != 7 ||
		rep.Categories[0].Scored != 7 || !near(*rep.Categories[0].Quality, 1) || !near(rep.Categories[0].SuccessRate, 7.0/8) ||
		rep.Categories[1].Category != "math" || rep.Categories[1].Scored != 8 || !near(*rep.Categories[1].Quality, 0.5) {
		t.Fatalf("categories: %+v", rep.Categories)
	}
	r0 := rep.Rows[0]
	// 4 answers of 10 tokens in 2 s: 20 tokens/s; $3.60/h over 2 s.
	if len(rep.Rows) != 4 || r0.FleetRunID != runs[0].fleetRunID || r0.Scenario != "exact-seq" || !near(*r0.Quality, 0.75) ||
		!near(*r0.OutputTokensPerS, 20) || !near(*r0.Cost, 0.002) || !near(*r0.CostPer1M, 3.6/(20*3600)*1e6) || !near(*r0.E2EP50Ms, 115) ||
		rep.Rows[1].Cost != nil || rep.Rows[3].State != "failed" || !near(*rep.Rows[3].Quality, 2.0/3) {
		t.Fatalf("rows: %+v", rep.Rows)
	}

	// CSV: the same rows.
	req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/v1/fleets/%d/report?format=csv", fleetID), nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	hres, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(hres.Body).ReadAll()
	hres.Body.Close()
	if err != nil || hres.StatusCode != 200 || len(recs) != 5 || strings.Join(recs[0], ",") != strings.Join(fleet.CSVColumns, ",") {
		t.Fatalf("csv: %d %v %v", hres.StatusCode, err, recs)
	}
	if row := recs[1]; row[0] != runs[0].fleetRunID || row[3] != "exact-seq" || row[8] != "0.75" || row[9] != "20" || row[14] != "0.002" {
		t.Fatalf("csv row: %v", row)
	}
	if row := recs[2]; row[5] != "openai" || row[14] != "" {
		t.Fatalf("csv row without a price: %v", row)
	}
	if st, body := apiGet(e, fmt.Sprintf("/api/v1/fleets/%d/report?format=xml", fleetID), tok); st != 400 || body["error"] != "format: use json, csv or html" {
		t.Fatalf("format xml: %d %v", st, body)
	}

	// The page: the same report in HTML.
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get(fmt.Sprintf("/fleets/%d", fleetID))
	row := page.doc.Find(`[data-testid="fleet-run-` + runs[0].fleetRunID + `"]`)
	if page.status != 200 || page.text(`[data-testid="fleet-success-rate"]`) != "75.0 %" || page.text(`[data-testid="fleet-total-cost"]`) != "$0.0060" ||
		strings.TrimSpace(row.Find(`[data-testid="row-quality"]`).Text()) != "0.750" || strings.TrimSpace(row.Find(`[data-testid="row-cost"]`).Text()) != "$0.0020" ||
		page.doc.Find(`[data-testid="fleet-rows"] tbody tr`).Length() != 4 || page.text(`[data-testid="provider-openai"] td:nth-child(4)`) != "50.0 %" ||
		page.text(`[data-testid="category-math"] td:nth-child(6)`) != "0.500" {
		t.Fatalf("fleet page: %d %q", page.status, page.text("main"))
	}
	if run := c.get(fmt.Sprintf("/runs/%d", runs[2].id)); run.text(`[data-testid="fleet-run-id"] code`) != runs[2].fleetRunID {
		t.Fatalf("run page: %q", run.text(`[data-testid="fleet-run-id"]`))
	}
	if list := c.get("/fleets"); list.status != 200 || !strings.Contains(list.text(fmt.Sprintf(`[data-testid="fleet-%d"]`, fleetID)), "nightly") {
		t.Fatalf("fleets page: %d", list.status)
	}

	// A scenario's benchmark deleted leaves the fleet's report: its two
	// runs are no longer counted.
	second := int64(res.body["benchmark_ids"].([]any)[1].(float64))
	if r := e.api(http.MethodDelete, fmt.Sprintf("/api/v1/benchmarks/%d", second), tok, nil, ""); r.status != 204 {
		t.Fatalf("delete the second scenario's benchmark: %d %v", r.status, r.body)
	}
	st, body = apiGet(e, fmt.Sprintf("/api/v1/fleets/%d/report", fleetID), tok)
	if st != 200 || body["runs"] != 2.0 || len(body["rows"].([]any)) != 2 {
		t.Fatalf("report after a deletion: %d runs=%v rows=%d", st, body["runs"], len(body["rows"].([]any)))
	}
}

// A fleet manifest uploaded from the browser: a preview with the run ids,
// errors beside their paths, and a launch that opens the fleet's page.
func TestFleetSubmittedFromTheBrowser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	f := newFleetFixture(t, e, tok)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	c.get("/fleets")
	send := func(action, manifest string) response {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("_csrf", c.csrf)
		_ = mw.WriteField("action", action)
		fw, _ := mw.CreateFormFile("manifest", "fleet.json")
		_, _ = fw.Write([]byte(manifest))
		_ = mw.Close()
		req := httptest.NewRequest(http.MethodPost, "/fleets", &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		return c.do(req)
	}
	if res := send("preview", strings.Replace(f.manifest("web"), `"name":"web"`, `"name":"Web Fleet"`, 1)); res.status != 422 ||
		!strings.Contains(res.text(`[data-testid="fleet-error"][data-path="name"]`), "lower-case letters, digits and hyphens") {
		t.Fatalf("bad name: %d %q", res.status, res.text(`[data-testid="fleet-errors"]`))
	}
	res := send("preview", f.manifest("web"))
	if res.status != 200 || res.doc.Find(`[data-testid="fleet-plan"] tbody tr`).Length() != 4 ||
		!strings.Contains(res.text(`[data-testid="fleet-plan"]`), "cpu_openai") || e.countRows("fleets") != 0 {
		t.Fatalf("preview: %d %q", res.status, res.text("main"))
	}
	res = send("launch", f.manifest("web"))
	if res.status != 303 || !strings.HasPrefix(res.header.Get("Location"), "/fleets/") {
		t.Fatalf("launch: %d %v", res.status, res.header)
	}
	page := c.get(res.header.Get("Location"))
	if page.text(`[data-testid="fleet-name"]`) != "Fleet web" || page.doc.Find(`[data-testid="fleet-rows"] tbody tr`).Length() != 4 ||
		page.text(`[data-testid="fleet-success-rate"]`) != "0.0 %" || page.text(`[data-testid="fleet-total-cost"]`) != "–" {
		t.Fatalf("fleet page: %q", page.text("main"))
	}
}
