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

// runWithResults makes a benchmark on a dataset of n items and stores a
// result for each through an agent's lease; outputs come from output(i).
func runWithResults(t *testing.T, e *env, tok string, n int, output func(i int) string) (benchmarkID string, runID int64) {
	t.Helper()
	var ds strings.Builder
	for i := range n {
		fmt.Fprintf(&ds, "{\"custom_id\":\"c%03d\",\"prompt\":\"question number %d\",\"reference\":\"%d\"}\n", i, i, i)
	}
	return runOnDataset(t, e, tok, []byte(ds.String()), n, output)
}

// runOnDataset is runWithResults on a dataset of n items given as JSONL.
func runOnDataset(t *testing.T, e *env, tok string, data []byte, n int, output func(i int) string) (benchmarkID string, runID int64) {
	t.Helper()
	ctx := context.Background()
	up := e.upload(tok, "big.jsonl", data, nil)
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "m/small", Quantization: "bf16"})
	agent := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	manifest := fmt.Sprintf(`{"name":"r","dataset":%v,"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}],
		"load":{"profile":"sequential"},"sampling":{"max_tokens":8}}`, up.body["dataset_id"])
	r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json")
	if r.status != 201 {
		t.Fatalf("create: %v", r.body)
	}
	runID = int64(r.body["runs"].([]any)[0].(map[string]any)["run_id"].(float64))
	var jobID int64
	_ = e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, runID).Scan(&jobID)
	claim, err := e.store.ClaimRun(ctx, runID, agent.ID, jobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	var rs []store.ResultRecord
	for i := range n {
		res := jobs.Result{Idx: i, CustomID: fmt.Sprintf("c%03d", i), Status: jobs.StatusOK, Output: output(i), CompletionTokens: 5, ContentEvents: 5,
			TTFT: time.Duration(i+1) * time.Millisecond, E2E: time.Duration((i*37)%n+10) * time.Millisecond}
		if i%10 == 9 {
			res = jobs.Result{Idx: i, CustomID: fmt.Sprintf("c%03d", i), Status: jobs.StatusError, ErrorClass: jobs.ErrHTTP429, Error: "slow down"}
		}
		rs = append(rs, store.ResultRecord{Result: res, SentAt: time.Now()})
	}
	if _, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil {
		t.Fatal(err)
	}
	// Scores come with scoring (a later job); set some to filter on.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE results SET score = (idx % 4) / 3.0 WHERE run_id = $1 AND status = 'ok'`, runID); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(r.body["benchmark_id"]), runID
}

