package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/regress"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
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
// leader whichever way the pair is asked) and a pair scored under
// different scorers.
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
// delta is coloured only where its test establishes it.
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
