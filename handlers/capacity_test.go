package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// The capacity planner over a dataset's benchmarked targets: replicas from
// the SLO-bound rate, costs from the hardware's price, each with its
// source; reasons for the targets that cannot serve; field errors; the
// page shows the same plan.
func TestCapacityPlanner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	other := e.token(e.createUser("bob@example.com", "correct horse", store.RoleUser))
	_, runID := runWithResults(t, e, tok, 30, func(i int) string { return "x" })
	// 30 requests over 10 s: 3 req/s; 27 succeeded (every tenth was a 429).
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET measured_seconds = 10, state = 'completed' WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	sum, err := e.store.RunAggregate(ctx, runID, jobs.SLO{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(sum)
	var datasetID int64
	if err := e.store.Pool().QueryRow(ctx, `UPDATE runs r SET summary = $2 FROM benchmarks b WHERE r.id = $1 AND b.id = r.benchmark_id RETURNING b.dataset_id`,
		runID, raw).Scan(&datasetID); err != nil {
		t.Fatal(err)
	}
	plan := func(token, body string) apiResult {
		return e.api(http.MethodPost, "/api/v1/capacity", token, strings.NewReader(body), "application/json")
	}
	body := func(goodput float64) string {
		return fmt.Sprintf(`{"dataset_id":%d,"traffic":{"peak_rps":10,"average_rps":5,"input_tokens":5,"output_tokens":5},
			"slo":{"ttft_ms":1000,"goodput":%v},"headroom":0.2,"costs":{"energy_price_per_kwh":0.1}}`, datasetID, goodput)
	}
	excludedWhy := func(r apiResult) string {
		ex, _ := r.body["excluded"].([]any)
		if len(ex) != 1 {
			return fmt.Sprint(r.body)
		}
		reasons, _ := ex[0].(map[string]any)["reasons"].([]any)
		return fmt.Sprint(reasons...)
	}
	// 27 of 30 met the SLOs: not the default 99 %.
	if r := plan(tok, body(0)); r.status != 200 || !strings.Contains(excludedWhy(r), "the SLOs held for 27 of 30 requests") {
		t.Fatalf("default goodput: %d %v", r.status, r.body)
	}
	// 90 % is enough, but cpu-2c has no price.
	if r := plan(tok, body(0.9)); r.status != 200 || !strings.Contains(excludedWhy(r), "no price per hour for cpu-2c") {
		t.Fatalf("no price: %d %v", r.status, r.body)
	}
	price := 3.6
	if err := e.store.SetHardwarePrice(ctx, "cpu-2c", &price); err != nil {
		t.Fatal(err)
	}
	r := plan(tok, body(0.9))
	feasible, _ := r.body["feasible"].([]any)
	if r.status != 200 || len(feasible) != 1 {
		t.Fatalf("plan: %d %v", r.status, r.body)
	}
	a := feasible[0].(map[string]any)
	// ⌈10 ÷ (3 × 0.8)⌉ = 5 replicas × $3.6 = $18/h; 730.5 h a month.
	monthly := 18 * 730.5
	if a["replicas"] != 5.0 || a["cost_per_hour"] != 18.0 || math.Abs(a["monthly_cost"].(float64)-monthly) > 1e-6 || a["gpus"] != 0.0 ||
		a["monthly_energy"] != nil || !strings.Contains(a["slo_rate_from"].(string), fmt.Sprintf("run %d at its one measured load", runID)) {
		t.Fatalf("answer %v", a)
	}
	if per1M := monthly / (5 * 5 * 3600 * 730.5) * 1e6; math.Abs(a["cost_per_1m_output_tokens"].(float64)-per1M) > 1e-6 {
		t.Errorf("cost per 1M: %v, want %v", a["cost_per_1m_output_tokens"], per1M)
	}
	// 5 output tokens per request measured, 5 asked: not extrapolated; each
	// replica takes 2 req/s, below the 3 measured.
	if x, _ := a["extrapolated"].([]any); len(x) != 0 {
		t.Errorf("extrapolated: %v", x)
	}

	// Refusals name the field; another user's dataset does not exist.
	if r := plan(tok, strings.Replace(body(0.9), `"peak_rps":10`, `"peak_rps":-1`, 1)); r.status != 422 || !strings.Contains(fmt.Sprint(r.body), "traffic.peak_rps") {
		t.Errorf("negative peak: %d %v", r.status, r.body)
	}
	if r := plan(tok, `{"dataset_id":1,"traffic":{"peak_rps":"lots"}}`); r.status != 422 || strings.Contains(fmt.Sprint(r.body), "float64") {
		t.Errorf("a string for a number: %d %v", r.status, r.body)
	}
	if r := plan(tok, `{"dataset":1}`); r.status != 422 || !strings.Contains(fmt.Sprint(r.body), `unknown field "dataset"`) {
		t.Errorf("unknown field: %d %v", r.status, r.body)
	}
	if r := plan(other, body(0.9)); r.status != 404 {
		t.Errorf("another user's dataset: %d", r.status)
	}

	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get(fmt.Sprintf("/capacity?dataset=%d&peak_rps=10&average_rps=5&input_tokens=5&output_tokens=5&ttft_ms=1000&tpot_ms=&goodput=0.9", datasetID))
	if page.status != 200 || page.text(fmt.Sprintf(`[data-testid="capacity-run-%d"] [data-testid="replicas"]`, runID)) != "5" {
		t.Fatalf("page: %d %s", page.status, page.text(`main`))
	}
	if bad := c.get(fmt.Sprintf("/capacity?dataset=%d&peak_rps=x", datasetID)); bad.status != 422 || !strings.Contains(bad.text(`[data-testid="capacity-errors"]`), "traffic.peak_rps: must be a number") {
		t.Errorf("bad page input: %d %q", bad.status, bad.text(`[data-testid="capacity-errors"]`))
	}
}
