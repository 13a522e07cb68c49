package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/regress"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// repeated makes a benchmark that runs spec's target repeats times, and
// finishes and scores each run as the server does (as histFixture.run
// does for one run), the i-th on day s.day+i with tokens/s tps[i].
func (h *histFixture) repeatedDays(t *testing.T, s spec, tps []float64) (benchmarkID int64, runIDs []int64) {
	t.Helper()
	e := h.e
	manifest := fmt.Sprintf(`{"name":"%s repeated","dataset":%d,"targets":[{"model":%q,"runtime":"sim","hardware":%q}],
		"load":{"profile":"sequential"},"sampling":{"max_tokens":8},"scorer":"exact","repeats":%d}`, s.model, h.ds, s.model, s.hw, len(tps))
	r := e.api(http.MethodPost, "/api/v1/benchmarks", h.tok, strings.NewReader(manifest), "application/json")
	if r.status != 201 {
		t.Fatalf("create: %d %v", r.status, r.body)
	}
	benchmarkID = int64(r.body["benchmark_id"].(float64))
	for i, x := range r.body["runs"].([]any) {
		id := int64(x.(map[string]any)["run_id"].(float64))
		runIDs = append(runIDs, id)
		one := s
		one.day, one.tps = s.day+float64(i), tps[i]
		h.finishAs(t, id, one)
	}
	return benchmarkID, runIDs
}

