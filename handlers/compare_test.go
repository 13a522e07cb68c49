package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

func TestCompareRunsSideBySide(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	var ds strings.Builder
	for i := range 30 {
		fmt.Fprintf(&ds, "{\"custom_id\":\"c%02d\",\"prompt\":\"q%d\"}\n", i, i)
	}
	up := e.upload(tok, "d.jsonl", []byte(ds.String()), nil)
	for _, m := range []string{"m/small", "m/big"} {
		testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: m, Quantization: "bf16"})
	}
	agent := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	price := 3.6
	if err := e.store.SetHardwarePrice(ctx, "cpu-2c", &price); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`{"name":"cmp","dataset":%v,"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"},
		{"model":"m/big","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":8}}`, up.body["dataset_id"])
	r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json")
	if r.status != 201 {
		t.Fatalf("create: %v", r.body)
	}
	b := fmt.Sprint(r.body["benchmark_id"])
	var runs []int64
	for k, rr := range r.body["runs"].([]any) {
		id := int64(rr.(map[string]any)["run_id"].(float64))
		runs = append(runs, id)
		var job int64
		_ = e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, id).Scan(&job)
		claim, err := e.store.ClaimRun(ctx, id, agent.ID, job, "sim")
		if err != nil {
			t.Fatal(err)
		}
		var rs []store.ResultRecord
		// One request every third of a second over the 10 s measured, so the
		// results' timings give the summary's tokens/s (docs/metrics.md#throughput-output-tokenss-and-requestss).
		start := time.Now()
		for i := range 30 {
			out := fmt.Sprintf("answer %d", i)
			if k == 1 && i%3 == 0 { // the big model answers every third item differently
				out = fmt.Sprintf("<b>other</b> %d", i)
			}
			rs = append(rs, store.ResultRecord{Result: jobs.Result{Idx: i, CustomID: fmt.Sprintf("c%02d", i), Status: jobs.StatusOK, Output: out,
				CompletionTokens: 10 * (k + 1), ContentEvents: 10, TTFT: time.Duration(10*(k+1)) * time.Millisecond, E2E: 100 * time.Millisecond,
				ITLGapsMicros: slices.Repeat([]int32{int32(5000 * (k + 1))}, 9)}, SentAt: start.Add(time.Duration(i) * time.Second / 3)})
		}
		if _, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil {
			t.Fatal(err)
		}
		sum, _ := summary.Run(ctx, e.store, id, jobs.SLO{}, 10*time.Second)
		raw, _ := json.Marshal(sum)
		if err := e.store.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", StoppedBy: "completed", Segment: 10 * time.Second, Summary: raw}); err != nil {
			t.Fatal(err)
		}
	}
	// The first run scores 1 everywhere, the second 0 where it differs.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE results SET score = CASE WHEN run_id = $2 AND idx % 3 = 0 THEN 0 ELSE 1 END WHERE run_id IN ($1, $2)`, runs[0], runs[1]); err != nil {
		t.Fatal(err)
	}
	// The run-level quality as the scoring job stores it.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET scorer = 'exact', scored = 30, quality = CASE WHEN id = $1 THEN 1 ELSE 20 / 30.0 END,
		quality_lo = CASE WHEN id = $1 THEN 1 ELSE 0.5 END, quality_hi = CASE WHEN id = $1 THEN 1 ELSE 0.833 END WHERE id IN ($1, $2)`, runs[0], runs[1]); err != nil {
		t.Fatal(err)
	}
	concludeRun(t, e, runs[0])
	concludeRun(t, e, runs[1])

	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	detail := c.get("/benchmarks/" + b)
	link, _ := detail.doc.Find(`[data-testid="compare-runs"]`).Attr("href")
	page := c.get(link)
	if page.status != 200 || page.text(`[data-testid="baseline"]`) != "baseline" {
		t.Fatalf("compare page %s: %d %s", link, page.status, page.text(`[data-testid="compare-error"]`))
	}
	table := page.text(`[data-testid="compare-table"]`)
	if !strings.Contains(table, "CO₂e g (estimated)") {
		t.Error("the comparison lacks the CO₂e row")
	}
	// Run 1: 300 tokens / 10 s = 30 tok/s → $3.6/h ÷ (30 × 3600) × 1e6 = $33.333;
	// run 2: 60 tok/s → $16.667, −50 %; quality 1 vs 0.667, −33.3 %.
	for _, want := range []string{"33.333", "16.667", "-50.0%", "1.000", "0.667", "-33.3%", "+100.0%"} {
		if !strings.Contains(table, want) {
			t.Errorf("comparison table lacks %q:\n%s", want, table)
		}
	}
	// Token-level ITL: 5 ms for every token of the first run, 10 ms for the second's.
	itlRow := page.doc.Find(`[data-testid="compare-table"] tr`).FilterFunction(func(_ int, r *goquery.Selection) bool {
		return strings.HasPrefix(strings.TrimSpace(r.Find("th").First().Text()), "ITL p99 ms")
	})
	if got := strings.Join(strings.Fields(itlRow.Text()), " "); !strings.Contains(got, "5.00") || !strings.Contains(got, "10.00 +100.0%") {
		t.Errorf("ITL p99 row %q", got)
	}
	if q := page.text(fmt.Sprintf(`[data-testid="compare-run-%d"] [data-testid="quality-ci"]`, runs[1])); q != "quality 0.667 [0.500, 0.833]" {
		t.Errorf("quality interval: %q", q)
	}
	if page.doc.Find(`[data-testid="not-significant"]`).Length() != 0 {
		t.Error("intervals [1, 1] and [0.5, 0.833] do not overlap, yet flagged")
	}
	if page.doc.Find(`[data-testid="chart-quality-cost"] svg circle`).Length() != 2 || page.doc.Find(`[data-testid="chart-ttft-throughput"] svg circle`).Length() != 2 {
		t.Error("the charts do not place both runs")
	}
	if n := page.doc.Find(`[data-testid="compare-items"] tbody tr`).Length(); n != 25 {
		t.Fatalf("first page of items: %d rows", n)
	}
	next, _ := page.doc.Find(`[data-testid="compare-next"]`).Attr("href")
	if n := c.get(next).doc.Find(`[data-testid="compare-items"] tbody tr`).Length(); n != 5 {
		t.Fatalf("second page of items: %d rows", n)
	}
	// Side by side, escaped.
	row := page.doc.Find(`[data-testid="compare-item-3"] td`)
	if !strings.Contains(row.Eq(1).Text(), "answer 3") || !strings.Contains(row.Eq(2).Text(), "<b>other</b> 3") || row.Find("b").Length() != 0 {
		t.Fatalf("item 3: %q", row.Text())
	}
	disagree, _ := page.doc.Find(`[data-testid="show-disagree"]`).Attr("href")
	if n := c.get(disagree).doc.Find(`[data-testid="compare-items"] tbody tr`).Length(); n != 10 {
		t.Fatalf("disagreeing items: %d, want 10", n)
	}
	// Another baseline flips the deltas.
	flipped := c.get(fmt.Sprintf("/compare?runs=%d,%d&baseline=%d", runs[0], runs[1], runs[1]))
	if !strings.Contains(flipped.text(`[data-testid="compare-table"]`), "+50.0%") {
		t.Fatal("baseline change not applied")
	}
	// No sweep, no sweep curves; two sweeps, their curves overlaid.
	if page.doc.Find(`[data-testid="compare-sweeps"]`).Length() != 0 {
		t.Error("sweep curves without a sweep")
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET summary = jsonb_set(summary, '{steps}',
		jsonb_build_array(jsonb_build_object('name', 'sequential', 'achieved_rps', 1, 'ttft_ms', jsonb_build_object('p50', 10 * id)),
			jsonb_build_object('name', 'max', 'achieved_rps', 3, 'ttft_ms', jsonb_build_object('p50', 30 * id))))
		WHERE id IN ($1, $2)`, runs[0], runs[1]); err != nil {
		t.Fatal(err)
	}
	sweeps := c.get(link).doc.Find(`[data-testid="compare-sweeps"] [data-testid="chart-sweep-ttft"]`)
	if sweeps.Find("polyline").Length() != 6 || !strings.Contains(sweeps.Find(".legend").Text(), fmt.Sprintf("run %d TTFT p50", runs[1])) {
		t.Errorf("overlaid TTFT curves: %d lines, legend %q", sweeps.Find("polyline").Length(), sweeps.Find(".legend").Text())
	}
	if p := c.get(fmt.Sprintf("/compare?runs=%d", runs[0])); p.status != 422 {
		t.Fatalf("one run: %d", p.status)
	}
	if p := c.get("/compare?runs=1,x"); p.status != 422 || !strings.Contains(p.text(`[data-testid="compare-error"]`), `"x"`) {
		t.Fatalf("bad id: %d", p.status)
	}
	// Recommendation: by quality run 0 first, by cost run 1 (half the
	// price per token); a minimum quality excludes run 1 with the reason.
	rec := func(q string) response { return c.get("/benchmarks/" + b + "/recommend?" + q) }
	first := func(p response) string {
		id, _ := p.doc.Find(`[data-testid="feasible"] tbody tr`).First().Attr("data-testid")
		return id
	}
	if got := first(rec("w_quality=1&w_speed=0&w_cost=0")); got != fmt.Sprintf("feasible-%d", runs[0]) {
		t.Errorf("by quality, first %s", got)
	}
	if got := first(rec("w_quality=0&w_speed=0&w_cost=1")); got != fmt.Sprintf("feasible-%d", runs[1]) {
		t.Errorf("by cost, first %s", got)
	}
	p := rec("min_quality=0.9")
	if why := p.text(fmt.Sprintf(`[data-testid="excluded-%d"]`, runs[1])); !strings.Contains(why, "quality 0.6667 is below the minimum 0.9") {
		t.Errorf("exclusion reason %q", why)
	}
	front, _ := p.doc.Find(`[data-testid="chart-pareto-cost"] svg polyline`).Attr("points")
	if len(strings.Fields(front)) != 2 {
		t.Errorf("the quality–cost chart's Pareto front: %q", front)
	}
	if p := rec("max_cost=cheap"); p.status != 422 || !strings.Contains(p.text(`[data-testid="recommend-error"]`), "max_cost") {
		t.Errorf("bad constraint: %d", p.status)
	}
	api := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/recommendation?w_cost=1&w_quality=0&w_speed=0", tok, nil, "")
	feas := api.body["feasible"].([]any)
	if api.status != 200 || len(feas) != 2 || feas[0].(map[string]any)["run_id"] != float64(runs[1]) ||
		fmt.Sprint(api.body["pareto_quality_cost"]) != fmt.Sprintf("[%d %d]", runs[1], runs[0]) {
		t.Errorf("recommendation API: %d %v", api.status, api.body)
	}

	e.createUser("eve@example.com", "correct horse", store.RoleUser)
	other := e.client()
	other.signIn("eve@example.com", "correct horse")
	if p := other.get(link); p.status != 404 {
		t.Fatalf("another user's runs: %d", p.status)
	}
}
