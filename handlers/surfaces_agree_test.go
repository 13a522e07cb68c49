package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/regress"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// surfaceCase is one benchmark of the cross-surface matrix and the pair
// of its runs every surface is asked about (the first the baseline).
// merged: the benchmark repeats its targets, so the verdict weighs each
// target's repeats as one and its tests are not the pair's.
type surfaceCase struct {
	name   string
	build  func(t *testing.T, e *env, tok string) (string, [2]int64)
	merged bool
	// apart: the pair's second run is not the benchmark's (an imported
	// run), so the verdict is not about the pair.
	apart bool
	// fixture is what the case is built to show, by metric: a
	// "significant" lead, one "not established", "not comparable" (no
	// leader) or "absent" (no claim).
	fixture map[string]string
	// provider: the pair's second run is paid by the token, and every
	// surface costs it at $0.6375 per 1M output tokens.
	provider bool
}

// kindOf is what a verdict claim shows, in surfaceCase.fixture's words.
func kindOf(cl map[string]any) string {
	switch {
	case cl == nil:
		return "absent"
	case cl["comparable"] == false && cl["leader"] == nil:
		return "not comparable"
	case cl["significant"] == true:
		return "significant"
	}
	return "not established"
}

// rescore scores the runs again under the "contains" scorer, each keeping
// its first quality beside the new one; drop also forgets the first, as a
// run scored under another scorer only.
func rescore(t *testing.T, e *env, runs []int64, drop bool) {
	t.Helper()
	ctx := context.Background()
	for _, id := range runs {
		if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET scorer = 'contains', scorer_options = NULL WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		concludeRun(t, e, id)
		if drop {
			if _, err := e.store.Pool().Exec(ctx, `DELETE FROM run_qualities WHERE run_id = $1 AND scorer <> 'contains'`, id); err != nil {
				t.Fatal(err)
			}
		}
		if err := conclude.PairRunQualities(ctx, e.store, id); err != nil {
			t.Fatal(err)
		}
	}
}

// surfaceCases are benchmarks as users run them: closed loops priced and
// unpriced, repeats, a pair whose answers are too far apart in length to
// compare, an open loop, a rescored pair (qualities kept), a run measured
// here against results imported from elsewhere (of equal quality: one
// leader whichever way the pair is asked), a pair scored under
// different scorers and a run on a self-hosted profile priced by the hour
// beside a remote provider's run paid by the token.
func surfaceCases() []surfaceCase {
	price := 3.6
	fast := fakeRun{model: "m/big", seconds: 12, tokens: 15, e2e: millis(180), score: func(i int) float64 { return float64(min(i%4, 1)) }}
	two := func(p *float64, runs ...fakeRun) func(*testing.T, *env, string) (string, [2]int64) {
		return func(t *testing.T, e *env, tok string) (string, [2]int64) {
			b, ids := finishedBenchmark(t, e, tok, 60, p, runs)
			return b, [2]int64{ids[0], ids[1]}
		}
	}
	return []surfaceCase{
		{name: "closed loop, priced", build: two(&price, smallFake, fast),
			fixture: map[string]string{"quality": "not established", "output_tokens_per_s": "significant", "cost_per_1m_tokens": "significant"}},
		{name: "unpriced profile", build: two(nil, smallFake, fast), fixture: map[string]string{"cost_per_1m_tokens": "absent"}},
		{name: "repeats", build: two(&price, smallFake, fast, smallFake, fast), merged: true,
			fixture: map[string]string{"output_tokens_per_s": "significant"}},
		{name: "lengths apart", build: two(&price, smallFake, fakeRun{model: "m/long", seconds: 10, tokens: 30, e2e: millis(200), score: bigFake.score}),
			fixture: map[string]string{"quality": "significant", "output_tokens_per_s": "not comparable", "e2e_p95_ms": "not comparable"}},
		{name: "open loop", build: func(t *testing.T, e *env, tok string) (string, [2]int64) {
			b, ids := openLoopBenchmark(t, e, tok, 200, true, []string{"m/steady", "m/late"}, []int{10, 60})
			return b, [2]int64{ids[0], ids[1]}
		}, fixture: map[string]string{"output_tokens_per_s": "not comparable", "goodput_share": "significant"}},
		{name: "rescored", build: func(t *testing.T, e *env, tok string) (string, [2]int64) {
			b, ids := finishedBenchmark(t, e, tok, 60, &price, []fakeRun{smallFake, fast})
			rescore(t, e, ids, false)
			return b, [2]int64{ids[0], ids[1]}
		}, fixture: map[string]string{"quality": "not established"}},
		{name: "imported run", build: func(t *testing.T, e *env, tok string) (string, [2]int64) {
			b, ids := finishedBenchmark(t, e, tok, 60, &price, []fakeRun{smallFake, fast})
			return b, [2]int64{ids[0], importedRun(t, e, tok, b, 60)}
		}, apart: true},
		{name: "mixed scorers", build: func(t *testing.T, e *env, tok string) (string, [2]int64) {
			b, ids := finishedBenchmark(t, e, tok, 60, &price, []fakeRun{smallFake, fast})
			rescore(t, e, ids[1:], true)
			return b, [2]int64{ids[0], ids[1]}
		}, fixture: map[string]string{"quality": "not comparable"}},
		{name: "remote provider", build: func(t *testing.T, e *env, tok string) (string, [2]int64) {
			return providerBenchmark(t, e, tok, 60, true)
		}, provider: true, fixture: map[string]string{"cost_per_1m_tokens": "significant"}},
		{name: "remote runtime", build: func(t *testing.T, e *env, tok string) (string, [2]int64) {
			return providerBenchmark(t, e, tok, 60, false)
		}, provider: true, fixture: map[string]string{"cost_per_1m_tokens": "significant"}},
	}
}