func TestResultsViewerPagesFiltersAndSorts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	_, runID := runWithResults(t, e, tok, 120, func(i int) string { return fmt.Sprintf("answer %d", i) })
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	base := fmt.Sprintf("/runs/%d", runID)

	// Keyset pages: 50 + 50 + 20, no item twice.
	seen := map[string]bool{}
	path, pages := base, 0
	for path != "" {
		page := c.get(path)
		if page.status != 200 {
			t.Fatalf("%s: %d", path, page.status)
		}
		page.doc.Find(`[data-testid="results"] tbody tr`).Each(func(_ int, s *goquery.Selection) {
			id, _ := s.Attr("data-testid")
			if seen[id] {
				t.Fatalf("%s shown twice", id)
			}
			seen[id] = true
		})
		pages++
		path, _ = page.doc.Find(`[data-testid="next-page"]`).Attr("href")
	}
	if len(seen) != 120 || pages != 3 {
		t.Fatalf("%d results over %d pages", len(seen), pages)
	}

	rows := func(q string) []string {
		page := c.get(base + "?" + q)
		var ids []string
		page.doc.Find(`[data-testid="results"] tbody tr`).Each(func(_ int, s *goquery.Selection) {
			ids = append(ids, strings.TrimSpace(s.Find("td").First().Text()))
		})
		return ids
	}
	if got := rows("status=error"); len(got) != 12 || got[0] != "c009" {
		t.Fatalf("errors: %v", got)
	}
	if got := rows("custom_id=c042"); len(got) != 1 || got[0] != "c042" {
		t.Fatalf("custom_id: %v", got)
	}
	if got := rows("q=ANSWER+11"); len(got) != 10 || got[0] != "c011" || got[1] != "c110" {
		t.Fatalf("text: %v", got)
	}
	// idx ≡ 3 (mod 4): 30 items, less the 6 errors (idx ≡ 19 mod 20).
	if got := rows("min_score=1&max_score=1"); len(got) != 24 {
		t.Fatalf("score 1: %d rows", len(got))
	}
	// Slowest first: E2E of item i is (37·i mod 120) + 10 ms, so the
	// slowest (129 ms) is the item with 37·i ≡ 119 (mod 120): i = 119·13 mod 120 = 107.
	if got := rows("sort=e2e&dir=desc"); got[0] != "c107" {
		t.Fatalf("slowest first: %v", got[:3])
	}
	if page := c.get(base + "?min_score=two"); page.status != 422 || !strings.Contains(page.text(`[data-testid="filter-error"]`), "Score ≥") {
		t.Fatalf("bad filter: %d %q", page.status, page.text(`[data-testid="filter-error"]`))
	}

	item := c.get(base + "/items/42")
	if item.text(`[data-testid="item-title"]`) != "c042" || !strings.Contains(item.text(`[data-testid="item-request"]`), "question number 42") ||
		item.text(`[data-testid="item-output"]`) != "answer 42" || !strings.Contains(item.text(`[data-testid="item-reference"]`), "42") {
		t.Fatalf("item page: %q %q", item.text(`[data-testid="item-request"]`), item.text(`[data-testid="item-output"]`))
	}
	if c.get(base+"/items/999").status != 404 {
		t.Fatal("a missing item is not 404")
	}
}

// Model outputs are untrusted: they are rendered as text everywhere.
func TestUntrustedOutputIsEscaped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	payloads := []string{`<script>alert("x")</script>`, `"><img src=x onerror=alert(1)>`}
	_, runID := runWithResults(t, e, tok, 2, func(i int) string { return payloads[i] })
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	for _, path := range []string{fmt.Sprintf("/runs/%d", runID), fmt.Sprintf("/runs/%d/items/0", runID), fmt.Sprintf("/runs/%d/items/1", runID)} {
		page := c.get(path)
		if strings.Contains(page.body, `<script>alert("x")`) || strings.Contains(page.body, `<img src=x onerror`) {
			t.Fatalf("%s renders an output as HTML", path)
		}
		if page.doc.Find("main img, main script").Length() != 0 {
			t.Fatalf("%s has an element made from an output", path)
		}
	}
	if got := c.get(fmt.Sprintf("/runs/%d/items/1", runID)).text(`[data-testid="item-output"]`); got != payloads[1] {
		t.Fatalf("escaped output reads %q", got)
	}
}

// A run's page draws its charts as SVG from its samples and requests, with
// a hover title on every point.
func TestRunChartsAreDrawnAsSVG(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	_, runID := runWithResults(t, e, tok, 30, func(i int) string { return "x" })
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get(fmt.Sprintf("/runs/%d", runID))
	if page.doc.Find(`[data-testid="chart-throughput"] [data-testid="chart-empty"]`).Length() != 1 {
		t.Fatal("a run without samples draws a throughput line")
	}
	// 27 successful requests: one TTFT and one E2E dot each.
	if n := page.doc.Find(`[data-testid="chart-latency"] svg circle title`).Length(); n != 54 {
		t.Fatalf("latency chart has %d points, want 54", n)
	}
	if page.doc.Find(`[data-testid="chart-gpu-util"]`).Length() != 0 {
		t.Fatal("a GPU chart without GPU samples")
	}
	for i := range 5 {
		if _, err := e.store.Pool().Exec(context.Background(), `INSERT INTO run_samples (run_id, t, completed, throughput, gpu_util, gpu_power_w)
			VALUES ($1, now() + make_interval(secs => $2), $2 * 5, 100 + $2, 40 + $2, 300)`, runID, i); err != nil {
			t.Fatal(err)
		}
	}
	page = c.get(fmt.Sprintf("/runs/%d", runID))
	tp := page.doc.Find(`[data-testid="chart-throughput"] svg`)
	points, _ := tp.Find("polyline").Attr("points")
	if len(strings.Fields(points)) != 5 || tp.Find("circle").Length() != 5 || !strings.Contains(tp.Find("circle title").First().Text(), "100.0 tokens/s") {
		t.Fatalf("throughput chart: %q", points)
	}
	if page.doc.Find(`[data-testid="chart-gpu-util"] svg circle`).Length() != 5 || page.doc.Find(`[data-testid="chart-gpu-power"]`).Length() != 1 {
		t.Fatal("GPU charts missing")
	}
}

