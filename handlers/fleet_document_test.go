package handlers_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/ruckus/ruckus/app/fleet"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// The fleet benchmarking document's example manifest, as written
// (app/fleet/testdata/document-example.json), dry-runs and runs: its
// repository groups its scenarios, its providers are the openai and
// anthropic runtimes' runs, the anthropic runs are priced per token as an
// administrator set it, and the report gives the document's summary, the
// four CSVs and the HTML dashboard.
func TestFleetDocumentExampleRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	example, err := os.ReadFile("../app/fleet/testdata/document-example.json")
	if err != nil {
		t.Fatal(err)
	}
	// Datasets resolved by name: the coding profile's, and the reasoning
	// scenario's own (no profile: the native adapter's convention).
	for _, name := range []string{"coding-tasks.json", "reasoning"} {
		var ds strings.Builder
		for i := range 4 {
			fmt.Fprintf(&ds, "{\"custom_id\":\"q%d\",\"prompt\":\"%s %d\",\"reference\":\"%d\"}\n", i, name, i, i)
		}
		if up := e.upload(tok, "items.jsonl", []byte(ds.String()), map[string]string{"name": name}); up.status != 201 {
			t.Fatalf("upload %s: %d %v", name, up.status, up.body)
		}
	}
	for _, name := range []string{"gpt-4", "claude-3-opus"} {
		testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: name, ParamsB: 1, Quantization: "bf16", ContextLength: 8192})
	}
	agents := map[string]int64{}
	for _, rt := range []string{"openai", "anthropic"} {
		a := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "remote-" + rt, Runtimes: []string{rt}, Profile: store.HardwareProfile{Slug: "cpu", CPUCores: 4}})
		agents[rt] = a.ID
	}

	// An administrator prices Anthropic's model per 1M tokens.
	admin := e.client()
	admin.signIn("root@example.com", "correct horse")
	admin.get("/admin/providers")
	if res := admin.post("/admin/providers/prices", url.Values{"provider": {"anthropic"}, "model": {"claude-3-opus"},
		"input_per_1m": {"x"}, "output_per_1m": {"75"}}); res.status != 422 ||
		!strings.Contains(res.text(`[data-testid="provider-price-form"]`), "USD per million input tokens") {
		t.Fatalf("bad price: %d %q", res.status, res.text("main"))
	}
	if res := admin.post("/admin/providers/prices", url.Values{"provider": {"google"}, "model": {"gemini"},
		"input_per_1m": {"1"}, "output_per_1m": {"2"}}); res.status != 422 || !strings.Contains(res.text("main"), "Choose a provider of the table") {
		t.Fatalf("unknown provider: %d", res.status)
	}
	if res := admin.post("/admin/providers/prices", url.Values{"provider": {"anthropic"}, "model": {"claude-3-opus"},
		"input_per_1m": {"15"}, "output_per_1m": {"$75"}}); res.status != 303 {
		t.Fatalf("set price: %d %q", res.status, res.text("main"))
	}
	if page := admin.get("/admin/providers"); page.text(`[data-testid="price-anthropic-claude-3-opus"] [data-testid="price-output"]`) != "75" ||
		page.doc.Find(`[data-testid="provider-anthropic"]`).Length() != 1 {
		t.Fatalf("providers page: %q", page.text("main"))
	}

	// The dialect's own errors name its paths.
	bad := strings.Replace(string(example), `"adapter": "native"`, `"adapter": "generic"`, 1)
	bad = strings.Replace(bad, `"concurrency": 5`, `"concurrency": -1`, 1)
	res := e.api(http.MethodPost, "/api/v1/fleets?dry_run=true", tok, strings.NewReader(bad), "application/json")
	errs, _ := json.Marshal(res.body["errors"])
	if res.status != 422 || !strings.Contains(string(errs), `"path":"repositories[0].adapter"`) ||
		!strings.Contains(string(errs), `{"message":"between 1 and 4096 requests in flight","path":"scenario_profiles.coding.concurrency"}`) {
		t.Fatalf("invalid: %d %s", res.status, errs)
	}
	res = e.api(http.MethodPost, "/api/v1/fleets?dry_run=true", tok, strings.NewReader(strings.Replace(string(example), `"coding-tasks.json"`, `"nope.json"`, 1)), "application/json")
	if errs, _ := json.Marshal(res.body["errors"]); res.status != 422 || string(errs) != `[{"message":"no dataset \"nope.json\" that you can use","path":"scenario_profiles.coding.dataset"}]` {
		t.Fatalf("unknown dataset: %d %s", res.status, errs)
	}

	// The dry run of the example as written.
	res = e.api(http.MethodPost, "/api/v1/fleets?dry_run=true", tok, strings.NewReader(string(example)), "application/json")
	if res.status != 200 || res.body["name"] != "agentics-fleet-2025" {
		t.Fatalf("dry run: %d %v", res.status, res.body)
	}
	want := []string{"test-bench coding gpt-4 openai cpu_openai", "test-bench coding claude-3-opus anthropic cpu_anthropic",
		"test-bench reasoning gpt-4 openai cpu_openai", "test-bench reasoning claude-3-opus anthropic cpu_anthropic"}
	plan := res.body["runs"].([]any)
	for i, r := range plan {
		m := r.(map[string]any)
		if got := fmt.Sprint(m["repository"], " ", m["scenario"], " ", m["model"], " ", m["provider"], " ", m["queue"]); i >= len(want) || got != want[i] || m["items"] != 4.0 {
			t.Fatalf("planned run %d: %v", i, m)
		}
	}
	if len(plan) != 4 || e.countRows("fleets")+e.countRows("runs") != 0 {
		t.Fatalf("dry run: %d runs planned, rows created", len(plan))
	}

	// Run unchanged.
	res = e.api(http.MethodPost, "/api/v1/fleets", tok, strings.NewReader(string(example)), "application/json")
	if res.status != 201 {
		t.Fatalf("create: %d %v", res.status, res.body)
	}
	fleetID := int64(res.body["fleet_id"].(float64))
	var repos, priced int
	if err := e.store.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM benchmarks WHERE fleet_repository = 'test-bench'),
		(SELECT count(*) FROM run_providers WHERE provider = 'anthropic' AND input_per_1m = 15 AND output_per_1m = 75)`).Scan(&repos, &priced); err != nil {
		t.Fatal(err)
	}
	if repos != 2 || priced != 2 {
		t.Fatalf("%d benchmarks in the repository, %d runs priced", repos, priced)
	}
	var runs []int64
	for _, r := range res.body["runs"].([]any) {
		runs = append(runs, int64(r.(map[string]any)["run_id"].(float64)))
	}
	// Every run finishes but the reasoning scenario's on anthropic, which
	// fails on its last item: the others carry on.
	var f fleetFixture
	f.finish(t, e, runs[0], agents["openai"], 2, false)
	f.finish(t, e, runs[1], agents["anthropic"], 2, false)
	f.finish(t, e, runs[2], agents["openai"], 2, false)
	f.finish(t, e, runs[3], agents["anthropic"], 1, true)

	st, body := apiGet(e, fmt.Sprintf("/api/v1/fleets/%d/report", fleetID), tok)
	var rep fleet.Report
	b, _ := json.Marshal(body)
	if err := json.Unmarshal(b, &rep); err != nil || st != 200 {
		t.Fatalf("report: %d %v", st, err)
	}
	s := rep.Summary
	// 16 tests: 15 succeeded, 1 failed (HTTP 429); E2E of the successes
	// are 100, 110, 120, 130 ms per run (the failed run's 130 missing).
	if s.TotalRepositories != 1 || s.TotalTests != 16 || s.TotalSucceeded != 15 || s.TotalFailed != 1 || s.TotalTimeout != 0 || s.TotalSkipped != 0 ||
		!near(s.SuccessRate, 15.0/16) || !near(*s.MinDurationMs, 100) || !near(*s.MaxDurationMs, 130) || !near(*s.P50DurationMs, 110) ||
		!near(*s.AvgDurationMs, (4*100+4*110+4*120+3*130)/15.0) || s.TotalTokens != 15*15 || !near(*s.AvgTokensPerRequest, 225.0/16) ||
		s.AvgTestsPerRepository != 16 || s.TotalDurationMs == nil {
		t.Fatalf("summary: %+v", s)
	}
	// Cost: the anthropic runs at $15 / $75 per 1M tokens: 4 × 5 input and
	// 40 output tokens, then 3 × 5 and 30; the openai runs have no price.
	claude := (20*15.0 + 40*75.0) / 1e6
	failed := (15*15.0 + 30*75.0) / 1e6
	if s.TotalCost == nil || !near(*s.TotalCost, claude+failed) || !near(*s.AvgCostPerRepository, claude+failed) || rep.CostUnknown != 2 ||
		!near(*rep.Rows[1].Cost, claude) || !near(*rep.Rows[1].PriceOutputPer1M, 75) || rep.Rows[0].Cost != nil {
		t.Fatalf("cost: %v %+v", s.TotalCost, rep.Rows)
	}
	if len(rep.Providers) != 2 || rep.Providers[1].Provider != "anthropic" || rep.Providers[1].RepositoryCount != 1 || rep.Providers[1].Tests != 8 ||
		!near(rep.Providers[1].TestSuccessRate, 7.0/8) || !near(*rep.Providers[1].Cost, claude+failed) {
		t.Fatalf("providers: %+v", rep.Providers)
	}
	if len(rep.Repositories) != 1 || rep.Repositories[0].Repository != "test-bench" || rep.Repositories[0].Scenarios != 2 || rep.Repositories[0].Runs != 4 ||
		!near(*rep.Repositories[0].P95DurationMs, *s.P95DurationMs) {
		t.Fatalf("repositories: %+v", rep.Repositories)
	}
	if len(rep.Failures) != 1 || rep.Failures[0].Scenario != "reasoning" || rep.Failures[0].Target != "anthropic:claude-3-opus" ||
		rep.Failures[0].Error != "every request failed with HTTP 429" || rep.Completed != 3 {
		t.Fatalf("failures: %+v", rep.Failures)
	}

	// The four CSVs of the document, and the runs'.
	csvOf := func(table string) [][]string {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/v1/fleets/%d/report?format=csv&table=%s", fleetID, table), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		hres, err := e.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer hres.Body.Close()
		recs, err := csv.NewReader(hres.Body).ReadAll()
		if err != nil || hres.StatusCode != 200 {
			t.Fatalf("%s csv: %d %v", table, hres.StatusCode, err)
		}
		return recs
	}
	if recs := csvOf("summary"); len(recs) != 2 || strings.Join(recs[0], ",") != strings.Join(fleet.SummaryColumns, ",") || recs[1][3] != "16" || recs[1][4] != "15" {
		t.Fatalf("summary csv: %v", recs)
	}
	if recs := csvOf("repositories"); len(recs) != 2 || recs[1][0] != "test-bench" || recs[1][3] != "16" {
		t.Fatalf("repositories csv: %v", recs)
	}
	if recs := csvOf("providers"); len(recs) != 3 || recs[2][0] != "anthropic" || recs[2][4] != "8" {
		t.Fatalf("providers csv: %v", recs)
	}
	if recs := csvOf("categories"); len(recs) != 2 || recs[1][1] != "16" {
		t.Fatalf("categories csv: %v", recs)
	}
	if recs := csvOf("runs"); len(recs) != 5 || recs[4][len(recs[4])-1] != "every request failed with HTTP 429" || recs[4][16] != "test-bench" {
		t.Fatalf("runs csv: %v", recs)
	}
	if st, body := apiGet(e, fmt.Sprintf("/api/v1/fleets/%d/report?format=csv&table=users", fleetID), tok); st != 400 || !strings.Contains(fmt.Sprint(body["error"]), "table: use summary") {
		t.Fatalf("table users: %d %v", st, body)
	}

	// The dashboard: one HTML file, nothing to run or fetch.
	for _, path := range []string{"/api/v1/fleets/%d/report.html", "/api/v1/fleets/%d/report?format=html"} {
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf(path, fleetID), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		hres, err := e.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(hres.Body)
		hres.Body.Close()
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(page)))
		if err != nil || hres.StatusCode != 200 || !strings.HasPrefix(hres.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(hres.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Fatalf("%s: %d %v", path, hres.StatusCode, err)
		}
		if doc.Find("script").Length() != 0 || doc.Find("link").Length() != 0 || doc.Find("svg").Length() != 3 ||
			doc.Find("[src], [href], iframe, object, embed, img").Length() != 0 || strings.Contains(string(page), "url(") || strings.Contains(string(page), "@import") ||
			strings.TrimSpace(doc.Find(`[data-metric="success_rate"] b`).Text()) != "93.8 %" ||
			doc.Find(`#chart-repositories rect`).Length() != 5 || doc.Find(`#failures tr.fail`).Length() != 1 ||
			!strings.Contains(doc.Find("#failures").Text(), "every request failed with HTTP 429") {
			t.Fatalf("%s: %s", path, page)
		}
	}
	// The page links it, with the summary.
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get(fmt.Sprintf("/fleets/%d", fleetID))
	if page.status != 200 || page.text(`[data-testid="summary-total_tests"] td`) != "16" || page.text(`[data-testid="repository-test-bench"] td:nth-child(4)`) != "16" ||
		page.doc.Find(`[data-testid="fleet-failures"] tbody tr`).Length() != 1 || page.doc.Find(`[data-testid="fleet-dashboard"]`).Length() != 1 {
		t.Fatalf("fleet page: %q", page.text("main"))
	}
	if dl := c.get(fmt.Sprintf("/fleets/%d/report.html?download=1", fleetID)); dl.status != 200 || !strings.Contains(dl.header.Get("Content-Disposition"), "report.html") {
		t.Fatalf("download: %d %v", dl.status, dl.header)
	}
}