// Every surface gives a pair of runs the same conclusion
// (docs/verdict.md#not-comparable): the verdict API, the compare API asked
// both ways round, the comparison page's claims and figures table, the
// report's figures table, the verdict page, the start page's one-line
// verdict and both recommendations (benchmark and dataset) agree on the
// leader, the comparable flag, the test and p; a pair that cannot be
// ranked has no leader anywhere and says why in the engine's words; no
// figure is a delta between runs the claims call not comparable, and a
// delta is coloured only where its test establishes it. A remote
// provider's run costs the same, from its token prices, on every
// surface; the capacity planner shows each run's speed and cost as the
// claims weigh them and its lead on cost is the claims'.
func TestSurfacesAgree(t *testing.T) {
	t.Parallel()
	for _, tc := range surfaceCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
			b, pair := tc.build(t, e, tok)
			cl := e.client()
			cl.signIn("ada@example.com", "correct horse")
			s := readSurfaces(t, e, tok, cl, b, pair)
			if tc.apart {
				s.summary = "" // the start page's newest benchmark is the import's
			}
			for _, c := range conclude.Criteria {
				s.agree(t, c, tc.merged || tc.apart)
			}
			if tc.apart {
				s.importedAgrees(t, e, tok, b)
			} else {
				s.recommendationsAgree(t, e, tok, cl, b)
				s.leaderboardAgrees(t, e, tok, b, tc.merged)
			}
			if tc.provider {
				s.providerCostAgrees(t, e, tok, b)
			}
			// Where the verdict ranks the pair on cost, the planner's two
			// cheapest targets are the pair: its lead must be set against it.
			s.merged = tc.merged
			if !tc.apart && !s.plannerAgrees(t, e, tok, cl, b, tc.provider) && leaderOf(s.verdict["cost_per_1m_tokens"]) != 0 {
				t.Error("fixture: the planner's lead was not set against the cost claim")
			}
			for m, want := range tc.fixture {
				if got := kindOf(s.verdict[m]); got != want {
					t.Errorf("fixture: the verdict's %s claim is %s, want %s: %v", m, got, want, s.verdict[m])
				}
			}
		})
	}
}

// surfaces is what each surface says about one benchmark and its pair.
type surfaces struct {
	pair            [2]int64
	verdict, fwd, r map[string]map[string]any
	comparePage     *goquery.Document
	report          *goquery.Document
	verdictPage     *goquery.Document
	summary         string
	// merged: the pair are the first runs of targets repeated in the
	// benchmark, which the verdict and the planner weigh merged.
	merged bool
}

// plannerClaims are the claims the capacity planner must agree with: the
// compare API's between the two runs, or the verdict's where the pair's
// targets were repeated (both the planner and the verdict merge them,
// conclude.MergeRepeats; the compare API weighs two runs).
func (s surfaces) plannerClaims() map[string]map[string]any {
	if s.merged {
		return s.verdict
	}
	return s.fwd
}

func readSurfaces(t *testing.T, e *env, tok string, cl *client, b string, pair [2]int64) surfaces {
	t.Helper()
	claims := func(path string) map[string]map[string]any {
		res := e.api(http.MethodGet, path, tok, nil, "")
		if res.status != 200 {
			t.Fatalf("%s: %d %v", path, res.status, res.body)
		}
		return claimsBy(res.body["claims"].([]any))
	}
	s := surfaces{pair: pair, verdict: claims("/api/v1/benchmarks/" + b + "/verdict"),
		fwd: claims(fmt.Sprintf("/api/v1/compare?runs=%d,%d", pair[0], pair[1])),
		r:   claims(fmt.Sprintf("/api/v1/compare?runs=%d,%d", pair[1], pair[0]))}
	page := func(path string) *goquery.Document {
		p := cl.get(path)
		if p.status != 200 {
			t.Fatalf("%s: %d", path, p.status)
		}
		return p.doc
	}
	s.comparePage = page(fmt.Sprintf("/compare?runs=%d,%d&baseline=%d", pair[0], pair[1], pair[0]))
	s.report = page("/benchmarks/" + b + "/report.html")
	s.verdictPage = page("/benchmarks/" + b)
	s.summary = page("/").Find(`[data-testid="recent-verdict"]`).First().Text()
	return s
}

// metricOf names a criterion as the API does.
var metricOf = map[conclude.Criterion]string{conclude.Quality: "quality", conclude.Speed: "output_tokens_per_s",
	conclude.Latency: "e2e_p95_ms", conclude.Cost: "cost_per_1m_tokens", conclude.Goodput: "goodput_share"}

// leaderOf is a claim's leader's run (0: none).
func leaderOf(cl map[string]any) float64 {
	l, _ := cl["leader"].(map[string]any)
	if l == nil {
		return 0
	}
	return l["run_id"].(float64)
}

// agree checks criterion c across the surfaces.
func (s surfaces) agree(t *testing.T, c conclude.Criterion, merged bool) {
	t.Helper()
	metric := metricOf[c]
	v, f, r := s.verdict[metric], s.fwd[metric], s.r[metric]
	if (f == nil) != (r == nil) {
		t.Fatalf("%s: compare API one way %v, the other %v", metric, f, r)
	}
	if f != nil {
		for _, k := range []string{"test", "p", "significant", "comparable", "reason"} {
			if k == "reason" && f["comparable"] == true {
				continue // a basis names the runs in the order asked
			}
			if fmt.Sprint(f[k]) != fmt.Sprint(r[k]) {
				t.Errorf("%s %s: compare API %v one way, %v the other", metric, k, f[k], r[k])
			}
		}
		if leaderOf(f) != leaderOf(r) {
			t.Errorf("%s leader: compare API run %v one way, %v the other", metric, leaderOf(f), leaderOf(r))
		}
		if f["comparable"] == false && (f["leader"] != nil || f["runner_up"] != nil) {
			t.Errorf("%s: a pair that is not comparable has a leader: %v", metric, f)
		}
	}
	if v != nil && f != nil && !merged {
		for _, k := range []string{"test", "p", "significant", "comparable", "reason"} {
			if fmt.Sprint(v[k]) != fmt.Sprint(f[k]) && (k != "reason" || v["comparable"] == false) {
				t.Errorf("%s %s: verdict API %v, compare API %v", metric, k, v[k], f[k])
			}
		}
		if leaderOf(v) != leaderOf(f) {
			t.Errorf("%s leader: verdict API run %v, compare API run %v", metric, leaderOf(v), leaderOf(f))
		}
	}
	s.comparePageAgrees(t, c, f)
	s.verdictPageAgrees(t, c, v)
}