// The run page shows the run's quality and queues scoring again with the
// scorer picked.
func TestRunQualityAndRescore(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	_, runID := runWithResults(t, e, tok, 10, func(i int) string { return fmt.Sprint(i) })
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	path := fmt.Sprintf("/runs/%d", runID)
	if got := c.get(path).text(`[data-testid="run-quality"]`); got != "Not scored." {
		t.Fatalf("quality before scoring: %q", got)
	}
	if res := c.post(path+"/score", url.Values{"scorer": {"numeric"}}); res.status != 303 {
		t.Fatalf("rescore: %d", res.status)
	}
	var n int
	if err := e.store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'score_run'
		AND (args->>'run_id')::bigint = $1 AND args->>'scorer' = 'numeric'`, runID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("score_run jobs: %d %v", n, err)
	}
	if res := c.post(path+"/score", url.Values{"scorer": {"meteor"}}); res.status != 422 {
		t.Fatalf("unknown scorer: %d", res.status)
	}
	if _, err := e.store.Pool().Exec(context.Background(), `UPDATE runs SET scorer = 'numeric', scored = 9, quality = 0.5, quality_lo = 0.2, quality_hi = 0.8 WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	if got := c.get(path).text(`[data-testid="run-quality"]`); got != "Quality (numeric): 0.500, 95 % CI [0.200, 0.800] over 9 scored items" {
		t.Fatalf("quality: %q", got)
	}
}

// The run page gives the run's cost per 1M output tokens, energy per token,
// kWh and estimated CO₂e (at the configured 400 g/kWh).
func TestRunFootprint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	_, runID := runWithResults(t, e, tok, 10, func(i int) string { return "x" })
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	path := fmt.Sprintf("/runs/%d", runID)
	if got := c.get(path).text(`[data-testid="run-footprint"]`); !strings.Contains(got, "cost unknown (no price for cpu-2c)") || !strings.Contains(got, "energy not measured") {
		t.Fatalf("footprint without price or GPUs: %q", got)
	}
	price := 7.2
	if err := e.store.SetHardwarePrice(ctx, "cpu-2c", &price); err != nil {
		t.Fatal(err)
	}
	// 1,000 tokens/s; 7.2 kJ = 0.002 kWh → 0.8 g at 400 g/kWh; $7.2/h ÷ 3.6M tokens/h = $2 per 1M.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET summary = '{"output_tokens_per_s": 1000}',
		gpu_summary = '{"energy_j": 7200, "joules_per_token": 0.5}' WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	want := "$2.000 per 1M output tokens · 0.500 J per output token · 0.0020 kWh · ≈ 0.8 g CO₂e at 400 g/kWh"
	if got := c.get(path).text(`[data-testid="run-footprint"]`); got != want {
		t.Fatalf("footprint %q, want %q", got, want)
	}
}

