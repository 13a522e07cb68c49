package handlers_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/regress"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/handlers"
	"github.com/ruckus/ruckus/jobs"
)

// histItems is the items of the history fixture's dataset.
const histItems = 40

// histFixture is a dataset with runs finished at chosen times, each
// scored and checked for a regression by the score job as the server
// runs it.
type histFixture struct {
	e      *env
	tok    string
	ds     int64
	agents map[string]int64 // hardware profile → agent
	start  time.Time
}

func newHistFixture(t *testing.T) *histFixture {
	t.Helper()
	e := newEnv(t)
	ctx := context.Background()
	h := &histFixture{e: e, agents: map[string]int64{}, start: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	h.tok = e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	var ds strings.Builder
	for i := range histItems {
		fmt.Fprintf(&ds, "{\"custom_id\":\"c%03d\",\"prompt\":\"question %d\",\"reference\":\"%d\"}\n", i, i, i)
	}
	up := e.upload(h.tok, "hist.jsonl", []byte(ds.String()), nil)
	if up.status != 201 {
		t.Fatalf("upload: %d %v", up.status, up.body)
	}
	h.ds = int64(up.body["dataset_id"].(float64))
	for _, m := range []string{"m/a", "m/b"} {
		testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: m, Quantization: "bf16"})
	}
	for hw, price := range map[string]float64{"cpu-2c": 2, "gpu-1x": 10} {
		a := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "agent-" + hw, Profile: store.HardwareProfile{Slug: hw, CPUCores: 2}})
		h.agents[hw] = a.ID
		if err := e.store.SetHardwarePrice(ctx, hw, &price); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// spec is one run to make: its target, when it finished (days after the
// fixture's start), which items it answers right, its output tokens/s and
// its end-to-end latency scale (ms).
type spec struct {
	model, hw string
	day       float64
	right     func(i int) bool
	tps, e2e  float64
	// load is the manifest's load ("" for sequential).
	load string
	// tokens is each answer's length (0: 5 tokens).
	tokens int
}

// run makes a benchmark of one run as spec says, finishes it and works its
// score job (scoring with exact match, then the regression check).
func (h *histFixture) run(t *testing.T, s spec) (benchmarkID, runID int64) {
	t.Helper()
	benchmarkID, runs := h.repeated(t, s, []spec{s})
	return benchmarkID, runs[0]
}

// repeated makes a benchmark of s's target run len(reps) times (its
// manifest's repeats), the i-th run answering, at the speed and latency,
// as reps[i] says and finishing reps[i].day days after the fixture's
// start, each scored and checked as it finishes.
func (h *histFixture) repeated(t *testing.T, s spec, reps []spec) (benchmarkID int64, runIDs []int64) {
	t.Helper()
	e := h.e
	load := s.load
	if load == "" {
		load = `{"profile":"sequential"}`
	}
	manifest := fmt.Sprintf(`{"name":"%s on %s, day %g","dataset":%d,"targets":[{"model":%q,"runtime":"sim","hardware":%q}],
		"load":%s,"sampling":{"max_tokens":8},"scorer":"exact","repeats":%d}`, s.model, s.hw, s.day, h.ds, s.model, s.hw, load, len(reps))
	r := e.api(http.MethodPost, "/api/v1/benchmarks", h.tok, strings.NewReader(manifest), "application/json")
	if r.status != 201 {
		t.Fatalf("create: %d %v", r.status, r.body)
	}
	benchmarkID = int64(r.body["benchmark_id"].(float64))
	for i, x := range r.body["runs"].([]any) {
		id := int64(x.(map[string]any)["run_id"].(float64))
		h.finish(t, id, s.hw, reps[i])
		runIDs = append(runIDs, id)
	}
	return benchmarkID, runIDs
}

// finish has run runID answer as s says, ends it s.day days after the
// fixture's start and works its score job.
func (h *histFixture) finish(t *testing.T, runID int64, hw string, s spec) {
	t.Helper()
	jobID := h.end(t, runID, hw, s)
	w := &jobs.ScoreRunWorker{Scorer: &score.Service{Store: h.e.store}, Regressions: &regress.Checker{Store: h.e.store}, Stats: conclude.Keeper{Store: h.e.store}}
	if err := w.Work(context.Background(), &river.Job[jobs.ScoreRunArgs]{JobRow: &rivertype.JobRow{ID: jobID}, Args: jobs.ScoreRunArgs{RunID: runID}}); err != nil {
		t.Fatal(err)
	}
}