// comparePageAgrees checks the comparison page's claim on c for the
// pair's second run and the figures tables (comparison and report)
// against the compare API's claim f.
func (s surfaces) comparePageAgrees(t *testing.T, c conclude.Criterion, f map[string]any) {
	t.Helper()
	claim := strings.Join(strings.Fields(s.comparePage.Find(`[data-testid="claim-`+string(c)+`"]`).Text()), " ")
	switch {
	case f == nil:
		return
	case f["comparable"] == false:
		if !strings.Contains(claim, strings.TrimPrefix(fmt.Sprint(f["reason"]), "not comparable: ")) {
			t.Errorf("%s: the comparison page says %q, the API %q", c, claim, f["reason"])
		}
	case f["test"] != "none" && !strings.Contains(claim, fmt.Sprint(f["test"])):
		t.Errorf("%s: the comparison page's claim %q does not name the API's test %v", c, claim, f["test"])
	}
	row := map[conclude.Criterion]string{conclude.Quality: "Quality (mean score)", conclude.Speed: "Output tokens/s",
		conclude.Latency: "E2E p95 ms", conclude.Cost: "Cost per 1M output tokens (USD)"}[c]
	if row == "" {
		return
	}
	for name, doc := range map[string]*goquery.Document{"comparison": s.comparePage, "report": s.report} {
		delta, class, ok := figureCell(doc, row, 1)
		switch {
		case !ok:
			t.Errorf("%s: the %s's figures table has no %q cell", c, name, row)
		case f["comparable"] == false && delta != "":
			t.Errorf("%s: the %s shows %q between runs its claims call not comparable", c, name, delta)
		case f["significant"] != true && (class == "delta-better" || class == "delta-worse"):
			t.Errorf("%s: the %s colours %q (%s) where no test establishes it", c, name, delta, class)
		}
	}
}

// figureCell is the delta text and class of row's column col (0: the
// baseline) in a figures table.
func figureCell(doc *goquery.Document, row string, col int) (delta, class string, ok bool) {
	doc.Find(`table tbody tr`).Each(func(_ int, tr *goquery.Selection) {
		if ok || strings.TrimSpace(tr.Find("th").Text()) != row {
			return
		}
		td := tr.Find("td").Eq(col)
		ok = td.Length() == 1
		delta, class = strings.TrimSpace(td.Find("small").Text()), td.Find("small").AttrOr("class", "")
	})
	return delta, class, ok
}

// verdictPageAgrees checks the verdict page's line on c and the start
// page's one-line verdict against the verdict API's claim v.
func (s surfaces) verdictPageAgrees(t *testing.T, c conclude.Criterion, v map[string]any) {
	t.Helper()
	line := s.verdictPage.Find(`[data-testid="verdict-` + string(c) + `"]`)
	text := strings.Join(strings.Fields(line.Text()), " ")
	winner := strings.TrimSpace(line.Find(`[data-testid="verdict-winner"]`).Text())
	switch {
	case v == nil:
		return
	case v["leader"] == nil:
		if winner != "" || !strings.Contains(text, fmt.Sprint(v["reason"])) {
			t.Errorf("%s: the verdict page names %q and says %q; the API names no leader: %v", c, winner, text, v["reason"])
		}
		if part := summaryPart(s.summary, c); part != "" && !strings.Contains(part, fmt.Sprint(v["reason"])) {
			t.Errorf("%s: the start page says %q; the API names no leader: %v", c, part, v["reason"])
		}
	default:
		model := v["leader"].(map[string]any)["model"].(string)
		if !strings.Contains(winner, model) {
			t.Errorf("%s: the verdict page's leader %q, the API's %s", c, winner, model)
		}
		sig := strings.TrimSpace(line.Find(`[data-testid="verdict-significance"]`).Text()) == "significant"
		if v["runner_up"] != nil && sig != (v["significant"] == true) {
			t.Errorf("%s: the verdict page calls it significant %v, the API %v", c, sig, v["significant"])
		}
		if part := summaryPart(s.summary, c); part != "" && !strings.Contains(part, model) {
			t.Errorf("%s: the start page says %q, the API's leader is %s", c, part, model)
		}
	}
}

// summaryPart is the part of the start page's one-line verdict on c ("" when
// the line leaves c out).
func summaryPart(summary string, c conclude.Criterion) string {
	title := map[conclude.Criterion]string{conclude.Quality: "Best quality: ", conclude.Speed: "Fastest: ", conclude.Cost: "Cheapest: ",
		conclude.Goodput: "Goodput: "}[c]
	for _, p := range strings.Split(strings.Join(strings.Fields(summary), " "), " · ") {
		if title != "" && strings.HasPrefix(p, title) {
			return p
		}
	}
	return ""
}

// recommendationsAgree checks that both recommendations (the benchmark's
// and the dataset's, their API and their page) rank the pair apart on a criterion
// exactly when the verdict calls its lead significant, and rank neither
// above the other where the verdict names no leader.
func (s surfaces) recommendationsAgree(t *testing.T, e *env, tok string, cl *client, b string) {
	t.Helper()
	var ds int64
	if err := e.store.Pool().QueryRow(context.Background(), `SELECT dataset_id FROM benchmarks WHERE id = $1`, b).Scan(&ds); err != nil {
		t.Fatal(err)
	}
	weights := map[string]string{"quality": "w_quality=1&w_speed=0&w_cost=0", "output_tokens_per_s": "w_quality=0&w_speed=1&w_cost=0",
		"cost_per_1m_tokens": "w_quality=0&w_speed=0&w_cost=1"}
	for metric, q := range weights {
		v := s.verdict[metric]
		if metric == "output_tokens_per_s" && s.verdict["goodput_share"] != nil {
			v = s.verdict["goodput_share"] // under an open loop the speed weight weighs goodput
		}
		if v == nil || v["runner_up"] == nil && v["leader"] != nil {
			continue
		}
		for _, path := range []string{"/api/v1/benchmarks/" + b + "/recommendation?" + q, fmt.Sprintf("/api/v1/datasets/%d/recommendation?%s", ds, q)} {
			rec := e.api(http.MethodGet, path, tok, nil, "")
			ranks := map[float64]bool{}
			feasible, _ := rec.body["feasible"].([]any)
			for _, x := range feasible {
				ranks[x.(map[string]any)["rank"].(float64)] = true
			}
			if apart := len(ranks) >= 2; rec.status != 200 || apart != (v["significant"] == true) {
				t.Errorf("%s: %s ranks the pair apart %v (%d), the verdict calls it significant %v", metric, path, apart, rec.status, v["significant"])
			}
		}
		// The report's recommendation (default weights) lists the targets
		// in the order the API ranks them.
		if metric == "quality" {
			s.reportRanksAsTheAPI(t, e, tok, b)
		}
		// The pages rank as their APIs do.
		for _, path := range []string{"/benchmarks/" + b + "/recommend?" + q, fmt.Sprintf("/datasets/%d/recommend?%s", ds, q)} {
			page := cl.get(path)
			ranks := map[string]bool{}
			page.doc.Find(`[data-testid="feasible"] [data-testid="rec-rank"]`).Each(func(_ int, r *goquery.Selection) {
				ranks[strings.TrimSpace(r.Text())] = true
			})
			if apart := len(ranks) >= 2; page.status != 200 || apart != (v["significant"] == true) {
				t.Errorf("%s: the page %s ranks the pair apart %v (%d), the verdict calls it significant %v", metric, path, apart, page.status, v["significant"])
			}
		}
	}
}

