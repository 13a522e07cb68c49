package handlers_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// scoreItems scores a run's answers item by item (score(i) for item i)
// under scorer, and keeps its quality and paired-comparable item scores
// as the score job does.
func scoreItems(t *testing.T, e *env, runID int64, scorer string, score func(i int) float64) {
	t.Helper()
	ctx := context.Background()
	var idx []int32
	if err := e.store.Pool().QueryRow(ctx, `SELECT array_agg(idx ORDER BY idx) FROM results WHERE run_id = $1 AND sample = 0`, runID).Scan(&idx); err != nil {
		t.Fatal(err)
	}
	scores := make([]*float64, len(idx))
	sum := 0.0
	for i, x := range idx {
		v := score(int(x))
		scores[i], sum = &v, sum+v
	}
	mean := sum / float64(len(idx))
	lo, hi := max(mean-0.15, 0), min(mean+0.15, 1)
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET scorer = $2, scored = $3, quality = $4, quality_lo = $5, quality_hi = $6 WHERE id = $1`,
		runID, scorer, len(idx), mean, lo, hi); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SaveScores(ctx, runID, idx, nil, scores, store.RunQuality{Scorer: scorer, Scored: len(idx), Mean: &mean, Low: &lo, High: &hi}); err != nil {
		t.Fatal(err)
	}
}

// moveRun makes a finished run another model's on another hardware
// profile (with its price), as if benchmarked there.
func moveRun(t *testing.T, e *env, runID int64, model, hardware string, price float64) {
	t.Helper()
	ctx := context.Background()
	modelID := testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: model, ParamsB: 7, Quantization: "bf16"})
	if _, err := e.store.Pool().Exec(ctx, `INSERT INTO hardware_profiles (slug, gpu_name, gpu_count, gpu_memory_bytes, cpu_cores, price_per_hour)
		VALUES ($1, 'sim', 1, 1073741824, 2, $2) ON CONFLICT (slug) DO NOTHING`, hardware, price); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET model_id = $2, hardware_profile = $3 WHERE id = $1`, runID, modelID, hardware); err != nil {
		t.Fatal(err)
	}
}