// An administrator removes a provider's price; a user may not.
func TestProviderPriceRemoved(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	if err := e.store.SetProviderPrice(context.Background(), store.ProviderPrice{Provider: "openai", Model: "gpt-4o", InputPer1M: 2.5, OutputPer1M: 10}); err != nil {
		t.Fatal(err)
	}
	ada := e.client()
	ada.signIn("ada@example.com", "correct horse")
	ada.get("/")
	if res := ada.post("/admin/providers/prices/delete", url.Values{"provider": {"openai"}, "model": {"gpt-4o"}}); res.status != 403 {
		t.Fatalf("a user removing a price: %d", res.status)
	}
	admin := e.client()
	admin.signIn("root@example.com", "correct horse")
	admin.get("/admin/providers")
	if res := admin.post("/admin/providers/prices/delete", url.Values{"provider": {"openai"}, "model": {"gpt-4o"}}); res.status != 303 {
		t.Fatalf("remove: %d", res.status)
	}
	if res := admin.post("/admin/providers/prices/delete", url.Values{"provider": {"openai"}, "model": {"gpt-4o"}}); res.status != 404 {
		t.Fatalf("remove again: %d", res.status)
	}
	if page := admin.get("/admin/providers"); page.doc.Find(`[data-testid="no-provider-prices"]`).Length() != 1 {
		t.Fatalf("providers page: %q", page.text("main"))
	}
}