// leaderboardAgrees checks the dataset's leaderboard (API) sorted by each
// criterion: a pair the verdict cannot rank is never ranked in one list,
// and a pair it ranks is listed leader first.
func (s surfaces) leaderboardAgrees(t *testing.T, e *env, tok, b string, merged bool) {
	t.Helper()
	var ds int64
	if err := e.store.Pool().QueryRow(context.Background(), `SELECT dataset_id FROM benchmarks WHERE id = $1`, b).Scan(&ds); err != nil {
		t.Fatal(err)
	}
	for metric, sort := range map[string]string{"quality": "quality", "output_tokens_per_s": "speed", "e2e_p95_ms": "latency", "cost_per_1m_tokens": "cost"} {
		v := s.verdict[metric]
		if v == nil || merged {
			continue
		}
		res := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/leaderboard?sort=%s", ds, sort), tok, nil, "")
		pos := map[float64]int{}
		rows, _ := res.body["rows"].([]any)
		for i, r := range rows {
			pos[r.(map[string]any)["run_id"].(float64)] = i + 1
		}
		a, z := pos[float64(s.pair[0])], pos[float64(s.pair[1])]
		switch {
		case res.status != 200:
			t.Errorf("leaderboard by %s: %d %v", sort, res.status, res.body)
		case res.body["sort"] != sort:
			// Ranks nothing (by date): speed and cost under an open loop.
			if leaderOf(v) != 0 {
				t.Errorf("leaderboard by %s lists by %v; the verdict ranks the pair", sort, res.body["sort"])
			}
		case leaderOf(v) == 0 && strings.Contains(fmt.Sprint(v["reason"]), "mean output length"):
			// Lengths too far apart: one run is ranked, the other listed
			// as left out against it, with the engine's words.
			s.leftOutForLengths(t, sort, res.body, a, z)
		case leaderOf(v) == 0 && a > 0 && z > 0:
			t.Errorf("leaderboard by %s ranks a pair the verdict cannot (%v): %v", sort, v["reason"], rows)
		case leaderOf(v) != 0 && a > 0 && z > 0 && pos[leaderOf(v)] != min(a, z):
			t.Errorf("leaderboard by %s puts run %v first, the verdict's leader is %v", sort, s.pair[min(a, z)-1], leaderOf(v))
		}
	}
}

// leftOutForLengths checks a leaderboard (API) sorted by sort of a pair
// whose answers are too far apart in length to compare: exactly one of
// the pair is ranked (at a or z), and the other is listed as left out
// against it, saying how far apart their lengths are.
func (s surfaces) leftOutForLengths(t *testing.T, sort string, body map[string]any, a, z int) {
	t.Helper()
	if (a > 0) == (z > 0) {
		t.Errorf("leaderboard by %s: the pair at rows %d and %d, want exactly one ranked", sort, a, z)
		return
	}
	ranked, left := s.pair[0], s.pair[1]
	if z > 0 {
		ranked, left = left, ranked
	}
	out, _ := body["left_out"].([]any)
	for _, o := range out {
		o := o.(map[string]any)
		if o["run_id"] != float64(left) {
			continue
		}
		why := fmt.Sprint(o["reason"])
		if !strings.HasPrefix(why, fmt.Sprintf("not ranked with run %d: mean output length", ranked)) || !strings.Contains(why, "more than 2× apart") {
			t.Errorf("leaderboard by %s: run %d left out as %q", sort, left, why)
		}
		return
	}
	t.Errorf("leaderboard by %s ranks run %d and lists run %d nowhere: left out %v", sort, ranked, left, out)
}

// importedRun imports answers to benchmark b's dataset of n items (made
// elsewhere by outside/model, every third one wrong; the dataset names its
// items item-1, item-2, … as it was uploaded), scores them with
// exact as the benchmark's runs were, and returns the run.
func importedRun(t *testing.T, e *env, tok, b string, n int) int64 {
	t.Helper()
	ctx := context.Background()
	var ds int64
	if err := e.store.Pool().QueryRow(ctx, `SELECT dataset_id FROM benchmarks WHERE id = $1`, b).Scan(&ds); err != nil {
		t.Fatal(err)
	}
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "outside/model", ParamsB: 7, Quantization: "bf16"})
	var lines bytes.Buffer
	for i := range n {
		answer := fmt.Sprint(i)
		if i%3 == 0 {
			answer = "no"
		}
		out, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("b-%d", i), "custom_id": fmt.Sprintf("item-%d", i+1), "error": nil,
			"response": map[string]any{"status_code": 200, "request_id": "r", "body": map[string]any{
				"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": answer}, "finish_reason": "stop"}},
				"usage":   map[string]int{"prompt_tokens": 5, "completion_tokens": 2}}}})
		lines.Write(out)
		lines.WriteByte('\n')
	}
	body, ct := multipartBody(t, "out.jsonl", lines.Bytes(), map[string]string{"model": "outside/model", "scorer": "exact", "name": "elsewhere"})
	r := e.api(http.MethodPost, fmt.Sprintf("/api/v1/datasets/%d/imports", ds), tok, body, ct)
	if r.status != 201 {
		t.Fatalf("import: %d %v", r.status, r.body)
	}
	run := int64(r.body["run_id"].(float64))
	if err := (&score.Service{Store: e.store}).ScoreRun(ctx, run, ""); err != nil {
		t.Fatal(err)
	}
	concludeRun(t, e, run)
	return run
}

