package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/dataset/starter"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// fakeRun is one target of finishedBenchmark: its model, the measured
// window its output took, tokens per answer, each item's E2E and score.
type fakeRun struct {
	model   string
	seconds float64
	tokens  int
	e2e     func(i int) time.Duration
	score   func(i int) float64
}

// finishedBenchmark makes a benchmark of n items with one run per target,
// each worked by an agent to the end (summary, scores and the quality
// interval as the scoring job stores them), on cpu-2c priced at price
// smallFake and bigFake are the two targets most verdict tests compare:
// over 10 s, m/small answers 10 tokens in about 100 ms and two items in
// three right, m/big 20 tokens in about 200 ms and every item right.
var (
	smallFake = fakeRun{model: "m/small", seconds: 10, tokens: 10, e2e: millis(100), score: func(i int) float64 { return float64(min(i%3, 1)) }}
	bigFake   = fakeRun{model: "m/big", seconds: 10, tokens: 20, e2e: millis(200), score: func(int) float64 { return 1 }}
)

// nextFake is the index of the first fake run of model not used yet,
// marked used.
func nextFake(runs []fakeRun, used []bool, model string) int {
	for k, f := range runs {
		if f.model == model && !used[k] {
			used[k] = true
			return k
		}
	}
	panic("no fake run left for " + model)
}