// finish works run id as its agent and then its score job would, with
// the figures spec says.
func (h *histFixture) finishAs(t *testing.T, runID int64, s spec) {
	t.Helper()
	ctx := context.Background()
	e := h.e
	var jobID int64
	if err := e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, runID).Scan(&jobID); err != nil {
		t.Fatal(err)
	}
	claim, err := e.store.ClaimRun(ctx, runID, h.agents[s.hw], jobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	var rs []store.ResultRecord
	for i := range histItems {
		out := "wrong"
		if s.right(i) {
			out = fmt.Sprint(i)
		}
		e2e := time.Duration(s.e2e*(0.5+0.5*float64(i)/histItems)) * time.Millisecond
		rs = append(rs, store.ResultRecord{Result: jobs.Result{Idx: i, CustomID: fmt.Sprintf("c%03d", i), Status: jobs.StatusOK, Output: out,
			CompletionTokens: 5, ContentEvents: 5, TTFT: e2e / 4, E2E: e2e}, SentAt: time.Now()})
	}
	if _, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil {
		t.Fatal(err)
	}
	summary, _ := json.Marshal(jobs.RunSummary{Requests: histItems, OK: histItems, OutputTokensPerS: s.tps, RequestsPerS: s.tps / 5,
		TTFT: jobs.Dist{P50: s.e2e * 0.19, P95: s.e2e * 0.24}, E2E: jobs.Dist{P50: s.e2e * 0.75, P95: s.e2e * 0.975}})
	if err := e.store.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", Summary: summary, Throughput: s.tps}); err != nil {
		t.Fatal(err)
	}
	at := h.start.Add(time.Duration(s.day * 24 * float64(time.Hour)))
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET finished_at = $2 WHERE id = $1`, runID, at); err != nil {
		t.Fatal(err)
	}
	w := &jobs.ScoreRunWorker{Scorer: &score.Service{Store: e.store}, Regressions: &regress.Checker{Store: e.store}, Stats: conclude.Keeper{Store: e.store}}
	if err := w.Work(ctx, &river.Job[jobs.ScoreRunArgs]{JobRow: &rivertype.JobRow{ID: jobID}, Args: jobs.ScoreRunArgs{RunID: runID}}); err != nil {
		t.Fatal(err)
	}
}

// The dataset's recommendation weighs each target under each load once:
// from the newest benchmark that measured it, its repeats there merged
// into one candidate (named by its first run, as in that benchmark's
// verdict), never ranked against each other; the older measurement of the
// same target is listed with why, on the page (in English and German) and
// in the API.
func TestDatasetRecommendationWeighsEachTargetOnce(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	e := h.e
	_, old := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 0, right: below(30), tps: 100, e2e: 200})
	b2, reps := h.repeatedDays(t, spec{model: "m/a", hw: "cpu-2c", day: 1, right: below(30), e2e: 200}, []float64{100, 104})
	_, other := h.run(t, spec{model: "m/b", hw: "cpu-2c", day: 4, right: below(30), tps: 100, e2e: 200})

	res := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/recommendation", h.ds), h.tok, nil, "")
	if res.status != 200 {
		t.Fatalf("recommendation: %d %v", res.status, res.body)
	}
	var weighed []int64
	for _, list := range []string{"feasible", "excluded", "not_comparable"} {
		xs, _ := res.body[list].([]any)
		weighed = append(weighed, runIDs(t, xs)...)
	}
	if len(weighed) != 2 || !containsID(weighed, reps[0]) || !containsID(weighed, other) {
		t.Errorf("weighed %v, want the repeats of benchmark %d as one (run %d) and run %d; not run %d (older) nor run %d (a repeat)",
			weighed, b2, reps[0], other, old, reps[1])
	}
	for _, x := range res.body["feasible"].([]any) {
		if row := x.(map[string]any); row["run_id"] == float64(reps[0]) && row["repeats"] != 2.0 {
			t.Errorf("run %d weighed as %v repeats, want 2", reps[0], row["repeats"])
		}
	}
	left, _ := res.body["left_out"].([]any)
	if len(left) != 1 {
		t.Fatalf("left out %v, want run %d", left, old)
	}
	l := left[0].(map[string]any)
	if want := fmt.Sprintf("measured again later (run %d, benchmark %d)", reps[0], b2); l["run_id"] != float64(old) || !strings.Contains(l["reason"].(string), want) {
		t.Errorf("left out %v, want run %d: %q", l, old, want)
	}

	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	for lang, want := range map[string]string{"en": "measured again later", "de": "später erneut gemessen"} {
		page := c.getIn(fmt.Sprintf("/datasets/%d/recommend", h.ds), lang)
		if page.status != 200 {
			t.Fatalf("%s page: %d", lang, page.status)
		}
		if got := page.text(fmt.Sprintf(`[data-testid="left-out-%d"]`, old)); !strings.Contains(got, want) {
			t.Errorf("%s: run %d left out as %q, want %q", lang, old, got, want)
		}
		for id, shown := range map[int64]bool{reps[0]: true, reps[1]: false, old: false, other: true} {
			if got := page.doc.Find(fmt.Sprintf(`[data-testid="feasible-%d"]`, id)).Length() == 1; got != shown {
				t.Errorf("%s: run %d ranked %v, want %v", lang, id, got, shown)
			}
		}
	}
}

func containsID(xs []int64, id int64) bool {
	for _, x := range xs {
		if x == id {
			return true
		}
	}
	return false
}

// importAs imports answers to the history fixture's dataset made
// elsewhere by model, scored with scorer, and returns the run.
func (h *histFixture) importAs(t *testing.T, model, scorer string) int64 {
	t.Helper()
	ctx := context.Background()
	var ids []string
	rows, _ := h.e.store.Pool().Query(ctx, `SELECT custom_id FROM dataset_items WHERE dataset_id = $1 ORDER BY idx`, h.ds)
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if rows.Err() != nil || len(ids) != histItems {
		t.Fatalf("items %v: %v", ids, rows.Err())
	}
	var lines bytes.Buffer
	for i, id := range ids {
		out, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("b-%d", i), "custom_id": id, "error": nil,
			"response": map[string]any{"status_code": 200, "request_id": "r", "body": map[string]any{
				"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": fmt.Sprint(i)}, "finish_reason": "stop"}},
				"usage":   map[string]int{"prompt_tokens": 5, "completion_tokens": 2}}}})
		lines.Write(out)
		lines.WriteByte('\n')
	}
	body, ct := multipartBody(t, "out.jsonl", lines.Bytes(), map[string]string{"model": model, "scorer": scorer, "name": "elsewhere"})
	r := h.e.api(http.MethodPost, fmt.Sprintf("/api/v1/datasets/%d/imports", h.ds), h.tok, body, ct)
	if r.status != 201 {
		t.Fatalf("import: %d %v", r.status, r.body)
	}
	run := int64(r.body["run_id"].(float64))
	if err := (&score.Service{Store: h.e.store}).ScoreRun(ctx, run, ""); err != nil {
		t.Fatal(err)
	}
	concludeRun(t, h.e, run)
	return run
}

// Every surface of a dataset weighs quality under one scorer identity, the
// one most of its runs were scored under (conclude.DatasetScorer): here a
// run measured here scored with exact and rescored with contains, and two
// imported runs scored with contains. The leaderboard ranks quality under
// contains; so do the dataset's recommendation and the capacity planner,
// although among the runs measured here alone (the planner's) exact and
// contains are level.
func TestDatasetSurfacesShareOneScorer(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	e := h.e
	_, measured := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 0, right: below(30), tps: 100, e2e: 200})
	rescore(t, e, []int64{measured}, false)
	h.importAs(t, "m/b", "contains")
	h.importAs(t, "m/b", "contains")

	lb := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/leaderboard?sort=quality", h.ds), h.tok, nil, "")
	if lb.status != 200 {
		t.Fatalf("leaderboard: %d %v", lb.status, lb.body)
	}
	var want string
	for _, r := range lb.body["rows"].([]any) {
		if row := r.(map[string]any); row["run_id"] == float64(measured) {
			want, _ = row["scorer"].(string)
		}
	}
	if !strings.HasPrefix(want, "contains") {
		t.Fatalf("the leaderboard ranks run %d under %q, want contains", measured, want)
	}

	rec := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/recommendation", h.ds), h.tok, nil, "")
	got := map[string]string{}
	for _, list := range []string{"feasible", "excluded", "not_comparable"} {
		xs, _ := rec.body[list].([]any)
		for _, x := range xs {
			if row := x.(map[string]any); row["run_id"] == float64(measured) {
				got["recommendation"], _ = row["scorer"].(string)
			}
		}
	}
	plan := e.api(http.MethodPost, "/api/v1/capacity", h.tok, strings.NewReader(fmt.Sprintf(`{"dataset_id":%d,
		"traffic":{"peak_rps":1,"average_rps":1,"input_tokens":5,"output_tokens":5},"slo":{"e2e_ms":100000},"headroom":0.2}`, h.ds)), "application/json")
	if plan.status != 200 {
		t.Fatalf("capacity: %d %v", plan.status, plan.body)
	}
	for _, list := range []string{"feasible", "excluded"} {
		xs, _ := plan.body[list].([]any)
		for _, x := range xs {
			if row := x.(map[string]any); row["run_id"] == float64(measured) {
				got["capacity planner"], _ = row["quality_scorer"].(string)
			}
		}
	}
	for _, surface := range []string{"recommendation", "capacity planner"} {
		if got[surface] != want {
			t.Errorf("the %s weighs run %d under %q, the leaderboard under %q", surface, measured, got[surface], want)
		}
	}
}