// importedAgrees checks an imported run against a run measured here: it
// has a quality and no speed, latency or cost claim (unmeasured is not a
// comparison), and the dataset's recommendation weighing quality alone
// ranks the two apart exactly when the compare API's quality claim is
// significant.
func (s surfaces) importedAgrees(t *testing.T, e *env, tok, b string) {
	t.Helper()
	if s.fwd["quality"] == nil {
		t.Fatalf("no quality claim between a measured and an imported run: %v", s.fwd)
	}
	for _, m := range []string{"output_tokens_per_s", "e2e_p95_ms", "cost_per_1m_tokens"} {
		if s.fwd[m] != nil {
			t.Errorf("%s: a claim against a run that measured none: %v", m, s.fwd[m])
		}
	}
	var ds int64
	if err := e.store.Pool().QueryRow(context.Background(), `SELECT dataset_id FROM benchmarks WHERE id = $1`, b).Scan(&ds); err != nil {
		t.Fatal(err)
	}
	rec := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/recommendation?w_quality=1&w_speed=0&w_cost=0", ds), tok, nil, "")
	rank := map[float64]float64{}
	feasible, _ := rec.body["feasible"].([]any)
	for _, x := range feasible {
		rank[x.(map[string]any)["run_id"].(float64)] = x.(map[string]any)["rank"].(float64)
	}
	ra, okA := rank[float64(s.pair[0])]
	rb, okB := rank[float64(s.pair[1])]
	if !okA || !okB {
		t.Fatalf("the dataset's recommendation leaves out the pair: %v", rec.body)
	}
	if apart := ra != rb; apart != (s.fwd["quality"]["significant"] == true) {
		t.Errorf("the dataset's recommendation ranks the pair apart %v (%v, %v), the compare API calls quality significant %v",
			apart, ra, rb, s.fwd["quality"]["significant"])
	}
	// The capacity planner lists the imported run as not sized, and why.
	plan := e.api(http.MethodPost, "/api/v1/capacity", tok, strings.NewReader(fmt.Sprintf(`{"dataset_id":%d,
		"traffic":{"peak_rps":1,"average_rps":1,"input_tokens":5,"output_tokens":2},"slo":{"e2e_ms":100000,"goodput":0.5}}`, ds)), "application/json")
	excluded, _ := plan.body["excluded"].([]any)
	listed := false
	for _, x := range excluded {
		a := x.(map[string]any)
		listed = listed || a["run_id"] == float64(s.pair[1]) && fmt.Sprint(a["reason_codes"]) == "[imported]"
	}
	if plan.status != 200 || !listed {
		t.Errorf("the planner does not list the imported run as not sized, and why: %d %v", plan.status, plan.body)
	}
}

