package handlers_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// finishAsAgent works run runID as the registered agent would: claims it,
// stores a result per item from answer (status error when answer says
// "!error"), and finishes it.
func finishAsAgent(t *testing.T, e *env, runID int64, answer func(idx int, customID string) string) {
	t.Helper()
	ctx := context.Background()
	var jobID, agentID, ds int64
	var total int
	if err := e.store.Pool().QueryRow(ctx, `SELECT r.river_job_id, (SELECT id FROM agents ORDER BY id LIMIT 1), b.dataset_id, r.total
		FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.id = $1`, runID).Scan(&jobID, &agentID, &ds, &total); err != nil {
		t.Fatal(err)
	}
	claim, err := e.store.ClaimRun(ctx, runID, agentID, jobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	items, err := e.store.PendingItems(ctx, runID, ds, total)
	if err != nil {
		t.Fatal(err)
	}
	var rs []store.ResultRecord
	for _, it := range items {
		out := answer(it.Idx, it.CustomID)
		res := jobs.Result{Idx: it.Idx, CustomID: it.CustomID, Status: jobs.StatusOK, Output: out, CompletionTokens: 7, ContentEvents: 7,
			TTFT: 3 * time.Millisecond, E2E: 9 * time.Millisecond}
		if out == "!error" {
			res = jobs.Result{Idx: it.Idx, CustomID: it.CustomID, Status: jobs.StatusError, ErrorClass: jobs.ErrHTTP429, Error: "slow down"}
		}
		rs = append(rs, store.ResultRecord{Result: res, SentAt: time.Now()})
	}
	if _, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil {
		t.Fatal(err)
	}
	if err := e.store.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", StoppedBy: "completed"}); err != nil {
		t.Fatal(err)
	}
}

// scoreJob runs what the server's score_run job does for a run.
func scoreJob(t *testing.T, e *env, runID int64) {
	t.Helper()
	svc := testkit.Service(t.Context(), t, e.store, &testkit.ServiceOpts{StaleAfter: 15 * time.Second})
	if err := (&score.Service{Store: e.store, Judge: svc}).ScoreRun(context.Background(), runID, ""); err != nil {
		t.Fatal(err)
	}
}

func judgeRunOf(t *testing.T, e *env, judged int64, mode string) (runID int64, prompts map[int]string) {
	t.Helper()
	ctx := context.Background()
	if err := e.store.Pool().QueryRow(ctx, `SELECT run_id FROM judge_runs WHERE run_a = $1 AND mode = $2 ORDER BY run_id DESC LIMIT 1`,
		judged, mode).Scan(&runID); err != nil {
		t.Fatalf("no %s judge run of run %d: %v", mode, judged, err)
	}
	rows, err := e.store.Pool().Query(ctx, `SELECT i.idx, i.request->'body'->'messages'->1->>'content' FROM dataset_items i
		JOIN benchmarks b ON b.dataset_id = i.dataset_id JOIN runs r ON r.benchmark_id = b.id WHERE r.id = $1`, runID)
	if err != nil {
		t.Fatal(err)
	}
	prompts = map[int]string{}
	for rows.Next() {
		var idx int
		var p string
		if err := rows.Scan(&idx, &p); err != nil {
			t.Fatal(err)
		}
		prompts[idx] = p
	}
	return runID, prompts
}