// end has run runID answer as s says and ends it s.day days after the
// fixture's start, unscored; it returns the River job that worked the run.
func (h *histFixture) end(t *testing.T, runID int64, hw string, s spec) int64 {
	t.Helper()
	ctx := context.Background()
	e := h.e
	var jobID int64
	if err := e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, runID).Scan(&jobID); err != nil {
		t.Fatal(err)
	}
	claim, err := e.store.ClaimRun(ctx, runID, h.agents[hw], jobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	var rs []store.ResultRecord
	// The answers (5 tokens each unless the spec says) end one every
	// tokens ÷ tps seconds, so the results' own timings give the summary's
	// output tokens/s: the steady-window figure every surface shows
	// (docs/metrics.md#throughput-output-tokenss-and-requestss) is the one the spec asks for, to within
	// a batch's rounding.
	tokens := cmp.Or(s.tokens, 5)
	start, every := time.Now(), time.Duration(float64(tokens)/s.tps*float64(time.Second))
	for i := range histItems {
		out := "wrong"
		if s.right(i) {
			out = fmt.Sprint(i)
		}
		// Latencies spread from 0.5 to 1 × the scale.
		e2e := time.Duration(s.e2e*(0.5+0.5*float64(i)/histItems)) * time.Millisecond
		done := start.Add(time.Duration(i+1) * every)
		rs = append(rs, store.ResultRecord{Result: jobs.Result{Idx: i, CustomID: fmt.Sprintf("c%03d", i), Status: jobs.StatusOK, Output: out,
			CompletionTokens: tokens, ContentEvents: tokens, TTFT: e2e / 4, E2E: e2e}, SentAt: done.Add(-e2e)})
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
	return jobID
}

// statusOf is the status of a GET with a token, whatever the body.
func statusOf(t *testing.T, e *env, path, tok string) int {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// keptTPS is the output tokens/s run_stats kept for a run (its steady
// window's mean): the figure the leaderboard, the history and every other
// surface show. It fails the test unless it is within 5 % of want, the
// speed the fixture was built to have.
func keptTPS(t *testing.T, e *env, runID int64, want float64) float64 {
	t.Helper()
	var tps float64
	if err := e.store.Pool().QueryRow(context.Background(), `SELECT tps FROM run_stats WHERE run_id = $1`, runID).Scan(&tps); err != nil {
		t.Fatal(err)
	}
	if math.Abs(tps/want-1) > 0.05 {
		t.Fatalf("run %d: its results give %g output tokens/s, the fixture wants %g", runID, tps, want)
	}
	return tps
}

func below(n int) func(int) bool { return func(i int) bool { return i < n } }

// runIDs are the run_id of each row of a JSON list.
func runIDs(t *testing.T, rows any) []int64 {
	t.Helper()
	var out []int64
	for _, r := range rows.([]any) {
		out = append(out, int64(r.(map[string]any)["run_id"].(float64)))
	}
	return out
}

func eq(a, b []int64) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func TestLeaderboardRowsFiltersSortsAndPages(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	e := h.e
	_, r1 := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 0, right: below(36), tps: 100, e2e: 200})
	_, r2 := h.run(t, spec{model: "m/b", hw: "cpu-2c", day: 10, right: below(20), tps: 300, e2e: 100})
	_, r3 := h.run(t, spec{model: "m/a", hw: "gpu-1x", day: 20, right: below(28), tps: 200, e2e: 150})
	base := fmt.Sprintf("/api/v1/datasets/%d/leaderboard", h.ds)
	get := func(query string) apiResult {
		t.Helper()
		return e.api(http.MethodGet, base+"?"+query, h.tok, nil, "")
	}
	for _, tc := range []struct {
		query string
		want  []int64
	}{
		{"", []int64{r1, r3, r2}}, // quality by default: 0.9, 0.7, 0.5
		{"sort=quality", []int64{r1, r3, r2}},
		{"sort=speed", []int64{r2, r3, r1}},   // 300, 200, 100 tokens/s
		{"sort=latency", []int64{r2, r3, r1}}, // p95 97.5, 146, 195 ms
		{"sort=cost", []int64{r2, r1, r3}},    // 2 $/h at 300 and 100 tokens/s, 10 $/h at 200
		{"sort=date", []int64{r3, r2, r1}},
		{"model=m/a", []int64{r1, r3}},
		{"hardware=gpu-1x", []int64{r3}},
		{"runtime=sim&model=m/b", []int64{r2}},
		{"from=2026-03-06&to=2026-03-16", []int64{r2}},
		{"from=2026-03-11", []int64{r3, r2}}, // r2 finished on the 11th at noon: the day is included
		{"model=m/c", nil},
	} {
		res := get(tc.query)
		if res.status != 200 {
			t.Fatalf("%s: %d %v", tc.query, res.status, res.body)
		}
		got := runIDs(t, res.body["rows"])
		if !eq(got, tc.want) {
			t.Errorf("%s: rows %v, want %v", tc.query, got, tc.want)
		}
	}
	// The figures of a row: quality from scoring, speed from the steady
	// window (run_stats), latency from the summary, cost as price ÷
	// (tokens/s × 3600) × 10⁶.
	res := get("model=m/b")
	row := res.body["rows"].([]any)[0].(map[string]any)
	if q := row["quality"].(float64); math.Abs(q-20.0/histItems) > 1e-9 {
		t.Errorf("quality %v, want %v", q, 20.0/histItems)
	}
	tps := keptTPS(t, e, r2, 300)
	if c, want := row["cost_per_1m_tokens"].(float64), 2/(tps*3600)*1e6; math.Abs(c-want) > 1e-9 {
		t.Errorf("cost %v, want %v", c, want)
	}
	if row["output_tokens_per_s"].(float64) != tps || row["e2e_p95_ms"].(float64) != 97.5 || row["hardware"] != "cpu-2c" || row["model"] != "m/b" {
		t.Errorf("row %v", row)
	}

	// Keyset pages of one row, in the sort's order, then no next page.
	var paged []int64
	query := "sort=cost&limit=1"
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("the pages do not end")
		}
		res := get(query)
		if res.status != 200 {
			t.Fatalf("%s: %d %v", query, res.status, res.body)
		}
		paged = append(paged, runIDs(t, res.body["rows"])...)
		next, _ := res.body["next"].(string)
		if next == "" {
			break
		}
		query = "sort=cost&limit=1&after=" + url.QueryEscape(next)
	}
	if !eq(paged, []int64{r2, r1, r3}) {
		t.Errorf("pages %v, want %v", paged, []int64{r2, r1, r3})
	}

	// Bad parameters are named.
	for query, path := range map[string]string{"sort=best": "sort", "from=2026-13-01": "from", "limit=0": "limit", "limit=501": "limit",
		"after=x": "after", "from=2026-03-10&to=2026-03-01": "to", "model=" + strings.Repeat("m", 201): "model", "runtime=a%00b": "runtime"} {
		res := get(query)
		errs, _ := res.body["errors"].([]any)
		if res.status != 422 || len(errs) == 0 || errs[0].(map[string]any)["path"] != path {
			t.Errorf("%s: %d %v, want 422 naming %s", query, res.status, res.body, path)
		}
	}

	// The page: rows in order, a model linking to its history, and the
	// table alone for htmx.
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get(fmt.Sprintf("/datasets/%d/leaderboard?sort=speed", h.ds))
	if page.status != 200 {
		t.Fatalf("page: %d", page.status)
	}
	var order []string
	page.doc.Find(`[data-testid="leaderboard"] tbody tr`).Each(func(_ int, s *goquery.Selection) { order = append(order, s.AttrOr("data-testid", "")) })
	if want := fmt.Sprintf("[leaderboard-%d leaderboard-%d leaderboard-%d]", r2, r3, r1); fmt.Sprint(order) != want {
		t.Errorf("page rows %v, want %s", order, want)
	}
	if href, _ := page.doc.Find(fmt.Sprintf(`[data-testid="leaderboard-%d"] [data-testid="history-link"]`, r1)).Attr("href"); !strings.Contains(href, "model=m%2Fa") {
		t.Errorf("history link %q", href)
	}
	req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/datasets/%d/leaderboard?hardware=gpu-1x", h.ds), nil)
	req.Header.Set("HX-Request", "true")
	req.Header.Set("HX-Target", "leaderboard")
	frag := c.do(req)
	if frag.status != 200 || strings.Contains(frag.body, "<html") || frag.doc.Find(`[data-testid="leaderboard"] tbody tr`).Length() != 1 {
		t.Errorf("fragment: %d, %d rows, whole page %v", frag.status, frag.doc.Find(`[data-testid="leaderboard"] tbody tr`).Length(), strings.Contains(frag.body, "<html"))
	}

	// Another user sees neither the private dataset nor its leaderboard.
	bob := e.token(e.createUser("bob@example.com", "correct horse", store.RoleUser))
	if res := e.api(http.MethodGet, base, bob, nil, ""); res.status != 404 {
		t.Errorf("bob: %d", res.status)
	}
}