// A regression flag and the comparison of the same pair agree: every
// regression a run is flagged with (the run API) is a claim the compare
// API calls significant on the same metric, with the same p, the earlier
// run leading; a target run again alike is flagged with nothing. And a
// target is flagged exactly where the engine's comparison of it with the
// same target in the previous benchmark, each with its repeats merged as
// the verdict merges them, is significantly worse (kept by
// Benjamini–Hochberg among the metrics compared), every one of its runs
// alike: repeats are never checked one by one against one earlier repeat.
func TestRegressionFlagsAgreeWithTheComparison(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	e := h.e
	_, first := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 0, right: below(40), tps: 100, e2e: 200})
	_, worse := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 1, right: below(20), tps: 100, e2e: 200})
	_, slower := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 2, right: below(20), tps: 50, e2e: 400})
	_, other := h.run(t, spec{model: "m/b", hw: "cpu-2c", day: 0, right: below(30), tps: 100, e2e: 200})
	_, same := h.run(t, spec{model: "m/b", hw: "cpu-2c", day: 2, right: below(30), tps: 100.5, e2e: 200})
	// Repeats whose runs, one by one, are further apart than their targets:
	// the previous benchmark's at 200, 260, 200 ms, this one's at 240,
	// 200, 260 ms, its first run answering half the items.
	testkit.Model(context.Background(), t, e.store, &testkit.ModelOpts{Name: "m/c", Quantization: "bf16"})
	rep := func(day float64, right int, e2e float64) spec {
		return spec{day: day, right: below(right), tps: 100, e2e: e2e}
	}
	_, before := h.repeated(t, spec{model: "m/c", hw: "cpu-2c", day: 3}, []spec{rep(3, 40, 200), rep(3.1, 40, 260), rep(3.2, 40, 200)})
	_, after := h.repeated(t, spec{model: "m/c", hw: "cpu-2c", day: 4}, []spec{rep(4, 20, 240), rep(4.1, 40, 200), rep(4.2, 40, 260)})
	metric := map[string]string{store.RegressionQuality: "quality", store.RegressionThroughput: "output_tokens_per_s", store.RegressionLatency: "e2e_p95_ms"}
	flagged := 0
	for _, id := range []int64{first, worse, slower, same} {
		run := e.api(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", id), h.tok, nil, "")
		regs, _ := run.body["regressions"].([]any)
		if id == same && len(regs) > 0 {
			t.Errorf("run %d, alike, flagged: %v", id, regs)
		}
		for _, r := range regs {
			g := r.(map[string]any)
			against := int64(g["against_run_id"].(float64))
			cl := claimsBy(e.api(http.MethodGet, fmt.Sprintf("/api/v1/compare?runs=%d,%d", against, id), h.tok, nil, "").body["claims"].([]any))[metric[g["metric"].(string)]]
			flagged++
			if cl == nil || cl["significant"] != true || leaderOf(cl) != float64(against) || fmt.Sprint(cl["p"]) != fmt.Sprint(g["p_value"]) {
				t.Errorf("run %d flagged %v against %d (p %v); the compare API says %v", id, g["metric"], against, g["p_value"], cl)
			}
		}
	}
	if flagged < 2 {
		t.Fatalf("fixture: %d regressions flagged, want the worse run's quality and the slower run's throughput", flagged)
	}
	for _, c := range []struct{ prev, cur []int64 }{
		{nil, []int64{first}}, {[]int64{first}, []int64{worse}}, {[]int64{worse}, []int64{slower}},
		{nil, []int64{other}}, {[]int64{other}, []int64{same}}, {nil, before}, {before, after},
	} {
		want := mergedWorse(t, e, c.prev, c.cur)
		for _, id := range c.cur {
			got := map[string]any{}
			regs, _ := e.api(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", id), h.tok, nil, "").body["regressions"].([]any)
			for _, r := range regs {
				g := r.(map[string]any)
				got[g["metric"].(string)] = g["p_value"]
				if len(c.prev) > 0 && int64(g["against_run_id"].(float64)) != c.prev[0] {
					t.Errorf("run %d flagged against run %v, want %d, the previous target's first run", id, g["against_run_id"], c.prev[0])
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("run %d (of %v, against %v) flagged %v; the merged targets' comparison is significantly worse on %v", id, c.cur, c.prev, got, want)
			}
		}
	}
}

// mergedWorse is, by metric with its p, how the target of runs cur is
// significantly worse than that of runs prev (none without prev) in the
// engine's comparison of the two, each weighed as the verdict weighs a
// benchmark's runs with its repeats merged, the metrics compared kept by
// Benjamini–Hochberg.
func mergedWorse(t *testing.T, e *env, prev, cur []int64) map[string]any {
	t.Helper()
	out := map[string]any{}
	if len(prev) == 0 {
		return out
	}
	ctx := context.Background()
	runs, err := e.store.RunFiguresByID(ctx, store.Viewer{Admin: true}, append(append([]int64{}, prev...), cur...))
	if err != nil {
		t.Fatal(err)
	}
	key := conclude.SharedScorer(runs)
	cands, err := conclude.Weigh(ctx, e.store, runs, key)
	if err != nil {
		t.Fatal(err)
	}
	p, c := conclude.MergeRepeats(cands[:len(prev)]), conclude.MergeRepeats(cands[len(prev):])
	if len(p) != 1 || len(c) != 1 {
		t.Fatalf("fixture: runs %v and %v are not one target each", prev, cur)
	}
	pairs, err := conclude.QualityPairs(ctx, e.store, key, []int64{p[0].RunID, c[0].RunID})
	if err != nil {
		t.Fatal(err)
	}
	var ev conclude.Evidence
	for _, x := range pairs {
		ev.Paired = append(ev.Paired, conclude.Diff(x))
	}
	var tested []string
	var ms []conclude.Margin
	for _, x := range []struct {
		metric string
		c      conclude.Criterion
	}{{store.RegressionQuality, conclude.Quality}, {store.RegressionThroughput, conclude.Speed}, {store.RegressionLatency, conclude.Latency}} {
		if m := conclude.Compare(c[0], p[0], x.c, ev); m.Measured && m.Comparable && m.P != nil {
			tested, ms = append(tested, x.metric), append(ms, m)
		}
	}
	ps := make([]float64, len(ms))
	for i, m := range ms {
		ps[i] = *m.P
	}
	kept := stats.BenjaminiHochberg(ps, stats.Alpha)
	for i, m := range ms {
		if kept[i] && !m.Tie && m.Better < 0 {
			out[tested[i]] = *m.P
		}
	}
	return out
}

// reportRanksAsTheAPI checks that the report's recommendation names the
// targets in the order the benchmark's recommendation API ranks them
// under the same (default) weights.
func (s surfaces) reportRanksAsTheAPI(t *testing.T, e *env, tok, b string) {
	t.Helper()
	rec := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/recommendation", tok, nil, "")
	var want []string
	feasible, _ := rec.body["feasible"].([]any)
	for _, x := range feasible {
		want = append(want, fmt.Sprintf("run %v", x.(map[string]any)["run_id"]))
	}
	var got []string
	s.report.Find(`[data-testid="report-recommendation"] li`).Each(func(_ int, li *goquery.Selection) {
		if f := strings.Fields(li.Text()); len(f) >= 2 {
			got = append(got, f[0]+" "+f[1]) // "run N …"
		}
	})
	if fmt.Sprint(got) != fmt.Sprint(want) || len(want) == 0 {
		t.Errorf("the report ranks %q, the recommendation API %q", got, want)
	}
}

// providerBenchmark makes a benchmark of n items with two targets: m/small
// on the simulated runtime on cpu-2c, priced $3.60 an hour, and OpenAI's
// gpt-4o-mini, paid by the token ($0.15 in, $0.60 out per 1M) and worked
// by a remote agent on an unpriced cpu profile. Both answer each item
// with 5 prompt tokens, m/small in 15 output tokens over a 12 s window,
// gpt-4o-mini in 20 over 10 s, so the provider's run costs
// (n × 5 × 0.15 + n × 20 × 0.6) ÷ (n × 20) = $0.6375 per 1M output tokens
// on every surface (docs/verdict.md), whatever its speed.
func providerBenchmark(t *testing.T, e *env, tok string, n int, fleet bool) (string, [2]int64) {
	t.Helper()
	ctx := context.Background()
	var ds strings.Builder
	for i := range n {
		fmt.Fprintf(&ds, "{\"custom_id\":\"c%02d\",\"prompt\":\"q%d\",\"reference\":\"%d\"}\n", i, i, i)
	}
	up := e.upload(tok, "d.jsonl", []byte(ds.String()), nil)
	for _, name := range []string{"m/small", "gpt-4o-mini"} {
		testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: name, Quantization: "bf16"})
	}
	sim := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	remote := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "remote-1", Runtimes: []string{"openai"}, Profile: store.HardwareProfile{Slug: "cpu", CPUCores: 4}})
	price := 3.6
	if err := e.store.SetHardwarePrice(ctx, "cpu-2c", &price); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetProviderPrice(ctx, store.ProviderPrice{Provider: "openai", Model: "gpt-4o-mini", InputPer1M: 0.15, OutputPer1M: 0.6}); err != nil {
		t.Fatal(err)
	}
	// A "provider:model" target reaches a benchmark through a fleet
	// (docs/fleets.md#remote-providers); a benchmark names the provider's
	// dialect as the runtime of a target on the remote agent's hardware.
	// Either keeps the provider's price with the run.
	manifest := fmt.Sprintf(`{"name":"provider","scenarios":[{"name":"seq","dataset":%v,"load":{"profile":"sequential"},"sampling":{"max_tokens":32},"scorer":"exact"}],
		"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"},"openai:gpt-4o-mini"]}`, up.body["dataset_id"])
	path, ids := "/api/v1/fleets", "benchmark_ids"
	if !fleet {
		manifest = fmt.Sprintf(`{"name":"provider","dataset":%v,"load":{"profile":"sequential"},"sampling":{"max_tokens":32},"scorer":"exact",
			"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"},{"model":"gpt-4o-mini","runtime":"openai","hardware":"cpu"}]}`, up.body["dataset_id"])
		path, ids = "/api/v1/benchmarks", "benchmark_id"
	}
	res := e.api(http.MethodPost, path, tok, strings.NewReader(manifest), "application/json")
	if res.status != 201 {
		t.Fatalf("create: %d %v", res.status, res.body)
	}
	fakes := map[string]fakeRun{"m/small": {seconds: 12, tokens: 15, e2e: millis(100), score: smallFake.score},
		"gpt-4o-mini": {seconds: 10, tokens: 20, e2e: millis(150), score: func(i int) float64 { return float64(min(i%4, 1)) }}}
	var pair [2]int64
	for _, rr := range res.body["runs"].([]any) {
		run := rr.(map[string]any)
		id, model := int64(run["run_id"].(float64)), strings.TrimPrefix(fmt.Sprint(run["model"]), "openai:")
		agent, k := sim.ID, 0
		if model == "gpt-4o-mini" {
			agent, k = remote.ID, 1
		}
		pair[k] = id
		finishFake(t, e, id, agent, n, fakes[model])
	}
	if fleet {
		return fmt.Sprint(res.body[ids].([]any)[0]), pair
	}
	return fmt.Sprint(res.body[ids]), pair
}