// The benchmark page has a live card per run: figures, charts drawn from
// the run's samples and requests, errors by class. The card polls its own
// fragment while the run goes on and stops once it has finished; another
// user cannot read it.
func TestBenchmarkPageRunCards(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	e.createUser("bob@example.com", "correct horse", store.RoleUser)
	benchmarkID, runID := runWithResults(t, e, tok, 30, func(i int) string { return "x" })
	for i := range 4 {
		if _, err := e.store.Pool().Exec(ctx, `INSERT INTO run_samples (run_id, t, completed, throughput, gpu_mem_bytes)
			VALUES ($1, now() + make_interval(secs => $2), $2 * 5, 50 + $2, 1073741824)`, runID, i); err != nil {
			t.Fatal(err)
		}
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get("/benchmarks/" + benchmarkID)
	card := page.doc.Find(fmt.Sprintf(`[data-testid="run-card-%d"]`, runID))
	if card.Length() != 1 {
		t.Fatalf("no card for run %d: %s", runID, page.body)
	}
	cardURL := fmt.Sprintf("/benchmarks/%s/runs/%d/card", benchmarkID, runID)
	if got, _ := card.Attr("hx-get"); got != cardURL {
		t.Fatalf("a running run's card polls %q, want %q", got, cardURL)
	}
	if got := strings.TrimSpace(card.Find(`[data-testid="card-completed"]`).Text()); got != "30 / 30" {
		t.Fatalf("card completed %q", got)
	}
	if got := strings.Join(strings.Fields(card.Find(`[data-testid="card-error-classes"]`).Text()), " "); got != "Errors by class: http_429 × 3" {
		t.Fatalf("errors by class %q", got)
	}
	if n := card.Find(`[data-testid="chart-latency"] svg circle title`).Length(); n != 54 {
		t.Fatalf("card latency chart has %d points, want 54", n)
	}
	if n := card.Find(`[data-testid="chart-throughput"] svg circle`).Length(); n != 4 {
		t.Fatalf("card throughput chart has %d points, want 4", n)
	}
	if !strings.Contains(card.Find(`[data-testid="chart-gpu-mem"] svg circle title`).First().Text(), "1.0 GiB") {
		t.Fatal("card has no GPU memory chart")
	}

	frag := c.get(cardURL)
	if frag.status != 200 || strings.Contains(frag.body, "<nav") {
		t.Fatalf("card fragment: %d", frag.status)
	}
	if _, ok := frag.doc.Find(fmt.Sprintf(`#run-card-%d`, runID)).Attr("hx-trigger"); !ok {
		t.Fatal("the fragment of a running run stops polling")
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET state = 'completed', finished_at = now() WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	frag = c.get(cardURL)
	if _, ok := frag.doc.Find(fmt.Sprintf(`#run-card-%d`, runID)).Attr("hx-trigger"); ok {
		t.Fatal("a finished run's card still polls")
	}
	if got := frag.text(`[data-testid="card-state"]`); got != "completed" {
		t.Fatalf("card state %q", got)
	}
	if page.doc.Find(`[data-testid="cancel-benchmark"]`).Length() != 1 || c.get("/benchmarks/"+benchmarkID).doc.Find(`[data-testid="cancel-benchmark"]`).Length() != 0 {
		t.Fatal("Cancel benchmark is offered only while runs are active")
	}

	other := e.client()
	other.signIn("bob@example.com", "correct horse")
	if res := other.get(cardURL); res.status != 404 {
		t.Fatalf("another user's run card: %d", res.status)
	}
	if res := c.get(fmt.Sprintf("/benchmarks/%s/runs/%d/card", benchmarkID, runID+1000)); res.status != 404 {
		t.Fatalf("a run of another benchmark: %d", res.status)
	}
}

// A run's token-level ITL, a launched runtime's load time and log tail,
// and what was not measured: on the run page, the item page (with the
// request's gap chart), GET /api/v1/runs/{id} and the benchmark's API.
func TestRunITLLoadTimeAndNotMeasured(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	benchmarkID, runID := runWithResults(t, e, tok, 10, func(i int) string { return "x" })
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	path := fmt.Sprintf("/runs/%d", runID)

	// Before: no gaps, no launched runtime.
	sum, err := summary.Run(ctx, e.store, runID, jobs.SLO{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	setSummary := func(s jobs.RunSummary) {
		b, _ := json.Marshal(s)
		if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET summary = $2 WHERE id = $1`, runID, b); err != nil {
			t.Fatal(err)
		}
	}
	setSummary(sum)
	page := c.get(path)
	if page.doc.Find(`[data-testid="itl-not-measured"]`).Length() != 1 ||
		!strings.Contains(page.text(`[data-testid="run-load-time"]`), "not measured") || page.doc.Find(`[data-testid="run-runtime-log"]`).Length() != 0 {
		t.Fatalf("unmeasured ITL and load time: %s", page.text(`[data-testid="run-summary"]`))
	}
	item := c.get(path + "/items/0")
	if got := item.text(`[data-testid="item-itl"]`); !strings.Contains(got, "not measured") || item.doc.Find(`[data-testid="item-itl-chart"]`).Length() != 0 {
		t.Fatalf("item ITL without gaps: %q", got)
	}

	// After: item 0 streamed 5 tokens with a 500 ms stall among 10 ms gaps;
	// the runtime was launched (load time and log kept).
	if _, err := e.store.Pool().Exec(ctx, `UPDATE results SET itl_gaps_us = '{10000,500000,10000,10000}', itl_p50_ms = 10, itl_p99_ms = 485.3,
		itl_max_ms = 500 WHERE run_id = $1 AND idx = 0`, runID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET load_time_ms = 1234, runtime_log = 'INFO model loaded <ok>' WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	sum, err = summary.Run(ctx, e.store, runID, jobs.SLO{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	setSummary(sum)
	page = c.get(path)
	row := strings.Join(page.doc.Find(`[data-testid="run-summary"] tr`).Last().Children().Map(func(_ int, c *goquery.Selection) string {
		return strings.TrimSpace(c.Text())
	}), " ")
	// Latencies 10, 500, 10, 10: mean 132.5, p50 10, p90 = 10 + 0.7·490 = 353 (numpy), max 500.
	if row != "ITL ms (every token, 4) 132.5 10.0 353.0 426.5 485.3 500.0" {
		t.Fatalf("ITL row %q", row)
	}
	if got := page.text(`[data-testid="run-load-time"]`); !strings.Contains(got, "1234 ms") {
		t.Fatalf("load time %q", got)
	}
	if got := page.text(`[data-testid="run-runtime-log"] pre`); got != "INFO model loaded <ok>" {
		t.Fatalf("runtime log %q", got)
	}
	item = c.get(path + "/items/0")
	if got := item.text(`[data-testid="item-itl"]`); !strings.Contains(got, "p50 10.0 ms · p99 485.3 ms · max 500.0 ms") {
		t.Fatalf("item ITL %q", got)
	}
	dots := item.doc.Find(`[data-testid="item-itl-chart"] svg circle title`)
	if dots.Length() != 4 || dots.Eq(1).Text() != "token 3: 500.00 ms" {
		t.Fatalf("gap chart: %d points, second %q", dots.Length(), dots.Eq(1).Text())
	}

	r := e.api(http.MethodGet, "/api/v1"+path, tok, nil, "")
	s, _ := r.body["summary"].(map[string]any)
	itl, _ := s["itl_ms"].(map[string]any)
	if r.status != 200 || itl["max"] != 500.0 || s["itl_tokens"] != 4.0 || r.body["load_time_ms"] != 1234.0 ||
		r.body["runtime_log"] != "INFO model loaded <ok>" || r.body["cost_per_1m_tokens"] != nil || r.body["gpu_summary"] != nil {
		t.Fatalf("GET run: %d %v", r.status, r.body)
	}
	b := e.api(http.MethodGet, "/api/v1/benchmarks/"+benchmarkID, tok, nil, "")
	runs, _ := b.body["runs"].([]any)
	if len(runs) != 1 || runs[0].(map[string]any)["load_time_ms"] != 1234.0 || runs[0].(map[string]any)["summary"] == nil {
		t.Fatalf("benchmark API runs: %v", b.body)
	}
	bob := e.token(e.createUser("carol@example.com", "correct horse", store.RoleUser))
	if r := e.api(http.MethodGet, "/api/v1"+path, bob, nil, ""); r.status != 404 {
		t.Fatalf("another user's run: %d", r.status)
	}
}

// A sweep's steps, each on its own, with the saturation point and the
// curves: on the run page, GET /api/v1/runs/{id}/steps and the summary CSV
// (a row per step).
func TestSweepStepsOnPageAPIAndCSV(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	benchmarkID, runID := runWithResults(t, e, tok, 30, func(i int) string { return "x" })
	// Three steps of 10 items: sequential (TTFT 1–10 ms), max and 2/s; the
	// SLO TTFT ≤ 15 ms holds only in the first (items 0–9: TTFT i+1 ms).
	if _, err := e.store.Pool().Exec(ctx, `UPDATE results SET phase = CASE WHEN idx < 10 THEN 'sequential' WHEN idx < 20 THEN 'max' ELSE 'rate 2.00/s' END,
		sent_at = '2026-01-01T00:00:00Z'::timestamptz + make_interval(secs => idx), status = 'ok', error_class = '', error = '', ttft_ms = idx + 1, e2e_ms = 1000, tpot_ms = 20
		WHERE run_id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	sum, err := summary.Run(ctx, e.store, runID, jobs.SLO{TTFT: jobs.Duration(15 * time.Millisecond)}, 30*time.Second)
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
	if n := page.doc.Find(`[data-testid="steps-table"] tbody tr`).Length(); n != 3 {
		t.Fatalf("%d step rows", n)
	}
	// Each step: 10 sent 1 s apart, 1 s each → 10 s window, 1 req/s.
	if got := page.text(`[data-testid="step-rate 2.00/s"] td:nth-of-type(1)`); got != "2.00" {
		t.Errorf("offered rate %q", got)
	}
	if got := page.text(`[data-testid="saturation"]`); got != "Saturation between 1.00 req/s (sequential, the SLOs hold for 99 % of requests) and 1.00 req/s (max, they do not)." {
		t.Errorf("saturation %q", got)
	}
	for _, id := range []string{"sweep-rate", "sweep-ttft", "sweep-e2e", "sweep-goodput", "sweep-users"} {
		if page.doc.Find(`[data-testid="chart-`+id+`"] svg`).Length() != 1 {
			t.Errorf("no %s chart", id)
		}
	}

	r := e.api(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d/steps", runID), tok, nil, "")
	steps, _ := r.body["steps"].([]any)
	sat, _ := r.body["saturation"].(map[string]any)
	if r.status != 200 || len(steps) != 3 || steps[0].(map[string]any)["name"] != "sequential" || steps[0].(map[string]any)["slos_hold"] != true ||
		steps[2].(map[string]any)["offered_rps"] != 2.0 || sat["holds_step"] != "sequential" {
		t.Fatalf("steps API: %d %v", r.status, r.body)
	}
	status, _, body := e.raw("/api/v1/benchmarks/"+benchmarkID+"/summary?format=csv", tok)
	recs, _ := csv.NewReader(strings.NewReader(body)).ReadAll()
	if status != 200 || len(recs) != 5 {
		t.Fatalf("summary CSV: %d %q", status, recs)
	}
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	if recs[1][col["step"]] != "" || recs[2][col["step"]] != "sequential" || recs[4][col["offered_rps"]] != "2.000" ||
		recs[2][col["slos_hold"]] != "true" || recs[3][col["slos_hold"]] != "false" || recs[2][col["requests"]] != "10" ||
		recs[2][col["requests_per_s"]] != "1.000" || recs[2][col["ttft_p50_ms"]] != "5.500" {
		t.Fatalf("summary CSV rows: %q", recs)
	}
}

// A benchmark's report is one self-contained HTML file: styles inline,
// charts as SVG, no scripts and nothing to fetch; ?format=json is the same
// summary as data.
func TestBenchmarkReport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	other := e.token(e.createUser("bob@example.com", "correct horse", store.RoleUser))
	benchmarkID, runID := runWithResults(t, e, tok, 20, func(i int) string { return "x" })
	sum, err := summary.Run(ctx, e.store, runID, jobs.SLO{}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(sum)
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET summary = $2, state = 'completed' WHERE id = $1`, runID, raw); err != nil {
		t.Fatal(err)
	}
	status, ct, body := e.raw("/api/v1/benchmarks/"+benchmarkID+"/report.html", tok)
	if status != 200 || !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("report: %d %s", status, ct)
	}
	for _, banned := range []string{"<script", "<link", " src=", "@import", "url(http", "//cdn"} {
		if strings.Contains(strings.ToLower(body), banned) {
			t.Errorf("the report holds %q: it must open offline, fetching nothing", banned)
		}
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Find("style").Length() != 1 || len(doc.Find("style").Text()) < 10000 || doc.Find("svg").Length() < 1 {
		t.Errorf("inline styles and charts: %d style, %d svg", doc.Find("style").Length(), doc.Find("svg").Length())
	}
	if doc.Find(fmt.Sprintf(`[data-testid="report-run-%d"]`, runID)).Length() != 1 || !strings.Contains(doc.Find(`[data-testid="report-manifest"]`).Text(), `"max_tokens": 8`) ||
		!strings.Contains(doc.Find(`[data-testid="report-agents"]`).Text(), "cpu-1") || doc.Find(`[data-testid="report-recommendation"] li`).Length() != 1 {
		t.Errorf("report content: %s", doc.Find("main").Text())
	}
	r := e.api(http.MethodGet, "/api/v1/benchmarks/"+benchmarkID+"/report.html?format=json", tok, nil, "")
	runs, _ := r.body["runs"].([]any)
	if r.status != 200 || len(runs) != 1 || r.body["manifest"] == nil || r.body["recommendation"] == nil || r.body["agents"] == nil {
		t.Fatalf("report JSON: %d %v", r.status, r.body)
	}
	if r := e.api(http.MethodGet, "/api/v1/benchmarks/"+benchmarkID+"/report.html", other, nil, ""); r.status != 404 {
		t.Errorf("another user's report: %d", r.status)
	}
	if status, _, _ := e.raw("/api/v1/benchmarks/"+benchmarkID+"/report.html?format=pdf", tok); status != 400 {
		t.Errorf("format pdf: %d", status)
	}
}

// A run's node figures: its page charts the node's CPU and memory beside
// the runtime's processes and says what they were in a sentence; GPU
// readings simulated from the load say so in their charts and beside the
// energy; the API and the summary CSV carry the same figures.
func TestRunNodeFiguresAndSimulatedGPUs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	benchmarkID, runID := runWithResults(t, e, tok, 10, func(i int) string { return "x" })
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	path := fmt.Sprintf("/runs/%d", runID)
	page := c.get(path)
	if got := page.text(`[data-testid="run-node"]`); !strings.Contains(got, "not measured") {
		t.Fatalf("node line before any sample: %q", got)
	}
	if page.doc.Find(`[data-testid="chart-node-cpu"]`).Length() != 0 {
		t.Fatal("a node chart without node samples")
	}
	for i := range 4 {
		if _, err := e.store.Pool().Exec(ctx, `INSERT INTO run_samples (run_id, t, completed, throughput, gpu_util, gpu_simulated,
				cpu_util, mem_used_bytes, mem_total_bytes, proc_cpu_util, proc_rss_bytes)
			VALUES ($1, now() + make_interval(secs => $2), $2, 10, 50, true, 20 + $2, 4294967296, 17179869184, 5, 536870912)`, runID, i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET summary = '{"output_tokens_per_s": 10}',
		gpu_summary = '{"gpus": 1, "energy_j": 720, "joules_per_token": 0.5, "simulated": true}',
		node_summary = '{"samples": 4, "mean_cpu_percent": 21.5, "peak_cpu_percent": 23, "mem_total_bytes": 17179869184,
			"peak_mem_used_bytes": 4294967296, "process": "runtime", "process_mean_cpu_percent": 5, "process_peak_rss_bytes": 536870912}'
		WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	page = c.get(path)
	want := "Node over 4 samples: CPU 22 % mean, 23 % peak (of all CPUs), memory 4.0 GiB peak of 16.0 GiB. Runtime processes: CPU 5 % mean of all CPUs, 0.5 GiB resident at peak."
	if got := page.text(`[data-testid="run-node"]`); got != want {
		t.Fatalf("node line %q, want %q", got, want)
	}
	if n := page.doc.Find(`[data-testid="chart-node-cpu"] svg polyline`).Length(); n != 2 {
		t.Fatalf("node CPU chart has %d lines, want the node's and the runtime's", n)
	}
	if page.doc.Find(`[data-testid="chart-node-mem"]`).Length() != 1 {
		t.Fatal("no node memory chart")
	}
	if got := page.text(`[data-testid="chart-gpu-util"]`); !strings.Contains(got, "simulated from the load, not measured") {
		t.Fatalf("simulated GPU chart not labelled: %q", got)
	}
	if got := page.text(`[data-testid="run-footprint"]`); !strings.HasSuffix(got, "0.500 J per output token · 0.0002 kWh · ≈ 0.1 g CO₂e at 400 g/kWh · energy simulated from the load (--sim-gpu), not measured") {
		t.Fatalf("footprint %q", got)
	}

	r := e.api(http.MethodGet, "/api/v1"+path, tok, nil, "")
	node, _ := r.body["node_summary"].(map[string]any)
	gpu, _ := r.body["gpu_summary"].(map[string]any)
	if r.status != 200 || node["peak_cpu_percent"] != 23.0 || node["process"] != "runtime" || gpu["simulated"] != true {
		t.Fatalf("GET run: %d %v", r.status, r.body)
	}
	status, _, body := e.raw("/api/v1/benchmarks/"+benchmarkID+"/summary?format=csv", tok)
	recs, _ := csv.NewReader(strings.NewReader(body)).ReadAll()
	if status != 200 || len(recs) != 2 {
		t.Fatalf("summary csv: %d %q", status, recs)
	}
	row := map[string]string{}
	for i, name := range recs[0] {
		row[name] = recs[1][i]
	}
	if row["gpu_simulated"] != "true" || row["node_cpu_mean_percent"] != "21.500" || row["node_mem_peak_bytes"] != "4294967296" ||
		row["runtime_process"] != "runtime" || row["runtime_rss_peak_bytes"] != "536870912" {
		t.Fatalf("summary csv node columns: %q", row)
	}

	// The summary is an agent's to write: a process kind it made up is
	// neither exported (a spreadsheet formula) nor shown.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET node_summary = jsonb_set(node_summary, '{process}', '"=HYPERLINK(\"http://x\")"') WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	_, _, body = e.raw("/api/v1/benchmarks/"+benchmarkID+"/summary?format=csv", tok)
	if recs, _ = csv.NewReader(strings.NewReader(body)).ReadAll(); len(recs) != 2 || strings.Contains(body, "HYPERLINK") {
		t.Fatalf("summary csv with a forged process kind: %q", body)
	}
	if got := c.get(path).text(`[data-testid="run-node"]`); strings.Contains(got, "HYPERLINK") || !strings.Contains(got, "Runtime processes: not measured") {
		t.Fatalf("node line with a forged process kind: %q", got)
	}
}