// Sorted by speed, latency or cost, the leaderboard ranks only runs
// whose answers are within 2× in length of each other, as every claim
// compares them (docs/verdict.md#not-comparable): a run whose answers are
// 4× as long is listed below the ranking, on the page (in the reader's
// language) and in the API, with the ranked run it cannot be set
// against. Sorted by quality, it is ranked with the others.
func TestLeaderboardLeavesOutRunsOfOtherLengths(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	e := h.e
	_, r1 := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 0, right: below(36), tps: 100, e2e: 200})
	_, r2 := h.run(t, spec{model: "m/b", hw: "cpu-2c", day: 1, right: below(20), tps: 300, e2e: 100})
	_, long := h.run(t, spec{model: "m/b", hw: "gpu-1x", day: 2, right: below(28), tps: 1000, e2e: 150, tokens: 20})
	base := fmt.Sprintf("/api/v1/datasets/%d/leaderboard", h.ds)
	for _, sort := range []string{"speed", "latency", "cost"} {
		res := e.api(http.MethodGet, base+"?sort="+sort, h.tok, nil, "")
		if got := runIDs(t, res.body["rows"]); res.status != 200 || len(got) != 2 || slices.Contains(got, long) {
			t.Errorf("by %s: %d rows %v, want %d and %d ranked without %d", sort, res.status, got, r1, r2, long)
		}
		out, _ := res.body["left_out"].([]any)
		want := fmt.Sprintf("not ranked with run %d: mean output length 20.0 vs 5.0 tokens (more than 2× apart)", r1)
		if len(out) != 1 || out[0].(map[string]any)["run_id"] != float64(long) || out[0].(map[string]any)["reason"] != want {
			t.Errorf("by %s: left out %v, want run %d: %q", sort, out, long, want)
		}
	}
	res := e.api(http.MethodGet, base+"?sort=quality", h.tok, nil, "")
	if got, out := runIDs(t, res.body["rows"]), res.body["left_out"].([]any); len(got) != 3 || len(out) != 0 {
		t.Errorf("by quality: rows %v, left out %v; want all three ranked", got, out)
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.getIn(fmt.Sprintf("/datasets/%d/leaderboard?sort=speed", h.ds), "de")
	if n := page.doc.Find(`[data-testid="leaderboard"] tbody tr`).Length(); page.status != 200 || n != 2 {
		t.Fatalf("page: %d, %d rows", page.status, n)
	}
	want := fmt.Sprintf("Lauf %d (m/b): nicht mit Lauf %d gereiht: mittlere Ausgabelänge 20,0 gegen 5,0 Tokens (mehr als 2-fach auseinander)", long, r1)
	if got := strings.Join(strings.Fields(page.text(fmt.Sprintf(`[data-testid="leaderboard-left-out"] [data-testid="left-out-%d"]`, long))), " "); got != want {
		t.Errorf("left out on the page: %q, want %q", got, want)
	}
	if intro := page.text(`[data-testid="leaderboard-left-out"] p`); !strings.Contains(intro, "jeweils höchstens 2-fach auseinanderliegen") {
		t.Errorf("the left-out list's introduction: %q", intro)
	}
	if quality := c.get(fmt.Sprintf("/datasets/%d/leaderboard?sort=quality", h.ds)); quality.doc.Find(`[data-testid="leaderboard-left-out"]`).Length() != 0 {
		t.Error("sorted by quality, runs are listed as left out")
	}
}