// finishFake works run id on agent as finishedBenchmark's runs are worked
// (one request after another over f's window, each a little early or
// late), each request with 5 prompt tokens, and scores it as f says.
func finishFake(t *testing.T, e *env, id, agent int64, n int, f fakeRun) {
	t.Helper()
	ctx := context.Background()
	var job int64
	_ = e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, id).Scan(&job)
	claim, err := e.store.ClaimRun(ctx, id, agent, job, "sim")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Minute)
	var rs []store.ResultRecord
	for i := range n {
		jitter := 0.45 * math.Sin(float64(i*i)*1.7+float64(id))
		at := start.Add(time.Duration((float64(i) + 0.5 + jitter) / float64(n) * f.seconds * float64(time.Second)))
		rs = append(rs, store.ResultRecord{Result: jobs.Result{Idx: i, CustomID: fmt.Sprintf("c%02d", i), Status: jobs.StatusOK, Output: "x",
			PromptTokens: 5, CompletionTokens: f.tokens, ContentEvents: f.tokens, TTFT: 10 * time.Millisecond, E2E: f.e2e(i)}, SentAt: at})
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
		Throughput: sum.OutputTokensPerS, RequestsPerS: sum.RequestsPerS}); err != nil {
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

// providerCost is what a remote provider's run costs per 1M output tokens:
// (60 × 5 × 0.15 + 60 × 20 × 0.6) ÷ 1200 (providerBenchmark).
const providerCost = 0.6375

// providerCostAgrees checks that every surface costs the provider's run
// (the pair's second) from its token prices: the verdict API, the compare
// API both ways round, the run API, both recommendations, the leaderboard,
// the verdict page and the figures tables of the comparison and the
// report.
func (s surfaces) providerCostAgrees(t *testing.T, e *env, tok string, b string) {
	t.Helper()
	run := float64(s.pair[1])
	costs := map[string]any{}
	for name, claims := range map[string]map[string]map[string]any{"verdict API": s.verdict, "compare API": s.fwd, "compare API reversed": s.r} {
		for _, side := range []string{"leader", "runner_up"} {
			if x, ok := claims["cost_per_1m_tokens"][side].(map[string]any); ok && x["run_id"] == run {
				costs[name] = x["value"]
			}
		}
	}
	costs["run API"] = e.api(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", s.pair[1]), tok, nil, "").body["cost_per_1m_tokens"]
	ds := datasetOf(t, e, b)
	for name, path := range map[string]string{"benchmark recommendation": "/api/v1/benchmarks/" + b + "/recommendation",
		"dataset recommendation": fmt.Sprintf("/api/v1/datasets/%d/recommendation", ds)} {
		feasible, _ := e.api(http.MethodGet, path, tok, nil, "").body["feasible"].([]any)
		for _, x := range feasible {
			if x.(map[string]any)["run_id"] == run {
				costs[name] = x.(map[string]any)["cost_per_1m_tokens"]
			}
		}
	}
	rows, _ := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/leaderboard?sort=cost", ds), tok, nil, "").body["rows"].([]any)
	for _, r := range rows {
		if r.(map[string]any)["run_id"] == run {
			costs["leaderboard"] = r.(map[string]any)["cost_per_1m_tokens"]
		}
	}
	for _, name := range []string{"verdict API", "compare API", "compare API reversed", "run API", "benchmark recommendation", "dataset recommendation", "leaderboard"} {
		if c, ok := costs[name].(float64); !ok || math.Abs(c-providerCost) > 1e-9 {
			t.Errorf("the %s costs the provider's run at %v per 1M output tokens, want $%v from its token prices", name, costs[name], providerCost)
		}
	}
	for name, doc := range map[string]*goquery.Document{"comparison": s.comparePage, "report": s.report} {
		// Shown to three significant digits.
		cell := figureText(doc, "Cost per 1M output tokens (USD)", 1)
		if c, err := strconv.ParseFloat(strings.TrimPrefix(cell, "$"), 64); err != nil || math.Abs(c-providerCost) > 0.001 {
			t.Errorf("the %s's figures table costs the provider's run at %q, want $%v", name, cell, providerCost)
		}
	}
}

// figureText is the text of row's column col (0: the baseline) in a
// figures table, its delta left out.
func figureText(doc *goquery.Document, row string, col int) string {
	text := ""
	doc.Find(`table tbody tr`).Each(func(_ int, tr *goquery.Selection) {
		if text == "" && strings.TrimSpace(tr.Find("th").Text()) == row {
			td := tr.Find("td").Eq(col).Clone()
			td.Find("small").Remove()
			text = strings.Join(strings.Fields(td.Text()), " ")
		}
	})
	return text
}

// datasetOf is benchmark b's dataset.
func datasetOf(t *testing.T, e *env, b string) int64 {
	t.Helper()
	var ds int64
	if err := e.store.Pool().QueryRow(context.Background(), `SELECT dataset_id FROM benchmarks WHERE id = $1`, b).Scan(&ds); err != nil {
		t.Fatal(err)
	}
	return ds
}

// plannerAgrees checks the capacity planner (POST /api/v1/capacity and
// its page) on the benchmark's dataset against the compare API's claims
// (the verdict's where the pair's targets were repeated: plannerClaims),
// which the verdict's are held to above: each run of the pair shows the
// output tokens/s and cost per 1M output tokens the claims weigh it at
// (a provider's run from its token prices), and where the plan's two
// cheapest sized targets are the pair, its lead names the cost claim's
// leader (none where the claim finds the pair not comparable), test and
// p, and ranks them apart exactly when the claim establishes that the
// plan's cheapest is cheaper.
//
// It reports whether it held the plan's lead to the cost claim.
func (s surfaces) plannerAgrees(t *testing.T, e *env, tok string, cl *client, b string, provider bool) bool {
	t.Helper()
	ds := datasetOf(t, e, b)
	body := fmt.Sprintf(`{"dataset_id":%d,"traffic":{"peak_rps":1,"average_rps":1,"input_tokens":5,"output_tokens":2},
		"slo":{"e2e_ms":100000,"goodput":0.5},"headroom":0}`, ds)
	res := e.api(http.MethodPost, "/api/v1/capacity", tok, strings.NewReader(body), "application/json")
	if res.status != 200 {
		t.Fatalf("capacity: %d %v", res.status, res.body)
	}
	targets := map[float64]map[string]any{}
	var sized []map[string]any
	for _, list := range []string{"feasible", "excluded"} {
		xs, _ := res.body[list].([]any)
		for _, x := range xs {
			targets[x.(map[string]any)["run_id"].(float64)] = x.(map[string]any)
			if list == "feasible" {
				sized = append(sized, x.(map[string]any))
			}
		}
	}
	for _, run := range s.pair {
		a := targets[float64(run)]
		if a == nil {
			t.Errorf("the planner leaves out run %d: %v", run, res.body)
			continue
		}
		for metric, field := range map[string]string{"output_tokens_per_s": "output_tokens_per_s", "cost_per_1m_tokens": "run_cost_per_1m_output_tokens"} {
			if v, ok := claimValue(s.plannerClaims()[metric], run); ok && !sameFigure(a[field], v) {
				t.Errorf("run %d: the planner's %s is %v, the compare API's %s %v", run, field, a[field], metric, v)
			}
		}
	}
	if provider {
		if a := targets[float64(s.pair[1])]; a["token_priced"] != true || !sameFigure(a["run_cost_per_1m_output_tokens"], providerCost) || a["replicas"] != 0.0 {
			t.Errorf("the planner does not price the provider's run by its tokens: %v", a)
		}
	}
	compared := s.plannerLeadAgrees(t, res.body, sized)
	page := cl.get(fmt.Sprintf("/capacity?dataset=%d&peak_rps=1&average_rps=1&input_tokens=5&output_tokens=2&ttft_ms=&tpot_ms=&e2e_ms=100000&goodput=0.5&headroom=0", ds))
	lead, _ := res.body["lead"].(map[string]any)
	text := strings.Join(strings.Fields(page.text(`[data-testid="capacity-lead"]`)), " ")
	if lead != nil {
		m := lead["margin"].(map[string]any)
		if page.status != 200 || m["test"] != "none" && !strings.Contains(text, fmt.Sprint(m["test"])) ||
			m["comparable"] == false && !strings.Contains(text, strings.TrimPrefix(fmt.Sprint(m["reason"]), "not comparable: ")) {
			t.Errorf("the planner's page says %q (%d); its API's lead %v", text, page.status, m)
		}
	}
	return compared
}

// plannerLeadAgrees checks the plan's lead and ranks against the compare
// API's cost claim, where the plan's two cheapest sized targets are the
// pair; it reports whether they were.
func (s surfaces) plannerLeadAgrees(t *testing.T, plan map[string]any, sized []map[string]any) bool {
	t.Helper()
	if len(sized) < 2 {
		return false
	}
	first, second := sized[0]["run_id"].(float64), sized[1]["run_id"].(float64)
	pair := map[float64]bool{float64(s.pair[0]): true, float64(s.pair[1]): true}
	if !pair[first] || !pair[second] {
		return false
	}
	lead, _ := plan["lead"].(map[string]any)
	claim := s.plannerClaims()["cost_per_1m_tokens"]
	if lead == nil || claim == nil {
		t.Fatalf("the plan's lead %v, the compare API's cost claim %v", lead, claim)
	}
	got, _ := lead["leader_run_id"].(float64)
	if got != leaderOf(claim) {
		t.Errorf("the planner names run %v cheaper, the compare API run %v", got, leaderOf(claim))
	}
	m := lead["margin"].(map[string]any)
	for k, v := range map[string]any{"test": m["test"], "p": m["p"], "comparable": m["comparable"], "significant": lead["significant"]} {
		if fmt.Sprint(v) != fmt.Sprint(claim[k]) {
			t.Errorf("cost %s: the planner %v, the compare API %v", k, v, claim[k])
		}
	}
	apart := sized[0]["rank"] != sized[1]["rank"]
	if want := claim["significant"] == true && leaderOf(claim) == first; apart != want {
		t.Errorf("the planner ranks the pair apart %v (%v, %v); the compare API's cost claim %v", apart, sized[0]["rank"], sized[1]["rank"], claim)
	}
	return true
}

// claimValue is run's figure in a claim (as its leader or runner-up).
func claimValue(cl map[string]any, run int64) (float64, bool) {
	for _, side := range []string{"leader", "runner_up"} {
		if x, ok := cl[side].(map[string]any); ok && x["run_id"] == float64(run) {
			v, ok := x["value"].(float64)
			return v, ok
		}
	}
	return 0, false
}

// sameFigure says whether a JSON number is v (to a part in 10⁹).
func sameFigure(x any, v float64) bool {
	f, ok := x.(float64)
	return ok && math.Abs(f-v) <= 1e-9*math.Max(1, math.Abs(v))
}

// A flag is drawn again when the run it is against is rescored: scored
// anew under another scorer only, the earlier run's quality is no longer
// comparable with the flagged run's, and the quality flag goes.
func TestRegressionRedrawnWhenTheEarlierRunIsRescored(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	e := h.e
	ctx := context.Background()
	_, first := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 0, right: below(40), tps: 100, e2e: 200})
	_, worse := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 1, right: below(20), tps: 100, e2e: 200})
	metrics := func() string {
		regs, _ := e.api(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", worse), h.tok, nil, "").body["regressions"].([]any)
		var m []string
		for _, r := range regs {
			m = append(m, r.(map[string]any)["metric"].(string))
		}
		return fmt.Sprint(m)
	}
	if got := metrics(); got != "[quality]" {
		t.Fatalf("fixture: run %d flagged %s, want [quality]", worse, got)
	}
	if _, err := e.store.Pool().Exec(ctx, `DELETE FROM run_qualities WHERE run_id = $1`, first); err != nil {
		t.Fatal(err)
	}
	w := &jobs.ScoreRunWorker{Scorer: &score.Service{Store: e.store}, Regressions: &regress.Checker{Store: e.store}, Stats: conclude.Keeper{Store: e.store}}
	if err := w.Work(ctx, &river.Job[jobs.ScoreRunArgs]{JobRow: &rivertype.JobRow{ID: 1}, Args: jobs.ScoreRunArgs{RunID: first, Scorer: "contains"}}); err != nil {
		t.Fatal(err)
	}
	if got := metrics(); got != "[]" {
		t.Errorf("run %d is still flagged %s against run %d, rescored under another scorer", worse, got, first)
	}
}
