package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
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
	sum, err := summary.Run(ctx, e.store, runID, jobs.SLO{}, 0)
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
		a["monthly_energy"] != nil {
		t.Fatalf("answer %v", a)
	}
	// The API's English is the catalogue's, never a second sentence.
	if from, want := a["slo_rate_from"], i18n.Default().Lang("en").T("capacity.said.from_one_load", "Run", runID); from != want ||
		!strings.Contains(want, fmt.Sprintf("run %d at its one measured load", runID)) {
		t.Fatalf("rate from %q, want the catalogue's %q", from, want)
	}
	// Energy simulated from the load (--sim-gpu) sizes nothing; measured
	// energy is costed.
	for _, simulated := range []bool{true, false} {
		if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET gpu_summary = jsonb_build_object('gpus', 1, 'energy_j', 720,
			'joules_per_token', 0.5, 'simulated', $2::boolean) WHERE id = $1`, runID, simulated); err != nil {
			t.Fatal(err)
		}
		r := plan(tok, body(0.9))
		f, _ := r.body["feasible"].([]any)
		if r.status != 200 || len(f) != 1 || (f[0].(map[string]any)["monthly_energy"] != nil) == simulated {
			t.Fatalf("energy simulated %v: %d %v", simulated, r.status, r.body)
		}
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET gpu_summary = NULL WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
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

// finishedRun benchmarks the dataset's target once more and finishes the
// run with n answers of tokens(i) output tokens each, over 10 s, its
// summary computed as an agent computes it; it returns the run's id.
func finishedRun(t *testing.T, e *env, tok string, datasetID int64, n int, tokens func(i int) int) int64 {
	t.Helper()
	ctx := context.Background()
	r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(fmt.Sprintf(`{"name":"again","dataset":%d,
		"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":8}}`, datasetID)),
		"application/json")
	if r.status != 201 {
		t.Fatalf("create: %v", r.body)
	}
	runID := int64(r.body["runs"].([]any)[0].(map[string]any)["run_id"].(float64))
	var jobID, agentID int64
	if err := e.store.Pool().QueryRow(ctx, `SELECT r.river_job_id, a.id FROM runs r, agents a WHERE r.id = $1 AND a.name = 'cpu-1'`, runID).Scan(&jobID, &agentID); err != nil {
		t.Fatal(err)
	}
	claim, err := e.store.ClaimRun(ctx, runID, agentID, jobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	var rs []store.ResultRecord
	for i := range n {
		rs = append(rs, store.ResultRecord{SentAt: time.Now(), Result: jobs.Result{Idx: i, CustomID: fmt.Sprintf("c%03d", i), Status: jobs.StatusOK,
			Output: strings.Repeat("x ", tokens(i)), CompletionTokens: tokens(i), ContentEvents: tokens(i), TTFT: time.Millisecond, E2E: 10 * time.Millisecond}})
	}
	if _, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil {
		t.Fatal(err)
	}
	finishRun(t, e, runID)
	return runID
}

// finishRun marks a run completed after 10 measured seconds with the
// summary an agent writes, its requests sent one after another over
// those seconds as a sequential load sends them, so the rate the engine
// keeps from the sends (conclude.ReplicaRate) is the summary's.
func finishRun(t *testing.T, e *env, runID int64) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET measured_seconds = 10, state = 'completed' WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE results SET sent_at = now() - interval '1 minute' + (idx + 0.5) * interval '10 seconds' / n.n
		FROM (SELECT count(*) AS n FROM results WHERE run_id = $1) n WHERE run_id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	sum, err := summary.Run(ctx, e.store, runID, jobs.SLO{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(sum)
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET summary = $2 WHERE id = $1`, runID, raw); err != nil {
		t.Fatal(err)
	}
	concludeRun(t, e, runID)
}

// scoreRun gives a run a quality under a scorer.
func scoreRun(t *testing.T, e *env, runID int64, scorer string, quality float64) {
	t.Helper()
	if _, err := e.store.Pool().Exec(context.Background(), `UPDATE runs SET scorer = $2, scored = 27, quality = $3 WHERE id = $1`,
		runID, scorer, quality); err != nil {
		t.Fatal(err)
	}
	concludeRun(t, e, runID)
}