func TestHistoryChartsAModelOverTime(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	e := h.e
	_, r1 := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 0, right: below(36), tps: 100, e2e: 200})
	_, r2 := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 7, right: below(36), tps: 120, e2e: 200})
	h.run(t, spec{model: "m/b", hw: "cpu-2c", day: 3, right: below(20), tps: 300, e2e: 100})
	_, r3 := h.run(t, spec{model: "m/a", hw: "gpu-1x", day: 14, right: below(36), tps: 200, e2e: 150})

	res := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/history?model=m/a&metric=throughput", h.ds), h.tok, nil, "")
	if res.status != 200 {
		t.Fatalf("history: %d %v", res.status, res.body)
	}
	points := res.body["points"].([]any)
	if got := runIDs(t, points); !eq(got, []int64{r1, r2, r3}) {
		t.Fatalf("points %v, want %v oldest first", got, []int64{r1, r2, r3})
	}
	for i, run := range []struct {
		id  int64
		tps float64
	}{{r1, 100}, {r2, 120}, {r3, 200}} {
		if v, want := points[i].(map[string]any)["value"].(float64), keptTPS(t, e, run.id, run.tps); v != want {
			t.Errorf("point %d: %v, want %v (run_stats' steady window)", i, v, want)
		}
	}
	if res := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/history", h.ds), h.tok, nil, ""); res.status != 422 {
		t.Errorf("without a model: %d", res.status)
	}

	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get(fmt.Sprintf("/datasets/%d/history?model=m/a&metric=latency", h.ds))
	if page.status != 200 {
		t.Fatalf("page: %d", page.status)
	}
	// One series per runtime × hardware, every point a link to its run.
	var links []string
	page.doc.Find(`[data-testid="chart-history"] [data-testid="chart-point-link"]`).Each(func(_ int, s *goquery.Selection) {
		links = append(links, s.AttrOr("href", ""))
	})
	want := []string{fmt.Sprintf("/runs/%d", r1), fmt.Sprintf("/runs/%d", r2), fmt.Sprintf("/runs/%d", r3)}
	if fmt.Sprint(links) != fmt.Sprint(want) {
		t.Errorf("chart links %v, want %v", links, want)
	}
	if n := page.doc.Find(`[data-testid="chart-history"] polyline`).Length(); n != 2 {
		t.Errorf("%d lines, want 2 (sim / cpu-2c and sim / gpu-1x)", n)
	}
	if v := page.text(fmt.Sprintf(`[data-testid="point-%d"] [data-testid="point-value"]`, r3)); v != "146 ms" {
		t.Errorf("r3's p95 shown as %q", v)
	}
	if none := c.get(fmt.Sprintf("/datasets/%d/history", h.ds)); none.status != 200 || none.doc.Find(`[data-testid="history-choose"]`).Length() != 1 {
		t.Errorf("without a model: %d", none.status)
	}
}

