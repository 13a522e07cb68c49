package handlers_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/dataset/starter"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/handlers"
)

// simAnswersOf is the answers the server wrote for a sim run, by item.
func simAnswersOf(t *testing.T, e *env, runID int64) map[int]string {
	t.Helper()
	out, err := e.store.SimAnswers(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The start page's first benchmark as make run sets it up (the starter
// summaries scored by ROUGE-L; Qwen2.5 0.5B at accuracy 0.3, Phi-3.5 mini
// at 0.6), worked as the sim agent works it: each run's ROUGE-L is the
// share of items it answered right (a wrong summary shares no word with
// the reference), its interval holds the configured accuracy, and the
// verdict's best quality is the higher of the two. Then the better run
// is judged from its page on the simulated runtime (correctness rubric):
// the judge rates exactly the items ROUGE-L counts right at the top of the
// scale and the others at the bottom, so the run page shows the same
// quality under both.
func TestFirstBenchmarkQualityFollowsTheAccuracyAndTheJudgeAgrees(t *testing.T) {
	t.Parallel()
	accuracy := map[string]float64{"Qwen/Qwen2.5-0.5B-Instruct": 0.3, "microsoft/Phi-3.5-mini-instruct": 0.6}
	e := newEnv(t, func(d *handlers.Deps) { d.Benchmarks.(*bench.Service).SimAccuracy = accuracy })
	ctx := context.Background()
	admin := e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	d := starter.All[0]
	b, err := starter.Open(d)
	if err != nil {
		t.Fatal(err)
	}
	up := &ingest.Uploader{Store: e.store, Limits: dataset.DefaultLimits()}
	if res, err := up.Upload(ctx, ingest.Source{File: bytes.NewReader(b)}, ingest.Request{Viewer: store.Viewer{UserID: admin.ID, Admin: true}, FileName: d.File, Name: d.Name,
		Visibility: store.VisibilityShared, AllowDuplicate: true, Starter: true, Scorer: d.Scorer}); err != nil || res.Dataset.DefaultScorer != "rougeL" {
		t.Fatalf("starter summaries as make run seeds them: %v %v", err, res.Errors)
	}
	for _, m := range []store.ModelFields{
		{Name: "Qwen/Qwen2.5-7B-Instruct", ParamsB: 7.6, Quantization: "bf16", ContextLength: 32768},
		{Name: "Qwen/Qwen2.5-0.5B-Instruct", ParamsB: 0.49, Quantization: "bf16", ContextLength: 32768},
		{Name: "microsoft/Phi-3.5-mini-instruct", ParamsB: 3.8, Quantization: "bf16", ContextLength: 131072},
	} {
		if _, err := e.store.CreateModel(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "dev-sim", Profile: store.HardwareProfile{Slug: "cpu-8c", CPUCores: 8}})
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	if got := c.get("/").text(`[data-testid="launch-first"]`); got != "Launch Qwen2.5-0.5B-Instruct vs Phi-3.5-mini-instruct" {
		t.Fatalf("launch button %q", got)
	}
	r := c.post("/first-benchmark", nil)
	loc := r.header.Get("Location")
	if r.status != 303 || !strings.HasPrefix(loc, "/benchmarks/") {
		t.Fatalf("launch: %d %s", r.status, loc)
	}
	// Each model runs twice (A B B A); the verdict's quality is each
	// model's first run's, and both answer alike.
	runs := map[string]int64{}
	var all []struct {
		model string
		id    int64
	}
	rows, err := e.store.Pool().Query(ctx, `SELECT m.name, r.id FROM runs r JOIN models m ON m.id = r.model_id
		WHERE r.benchmark_id = $1 ORDER BY r.id DESC`, strings.TrimPrefix(loc, "/benchmarks/"))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var id int64
		if err := rows.Scan(&name, &id); err != nil {
			t.Fatal(err)
		}
		runs[name] = id // the last assignment is the model's first run
		all = append(all, struct {
			model string
			id    int64
		}{name, id})
	}
	rows.Close()
	if len(all) != 4 {
		t.Fatalf("first benchmark: %d runs, want 2 models × 2", len(all))
	}
	quality := map[string]float64{}
	for _, run := range all {
		model, id := run.model, run.id
		answers := simAnswersOf(t, e, id)
		finishAsAgent(t, e, id, func(idx int, _ string) string { return answers[idx] })
		scoreJob(t, e, id)
		concludeRun(t, e, id)
		var q, lo, hi float64
		var scorer string
		var right, scored int
		if err := e.store.Pool().QueryRow(ctx, `SELECT r.scorer, r.quality, r.quality_lo, r.quality_hi,
			(SELECT count(*) FILTER (WHERE score = 1) FROM results WHERE run_id = r.id), (SELECT count(*) FILTER (WHERE score IN (0, 1)) FROM results WHERE run_id = r.id)
			FROM runs r WHERE r.id = $1`, id).Scan(&scorer, &q, &lo, &hi, &right, &scored); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s at accuracy %.1f: %s %.3f [%.3f, %.3f], %d of %d items right", model, accuracy[model], scorer, q, lo, hi, right, scored)
		if scorer != "rougeL" || scored != 24 || q != float64(right)/24 || lo > accuracy[model] || hi < accuracy[model] {
			t.Errorf("%s at accuracy %.1f: %s %.3f [%.3f, %.3f], %d of %d items scored 0 or 1, %d right; want ROUGE-L the share right, its interval holding the accuracy",
				model, accuracy[model], scorer, q, lo, hi, scored, 24, right)
		}
		quality[model] = q
	}
	best := "microsoft/Phi-3.5-mini-instruct"
	if quality["Qwen/Qwen2.5-0.5B-Instruct"] > quality[best] {
		best = "Qwen/Qwen2.5-0.5B-Instruct"
	}
	v := c.get(loc).doc.Find(`[data-testid="verdict-quality"]`)
	if w, val := v.Find(`[data-testid="verdict-winner"]`).Text(), v.Find(`[data-testid="verdict-value"]`).Text(); w != best || val != fmt.Sprintf("%.3f", quality[best]) {
		t.Errorf("verdict's best quality: %q %q, want %s %.3f", w, val, best, quality[best])
	}

	// Judged from its page on the simulated runtime: the same quality.
	judged := runs[best]
	res := c.post(fmt.Sprintf("/runs/%d/judge", judged), url.Values{"judge_model": {"Qwen/Qwen2.5-7B-Instruct"}, "judge_target": {"cpu-8c|sim"}, "rubric": {"correctness"}})
	if res.status != 303 {
		t.Fatalf("judge: %d %s", res.status, res.text(`[data-testid="judge-errors"]`))
	}
	judgeRun, _ := judgeRunOf(t, e, judged, "single")
	verdicts := simAnswersOf(t, e, judgeRun)
	finishAsAgent(t, e, judgeRun, func(idx int, _ string) string { return verdicts[idx] })
	scoreJob(t, e, judgeRun)
	var agree int
	if err := e.store.Pool().QueryRow(ctx, `SELECT count(*) FROM judgments j
		JOIN (SELECT unnest(idx) AS idx, unnest(scores) AS score FROM run_qualities WHERE run_id = $2 AND scorer_key = 'rougeL') s ON s.idx = j.idx
		WHERE j.judge_run_id = $1 AND j.ord = 'single' AND j.score = s.score`, judgeRun, judged).Scan(&agree); err != nil {
		t.Fatal(err)
	}
	page := c.get(fmt.Sprintf("/runs/%d", judged))
	under := map[string]string{}
	page.doc.Find(`[data-testid="run-quality-under"]`).Each(func(_ int, s *goquery.Selection) {
		key := s.Find("code").Text()
		under[strings.SplitN(key, "{", 2)[0]] = strings.TrimRight(strings.Fields(strings.TrimPrefix(s.Text(), key+":"))[0], ",")
	})
	t.Logf("judged %s: the simulated judge agrees with ROUGE-L on %d of 24 items; qualities on the run page %v", best, agree, under)
	if agree != 24 || under["rougeL"] == "" || under["judge"] != under["rougeL"] {
		t.Errorf("the simulated judge agrees with ROUGE-L on %d of 24 items; run page qualities %v, want the same under both", agree, under)
	}
}
