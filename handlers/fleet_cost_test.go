package handlers_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// A run costs the same per 1M output tokens in the fleet report as in its
// benchmark's verdict: both price it with the engine's one function
// (conclude.RunCostPer1M) — an hourly price over the speed the verdict
// tests (the kept steady window, here twice the whole run's tokens/s: the
// run was open 30 s for 15 s of requests), a remote provider's run from
// its token prices. The run API gives the same figure.
func TestFleetReportCostsARunAsTheVerdict(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	var ds strings.Builder
	for i := range 60 {
		fmt.Fprintf(&ds, "{\"custom_id\":\"q%d\",\"prompt\":\"question %d\",\"reference\":\"ok\"}\n", i, i)
	}
	up := e.upload(tok, "cost.jsonl", []byte(ds.String()), nil)
	for _, name := range []string{"m/small", "gpt-4o-mini"} {
		testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: name, Quantization: "bf16"})
	}
	sim := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "sim-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	remote := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "remote-1", Runtimes: []string{"openai"}, Profile: store.HardwareProfile{Slug: "cpu", CPUCores: 4}})
	price := 3.6
	if err := e.store.SetHardwarePrice(ctx, "cpu-2c", &price); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetProviderPrice(ctx, store.ProviderPrice{Provider: "openai", Model: "gpt-4o-mini", InputPer1M: 0.15, OutputPer1M: 0.6}); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`{"name":"cost","scenarios":[{"name":"seq","dataset":%v,"load":{"profile":"sequential"},"sampling":{"max_tokens":32},"scorer":"exact"}],
		"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"},"openai:gpt-4o-mini"]}`, up.body["dataset_id"])
	res := e.api(http.MethodPost, "/api/v1/fleets", tok, strings.NewReader(manifest), "application/json")
	if res.status != 201 {
		t.Fatalf("create: %d %v", res.status, res.body)
	}
	fleetID, bid := int64(res.body["fleet_id"].(float64)), res.body["benchmark_ids"].([]any)[0]
	for i, r := range res.body["runs"].([]any) {
		id := int64(r.(map[string]any)["run_id"].(float64))
		finishSteady(t, e, id, []int64{sim.ID, remote.ID}[i])
		scoreJob(t, e, id)
		concludeRun(t, e, id)
	}

	_, body := apiGet(e, fmt.Sprintf("/api/v1/fleets/%d/report", fleetID), tok)
	fleetCost := map[float64]float64{}
	for _, r := range body["rows"].([]any) {
		row := r.(map[string]any)
		if c, ok := row["cost_per_1m_tokens"].(float64); ok {
			fleetCost[row["run_id"].(float64)] = c
		}
	}
	_, verdict := apiGet(e, fmt.Sprintf("/api/v1/benchmarks/%v/verdict", bid), tok)
	verdictCost := map[float64]float64{}
	for _, c := range verdict["claims"].([]any) {
		claim := c.(map[string]any)
		if claim["metric"] != "cost_per_1m_tokens" {
			continue
		}
		for _, side := range []string{"leader", "runner_up"} {
			if x, ok := claim[side].(map[string]any); ok {
				verdictCost[x["run_id"].(float64)] = x["value"].(float64)
			}
		}
	}
	if len(fleetCost) != 2 || len(verdictCost) != 2 {
		t.Fatalf("costed runs: fleet report %v, verdict %v (%v)", fleetCost, verdictCost, verdict)
	}
	for run, c := range verdictCost {
		_, api := apiGet(e, fmt.Sprintf("/api/v1/runs/%v", run), tok)
		if !near(fleetCost[run], c) || api["cost_per_1m_tokens"] != c {
			t.Errorf("run %v: $%g per 1M output tokens in the fleet report, $%g in the verdict, $%v in the run API", run, fleetCost[run], c, api["cost_per_1m_tokens"])
		}
	}
	// Every other surface that shows a run's cost shows the same figure:
	// the leaderboard (API), the summary CSV, the comparison's figures
	// table and the run page's footprint.
	_, lb := apiGet(e, fmt.Sprintf("/api/v1/datasets/%v/leaderboard?sort=cost", up.body["dataset_id"]), tok)
	boardCost := map[float64]float64{}
	for _, r := range lb["rows"].([]any) {
		row := r.(map[string]any)
		if c, ok := row["cost_per_1m_tokens"].(float64); ok {
			boardCost[row["run_id"].(float64)] = c
		}
	}
	status, _, csvText := e.raw(fmt.Sprintf("/api/v1/benchmarks/%v/summary", bid), tok)
	recs, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if status != 200 || err != nil || len(recs) < 3 {
		t.Fatalf("summary CSV: %d %v %q", status, err, csvText)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	csvCost := map[string]string{}
	for _, rec := range recs[1:] {
		csvCost[rec[col["run_id"]]] = rec[col["cost_per_1m_tokens"]]
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	var runs []string
	for run := range verdictCost {
		runs = append(runs, fmt.Sprint(run))
	}
	cmp := c.get("/compare?runs=" + strings.Join(runs, ","))
	var tableCost []string
	cmp.doc.Find(`[data-testid="compare-table"] tbody tr`).Each(func(_ int, tr *goquery.Selection) {
		if strings.TrimSpace(tr.Find("th").Text()) == "Cost per 1M output tokens (USD)" {
			tr.Find("td").Each(func(_ int, td *goquery.Selection) {
				tableCost = append(tableCost, strings.Fields(td.Text())[0])
			})
		}
	})
	for i, id := range runs {
		run := verdictCost[mustFloat(t, id)]
		want := fmt.Sprintf("%.3f", run)
		if !near(boardCost[mustFloat(t, id)], run) || csvCost[id] != want || i >= len(tableCost) || tableCost[i] != want {
			t.Errorf("run %s: verdict $%g; leaderboard $%v, summary CSV %q, comparison table %v", id, run, boardCost[mustFloat(t, id)], csvCost[id], tableCost)
		}
		if fp := c.get("/runs/" + id).text(`[data-testid="run-footprint"]`); !strings.Contains(fp, want) {
			t.Errorf("run %s: footprint %q lacks $%s", id, fp, want)
		}
	}
	// And the speed a cost is priced over is the one every surface shows:
	// the steady window's, 80 tokens/s (20 tokens every 250 ms), where
	// the whole run, kept open 30 s, gives 40. The summary CSV keeps the
	// whole window's beside it.
	speeds := map[string]map[float64]float64{"verdict": claimValues(verdict, "output_tokens_per_s"),
		"fleet report": rowValues(body["rows"], "output_tokens_per_s"), "leaderboard": rowValues(lb["rows"], "output_tokens_per_s")}
	var tableTPS []string
	cmp.doc.Find(`[data-testid="compare-table"] tbody tr`).Each(func(_ int, tr *goquery.Selection) {
		if strings.TrimSpace(tr.Find("th").Text()) == "Output tokens/s" {
			tr.Find("td").Each(func(_ int, td *goquery.Selection) { tableTPS = append(tableTPS, strings.Fields(td.Text())[0]) })
		}
	})
	for i, id := range runs {
		run := mustFloat(t, id)
		tps := speeds["verdict"][run]
		if math.Abs(tps/80-1) > 0.05 {
			t.Errorf("run %s: the verdict's speed %g, want about 80 tokens/s", id, tps)
		}
		for surface, got := range speeds {
			if !near(got[run], tps) {
				t.Errorf("run %s: %g output tokens/s in the %s, %g in the verdict", id, got[run], surface, tps)
			}
		}
		var rec []string
		for _, r := range recs[1:] {
			if r[col["run_id"]] == id {
				rec = r
			}
		}
		if rec == nil || rec[col["steady_output_tokens_per_s"]] != fmt.Sprintf("%.3f", tps) || rec[col["output_tokens_per_s"]] != "40.000" ||
			i >= len(tableTPS) || tableTPS[i] != fmt.Sprintf("%.1f", tps) {
			t.Errorf("run %s: verdict %g tokens/s; summary CSV %v, comparison table %v", id, tps, rec, tableTPS)
		}
	}
	// The provider's run: (60 × 5 × 0.15 + 60 × 20 × 0.6) ÷ 1200 = 0.6375.
	if !nearAny(verdictCost, 0.6375) {
		t.Errorf("no run priced by its tokens at $0.6375: %v", verdictCost)
	}
}

// finishSteady works a run as its agent would: 60 answers of 20 tokens,
// one sent every 250 ms, in a run kept open 30 s.
func finishSteady(t *testing.T, e *env, runID, agentID int64) {
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
	start := time.Now().Add(-time.Minute)
	var rs []store.ResultRecord
	for i := range 60 {
		r := jobs.Result{Idx: i, CustomID: fmt.Sprintf("q%d", i), Status: jobs.StatusOK, Output: "ok", PromptTokens: 5, CompletionTokens: 20,
			ContentEvents: 20, TTFT: time.Duration(10+i%7) * time.Millisecond, E2E: time.Duration(100+3*(i%11)) * time.Millisecond}
		rs = append(rs, store.ResultRecord{Result: r, SentAt: start.Add(time.Duration(i) * 250 * time.Millisecond)})
	}
	if _, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil {
		t.Fatal(err)
	}
	sum, err := summary.Run(ctx, e.store, runID, jobs.SLO{}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(sum)
	if err := e.store.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", StoppedBy: "completed", Segment: 30 * time.Second, Summary: raw,
		Throughput: sum.OutputTokensPerS, RequestsPerS: sum.RequestsPerS}); err != nil {
		t.Fatal(err)
	}
}

func nearAny(m map[float64]float64, v float64) bool {
	for _, x := range m {
		if near(x, v) {
			return true
		}
	}
	return false
}

// claimValues are the values a verdict's claim on metric gives its
// leader and runner-up, by run.
func claimValues(verdict map[string]any, metric string) map[float64]float64 {
	out := map[float64]float64{}
	for _, c := range verdict["claims"].([]any) {
		claim := c.(map[string]any)
		if claim["metric"] != metric {
			continue
		}
		for _, side := range []string{"leader", "runner_up"} {
			if x, ok := claim[side].(map[string]any); ok {
				out[x["run_id"].(float64)] = x["value"].(float64)
			}
		}
	}
	return out
}

// rowValues are a JSON list's rows' field, by run.
func rowValues(rows any, field string) map[float64]float64 {
	out := map[float64]float64{}
	for _, r := range rows.([]any) {
		row := r.(map[string]any)
		if v, ok := row[field].(float64); ok {
			out[row["run_id"].(float64)] = v
		}
	}
	return out
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