// Single-answer grading from the run page: the form queues an ordinary run
// of the judge model on a hidden dataset of judge prompts; when it ends,
// the score job reads the verdicts; the judged run's quality becomes the
// mean of the normalised ratings with its bootstrap interval; the item
// page shows the verdict and rationale, an unreadable verdict is kept
// with no score, and the exports carry them.
func TestJudgeARunFromItsPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	e.createUser("bob@example.com", "correct horse", store.RoleUser)
	b, runID := runWithResults(t, e, tok, 10, func(i int) string { return fmt.Sprint(i) })
	// runWithResults leaves the run held: finish it as its agent.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET state = 'completed', finished_at = now() WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	ada := e.client()
	ada.signIn("ada@example.com", "correct horse")
	path := fmt.Sprintf("/runs/%d", runID)
	page := ada.get(path)
	if page.doc.Find(`[data-testid="judge-form"] select[name="judge_target"] option[value="cpu-2c|sim"]`).Length() != 1 {
		t.Fatalf("the judge form does not offer the served target: %s", page.doc.Find(`[data-testid="judge-section"]`).Text())
	}

	// A template with placeholders the judge does not fill is refused,
	// naming them, and nothing is queued.
	bad := ada.post(path+"/judge", url.Values{"judge_model": {"m/small"}, "judge_target": {"cpu-2c|sim"}, "rubric": {"custom"},
		"template": {"Q {{question}} A {{answer}} C {{context}}"}, "scale_min": {"1"}, "scale_max": {"10"}})
	if got := bad.text(`[data-testid="judge-error-template"]`); bad.status != 422 || !strings.Contains(got, "{{context}}") {
		t.Fatalf("bad template: %d %q", bad.status, got)
	}
	// Another user cannot judge ada's run.
	bob := e.client()
	bob.signIn("bob@example.com", "correct horse")
	bob.get("/")
	if res := bob.post(path+"/judge", url.Values{"judge_model": {"m/small"}, "judge_target": {"cpu-2c|sim"}}); res.status != 404 {
		t.Fatalf("bob judges ada's run: %d", res.status)
	}
	var n int
	if err := e.store.Pool().QueryRow(ctx, `SELECT count(*) FROM judge_runs`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("judge runs after refusals: %d %v", n, err)
	}

	res := ada.post(path+"/judge", url.Values{"judge_model": {"m/small"}, "judge_target": {"cpu-2c|sim"}, "rubric": {"correctness"},
		"scale_min": {"1"}, "scale_max": {"10"}, "max_tokens": {"64"}})
	if res.status != 303 {
		t.Fatalf("start judging: %d %s", res.status, res.doc.Text())
	}
	judgeRun, prompts := judgeRunOf(t, e, runID, "single")
	// One prompt per answered item (item 9's request failed): question,
	// reference and answer in the correctness rubric.
	if len(prompts) != 9 || !strings.Contains(prompts[3], "question number 3") || !strings.Contains(prompts[3], "[Reference answer: begin]\n3\n") {
		t.Fatalf("judge prompts: %d, %q", len(prompts), prompts[3])
	}
	// The judge's benchmark stays out of the benchmark list, its dataset
	// out of the dataset list; the judge run is an ordinary queued run on
	// the judge's queue.
	var queue, dsName string
	if err := e.store.Pool().QueryRow(ctx, `SELECT j.queue, d.name FROM runs r JOIN river_job j ON j.id = r.river_job_id
		JOIN benchmarks b ON b.id = r.benchmark_id JOIN datasets d ON d.id = b.dataset_id WHERE r.id = $1`, judgeRun).Scan(&queue, &dsName); err != nil {
		t.Fatal(err)
	}
	if queue != jobs.Queue("cpu-2c", "sim") {
		t.Errorf("judge run queued on %q", queue)
	}
	// (While it is queued, the judge run shows among active runs, named
	// as the judge's.)
	list := ada.get("/benchmarks")
	if got := list.text(`[data-testid="completed-benchmarks"]`); strings.Contains(got, "Judge of run") || !strings.Contains(got, "r") {
		t.Errorf("the benchmark list: %q", got)
	}
	if got := list.text(`[data-testid="active-runs"]`); !strings.Contains(got, fmt.Sprintf("Judge of run %d (correctness)", runID)) {
		t.Errorf("active runs: %q", got)
	}
	if list := ada.get("/datasets").doc.Text(); strings.Contains(list, dsName) {
		t.Error("the judge's prompts show in the dataset list")
	}
	if got := ada.get(path).text(`[data-testid="judgings"] [data-testid="judging-state"]`); !strings.Contains(got, "judge run queued, 0 / 9") {
		t.Errorf("judging state before the run: %q", got)
	}

	// The judge answers: a rating for most, gibberish for item 2, a
	// failed request for item 4, a rating off the scale for item 5.
	ratings := map[int]float64{}
	finishAsAgent(t, e, judgeRun, func(idx int, customID string) string {
		judged := 0
		fmt.Sscanf(customID, "%d/", &judged)
		switch judged {
		case 2:
			return "ụ̈ ▁▁ gibberish tokens"
		case 4:
			return "!error"
		case 5:
			return "Rating: [[12]]"
		}
		r := float64(1 + judged)
		ratings[judged] = r
		return fmt.Sprintf("Item %d: the answer matches.\nRating: [[%d]]", judged, int(r))
	})
	scoreJob(t, e, judgeRun)

	// In item order, as the bootstrap draws them.
	var want []float64
	for idx := range 10 {
		if r, ok := ratings[idx]; ok {
			want = append(want, (r-1)/9)
		}
	}
	want = append(want, 0) // item 9: the run's own request failed
	mean, lo, hi := score.MeanCI(want, uint64(runID))
	var q, qlo, qhi float64
	var scorer string
	var scored int
	if err := e.store.Pool().QueryRow(ctx, `SELECT scorer, scored, quality, quality_lo, quality_hi FROM runs WHERE id = $1`, runID).
		Scan(&scorer, &scored, &q, &qlo, &qhi); err != nil {
		t.Fatal(err)
	}
	if scorer != "judge" || scored != len(want) || math.Abs(q-mean) > 1e-12 || qlo != lo || qhi != hi {
		t.Fatalf("quality %s %d %v [%v %v], want judge %d %v [%v %v]", scorer, scored, q, qlo, qhi, len(want), mean, lo, hi)
	}
	if got := ada.get(path).text(`[data-testid="run-quality"]`); !strings.HasPrefix(got, fmt.Sprintf("Quality (judge): %.3f", mean)) {
		t.Errorf("run page quality: %q", got)
	}
	// Item 3 got [[4]]: 0.333; its rationale is the judge's text.
	item := ada.get(path + "/items/3")
	if got := item.text(`[data-testid="item-verdict"]`); got != "Rated 4 on 1–10 (score 0.333)" {
		t.Errorf("item 3 verdict: %q", got)
	}
	if got := item.text(`[data-testid="item-rationale"]`); got != "Item 3: the answer matches." {
		t.Errorf("item 3 rationale: %q", got)
	}
	// Item 2: unparseable, no score, the raw answer kept.
	item = ada.get(path + "/items/2")
	if got := item.text(`[data-testid="item-verdict"]`); got != "Unparseable verdict: no score" {
		t.Errorf("item 2 verdict: %q", got)
	}
	if got := item.text(`[data-testid="item-judge-raw"]`); got != "ụ̈ ▁▁ gibberish tokens" {
		t.Errorf("item 2 raw: %q", got)
	}
	var s2, s5 *float64
	if err := e.store.Pool().QueryRow(ctx, `SELECT (SELECT score FROM results WHERE run_id = $1 AND idx = 2),
		(SELECT score FROM results WHERE run_id = $1 AND idx = 5)`, runID).Scan(&s2, &s5); err != nil || s2 != nil || s5 != nil {
		t.Errorf("unparseable items scored %v %v (%v)", s2, s5, err)
	}
	if got := ada.get(path + "/items/5").text(`[data-testid="item-rationale"]`); !strings.Contains(got, "outside the scale 1 to 10") {
		t.Errorf("item 5 rationale: %q", got)
	}

	// Exports carry score, verdict and rationale.
	recs, err := csv.NewReader(strings.NewReader(ada.get(path + "/results?format=csv").body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	if r := recs[4]; r[col["judge_verdict"]] != "rated" || r[col["judge_rationale"]] != "Item 3: the answer matches." || r[col["score"]] == "" {
		t.Errorf("CSV row of item 3: %v", r)
	}
	if r := recs[3]; r[col["judge_verdict"]] != "unparseable" || r[col["score"]] != "" {
		t.Errorf("CSV row of item 2: %v", r)
	}
	line := strings.Split(ada.get(path+"/results?format=jsonl").body, "\n")[3]
	var l struct {
		Ruckus struct {
			Score     *float64 `json:"score"`
			Verdict   string   `json:"judge_verdict"`
			Rationale string   `json:"judge_rationale"`
		} `json:"ruckus"`
	}
	if err := json.Unmarshal([]byte(line), &l); err != nil || l.Ruckus.Verdict != "rated" || l.Ruckus.Score == nil || l.Ruckus.Rationale == "" {
		t.Errorf("JSONL line of item 3: %s (%v)", line, err)
	}
	// The judge run's own page says what it judges.
	if got := ada.get(fmt.Sprintf("/runs/%d", judgeRun)).text(`[data-testid="judge-of"]`); !strings.Contains(got, fmt.Sprintf("grades run %d from 1 to 10", runID)) {
		t.Errorf("judge run page: %q", got)
	}
	_ = b
}

// A second run on the same dataset, held and finished, with outputs from
// output(i); returns its id.
func secondRun(t *testing.T, e *env, tok string, firstRun int64, output func(i int) string) int64 {
	t.Helper()
	ctx := context.Background()
	var ds int64
	if err := e.store.Pool().QueryRow(ctx, `SELECT b.dataset_id FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.id = $1`, firstRun).Scan(&ds); err != nil {
		t.Fatal(err)
	}
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "m/large", ParamsB: 7, Quantization: "bf16"})
	r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(fmt.Sprintf(`{"name":"second","dataset":%d,
		"targets":[{"model":"m/large","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":8}}`, ds)), "application/json")
	if r.status != 201 {
		t.Fatalf("second benchmark: %v", r.body)
	}
	id := int64(r.body["runs"].([]any)[0].(map[string]any)["run_id"].(float64))
	finishAsAgent(t, e, id, func(idx int, _ string) string { return output(idx) })
	return id
}