// The planner sizes only the runs that answered at the traffic's length
// and meet a minimum quality under one scorer identity: a run of
// one-token answers scored 0 (once sized with 1 replica), a run whose
// answers are shorter than the traffic's, a run not scored, and one scored
// with another scorer are each excluded with their reason, in the API's
// JSON and on the page.
func TestCapacityExcludesUnmeasuredLengthsAndOtherScorers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	_, good := runWithResults(t, e, tok, 30, func(i int) string { return "x" })
	finishRun(t, e, good)
	datasetID := datasetOfRun(t, e, good)
	price := 3.6
	if err := e.store.SetHardwarePrice(ctx, "cpu-2c", &price); err != nil {
		t.Fatal(err)
	}
	oneToken := finishedRun(t, e, tok, datasetID, 30, func(int) int { return 1 })
	short := finishedRun(t, e, tok, datasetID, 30, func(i int) int { return 2 + i%2 }) // p90 3
	other := finishedRun(t, e, tok, datasetID, 30, func(int) int { return 6 })
	// Each another model: runs of one target under one load would be one
	// candidate, the newest (conclude.PlannerRuns).
	for run, model := range map[int64]string{oneToken: "m/one-token", short: "m/short", other: "m/other"} {
		moveRun(t, e, run, model, "cpu-2c", price)
	}
	scoreRun(t, e, good, "rougeL", 0.8)
	scoreRun(t, e, oneToken, "rougeL", 0)
	scoreRun(t, e, short, "rougeL", 0.9)

	plan := func(extra string) apiResult {
		return e.api(http.MethodPost, "/api/v1/capacity", tok, strings.NewReader(fmt.Sprintf(`{"dataset_id":%d,
			"traffic":{"peak_rps":10,"average_rps":5,"input_tokens":5,"output_tokens":5},"slo":{"ttft_ms":1000,"goodput":0.9}%s}`, datasetID, extra)),
			"application/json")
	}
	excluded := func(r apiResult) map[int64][]string {
		out := map[int64][]string{}
		ex, _ := r.body["excluded"].([]any)
		for _, x := range ex {
			m := x.(map[string]any)
			reasons, _ := m["reasons"].([]any)
			codes, _ := m["reason_codes"].([]any)
			if len(reasons) != len(codes) {
				t.Errorf("run %v: reasons %v, codes %v", m["run_id"], reasons, codes)
			}
			for i := range reasons {
				out[int64(m["run_id"].(float64))] = append(out[int64(m["run_id"].(float64))], fmt.Sprint(codes[i], ": ", reasons[i]))
			}
		}
		return out
	}
	feasibleRuns := func(r apiResult) []int64 {
		var ids []int64
		fs, _ := r.body["feasible"].([]any)
		for _, f := range fs {
			ids = append(ids, int64(f.(map[string]any)["run_id"].(float64)))
		}
		slices.Sort(ids) // equal costs: in no particular order
		return ids
	}
	has := func(reasons []string, want string) bool {
		for _, r := range reasons {
			if strings.Contains(r, want) {
				return true
			}
		}
		return false
	}

	// Without a minimum quality: the unscored run is sized, the two that
	// did not answer at length are not.
	r := plan("")
	ex := excluded(r)
	if r.status != 200 || fmt.Sprint(feasibleRuns(r)) != fmt.Sprint([]int64{good, other}) || len(ex) != 2 {
		t.Fatalf("no minimum: %d feasible %v, excluded %v", r.status, feasibleRuns(r), ex)
	}
	if !has(ex[oneToken], "short_answers: the median answer is 1 output token long, under 2") ||
		!has(ex[oneToken], "not_measured_at_length: not measured at this length (measured up to 1 output token,") {
		t.Errorf("one-token answers: %q", ex[oneToken])
	}
	if len(ex[short]) != 1 || !has(ex[short], "not_measured_at_length: not measured at this length (measured up to 3 output tokens, the 90th percentile of its answers; the traffic has 5)") {
		t.Errorf("short answers: %q", ex[short])
	}
	if r.body["output_coverage"] != conclude.OutputCoverageRule || r.body["min_quality"] != nil || fmt.Sprint(r.body["quality_scorers"]) != "[rougeL]" {
		t.Errorf("plan: coverage %v, min quality %v, scorers %v", r.body["output_coverage"], r.body["min_quality"], r.body["quality_scorers"])
	}
	for _, f := range r.body["feasible"].([]any) {
		if a := f.(map[string]any); a["run_id"] == float64(good) && (a["quality_scorer"] != "rougeL" || a["measured_output_tokens_p90"] != 5.0) {
			t.Errorf("good run: %v", a)
		}
	}

	// With one scorer identity present, min_quality alone is under it; the
	// unscored run is excluded for that.
	r = plan(`,"min_quality":0.5`)
	ex = excluded(r)
	if r.status != 200 || fmt.Sprint(feasibleRuns(r)) != fmt.Sprint([]int64{good}) ||
		!has(ex[other], "quality_not_measured: quality not measured (the minimum 0.5 is with rougeL)") ||
		!has(ex[oneToken], "quality_below_minimum: quality 0.000 with rougeL, below the minimum 0.5") {
		t.Fatalf("min quality: %d feasible %v, excluded %v, %v", r.status, feasibleRuns(r), ex, r.body["min_quality"])
	}
	if q, _ := r.body["min_quality"].(map[string]any); q["quality_scorer"] != "rougeL" || q["min_quality"] != 0.5 {
		t.Errorf("min quality applied: %v", r.body["min_quality"])
	}

	// A second identity: min_quality must say which; a run scored with
	// the other is excluded for it.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET scorer = 'bleu', quality = 0.9, scorer_options = NULL WHERE id = $1`, other); err != nil {
		t.Fatal(err)
	}
	concludeRun(t, e, other)
	if r := plan(`,"min_quality":0.5`); r.status != 422 || !strings.Contains(fmt.Sprint(r.body), "quality_scorer") || !strings.Contains(fmt.Sprint(r.body), "bleu, rougeL") {
		t.Errorf("two identities, none chosen: %d %v", r.status, r.body)
	}
	r = plan(`,"min_quality":0.5,"quality_scorer":"rougeL"`)
	ex = excluded(r)
	if r.status != 200 || fmt.Sprint(feasibleRuns(r)) != fmt.Sprint([]int64{good}) || len(ex[other]) != 1 ||
		!has(ex[other], "quality_other_scorer: quality measured with bleu, not rougeL") {
		t.Fatalf("other scorer: %d feasible %v, excluded %v", r.status, feasibleRuns(r), ex)
	}
	if r := plan(`,"min_quality":1.5`); r.status != 422 || !strings.Contains(fmt.Sprint(r.body), "min_quality") {
		t.Errorf("min quality above 1: %d %v", r.status, r.body)
	}

	// The page: the same rows, each excluded one with its reasons; the
	// select offers both identities.
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get(fmt.Sprintf("/capacity?dataset=%d&peak_rps=10&average_rps=5&input_tokens=5&output_tokens=5&ttft_ms=1000&tpot_ms=&goodput=0.9&min_quality=0.5&quality_scorer=rougeL", datasetID))
	if page.status != 200 || page.text(fmt.Sprintf(`[data-testid="capacity-run-%d"] [data-testid="replicas"]`, good)) != "5" {
		t.Fatalf("page: %d %s", page.status, page.text(`main`))
	}
	row := func(id int64, code string) string {
		return page.text(fmt.Sprintf(`[data-testid="capacity-excluded-%d"] [data-testid="reason-%s"]`, id, code))
	}
	if got := row(oneToken, "short_answers"); !strings.Contains(got, "the median answer is 1 output token long, under 2") {
		t.Errorf("one-token row: %q", got)
	}
	if got := row(short, "not_measured_at_length"); !strings.HasPrefix(got, "not measured at this length (measured up to 3 output tokens") {
		t.Errorf("short row: %q", got)
	}
	if got := row(other, "quality_other_scorer"); got != "quality measured with bleu, not rougeL" {
		t.Errorf("other scorer row: %q", got)
	}
	if got := page.text(fmt.Sprintf(`[data-testid="capacity-excluded-%d"] [data-testid="output-lengths"]`, short)); got != "median 2, p90 3, max 3" {
		t.Errorf("short row's lengths: %q", got)
	}
	if got := page.text(`[data-testid="capacity-quality-scorer"] option`); got != "choose…bleurougeL" ||
		page.text(`[data-testid="capacity-quality-scorer"] option[selected]`) != "rougeL" {
		t.Errorf("scorer select: %q", got)
	}
	if !strings.Contains(page.text(`[data-testid="capacity-rules"]`), "90th percentile of its output tokens per successful request") {
		t.Errorf("rules: %q", page.text(`[data-testid="capacity-rules"]`))
	}
	if bad := c.get(fmt.Sprintf("/capacity?dataset=%d&peak_rps=10&min_quality=0.5", datasetID)); bad.status != 422 ||
		!strings.Contains(bad.text(`[data-testid="capacity-errors"]`), "quality_scorer: choose the scorer identity") {
		t.Errorf("page, two identities, none chosen: %d %q", bad.status, bad.text(`[data-testid="capacity-errors"]`))
	}

	// A run graded by an LLM judge: its identity names the judge's model,
	// mode, rubric, scale and template, as the judging keeps it with the
	// quality (store.SaveJudging through bench's judge identity).
	judged := finishedRun(t, e, tok, datasetID, 30, func(int) int { return 6 })
	moveRun(t, e, judged, "m/judged", "cpu-2c", price)
	judge := store.JudgeIdentity{Model: "m/small", Mode: "single", Rubric: "correctness", Template: "Rate {{answer}}", ScaleMin: 1, ScaleMax: 10}
	graded := 0.7
	if err := e.store.SaveScores(ctx, judged, nil, nil, nil, store.RunQuality{Scorer: "judge", Scored: 27, Mean: &graded, Judge: &judge}); err != nil {
		t.Fatal(err)
	}
	judgeKey := store.ScorerIdentity("judge", nil, &judge)
	r = plan(`,"min_quality":0.5,"quality_scorer":` + jsonString(judgeKey))
	ex = excluded(r)
	if r.status != 200 || fmt.Sprint(feasibleRuns(r)) != fmt.Sprint([]int64{judged}) ||
		fmt.Sprint(r.body["quality_scorers"]) != fmt.Sprint([]string{"bleu", judgeKey, "rougeL"}) ||
		!has(ex[good], "quality_other_scorer: quality measured with rougeL, not "+judgeKey) {
		t.Errorf("judged: %d feasible %v, scorers %v, excluded %v", r.status, feasibleRuns(r), r.body["quality_scorers"], ex)
	}
}

// jsonString writes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// datasetOfRun is the dataset a run's benchmark ran on.
func datasetOfRun(t *testing.T, e *env, runID int64) int64 {
	t.Helper()
	var id int64
	if err := e.store.Pool().QueryRow(context.Background(), `SELECT b.dataset_id FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.id = $1`,
		runID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