// The document's example uploaded from the browser: its preview names
// each scenario by repository, and its errors by the dialect's paths.
func TestFleetDocumentFromTheBrowser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	example, err := os.ReadFile("../app/fleet/testdata/document-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"coding-tasks.json", "reasoning"} {
		if up := e.upload(tok, "items.jsonl", []byte(`{"prompt":"`+name+`"}`+"\n"), map[string]string{"name": name}); up.status != 201 {
			t.Fatalf("upload %s: %d %v", name, up.status, up.body)
		}
	}
	for _, name := range []string{"gpt-4", "claude-3-opus"} {
		testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: name, ParamsB: 1, Quantization: "bf16", ContextLength: 8192})
	}
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "remote", Runtimes: []string{"openai", "anthropic"}, Profile: store.HardwareProfile{Slug: "cpu", CPUCores: 4}})
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	c.get("/fleets")
	send := func(manifest string) response {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("_csrf", c.csrf)
		_ = mw.WriteField("action", "preview")
		fw, _ := mw.CreateFormFile("manifest", "fleet.yaml")
		_, _ = fw.Write([]byte(manifest))
		_ = mw.Close()
		req := httptest.NewRequest(http.MethodPost, "/fleets", &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		return c.do(req)
	}
	res := send(string(example))
	plan := res.text(`[data-testid="fleet-plan"]`)
	if res.status != 200 || res.doc.Find(`[data-testid="fleet-plan"] tbody tr`).Length() != 4 || !strings.Contains(plan, "test-bench/coding") ||
		!strings.Contains(plan, "test-bench/reasoning") || !strings.Contains(plan, "cpu_anthropic") || e.countRows("fleets") != 0 {
		t.Fatalf("preview: %d %q", res.status, res.text("main"))
	}
	res = send(strings.Replace(string(example), "adapter: native", "adapter: generic", 1))
	if res.status != 422 || !strings.Contains(res.text(`[data-testid="fleet-error"][data-path="repositories[0].adapter"]`), "the adapters are native") {
		t.Fatalf("bad adapter: %d %q", res.status, res.text(`[data-testid="fleet-errors"]`))
	}
}