// Pairwise from the comparison page: every item both runs answered is
// asked in both orders; agreeing orders give the verdict, disagreeing ones
// a tie said to be inconsistent, an unreadable order no verdict; the
// comparison shows wins, ties, losses and win rate, and each item's
// verdict.
func TestJudgeAPairFromTheComparison(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	_, a := runWithResults(t, e, tok, 6, func(i int) string { return fmt.Sprint(i) })
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET state = 'completed', finished_at = now() WHERE id = $1`, a); err != nil {
		t.Fatal(err)
	}
	b := secondRun(t, e, tok, a, func(i int) string { return "answer " + fmt.Sprint(i) })
	ada := e.client()
	ada.signIn("ada@example.com", "correct horse")
	cmp := fmt.Sprintf("/compare?runs=%d,%d", a, b)
	page := ada.get(cmp)
	if page.doc.Find(`[data-testid="pair-judge"] form select[name="pair"] option`).Length() != 1 {
		t.Fatalf("the pairwise form: %s", page.doc.Find(`[data-testid="pair-judge"]`).Text())
	}
	res := ada.post(fmt.Sprintf("/compare/judge?runs=%d,%d", a, b), url.Values{"pair": {fmt.Sprintf("%d,%d", a, b)},
		"judge_model": {"m/small"}, "judge_target": {"cpu-2c|sim"}, "rubric": {"pairwise"}, "max_tokens": {"64"}})
	if res.status != 303 || res.header.Get("Location") != cmp {
		t.Fatalf("start pairwise judging: %d %s", res.status, res.header.Get("Location"))
	}
	judgeRun, prompts := judgeRunOf(t, e, a, "pairwise")
	// The six items both runs answered, each in both orders.
	if len(prompts) != 12 {
		t.Fatalf("%d pairwise prompts, want 12 (6 items × 2 orders)", len(prompts))
	}
	ab, ba := prompts[2], prompts[3] // item 1 in both orders
	if !(strings.Index(ab, "\n1\n") < strings.Index(ab, "answer 1")) || !(strings.Index(ba, "answer 1") < strings.Index(ba, "\n1\n")) {
		t.Fatalf("orders:\n%s\n---\n%s", ab, ba)
	}
	// Scripted verdicts per item, as (first order, second order), each in
	// the order shown: 0 a wins twice; 1 b wins twice; 2 a wins then
	// a is shown second and wins again ([[B]]); 3 position bias: A both
	// times; 4 tie both; 5 unreadable once.
	script := map[string]string{
		"0/ab": "[[A]]", "0/ba": "[[B]]",
		"1/ab": "[[B]]", "1/ba": "[[A]]",
		"2/ab": "A is right. [[A]]", "2/ba": "B is right. [[B]]",
		"3/ab": "[[A]]", "3/ba": "[[A]]",
		"4/ab": "[[C]]", "4/ba": "[[C]]",
		"5/ab": "[[A]]", "5/ba": "no idea",
	}
	finishAsAgent(t, e, judgeRun, func(_ int, customID string) string { return script[customID] })
	scoreJob(t, e, judgeRun)

	var wins, ties, losses, inconsistent, unparsed int
	if err := e.store.Pool().QueryRow(ctx, `SELECT wins, ties, losses, inconsistent, unparsed FROM judge_runs WHERE run_id = $1`, judgeRun).
		Scan(&wins, &ties, &losses, &inconsistent, &unparsed); err != nil {
		t.Fatal(err)
	}
	if wins != 2 || ties != 2 || losses != 1 || inconsistent != 1 || unparsed != 1 {
		t.Fatalf("wins %d ties %d losses %d inconsistent %d unparsed %d; want 2 2 1 1 1", wins, ties, losses, inconsistent, unparsed)
	}
	page = ada.get(cmp)
	if got := page.text(`[data-testid="pair-judging-counts"]`); !strings.HasPrefix(got, fmt.Sprintf("run %d: 2 wins · 2 ties · 1 losses", a)) {
		t.Errorf("counts: %q", got)
	}
	if got := page.text(`[data-testid="pair-judging-winrate"]`); got != fmt.Sprintf("run %d: 40.0 %% (ties as half: 60.0 %%)", a) {
		t.Errorf("win rate: %q", got)
	}
	for idx, want := range map[int]string{0: fmt.Sprintf("run %d better", a), 1: fmt.Sprintf("run %d better", b), 3: "tie",
		5: "no verdict (unparseable)"} {
		if got := page.text(fmt.Sprintf(`[data-testid="pair-verdict-%d"] strong`, idx)); got != want {
			t.Errorf("item %d verdict %q, want %q", idx, got, want)
		}
	}
	if got := page.text(`[data-testid="pair-verdict-3"] small`); !strings.Contains(got, "inconsistent across orders") {
		t.Errorf("item 3 does not say the orders disagreed: %q", got)
	}
	// Run b's item page shows the pair's verdict from its side.
	if got := ada.get(fmt.Sprintf("/runs/%d/items/1", b)).text(`[data-testid="item-judgment-` + fmt.Sprint(judgeRun) + `-final"] [data-testid="item-verdict"]`); got != fmt.Sprintf("This run's answer is better (run %d)", b) {
		t.Errorf("run b item 1: %q", got)
	}
	// A refused pairwise judging (a template without the second answer)
	// comes back on the comparison with the message.
	bad := ada.post(fmt.Sprintf("/compare/judge?runs=%d,%d", a, b), url.Values{"pair": {fmt.Sprintf("%d,%d", a, b)},
		"judge_model": {"m/small"}, "judge_target": {"cpu-2c|sim"}, "template": {"{{question}} {{answer_a}}"}})
	if got := bad.text(`[data-testid="judge-error-template"]`); bad.status != 422 || !strings.Contains(got, "{{answer_b}}") {
		t.Errorf("refused pairwise template: %d %q", bad.status, got)
	}
}

// Through the API and the manifest: scorer judge with scorer_options
// validated field by field, and a judging started over the API.
func TestJudgeThroughTheAPIAndManifest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	_, a := runWithResults(t, e, tok, 4, func(i int) string { return fmt.Sprint(i) })
	var ds int64
	if err := e.store.Pool().QueryRow(ctx, `SELECT b.dataset_id FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.id = $1`, a).Scan(&ds); err != nil {
		t.Fatal(err)
	}
	manifest := func(opts string) string {
		return fmt.Sprintf(`{"name":"judged","dataset":%d,"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}],
			"load":{"profile":"sequential"},"sampling":{"max_tokens":8},"scorer":"judge"%s}`, ds, opts)
	}
	for opts, want := range map[string]string{
		``: "scorer_options.judge",
		`,"scorer_options":{"judge":{"model":"m/nope","runtime":"sim","hardware":"cpu-2c"}}`:                                    "scorer_options.judge.model",
		`,"scorer_options":{"judge":{"model":"m/small","runtime":"sim","hardware":"cpu-2c","template":"{{answer}} {{bogus}}"}}`: "scorer_options.judge.template",
		`,"scorer_options":{"judge":{"model":"m/small","runtime":"sim","hardware":"cpu-2c","scale":{"min":5,"max":5}}}`:         "scorer_options.judge.scale",
		`,"scorer_options":{"judge":{"model":"m/small","runtime":"sim","hardware":"cpu-2c","rubric":"pairwise"}}`:               "scorer_options.judge.rubric",
	} {
		r := e.api(http.MethodPost, "/api/v1/benchmarks?dry_run=true", tok, strings.NewReader(manifest(opts)), "application/json")
		if r.status != 422 || !strings.Contains(fmt.Sprint(r.body["errors"]), want) {
			t.Errorf("manifest with %s: %d %v, want an error at %s", opts, r.status, r.body, want)
		}
	}
	r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest(
		`,"scorer_options":{"judge":{"model":"m/small","runtime":"sim","hardware":"cpu-2c","rubric":"helpfulness","scale":{"min":0,"max":5}}}`)), "application/json")
	if r.status != 201 {
		t.Fatalf("judge manifest: %d %v", r.status, r.body)
	}
	run := int64(r.body["runs"].([]any)[0].(map[string]any)["run_id"].(float64))
	finishAsAgent(t, e, run, func(i int, _ string) string { return fmt.Sprint(i) })
	// The run's score job starts the judging once, however often it runs.
	scoreJob(t, e, run)
	scoreJob(t, e, run)
	var n int
	var rubric string
	var lo, hi int
	if err := e.store.Pool().QueryRow(ctx, `SELECT count(*), min(rubric), min(scale_min), min(scale_max) FROM judge_runs WHERE run_a = $1`, run).
		Scan(&n, &rubric, &lo, &hi); err != nil || n != 1 || rubric != "helpfulness" || lo != 0 || hi != 5 {
		t.Fatalf("judgings of the manifest's run: %d %s %d..%d (%v)", n, rubric, lo, hi, err)
	}
	// On the sim runtime the judge's answers are decided when it is
	// queued: read as the verdicts they say.
	judgeRun, _ := judgeRunOf(t, e, run, "single")
	var simAnswers int
	if err := e.store.Pool().QueryRow(ctx, `SELECT count(*) FROM sim_answers WHERE run_id = $1 AND answer LIKE '%Rating: [[_]]'`, judgeRun).Scan(&simAnswers); err != nil || simAnswers != 4 {
		t.Fatalf("simulated verdicts: %d (%v)", simAnswers, err)
	}

	// The API: a pairwise judging of the two runs, and refusals.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET state = 'completed', finished_at = now() WHERE id = $1`, a); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/api/v1/runs/%d/judge", a)
	for body, want := range map[string]string{
		`{"judge":{"model":"m/small","runtime":"sim","hardware":"cpu-2c"},"against":` + fmt.Sprint(a) + `}`:                             "against",
		`{"judge":{"model":"m/small","runtime":"sim","hardware":"cpu-2c","scale":{"min":1,"max":5}},"against":` + fmt.Sprint(run) + `}`: "judge.scale",
		`{"judge":{"model":"m/small","runtime":"sim","hardware":"cpu-2c"},"oops":1}`:                                                    "oops",
		`{"judge":{"model":"m/small","runtime":"sim","hardware":"cpu-2c","template":"{{answer}} {{answer_b}}"}}`:                        "{{answer_b}}",
	} {
		res := e.api(http.MethodPost, path, tok, strings.NewReader(body), "application/json")
		if res.status != 422 || !strings.Contains(fmt.Sprint(res.body["errors"]), want) {
			t.Errorf("POST %s %s: %d %v, want 422 naming %s", path, body, res.status, res.body, want)
		}
	}
	res := e.api(http.MethodPost, path, tok, strings.NewReader(`{"judge":{"model":"m/small","runtime":"sim","hardware":"cpu-2c"},"against":`+fmt.Sprint(run)+`}`), "application/json")
	if res.status != 201 || res.body["mode"] != "pairwise" || res.body["prompts"] != float64(8) || res.body["rubric"] != "pairwise-correctness" {
		t.Fatalf("API pairwise judging: %d %v", res.status, res.body)
	}
}