// (nil: no price).
func finishedBenchmark(t *testing.T, e *env, tok string, n int, price *float64, runs []fakeRun) (benchmarkID string, runIDs []int64) {
	t.Helper()
	ctx := context.Background()
	var ds strings.Builder
	for i := range n {
		fmt.Fprintf(&ds, "{\"custom_id\":\"c%02d\",\"prompt\":\"q%d\",\"reference\":\"%d\"}\n", i, i, i)
	}
	up := e.upload(tok, "d.jsonl", []byte(ds.String()), nil)
	// A model named by several runs in a row is one target repeated.
	var targets []string
	seen := map[string]bool{}
	for _, r := range runs {
		if seen[r.model] {
			continue
		}
		seen[r.model] = true
		testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: r.model, Quantization: "bf16"})
		targets = append(targets, fmt.Sprintf(`{"model":%q,"runtime":"sim","hardware":"cpu-2c"}`, r.model))
	}
	agent := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	if err := e.store.SetHardwarePrice(ctx, "cpu-2c", price); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`{"name":"verdict","dataset":%v,"targets":[%s],"load":{"profile":"sequential"},"sampling":{"max_tokens":32},"scorer":"exact","repeats":%d}`,
		up.body["dataset_id"], strings.Join(targets, ","), len(runs)/len(targets))
	res := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json")
	if res.status != 201 {
		t.Fatalf("create: %d %v", res.status, res.body)
	}
	// The benchmark service orders repeats in counterbalanced blocks (A B | B A):
	// each run created gets its model's next fake run, and runIDs follow
	// the fakes' order.
	runIDs = make([]int64, len(runs))
	used := make([]bool, len(runs))
	for _, rr := range res.body["runs"].([]any) {
		id := int64(rr.(map[string]any)["run_id"].(float64))
		k := nextFake(runs, used, rr.(map[string]any)["model"].(string))
		runIDs[k] = id
		var job int64
		_ = e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, id).Scan(&job)
		claim, err := e.store.ClaimRun(ctx, id, agent.ID, job, "sim")
		if err != nil {
			t.Fatal(err)
		}
		f := runs[k]
		var rs []store.ResultRecord
		// One request after another over the measured window, as a
		// sequential load sends them, each a little early or late (up to
		// 45 % of the spacing): the run's own noise.
		start := time.Now().Add(-time.Minute)
		for i := range n {
			jitter := 0.45 * math.Sin(float64(i*i)*1.7+float64(k))
			at := start.Add(time.Duration((float64(i) + 0.5 + jitter) / float64(n) * f.seconds * float64(time.Second)))
			rs = append(rs, store.ResultRecord{Result: jobs.Result{Idx: i, CustomID: fmt.Sprintf("c%02d", i), Status: jobs.StatusOK, Output: "x",
				CompletionTokens: f.tokens, ContentEvents: f.tokens, TTFT: 10 * time.Millisecond, E2E: f.e2e(i)}, SentAt: at})
		}
		if _, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil {
			t.Fatal(err)
		}
		window := time.Duration(f.seconds * float64(time.Second))
		sum, err := summary.Run(ctx, e.store, id, jobs.SLO{}, window)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(sum)
		if err := e.store.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", StoppedBy: "completed", Segment: window, Summary: raw,
			Throughput: sum.OutputTokensPerS}); err != nil {
			t.Fatal(err)
		}
		scores := make([]float64, n)
		for i := range n {
			scores[i] = f.score(i)
			if _, err := e.store.Pool().Exec(ctx, `UPDATE results SET score = $3 WHERE run_id = $1 AND idx = $2`, id, i, scores[i]); err != nil {
				t.Fatal(err)
			}
		}
		mean, lo, hi := score.MeanCI(scores, uint64(id))
		if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET scorer = 'exact', scored = $2, quality = $3, quality_lo = $4, quality_hi = $5, scored_at = now() WHERE id = $1`,
			id, n, mean, lo, hi); err != nil {
			t.Fatal(err)
		}
		concludeRun(t, e, id)
	}
	return fmt.Sprint(res.body["benchmark_id"]), runIDs
}

func millis(base int) func(int) time.Duration {
	return func(i int) time.Duration { return time.Duration(base+i) * time.Millisecond }
}

// A finished benchmark's page opens with its verdict: the best quality,
// the fastest and the cheapest target, by how much and whether that is
// significant, with links on; the live cards are folded away.
func TestVerdictOnAFinishedBenchmark(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	price := 3.6
	b, runs := finishedBenchmark(t, e, tok, 30, &price, []fakeRun{
		// Right on two items in three; 300 tokens in 10 s; E2E 100–129 ms.
		smallFake,
		// Right on every item; 600 tokens in 10 s; E2E 200–229 ms.
		bigFake,
	})
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get("/benchmarks/" + b)
	if page.status != 200 {
		t.Fatalf("benchmark page: %d", page.status)
	}
	v := page.doc.Find(`[data-testid="verdict"]`)
	if v.Length() != 1 || page.doc.Find(`[data-testid="verdict-pending"]`).Length() != 0 {
		t.Fatal("a finished benchmark shows no verdict")
	}
	if _, polls := v.Attr("hx-trigger"); polls {
		t.Error("the finished verdict polls")
	}
	line := func(id string) map[string]string {
		l := v.Find(`[data-testid="verdict-` + id + `"]`)
		out := map[string]string{}
		for _, k := range []string{"winner", "value", "margin", "significance", "basis", "missing"} {
			out[k] = strings.Join(strings.Fields(l.Find(`[data-testid="verdict-`+k+`"]`).Text()), " ")
		}
		return out
	}
	// Quality 1.000 against 0.667: a paired comparison on the 30 items.
	q := line("quality")
	if q["winner"] != "m/big" || q["value"] != "1.000" || q["margin"] != "50 % higher than m/small (0.667), +0.333" ||
		q["significance"] != "significant" || !strings.Contains(q["basis"], "paired comparison on 30 items") {
		t.Errorf("quality line %v", q)
	}
	// 60 against 30 output tokens/s, as the test estimates them (batch
	// means over the window from the first to the last send).
	s := line("speed")
	if s["winner"] != "m/big" || s["value"] != "59.6 tokens/s" || s["margin"] != "98 % faster than m/small (30.1 tokens/s), +29.5 tokens/s" ||
		s["significance"] != "significant" || !strings.Contains(s["basis"], "with a 3 % between-run floor") {
		t.Errorf("speed line %v", s)
	}
	// p95 E2E: 127.55 against 227.55 ms, over 30 requests each: too few
	// for an exact 95 % interval (59), so shown and not tested.
	l := line("latency")
	if l["winner"] != "m/small" || l["value"] != "128 ms" || !strings.HasPrefix(l["margin"], "44 % quicker than m/big (228 ms), −100 ms") ||
		l["significance"] != "not tested" || !strings.Contains(l["basis"], "too few requests to test a p95 (30; its 95 % interval needs at least 59)") {
		t.Errorf("latency line %v", l)
	}
	// $3.6/h at the tested speeds: $16.780 against $33.193 per 1M output
	// tokens, tested on ln cost with the price ratio (1) exact.
	co := line("cost")
	if co["winner"] != "m/big" || co["value"] != "$16.780 per 1M output tokens" ||
		co["margin"] != "49 % cheaper than m/small ($33.193 per 1M output tokens), −$16.412 per 1M output tokens" ||
		!strings.Contains(co["basis"], "t-test on ln cost: the price ratio 1 exact") {
		t.Errorf("cost line %v", co)
	}
	if href, _ := v.Find(`[data-testid="verdict-compare"]`).Attr("href"); href != fmt.Sprintf("/compare?runs=%d,%d", runs[0], runs[1]) {
		t.Errorf("compare link %q", href)
	}
	if href, _ := v.Find(`[data-testid="verdict-recommend"]`).Attr("href"); href != "/benchmarks/"+b+"/recommend" {
		t.Errorf("recommendation link %q", href)
	}
	// The cards are there, folded.
	cards := page.doc.Find(`details[data-testid="run-cards"]`)
	if cards.Length() != 1 || cards.Find(fmt.Sprintf(`[data-testid="run-card-%d"]`, runs[0])).Length() != 1 {
		t.Fatal("the finished benchmark's cards are not in a <details>")
	}
	if _, open := cards.Attr("open"); open {
		t.Error("the cards' <details> is open")
	}
	// The fragment is the same verdict; the links work.
	frag := c.get("/benchmarks/" + b + "/verdict")
	if frag.status != 200 || strings.Contains(frag.body, "<html") || frag.text(`[data-testid="verdict-quality"] [data-testid="verdict-winner"]`) != "m/big" {
		t.Fatalf("verdict fragment: %d %.300s", frag.status, frag.body)
	}
	if p := c.get(fmt.Sprintf("/compare?runs=%d,%d", runs[0], runs[1])); p.status != 200 {
		t.Errorf("compare: %d", p.status)
	}

	// The start page lists it with its verdict in one line.
	home := c.get("/")
	got := strings.Join(strings.Fields(home.text(`[data-testid="recent-`+b+`"] [data-testid="recent-verdict"]`)), " ")
	if got != "Best quality: m/big (50 % higher) · Fastest: m/big (98 % faster) · Cheapest: m/big (49 % cheaper)" {
		t.Errorf("home verdict line %q", got)
	}
	if home.doc.Find(`[data-testid="first-steps"]`).Length() != 0 {
		t.Error("the three first steps are shown to someone with a benchmark")
	}

	// Another user sees neither.
	e.createUser("bob@example.com", "correct horse", store.RoleUser)
	bob := e.client()
	bob.signIn("bob@example.com", "correct horse")
	if r := bob.get("/benchmarks/" + b + "/verdict"); r.status != 404 {
		t.Errorf("bob's verdict fragment: %d", r.status)
	}
	if bob.get("/").doc.Find(`[data-testid="recent-`+b+`"]`).Length() != 0 {
		t.Error("bob's start page lists ada's benchmark")
	}
}

// While runs are active the verdict is a placeholder polling its fragment,
// and the cards stay open; once finished the fragment is the verdict,
// which says "not measured" where a figure is missing, never 0.
func TestVerdictWaitsForRunsAndSaysNotMeasured(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	b, runID := runWithResults(t, e, tok, 20, func(i int) string { return "x" })
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get("/benchmarks/" + b)
	pending := page.doc.Find(`[data-testid="verdict-pending"]`)
	if trig, _ := pending.Attr("hx-trigger"); trig != "every 2s" || pending.AttrOr("hx-get", "") != "/benchmarks/"+b+"/verdict" ||
		page.doc.Find(`[data-testid="verdict"]`).Length() != 0 {
		t.Fatalf("a running benchmark's verdict: %q", trig)
	}
	if page.doc.Find(`details[data-testid="run-cards"]`).Length() != 0 || page.doc.Find(`[data-testid="run-card-`+itoa(runID)+`"]`).Length() != 1 {
		t.Fatal("a running benchmark's cards are folded")
	}
	if frag := c.get("/benchmarks/" + b + "/verdict"); frag.doc.Find(`[data-testid="verdict-pending"][data-polling="on"]`).Length() != 1 {
		t.Fatalf("pending fragment: %.300s", frag.body)
	}

	// The run finishes (no price for cpu-2c).
	sum, err := summary.Run(ctx, e.store, runID, jobs.SLO{}, 6*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(sum)
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET state = 'completed', finished_at = now(), summary = $2 WHERE id = $1`, runID, raw); err != nil {
		t.Fatal(err)
	}
	// Its answers are being scored (the dataset has references): the
	// placeholder waits for the scores…
	frag := c.get("/benchmarks/" + b + "/verdict")
	if p := frag.doc.Find(`[data-testid="verdict-pending"][data-polling="on"]`); p.Length() != 1 || !strings.Contains(p.Text(), "scoring the answers with") {
		t.Fatalf("fragment while scoring: %.400s", frag.body)
	}
	// …but not for ever: scores that never came are not measured yet.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET finished_at = now() - interval '10 minutes' WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	frag = c.get("/benchmarks/" + b + "/verdict")
	v := frag.doc.Find(`[data-testid="verdict"]`)
	if v.Length() != 1 || v.AttrOr("hx-trigger", "") != "" {
		t.Fatalf("finished fragment: %.500s", frag.body)
	}
	missing := func(id string) string {
		return strings.TrimSpace(v.Find(`[data-testid="verdict-` + id + `"] [data-testid="verdict-missing"]`).Text())
	}
	if got := missing("quality"); !strings.HasPrefix(got, "Not measured yet: scoring with ") {
		t.Errorf("quality: %q", got)
	}
	if got := missing("cost"); got != "Not measured: no price per hour for cpu-2c (administrators set it under Hardware)." {
		t.Errorf("cost: %q", got)
	}
	// 18 answers of 5 tokens in 6 s.
	if got := v.Find(`[data-testid="verdict-speed"] [data-testid="verdict-value"]`).Text(); got != "15.0 tokens/s" {
		t.Errorf("speed: %q", got)
	}
	if strings.Contains(v.Text(), "$0.000") || strings.Contains(v.Find(`[data-testid="verdict-quality"]`).Text(), "0.000") {
		t.Error("an unmeasured figure shows as 0")
	}
	if !strings.Contains(v.Text(), "One run finished, so there is nothing to compare it with") || v.Find(`[data-testid="verdict-compare"]`).Length() != 0 {
		t.Error("one run: no comparison link expected")
	}
	page = c.get("/benchmarks/" + b)
	if page.doc.Find(`details[data-testid="run-cards"]`).Length() != 1 {
		t.Error("the finished benchmark's cards are not folded")
	}
}