// "Compare with what I run today": 5 replicas of m/small on cpu-2c
// ($3.60/h) against m/big measured on cheap-1 ($1.20/h). Both serve 3
// req/s within the SLOs, so the peak of 10 req/s at 20 % headroom takes 5
// replicas either way: $13,149 a month today, $4,383 on cheap-1, a saving
// of $8,766 a month, and a $20,000 migration pays back in 2.28 months.
// The quality difference is the paired test's over the 30 items both
// scored (m/big right on 20, m/small on 15: +0.167, McNemar), and a run
// scored with another scorer is not compared. The page shows the same.
func TestCapacityROIAgainstToday(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	_, today := runWithResults(t, e, tok, 30, func(i int) string { return "x" })
	finishRun(t, e, today)
	datasetID := datasetOfRun(t, e, today)
	price := 3.6
	if err := e.store.SetHardwarePrice(ctx, "cpu-2c", &price); err != nil {
		t.Fatal(err)
	}
	big := finishedRun(t, e, tok, datasetID, 30, func(int) int { return 6 })
	moveRun(t, e, big, "m/big", "cheap-1", 1.2)
	other := finishedRun(t, e, tok, datasetID, 30, func(int) int { return 6 })
	moveRun(t, e, other, "m/other", "cheap-1", 1.2)
	scoreItems(t, e, today, "exact", func(i int) float64 { return float64(1 - i%2) })        // 15 of 30
	scoreItems(t, e, big, "exact", func(i int) float64 { return float64(min(i%3, 1)) })      // 20 of 30
	scoreItems(t, e, other, "contains", func(i int) float64 { return float64(min(i%3, 1)) }) // another scorer

	body := func(today string) string {
		return fmt.Sprintf(`{"dataset_id":%d,"traffic":{"peak_rps":10,"average_rps":5,"input_tokens":5,"output_tokens":5},
			"slo":{"ttft_ms":1000,"goodput":0.9},"headroom":0.2%s}`, datasetID, today)
	}
	r := e.api(http.MethodPost, "/api/v1/capacity", tok, strings.NewReader(body(`,"today":{"model":"m/small","hardware":"cpu-2c","replicas":5,"migration_cost":20000}`)), "application/json")
	roi, _ := r.body["roi"].(map[string]any)
	if r.status != 200 || roi == nil {
		t.Fatalf("plan: %d %v", r.status, r.body)
	}
	td := roi["today"].(map[string]any)
	if math.Abs(td["monthly_hardware"].(float64)-5*3.6*730.5) > 1e-6 || td["quality_run_id"] != float64(today) {
		t.Fatalf("today: %v", td)
	}
	rows := map[int64]map[string]any{}
	for _, x := range roi["rows"].([]any) {
		m := x.(map[string]any)
		rows[int64(m["run_id"].(float64))] = m
	}
	b := rows[big]
	if b == nil || math.Abs(b["monthly_saving"].(float64)-5*2.4*730.5) > 1e-6 || math.Abs(b["payback_months"].(float64)-20000/(5*2.4*730.5)) > 1e-9 ||
		b["payback"] != "2.3 months ($20000.00 ÷ $8766.00 a month)" {
		t.Fatalf("m/big against today: %v", b)
	}
	q := b["quality"].(map[string]any)
	t.Logf("ROI of m/big against today: saving %v a month, payback %q, quality %v [%v, %v] %s p = %v (%s)",
		b["monthly_saving"], b["payback"], q["difference"], q["lo"], q["hi"], q["test"], q["p"], q["basis"])
	if q["comparable"] != true || q["scorer"] != "exact" || math.Abs(q["difference"].(float64)-5.0/30) > 1e-9 ||
		!strings.HasPrefix(q["test"].(string), "mcnemar") || q["lo"].(float64) > 5.0/30 || q["hi"].(float64) < 5.0/30 ||
		!strings.Contains(q["basis"].(string), "paired comparison on 30 items") {
		t.Fatalf("m/big's quality against today: %v", q)
	}
	if oq := rows[other]["quality"].(map[string]any); oq["comparable"] != false || oq["difference"] != nil ||
		!strings.Contains(oq["basis"].(string), "not comparable: run "+fmt.Sprint(other)+" was scored with contains, today's run "+fmt.Sprint(today)+" with exact") {
		t.Fatalf("another scorer: %v", oq)
	}
	if s := rows[today]; s == nil || s["same_as_today"] != true || s["monthly_saving"] != 0.0 || s["payback"] != "never: it saves nothing" {
		t.Fatalf("today's own run: %v", s)
	}
	// The biggest saving first.
	if first := roi["rows"].([]any)[0].(map[string]any); first["run_id"] == float64(today) {
		t.Fatalf("rows in order: %v", roi["rows"])
	}

	// Refusals name the field.
	for want, today := range map[string]string{
		"today.replicas": `,"today":{"model":"m/small","hardware":"cpu-2c","replicas":0}`,
		"today.hardware": `,"today":{"model":"m/small","hardware":"no-such-gpu","replicas":2}`,
		"today.model":    `,"today":{"model":"--trust-remote-code","hardware":"cpu-2c","replicas":2}`,
	} {
		if r := e.api(http.MethodPost, "/api/v1/capacity", tok, strings.NewReader(body(today)), "application/json"); r.status != 422 || !strings.Contains(fmt.Sprint(r.body), want) {
			t.Errorf("%s: %d %v", want, r.status, r.body)
		}
	}

	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	base := fmt.Sprintf("/capacity?dataset=%d&peak_rps=10&average_rps=5&input_tokens=5&output_tokens=5&ttft_ms=1000&tpot_ms=&goodput=0.9", datasetID)
	page := c.get(base + "&today_model=m%2Fsmall&today_hardware=cpu-2c&today_replicas=5&migration_cost=20000")
	row := fmt.Sprintf(`[data-testid="roi-run-%d"]`, big)
	if page.status != 200 || page.text(row+` [data-testid="saving"]`) != "$8766.00" || page.text(row+` [data-testid="payback"]`) != "2.3 months ($20000.00 ÷ $8766.00 a month)" {
		t.Fatalf("page: %d %q", page.status, page.text(`[data-testid="capacity-roi"]`))
	}
	if got := page.text(row + ` [data-testid="quality-change"]`); !strings.HasPrefix(got, "+0.167 [") || !strings.HasSuffix(got, "· exact") {
		t.Errorf("quality change on the page: %q", got)
	}
	if got := page.text(fmt.Sprintf(`[data-testid="roi-run-%d"] [data-testid="quality-change"]`, other)); got != "not compared" {
		t.Errorf("another scorer on the page: %q", got)
	}
	if got := page.text(`[data-testid="today-model"] option[selected]`); got != "m/small" {
		t.Errorf("today's model select: %q", got)
	}
	if bad := c.get(base + "&today_model=m%2Fsmall&today_hardware=cpu-2c&today_replicas=1.5"); bad.status != 422 ||
		!strings.Contains(bad.text(`[data-testid="capacity-errors"]`), "today.replicas: a whole number of replicas") {
		t.Errorf("fractional replicas: %d %q", bad.status, bad.text(`[data-testid="capacity-errors"]`))
	}
	if bad := c.get(base + "&today_model=m%2Fsmall&today_hardware=nope&today_replicas=2"); bad.status != 422 ||
		!strings.Contains(bad.text(`[data-testid="capacity-errors"]`), "today.hardware: no hardware profile by this name") {
		t.Errorf("unknown hardware: %d %q", bad.status, bad.text(`[data-testid="capacity-errors"]`))
	}
}