func TestRegressionFlaggedAgainstTheTargetsPreviousRun(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	e := h.e
	// m/a on cpu-2c: all right, then half right (quality), then as good
	// but at half the speed and twice the latency.
	_, first := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 0, right: below(40), tps: 100, e2e: 200})
	worseBench, worse := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 1, right: below(20), tps: 100, e2e: 200})
	_, slower := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 2, right: below(20), tps: 50, e2e: 400})
	// m/b on cpu-2c: the same twice; another target in between does not count.
	_, same1 := h.run(t, spec{model: "m/b", hw: "cpu-2c", day: 0, right: below(30), tps: 100, e2e: 200})
	h.run(t, spec{model: "m/b", hw: "gpu-1x", day: 1, right: below(5), tps: 10, e2e: 900})
	_, same2 := h.run(t, spec{model: "m/b", hw: "cpu-2c", day: 2, right: below(30), tps: 100.5, e2e: 200})

	getRun := func(id int64) map[string]any {
		t.Helper()
		res := e.api(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", id), h.tok, nil, "")
		if res.status != 200 {
			t.Fatalf("run %d: %d", id, res.status)
		}
		return res.body
	}
	for _, id := range []int64{first, same1, same2} {
		if g := getRun(id)["regression"]; g != nil {
			t.Errorf("run %d flagged: %v", id, g)
		}
	}
	g, _ := getRun(worse)["regression"].(map[string]any)
	if g == nil || g["metric"] != "quality" || int64(g["against_run_id"].(float64)) != first {
		t.Fatalf("worse run: regression %v, want quality against %d", g, first)
	}
	if d := g["delta"].(float64); math.Abs(d-(-0.5)) > 1e-9 {
		t.Errorf("delta %v, want -0.5 (20 of 40 items lost)", d)
	}
	if p, _ := g["p_value"].(float64); !(p > 0 && p < 0.05) {
		t.Errorf("p %v, want significant", g["p_value"])
	}
	// Against the worse run, the slower one has the same quality, but half
	// the throughput and twice the latency; its p95 over 40 requests has no
	// 95 % interval (59 are needed), so only the throughput is flagged.
	regs, _ := getRun(slower)["regressions"].([]any)
	var metrics []string
	for _, r := range regs {
		m := r.(map[string]any)
		metrics = append(metrics, m["metric"].(string))
		if p, _ := m["p_value"].(float64); int64(m["against_run_id"].(float64)) != worse || !(p >= 0 && p < 0.05) {
			t.Errorf("slower: %v", m)
		}
	}
	if fmt.Sprint(metrics) != "[throughput]" {
		t.Errorf("slower run's regressions %v, want throughput", metrics)
	}

	// Shown on the run page, the benchmark page and the leaderboard.
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	if p := c.get(fmt.Sprintf("/runs/%d", worse)); p.doc.Find(`[data-testid="regression"]`).Length() != 1 || p.doc.Find(`[data-testid="regression-detail"]`).Length() != 1 {
		t.Errorf("run page: %d badges", p.doc.Find(`[data-testid="regression"]`).Length())
	}
	if p := c.get(fmt.Sprintf("/runs/%d", same2)); p.doc.Find(`[data-testid="regression"]`).Length() != 0 {
		t.Error("a run as good as the previous one is flagged on its page")
	}
	if p := c.get(fmt.Sprintf("/benchmarks/%d", worseBench)); p.doc.Find(fmt.Sprintf(`[data-testid="run-%d"] [data-testid="regression"]`, worse)).Length() != 1 {
		t.Error("benchmark page: no regression badge")
	}
	lb := c.get(fmt.Sprintf("/datasets/%d/leaderboard?sort=date", h.ds))
	for id, want := range map[int64]int{worse: 1, slower: 1, same2: 0, first: 0} {
		if n := lb.doc.Find(fmt.Sprintf(`[data-testid="leaderboard-%d"] [data-testid="regression"]`, id)).Length(); n != want {
			t.Errorf("leaderboard row %d: %d badges, want %d", id, n, want)
		}
	}
	res := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/leaderboard?sort=date&model=m/a", h.ds), h.tok, nil, "")
	for _, r := range res.body["rows"].([]any) {
		row := r.(map[string]any)
		if flagged := row["regression"] != nil; flagged != (int64(row["run_id"].(float64)) != first) {
			t.Errorf("leaderboard API row %v: regression %v", row["run_id"], row["regression"])
		}
	}
}

func TestRecommendationAcrossADataset(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	e := h.e
	// Three benchmarks; r1 answers right every item r2 and r3 do, and more.
	b1, r1 := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 0, right: below(36), tps: 100, e2e: 200})
	_, r2 := h.run(t, spec{model: "m/b", hw: "cpu-2c", day: 1, right: below(20), tps: 300, e2e: 100})
	_, r3 := h.run(t, spec{model: "m/a", hw: "gpu-1x", day: 2, right: below(28), tps: 200, e2e: 150})

	res := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/recommendation?w_quality=1&w_speed=0&w_cost=0", h.ds), h.tok, nil, "")
	if res.status != 200 {
		t.Fatalf("recommendation: %d %v", res.status, res.body)
	}
	feasible := res.body["feasible"].([]any)
	if got := runIDs(t, feasible); len(got) != 3 || got[0] != r1 {
		t.Fatalf("feasible %v: want all three runs, %d first on quality", got, r1)
	}
	res = e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/recommendation?w_quality=0&w_speed=1&w_cost=0", h.ds), h.tok, nil, "")
	if got := runIDs(t, res.body["feasible"]); got[0] != r2 {
		t.Errorf("on speed %v: want %d first", got, r2)
	}
	// The benchmark's own recommendation sees only its run.
	own := e.api(http.MethodGet, fmt.Sprintf("/api/v1/benchmarks/%d/recommendation", b1), h.tok, nil, "")
	if got := runIDs(t, own.body["feasible"]); !eq(got, []int64{r1}) {
		t.Errorf("benchmark recommendation %v", got)
	}
	if bad := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/recommendation?w_speed=-1", h.ds), h.tok, nil, ""); bad.status != 422 {
		t.Errorf("negative weight: %d", bad.status)
	}

	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get(fmt.Sprintf("/datasets/%d/recommend", h.ds))
	if page.status != 200 || page.doc.Find(`[data-testid="dataset-scope"]`).Length() != 1 {
		t.Fatalf("page: %d", page.status)
	}
	for _, id := range []int64{r1, r2, r3} {
		if page.doc.Find(fmt.Sprintf(`[data-testid="feasible-%d"]`, id)).Length() != 1 {
			t.Errorf("run %d not on the dataset's recommendation page", id)
		}
	}
}