// The recommendation keeps a 0.6 % difference at 0.6 %, calls targets
// that differ by noise a tie, and says so in words.
func TestRecommendationExplainsTies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	price := 3.6
	b, runs := finishedBenchmark(t, e, tok, 40, &price, []fakeRun{
		// Right on 30 of 40; 400 tokens in 10 s.
		{model: "m/a", seconds: 10, tokens: 10, e2e: millis(100), score: func(i int) float64 { return float64(min(i%4, 1)) }},
		// Right on 31 of 40 (one more); 0.6 % faster.
		{model: "m/b", seconds: 9.94, tokens: 10, e2e: millis(100), score: func(i int) float64 {
			if i == 0 {
				return 1
			}
			return float64(min(i%4, 1))
		}},
	})
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get("/benchmarks/" + b + "/recommend")
	if page.status != 200 {
		t.Fatalf("recommendation: %d", page.status)
	}
	for _, id := range runs {
		row := page.doc.Find(fmt.Sprintf(`[data-testid="feasible-%d"]`, id))
		if rank := row.Find(`[data-testid="rec-rank"]`).Text(); rank != "=1" {
			t.Errorf("run %d ranked %q, want =1", id, rank)
		}
		if score := row.Find(`[data-testid="rec-score"]`).Text(); score != "1.000" {
			t.Errorf("run %d scored %s: noise magnified", id, score)
		}
	}
	why := page.text(fmt.Sprintf(`[data-testid="explain-%d"]`, runs[0]))
	// The speeds are the tested estimates (batch means over 40 requests):
	// 0.6 % apart in the whole runs, 4.9 % apart as estimated, within what
	// two single runs can tell apart.
	if want := "m/a is not significantly worse on quality, 4.9 % slower and 5.2 % more expensive: no difference from m/b established."; !strings.Contains(why, want) {
		t.Errorf("explanation %q, want %q", why, want)
	}
	if got := page.text(fmt.Sprintf(`[data-testid="explain-%d"]`, runs[1])); !strings.Contains(got, "Ranked first: best quality (0.775), fastest") ||
		!strings.Contains(got, "No difference from m/a established.") {
		t.Errorf("first's explanation %q", got)
	}
	if got := page.text(`[data-testid="rec-headline"]`); !strings.HasPrefix(got, "No difference established between m/b and m/a") {
		t.Errorf("headline %q", got)
	}
	if !strings.Contains(page.text(`[data-testid="score-explained"]`), "relative to the best") {
		t.Error("the page does not say how scores are scaled")
	}

	// Quality alone, with a tighter noise floor no other criterion: still a
	// tie (one item in 40 is not significant); the API says the same.
	api := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/recommendation?w_quality=1&w_speed=0&w_cost=0", tok, nil, "")
	feas := api.body["feasible"].([]any)
	for _, x := range feas {
		r := x.(map[string]any)
		if r["rank"] != 1.0 || len(r["tied_with"].([]any)) != 1 || !strings.Contains(r["explanation"].(string), "established") {
			t.Errorf("API ranked %v", r)
		}
	}
	if fmt.Sprint(api.body["ranked_on"]) != "[quality]" {
		t.Errorf("ranked on %v", api.body["ranked_on"])
	}

	// Speed alone: 0.6 % is under the 2 % noise, a tie too, and not 1 vs 0.
	speed := c.get("/benchmarks/" + b + "/recommend?w_quality=0&w_speed=1&w_cost=0")
	if n := speed.doc.Find(`[data-testid="rec-rank"]:contains("=1")`).Length(); n != 2 {
		t.Errorf("by speed, %d targets share the first rank", n)
	}
}

// uploadStarter stores the starter summaries as make run seeds them:
// shared, owned by the administrator.
func uploadStarter(t *testing.T, e *env, admin store.User) store.Dataset {
	t.Helper()
	d := starter.All[0]
	b, err := starter.Open(d)
	if err != nil {
		t.Fatal(err)
	}
	up := &ingest.Uploader{Store: e.store, Limits: dataset.DefaultLimits()}
	res, err := up.Upload(context.Background(), ingest.Source{File: bytes.NewReader(b)}, ingest.Request{Viewer: store.Viewer{UserID: admin.ID, Admin: true},
		FileName: d.File, Name: d.Name, Visibility: store.VisibilityShared, AllowDuplicate: true, Starter: true})
	if err != nil {
		t.Fatalf("starter: %v %v", err, res.Errors)
	}
	return res.Dataset
}

// A new installation's start page shows the first benchmark in three
// steps, says exactly what is missing, and launches it in one click
// through the benchmark service; the runs then show live until they finish.
func TestHomeFirstBenchmarkInThreeSteps(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	admin := e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")

	// Nothing there yet: every step says what is missing and where to fix.
	home := c.get("/")
	first := home.doc.Find(`[data-testid="first-steps"]`)
	if first.Length() != 1 {
		t.Fatal("no first steps on a new installation")
	}
	for id, want := range map[string]string{
		"dataset": "There is no starter dataset",
		"models":  "0 of the two models needed are registered: ask an administrator",
		"runtime": "No live agent serves the simulated runtime",
	} {
		if got := first.Find(`[data-testid="step-` + id + `"] [data-testid="step-fix"]`).Text(); !strings.Contains(got, want) {
			t.Errorf("step %s: %q lacks %q", id, got, want)
		}
	}
	if _, disabled := first.Find(`[data-testid="launch-first"]`).Attr("disabled"); !disabled {
		t.Error("the launch button works with steps missing")
	}
	r := c.post("/first-benchmark", nil)
	if r.status != 303 || r.header.Get("Location") != "/" {
		t.Fatalf("launch with steps missing: %d %s", r.status, r.header.Get("Location"))
	}
	if got := c.get("/").text(`[data-testid="flash"]`); !strings.Contains(got, "cannot be launched yet") || !strings.Contains(got, "no starter dataset") {
		t.Errorf("flash %q", got)
	}
	if e.countRows("benchmarks") != 0 {
		t.Fatal("a benchmark was created with steps missing")
	}

	// make run's starter dataset, models and sim agent.
	ds := uploadStarter(t, e, admin)
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
	home = c.get("/")
	first = home.doc.Find(`[data-testid="first-steps"]`)
	if first.Find(`.step-missing`).Length() != 0 {
		t.Fatalf("steps still missing: %s", first.Find(`.step-missing`).Text())
	}
	if got := first.Find(`[data-testid="step-models"]`).Text(); !strings.Contains(got, "Qwen/Qwen2.5-0.5B-Instruct and microsoft/Phi-3.5-mini-instruct") {
		t.Errorf("models step %q", got)
	}
	if got := first.Find(`[data-testid="step-runtime"]`).Text(); !strings.Contains(got, "Agent dev-sim serves it on cpu-8c") {
		t.Errorf("runtime step %q", got)
	}
	if got := first.Find(`[data-testid="launch-first"]`).Text(); got != "Launch Qwen2.5-0.5B-Instruct vs Phi-3.5-mini-instruct" {
		t.Errorf("launch button %q", got)
	}
	if got := home.text(`[data-testid="count-datasets"]`); got != "1 dataset" {
		t.Errorf("datasets at hand %q", got)
	}
	if got := home.text(`[data-testid="count-models"]`); got != "3 models registered" {
		t.Errorf("models at hand %q", got)
	}

	// One click: a benchmark with two runs of each model on the simulated
	// runtime, in the counterbalanced order A B B A.
	r = c.post("/first-benchmark", nil)
	loc := r.header.Get("Location")
	if r.status != 303 || !strings.HasPrefix(loc, "/benchmarks/") {
		t.Fatalf("launch: %d %s", r.status, loc)
	}
	bid := strings.TrimPrefix(loc, "/benchmarks/")
	var datasetID int64
	var scorer string
	if err := e.store.Pool().QueryRow(ctx, `SELECT dataset_id, manifest->>'scorer' FROM benchmarks WHERE id = $1`, bid).Scan(&datasetID, &scorer); err != nil {
		t.Fatal(err)
	}
	if datasetID != ds.ID || scorer != ds.DefaultScorer {
		t.Errorf("first benchmark on dataset %d scored %q, want %d %q", datasetID, scorer, ds.ID, ds.DefaultScorer)
	}
	var targets []string
	rows, err := e.store.Pool().Query(ctx, `SELECT m.name || ' ' || r.runtime || ' ' || r.hardware_profile || ' ' || r.state || ' ' || j.queue
		FROM runs r JOIN models m ON m.id = r.model_id JOIN river_job j ON j.id = r.river_job_id WHERE r.benchmark_id = $1 ORDER BY r.id`, bid)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		targets = append(targets, s)
	}
	if strings.Join(targets, "; ") != "Qwen/Qwen2.5-0.5B-Instruct sim cpu-8c queued cpu-8c_sim; microsoft/Phi-3.5-mini-instruct sim cpu-8c queued cpu-8c_sim; "+
		"microsoft/Phi-3.5-mini-instruct sim cpu-8c queued cpu-8c_sim; Qwen/Qwen2.5-0.5B-Instruct sim cpu-8c queued cpu-8c_sim" {
		t.Fatalf("first benchmark's runs: %v", targets)
	}
	page := c.get(loc)
	if !strings.Contains(page.text(`[data-testid="flash"]`), "first benchmark is launched: 4 runs") {
		t.Errorf("flash %q", page.text(`[data-testid="flash"]`))
	}

	// Home: running now, live; the first steps are gone.
	home = c.get("/")
	running := home.doc.Find(`#running`)
	if running.AttrOr("hx-get", "") != "/fragments/running" || running.AttrOr("hx-trigger", "") != "every 2s" || running.AttrOr("data-polling", "") != "on" ||
		running.Find(`[data-testid^="running-run-"]`).Length() != 4 {
		t.Fatalf("running section: %.400s", goquery.NewDocumentFromNode(running.Get(0)).Text())
	}
	if home.doc.Find(`[data-testid="first-steps"]`).Length() != 0 {
		t.Error("the first steps stay after the first benchmark")
	}
	poll := func() response {
		req := httptest.NewRequest(http.MethodGet, "/fragments/running", nil)
		req.Header.Set("HX-Request", "true")
		return c.do(req)
	}
	if f := poll(); f.doc.Find(`#running[data-polling="on"]`).Length() != 1 || f.header.Get("HX-Refresh") != "" || strings.Contains(f.body, "<html") {
		t.Fatalf("running fragment while running: %v %.300s", f.header, f.body)
	}
	// Everything finishes: the poll stops, and the page reloads to show
	// the benchmark among the recent ones.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET state = 'completed', finished_at = now() WHERE benchmark_id = $1`, bid); err != nil {
		t.Fatal(err)
	}
	f := poll()
	if _, polls := f.doc.Find(`#running`).Attr("hx-trigger"); polls || f.header.Get("HX-Refresh") != "true" || f.doc.Find(`[data-testid="nothing-running"]`).Length() != 1 {
		t.Fatalf("running fragment once finished: %v %.300s", f.header, f.body)
	}
	if c.get("/").doc.Find(`[data-testid="recent-`+bid+`"]`).Length() != 1 {
		t.Error("the finished first benchmark is not among the recent ones")
	}
}