func TestBenchmarkRenameShareAndSoftDelete(t *testing.T) {
	t.Parallel()
	// Live fragments shared for a minute: a reader must not get the owner's.
	e := newEnv(t, func(d *handlers.Deps) { d.LiveFragmentTTL = time.Minute })
	ctx := context.Background()
	ada := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	bob := e.token(e.createUser("bob@example.com", "correct horse", store.RoleUser))
	root := e.token(e.createUser("root@example.com", "correct horse", store.RoleAdmin))
	bID, runID := runWithResults(t, e, ada, 12, func(i int) string { return fmt.Sprint(i) })
	bPath := "/api/v1/benchmarks/" + bID
	patch := func(tok, body string) apiResult {
		t.Helper()
		return e.api(http.MethodPatch, bPath, tok, strings.NewReader(body), "application/json")
	}

	// Private: bob cannot see it, so cannot change it either.
	if r := e.api(http.MethodGet, bPath, bob, nil, ""); r.status != 404 {
		t.Fatalf("bob reads a private benchmark: %d", r.status)
	}
	if r := patch(bob, `{"name":"mine now"}`); r.status != 404 {
		t.Errorf("bob renames a private benchmark: %d", r.status)
	}
	// Bad changes are named.
	for body, path := range map[string]string{`{"name":"  "}`: "name", `{"visibility":"public"}`: "visibility", `{}`: "name",
		`{"name":"` + strings.Repeat("x", 201) + `"}`: "name", `{"name":"a\u0000b"}`: "name"} {
		r := patch(ada, body)
		errs, _ := r.body["errors"].([]any)
		if r.status != 422 || len(errs) == 0 || errs[0].(map[string]any)["path"] != path {
			t.Errorf("%s: %d %v, want 422 naming %s", body, r.status, r.body, path)
		}
	}
	if r := patch(ada, `{"owner":"bob"}`); r.status != 422 {
		t.Errorf("an unknown field: %d", r.status)
	}
	if r := patch(ada, `{"name":" Nightly  ","visibility":"shared"}`); r.status != 200 || r.body["name"] != "Nightly" || r.body["visibility"] != "shared" {
		t.Fatalf("rename and share: %d %v", r.status, r.body)
	}

	// Shared: bob reads the benchmark, its runs, results and exports, and
	// finds it in his list; he changes nothing.
	r := e.api(http.MethodGet, bPath, bob, nil, "")
	if r.status != 200 || r.body["name"] != "Nightly" || r.body["writable"] != false {
		t.Fatalf("bob reads the shared benchmark: %d %v", r.status, r.body)
	}
	for _, path := range []string{fmt.Sprintf("/api/v1/runs/%d", runID), fmt.Sprintf("/api/v1/runs/%d/results?format=csv", runID),
		bPath + "/export?format=csv", bPath + "/recommendation"} {
		if st := statusOf(t, e, path, bob); st != 200 {
			t.Errorf("bob GET %s: %d", path, st)
		}
	}
	list := e.api(http.MethodGet, "/api/v1/benchmarks", bob, nil, "")
	if bs := list.body["benchmarks"].([]any); len(bs) != 1 || bs[0].(map[string]any)["visibility"] != "shared" {
		t.Errorf("bob's list: %v", list.body)
	}
	if r := patch(bob, `{"name":"mine now"}`); r.status != 403 {
		t.Errorf("bob renames a shared benchmark: %d", r.status)
	}
	if r := e.api(http.MethodDelete, bPath, bob, nil, ""); r.status != 403 {
		t.Errorf("bob deletes a shared benchmark: %d", r.status)
	}
	if r := e.api(http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/cancel", runID), bob, nil, ""); r.status != 404 {
		t.Errorf("bob cancels a shared benchmark's run: %d", r.status)
	}
	var state string
	if err := e.store.Pool().QueryRow(ctx, `SELECT state FROM runs WHERE id = $1`, runID).Scan(&state); err != nil || state != "running" {
		t.Fatalf("the run is %q after bob's cancel (%v)", state, err)
	}
	// On the page bob gets no controls; ada does, and her form renames.
	bc, ac := e.client(), e.client()
	bc.signIn("bob@example.com", "correct horse")
	ac.signIn("ada@example.com", "correct horse")
	if p := bc.get("/benchmarks/" + bID); p.status != 200 || p.doc.Find(`[data-testid="manage-benchmark"], [data-testid="cancel-benchmark"], form[action*="/cancel"]`).Length() != 0 {
		t.Errorf("bob's page: %d, controls %d", p.status, p.doc.Find(`[data-testid="manage-benchmark"], [data-testid="cancel-benchmark"], form[action*="/cancel"]`).Length())
	}
	for i := range 2 { // a fresh render, then one the owner's poll may have kept
		if f := bc.get("/benchmarks/" + bID + "/runs"); f.status != 200 || f.doc.Find(`form[action*="/cancel"]`).Length() != 0 {
			t.Errorf("bob's runs fragment %d: %d, cancel buttons %d", i, f.status, f.doc.Find(`form[action*="/cancel"]`).Length())
		}
		if f := ac.get("/benchmarks/" + bID + "/runs"); f.doc.Find(`form[action*="/cancel"]`).Length() != 1 {
			t.Errorf("ada's runs fragment %d: %d cancel buttons", i, f.doc.Find(`form[action*="/cancel"]`).Length())
		}
	}
	if p := bc.get(fmt.Sprintf("/runs/%d", runID)); p.status != 200 || p.doc.Find(`[data-testid="rescore"]`).Length() != 0 {
		t.Errorf("bob's run page: %d, rescore form %d", p.status, p.doc.Find(`[data-testid="rescore"]`).Length())
	}
	if p := bc.post("/benchmarks/"+bID+"/rename", url.Values{"name": {"bob's"}}); p.status != 403 {
		t.Errorf("bob's rename form: %d", p.status)
	}
	p := ac.get("/benchmarks/" + bID)
	if p.doc.Find(`[data-testid="manage-benchmark"]`).Length() != 1 {
		t.Fatal("ada's page has no controls")
	}
	if p := ac.post("/benchmarks/"+bID+"/rename", url.Values{"name": {"Weekly"}}); p.status != 303 {
		t.Fatalf("ada's rename form: %d", p.status)
	}
	if name := ac.get("/benchmarks/" + bID).text(`[data-testid="benchmark-name"]`); name != "Weekly" {
		t.Errorf("renamed to %q", name)
	}
	if p := ac.post("/benchmarks/"+bID+"/visibility", url.Values{"visibility": {"everyone"}}); p.status != 422 {
		t.Errorf("a bad visibility from the form: %d", p.status)
	}
	// Administrators may change anyone's.
	if r := patch(root, `{"visibility":"private"}`); r.status != 200 {
		t.Errorf("admin makes it private: %d %v", r.status, r.body)
	}
	if r := e.api(http.MethodGet, bPath, bob, nil, ""); r.status != 404 {
		t.Errorf("bob reads it once private again: %d", r.status)
	}

	// Deleting waits for the running run; then it vanishes and its data stays.
	if r := e.api(http.MethodDelete, bPath, ada, nil, ""); r.status != 409 {
		t.Errorf("delete while running: %d", r.status)
	}
	if r := e.api(http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/cancel", runID), ada, nil, ""); r.status != 200 {
		t.Fatalf("cancel: %d %v", r.status, r.body)
	}
	if p := ac.post("/benchmarks/"+bID+"/delete", nil); p.status != 303 {
		t.Fatalf("delete form: %d", p.status)
	}
	for _, path := range []string{bPath, fmt.Sprintf("/api/v1/runs/%d", runID), fmt.Sprintf("/api/v1/runs/%d/results?format=csv", runID)} {
		for who, tok := range map[string]string{"ada": ada, "admin": root} {
			if st := statusOf(t, e, path, tok); st != 404 {
				t.Errorf("%s GET %s after delete: %d", who, path, st)
			}
		}
	}
	if p := ac.get("/benchmarks/" + bID); p.status != 404 {
		t.Errorf("the deleted benchmark's page: %d", p.status)
	}
	if list := e.api(http.MethodGet, "/api/v1/benchmarks", ada, nil, ""); len(list.body["benchmarks"].([]any)) != 0 {
		t.Errorf("ada's list after delete: %v", list.body)
	}
	var results int
	var deleted bool
	if err := e.store.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM results WHERE run_id = $2), deleted_at IS NOT NULL FROM benchmarks WHERE id = $1`,
		bID, runID).Scan(&results, &deleted); err != nil || results != 12 || !deleted {
		t.Errorf("after delete: %d results kept, deleted_at set %v (%v)", results, deleted, err)
	}
	if r := e.api(http.MethodDelete, bPath, ada, nil, ""); r.status != 404 {
		t.Errorf("delete again: %d", r.status)
	}
}

// The leaderboard ranks quality within one scorer identity (by default
// the one most runs were scored under), says so, shows each row's
// scorer, and lists an imported run with its quality and no speed.
func TestLeaderboardRanksPerScorer(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	e, ctx := h.e, context.Background()
	_, a := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 1, right: below(30), tps: 100, e2e: 200})
	_, b := h.run(t, spec{model: "m/b", hw: "cpu-2c", day: 2, right: below(20), tps: 120, e2e: 200})
	// Rescoring b with another scorer adds its quality beside the first.
	w := &jobs.ScoreRunWorker{Scorer: &score.Service{Store: e.store}, Stats: conclude.Keeper{Store: e.store}}
	if err := w.Work(ctx, &river.Job[jobs.ScoreRunArgs]{JobRow: &rivertype.JobRow{ID: 1}, Args: jobs.ScoreRunArgs{RunID: b, Scorer: "contains"}}); err != nil {
		t.Fatal(err)
	}
	// An imported run: quality, no speed.
	var lines strings.Builder
	for i := range histItems {
		fmt.Fprintf(&lines, "{\"custom_id\":\"item-%d\",\"output\":\"%d\"}\n", i+1, i)
	}
	body, ct := multipartBody(t, "out.jsonl", []byte(lines.String()), map[string]string{"model": "m/a", "scorer": "exact", "name": "outside"})
	imp := e.api(http.MethodPost, fmt.Sprintf("/api/v1/datasets/%d/imports", h.ds), h.tok, body, ct)
	if imp.status != 201 {
		t.Fatalf("import: %d %v", imp.status, imp.body)
	}
	imported := int64(imp.body["run_id"].(float64))
	if err := w.Work(ctx, &river.Job[jobs.ScoreRunArgs]{JobRow: &rivertype.JobRow{ID: 2}, Args: jobs.ScoreRunArgs{RunID: imported}}); err != nil {
		t.Fatal(err)
	}

	lb := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/leaderboard?sort=quality", h.ds), h.tok, nil, "")
	if lb.status != 200 || !eq(runIDs(t, lb.body["rows"]), []int64{imported, a, b}) {
		t.Fatalf("by quality under exact: %d %v", lb.status, lb.body)
	}
	for _, r := range lb.body["rows"].([]any) {
		row := r.(map[string]any)
		if row["scorer"] != "exact" {
			t.Errorf("row %v ranked under %v", row["run_id"], row["scorer"])
		}
		if int64(row["run_id"].(float64)) == imported && (row["output_tokens_per_s"] != nil || row["quality"] != 1.0) {
			t.Errorf("imported row %v: want quality 1 and no speed", row)
		}
		if int64(row["run_id"].(float64)) == b && row["quality"] != 0.5 {
			t.Errorf("b's quality under exact %v, want 0.5 (its contains quality is another identity)", row["quality"])
		}
	}
	lb = e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/leaderboard?sort=quality&scorer=contains", h.ds), h.tok, nil, "")
	if lb.status != 200 || !eq(runIDs(t, lb.body["rows"]), []int64{b}) || lb.body["rows"].([]any)[0].(map[string]any)["scorer"] != "contains" {
		t.Fatalf("under contains: %d %v", lb.status, lb.body)
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get(fmt.Sprintf("/datasets/%d/leaderboard", h.ds))
	if page.status != 200 || !strings.Contains(page.text(`[data-testid="ranked-under"]`), "exact") ||
		page.doc.Find(`[data-testid="filter-scorer"] option[value="contains"]`).Length() != 1 ||
		page.text(fmt.Sprintf(`[data-testid="leaderboard-%d"] [data-testid="lb-scorer"]`, a)) != "exact" {
		t.Errorf("leaderboard page: %d %q", page.status, page.text(`[data-testid="ranked-under"]`))
	}
}

// A regression of a shared benchmark's run against the owner's private
// run is not shown: a flag points only at a run every reader may see.
func TestRegressionPointsOnlyAtAVisibleRun(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	e := h.e
	h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 1, right: below(40), tps: 100, e2e: 200})
	bench, worse := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 2, right: below(10), tps: 100, e2e: 200})
	regressed := func() any {
		t.Helper()
		res := e.api(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", worse), h.tok, nil, "")
		if res.status != 200 {
			t.Fatalf("run: %d", res.status)
		}
		return res.body["regression"]
	}
	if regressed() == nil {
		t.Fatal("a private run's regression against its owner's private run is not shown")
	}
	share := e.api(http.MethodPatch, fmt.Sprintf("/api/v1/benchmarks/%d", bench), h.tok, strings.NewReader(`{"visibility":"shared"}`), "application/json")
	if share.status != 200 {
		t.Fatalf("share: %d %v", share.status, share.body)
	}
	if g := regressed(); g != nil {
		t.Errorf("shared run flagged against a private one: %v", g)
	}
}

// Sorted by speed, the leaderboard ranks within one load identity — the
// one most runs share unless another is chosen — and shows each run's
// load; a run measured under another load is not ranked beside them.
func TestLeaderboardRanksSpeedWithinOneLoad(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	_, seqA := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 0, right: below(20), tps: 100, e2e: 200})
	_, seqB := h.run(t, spec{model: "m/b", hw: "cpu-2c", day: 1, right: below(20), tps: 50, e2e: 200})
	_, busy := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 2, right: below(20), tps: 400, e2e: 200,
		load: `{"profile":"concurrency","concurrency":8}`})
	get := func(query string) map[string]any {
		t.Helper()
		res := h.e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/leaderboard?%s", h.ds, query), h.tok, nil, "")
		if res.status != 200 {
			t.Fatalf("%s: %d %v", query, res.status, res.body)
		}
		return res.body
	}
	ids := func(body map[string]any) (out []int64, loads []string) {
		for _, r := range body["rows"].([]any) {
			row := r.(map[string]any)
			out = append(out, int64(row["run_id"].(float64)))
			loads = append(loads, row["load"].(string))
		}
		return out, loads
	}
	got, loads := ids(get("sort=speed"))
	if fmt.Sprint(got) != fmt.Sprint([]int64{seqA, seqB}) || !strings.HasPrefix(loads[0], "sequential ()") || loads[0] != loads[1] {
		t.Errorf("by speed: runs %v under %q, want %d then %d under the sequential load (not %d, measured at concurrency 8)", got, loads, seqA, seqB, busy)
	}
	var busyLoad string
	if _, all := ids(get("sort=date")); len(all) == 3 {
		busyLoad = all[0]
	}
	if got, _ := ids(get("sort=speed&load=" + url.QueryEscape(busyLoad))); fmt.Sprint(got) != fmt.Sprint([]int64{busy}) {
		t.Errorf("by speed under %q: %v, want only %d", busyLoad, got, busy)
	}
	page := h.e.client()
	page.signIn("ada@example.com", "correct horse")
	p := page.get(fmt.Sprintf("/datasets/%d/leaderboard?sort=speed", h.ds))
	if got := p.text(`[data-testid="ranked-under-load"]`); !strings.Contains(got, "sequential ()") {
		t.Errorf("the page does not say which load it ranks under: %q", got)
	}
	if p.doc.Find(fmt.Sprintf(`[data-testid="leaderboard-%d"]`, busy)).Length() != 0 {
		t.Error("a run under another load is ranked on speed beside the others")
	}
}