// Administrators also see the agents and queues: agents online and stale,
// each queue's depth and the run waiting longest.
func TestHomeAgentHealthForAdmins(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	up := e.upload(tok, "d.jsonl", []byte(simpleJSONL), nil)
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "m/small", Quantization: "bf16"})
	for _, name := range []string{"cpu-1", "cpu-2"} {
		testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: name, Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE agents SET last_heartbeat_at = now() - interval '1 minute' WHERE name = 'cpu-2'`); err != nil {
		t.Fatal(err)
	}
	// Two runs queued: one on the agents' queue, one nobody serves.
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "gpu-gone", Runtimes: []string{"vllm"}, Profile: store.HardwareProfile{Slug: "h100-80gb-x1", GPUName: "NVIDIA H100", GPUCount: 1, GPUMemoryBytes: 80e9}})
	if _, err := e.store.Pool().Exec(ctx, `UPDATE agents SET state = 'offline' WHERE name = 'gpu-gone'`); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`{"name":"queued","dataset":%v,"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"},
		{"model":"m/small","runtime":"vllm","hardware":"h100-80gb-x1"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":8}}`, up.body["dataset_id"])
	res := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json")
	if res.status != 201 {
		t.Fatalf("create: %v", res.body)
	}
	waiting := int64(res.body["runs"].([]any)[1].(map[string]any)["run_id"].(float64))
	if _, err := e.store.Pool().Exec(ctx, `UPDATE river_job SET created_at = now() - interval '7 minutes'
		WHERE id = (SELECT river_job_id FROM runs WHERE id = $1)`, waiting); err != nil {
		t.Fatal(err)
	}

	adm := e.client()
	adm.signIn("root@example.com", "correct horse")
	home := adm.get("/")
	fleet := home.doc.Find(`[data-testid="agent-health"]`)
	if fleet.Length() != 1 {
		t.Fatal("no agents and queues for an administrator")
	}
	for id, want := range map[string]string{"agents-online": "1", "agents-stale": "1", "agents-other": "1"} {
		if got := fleet.Find(`[data-testid="` + id + `"]`).Text(); got != want {
			t.Errorf("%s = %q, want %s", id, got, want)
		}
	}
	queue := func(name, col string) string {
		return fleet.Find(`[data-testid="queue-` + name + `"] [data-testid="queue-` + col + `"]`).Text()
	}
	if queue("cpu-2c_sim", "available") != "1" || queue("h100-80gb-x1_vllm", "available") != "1" || queue("cpu-2c_sim", "running") != "0" {
		t.Errorf("queues: %s", fleet.Find(`[data-testid="queues"]`).Text())
	}
	oldest := strings.Join(strings.Fields(fleet.Find(`[data-testid="oldest-waiting"]`).Text()), " ")
	if !strings.HasPrefix(oldest, fmt.Sprintf("run %d, queued for 7 min", waiting)) || !strings.Contains(oldest, "m/small on vllm / h100-80gb-x1") ||
		!strings.Contains(oldest, "no agent serves it") {
		t.Errorf("oldest waiting run %q", oldest)
	}
	// The agents table stays, below; everyone's runs are running now.
	if home.doc.Find(`table[data-testid="agents"] tbody tr`).Length() != 3 || home.doc.Find(`#running [data-testid^="running-run-"]`).Length() != 2 {
		t.Error("the admin's agents table or running runs are missing")
	}

	// A user sees their runs, not the agents and queues.
	ada := e.client()
	ada.signIn("ada@example.com", "correct horse")
	uh := ada.get("/")
	if uh.doc.Find(`[data-testid="agent-health"]`).Length() != 0 {
		t.Error("a user sees the agents and queues")
	}
	if uh.doc.Find(`#running [data-testid^="running-run-"]`).Length() != 2 || uh.doc.Find(`[data-testid="first-steps"]`).Length() != 0 {
		t.Error("the user's start page")
	}
}

// With repeats the verdict decides on the spread between a target's runs:
// a target 10 % faster in each of three runs is significantly faster, one
// whose runs straddle the other's is not.
func TestVerdictOnRepeatedTargets(t *testing.T) {
	t.Parallel()
	price := 1.08
	score := func(i int) float64 { return float64(min(i%3, 1)) }
	run := func(model string, seconds float64) fakeRun {
		return fakeRun{model: model, seconds: seconds, tokens: 10, e2e: millis(100), score: score}
	}
	for k, tc := range []struct {
		name        string
		b           []float64
		significant bool
	}{
		{"10 % faster in every run", []float64{9.1, 9.0, 9.2}, true},
		{"runs that straddle", []float64{9.6, 10.5, 10.1}, false},
	} {
		e := newEnv(t)
		tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
		a, bm := fmt.Sprintf("m/a%d", k), fmt.Sprintf("m/b%d", k)
		b, runs := finishedBenchmark(t, e, tok, 30, &price, []fakeRun{
			run(a, 10), run(a, 10.2), run(a, 9.8), run(bm, tc.b[0]), run(bm, tc.b[1]), run(bm, tc.b[2])})
		if len(runs) != 6 {
			t.Fatalf("%s: %d runs for 2 targets × 3 repeats", tc.name, len(runs))
		}
		c := e.client()
		c.signIn("ada@example.com", "correct horse")
		page := c.get("/benchmarks/" + b)
		line := page.text(`[data-testid="verdict-speed"]`)
		if !strings.Contains(line, "between-run spread of 3 and 3 repeats") {
			t.Errorf("%s: speed line %q does not test on the repeats", tc.name, line)
		}
		if got := !strings.Contains(line, "not established"); got != tc.significant {
			t.Errorf("%s: speed line %q, want significant %v", tc.name, line, tc.significant)
		}
	}
}

// Rescoring adds a quality beside the first; the verdict keeps ranking by
// the benchmark's scorer until its owner chooses the other, from the
// verdict's form or the API, and only a scorer the runs were scored
// under may be chosen.
func TestVerdictScorerIsChosen(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	b, runs := finishedBenchmark(t, e, tok, 30, nil, []fakeRun{
		smallFake,
		{model: "m/big", seconds: 10, tokens: 10, e2e: millis(100), score: func(int) float64 { return 1 }},
	})
	// The second run rescored with contains: a quality of its own.
	ctx := context.Background()
	idx := make([]int32, 30)
	zeros := make([]*float64, 30)
	zero := 0.0
	for i := range idx {
		idx[i], zeros[i] = int32(i), &zero
	}
	if err := e.store.SaveScores(ctx, runs[1], idx, nil, zeros, store.RunQuality{Scorer: "contains", Scored: 30, Mean: &zero}); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get("/benchmarks/" + b)
	if !strings.Contains(page.text(`[data-testid="verdict-scorer"]`), "exact") ||
		page.doc.Find(`[data-testid="verdict-scorer-select"] option`).Length() != 2 ||
		page.text(`[data-testid="verdict-quality"] [data-testid="verdict-winner"]`) != "m/big" {
		t.Fatalf("before the choice: %q, winner %q", page.text(`[data-testid="verdict-scorer"]`), page.text(`[data-testid="verdict-quality"] [data-testid="verdict-winner"]`))
	}
	if r := c.post("/benchmarks/"+b+"/verdict-scorer", url.Values{"verdict_scorer": {"contains"}}); r.status != 303 && r.status != 302 && r.status != 200 {
		t.Fatalf("choose: %d", r.status)
	}
	page = c.get("/benchmarks/" + b)
	// m/small was scored under exact only: under contains the pair cannot
	// be ranked, so no run leads and the line says why
	// (docs/verdict.md#not-comparable).
	if !strings.Contains(page.text(`[data-testid="verdict-scorer"]`), "contains") ||
		!strings.Contains(page.text(`[data-testid="verdict-quality"]`), "not comparable: quality scored with exact vs contains") ||
		page.text(`[data-testid="verdict-quality"] [data-testid="verdict-winner"]`) != "" {
		t.Errorf("after the choice: %q / %q", page.text(`[data-testid="verdict-scorer"]`), page.text(`[data-testid="verdict-quality"]`))
	}
	bad := e.api(http.MethodPatch, "/api/v1/benchmarks/"+b, tok, strings.NewReader(`{"verdict_scorer":"bleu"}`), "application/json")
	if bad.status != 422 || !strings.Contains(fmt.Sprint(bad.body["errors"]), "verdict_scorer") {
		t.Errorf("an unknown scorer: %d %v", bad.status, bad.body)
	}
	back := e.api(http.MethodPatch, "/api/v1/benchmarks/"+b, tok, strings.NewReader(`{"verdict_scorer":""}`), "application/json")
	if back.status != 200 || back.body["verdict_scorer"] != "" {
		t.Errorf("back to the default: %d %v", back.status, back.body)
	}
}
