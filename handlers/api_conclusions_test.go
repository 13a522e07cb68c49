package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// claimsBy indexes an answer's claims by metric.
func claimsBy(claims []any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, c := range claims {
		m := c.(map[string]any)
		if inner, ok := m["claim"].(map[string]any); ok {
			m = inner
		}
		out[m["metric"].(string)] = m
	}
	return out
}

// The verdict and the comparison through the API: each claim names its
// leader, runner-up, margin, interval, test and p, and runs measured
// under another load are compared on nothing but are said to differ.
func TestVerdictAndCompareAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	price := 3.6
	b, runs := finishedBenchmark(t, e, tok, 30, &price, []fakeRun{
		smallFake,
		bigFake,
	})
	res := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", tok, nil, "")
	if res.status != 200 || res.body["pending"] != false || res.body["scorer"] != "exact" {
		t.Fatalf("verdict: %d %v", res.status, res.body)
	}
	claims := claimsBy(res.body["claims"].([]any))
	q := claims["quality"]
	if q == nil || q["leader"].(map[string]any)["model"] != "m/big" || q["significant"] != true || q["comparable"] != true ||
		q["test"] != "mcnemar-exact" || q["scorer"] != "exact" || q["p"].(float64) >= 0.05 || len(q["interval"].([]any)) != 2 {
		t.Errorf("quality claim %v", q)
	}
	s := claims["output_tokens_per_s"]
	if s == nil || s["leader"].(map[string]any)["model"] != "m/big" || s["test"] != "welch-t" || s["significant"] != true ||
		s["load"] == nil || s["runner_up"].(map[string]any)["model"] != "m/small" {
		t.Errorf("speed claim %v", s)
	}
	// 30 requests a run: too few for the p95's exact interval, untested.
	if l := claims["e2e_p95_ms"]; l == nil || l["leader"].(map[string]any)["model"] != "m/small" || l["test"] != "none" ||
		!strings.Contains(l["reason"].(string), "too few requests to test a p95") {
		t.Errorf("latency claim %v", l)
	}

	cmp := e.api(http.MethodGet, fmt.Sprintf("/api/v1/compare?runs=%d,%d", runs[0], runs[1]), tok, nil, "")
	if cmp.status != 200 || int64(cmp.body["baseline"].(float64)) != runs[0] {
		t.Fatalf("compare: %d %v", cmp.status, cmp.body)
	}
	if c := claimsBy(cmp.body["claims"].([]any))["quality"]; c == nil || c["significant"] != true || c["leader"].(map[string]any)["run_id"].(float64) != float64(runs[1]) {
		t.Errorf("compare quality claim %v", c)
	}

	// Another benchmark, another dataset: its speed is not comparable, and
	// nothing is tested.
	_, others := finishedBenchmark(t, e, tok, 31, &price, []fakeRun{
		{model: "m/other", seconds: 5, tokens: 10, e2e: millis(100), score: func(int) float64 { return 1 }},
	})
	cmp = e.api(http.MethodGet, fmt.Sprintf("/api/v1/compare?runs=%d,%d", runs[0], others[0]), tok, nil, "")
	if cmp.status != 200 {
		t.Fatalf("compare across: %d %v", cmp.status, cmp.body)
	}
	sp := claimsBy(cmp.body["claims"].([]any))["output_tokens_per_s"]
	if sp == nil || sp["comparable"] != false || sp["significant"] != false || sp["p"] != nil || sp["test"] != "none" ||
		!strings.Contains(sp["reason"].(string), "not comparable: dataset") {
		t.Errorf("speed across datasets %v", sp)
	}

	for _, bad := range []string{"runs=1", "runs=1,x", fmt.Sprintf("runs=%d,%d&baseline=999", runs[0], runs[1])} {
		if r := e.api(http.MethodGet, "/api/v1/compare?"+bad, tok, nil, ""); r.status != 422 {
			t.Errorf("compare?%s: %d %v", bad, r.status, r.body)
		}
	}
	stranger := e.token(e.createUser("eve@example.com", "correct horse", store.RoleUser))
	if r := e.api(http.MethodGet, fmt.Sprintf("/api/v1/compare?runs=%d,%d", runs[0], runs[1]), stranger, nil, ""); r.status != 404 {
		t.Errorf("another user's comparison: %d", r.status)
	}
	if r := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", stranger, nil, ""); r.status != 404 {
		t.Errorf("another user's verdict: %d", r.status)
	}
}

// Right after a benchmark finishes, before its runs' score jobs have kept
// their scores and figures, the JSON verdict says it is being computed
// instead of drawing conclusions from half the figures; once they are
// kept, it draws them (docs/verdict.md#when-a-verdict-is-final).
func TestVerdictAPIWaitsForItsFigures(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	price := 3.6
	b, runs := finishedBenchmark(t, e, tok, 30, &price, []fakeRun{
		smallFake,
		bigFake,
	})
	// The second run's score job is still to run, as when it has just
	// ended.
	if err := e.store.UnconcludeRun(ctx, runs[1]); err != nil {
		t.Fatal(err)
	}
	job, err := insertOnly(t, e).Insert(ctx, jobs.ScoreRunArgs{RunID: runs[1]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", tok, nil, "")
	if res.status != 200 || res.body["pending"] != true || !strings.Contains(fmt.Sprint(res.body["reason"]), fmt.Sprintf("run %d is being scored", runs[1])) ||
		len(res.body["claims"].([]any)) != 0 {
		t.Fatalf("verdict before the figures are kept: %d %v", res.status, res.body)
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now() WHERE id = $1`, job.Job.ID); err != nil {
		t.Fatal(err)
	}
	res = e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", tok, nil, "")
	if res.status != 200 || res.body["pending"] != false || len(res.body["claims"].([]any)) != 4 {
		t.Fatalf("verdict once the figures are kept: %d %v", res.status, res.body)
	}
}

// Every surface draws the same conclusion for the same pair: the verdict
// and the comparison (their JSON) name the same leader, comparable flag,
// test, p and significance on every metric, and the recommendation ranks
// the pair apart on a criterion exactly when that claim is significant.
func TestSurfacesAgreeOnAPair(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	price := 3.6
	b, runs := finishedBenchmark(t, e, tok, 60, &price, []fakeRun{
		smallFake,
		{model: "m/big", seconds: 12, tokens: 15, e2e: millis(180), score: func(i int) float64 { return float64(min(i%4, 1)) }},
	})
	vc := surfacesAgree(t, e, tok, b, runs)
	// The fixture has both kinds of claim, so the agreement is tested on
	// each: speed and cost established, quality not.
	if vc["output_tokens_per_s"]["significant"] != true || vc["cost_per_1m_tokens"]["significant"] != true || vc["quality"]["significant"] != false {
		t.Fatalf("fixture: speed %v, cost %v, quality %v", vc["output_tokens_per_s"], vc["cost_per_1m_tokens"], vc["quality"])
	}
	// Rescored: both runs keep their first quality beside one under
	// another scorer identity; every surface ranks quality under the same
	// identity, and still agrees on every claim.
	for _, id := range runs {
		if _, err := e.store.Pool().Exec(context.Background(), `UPDATE runs SET scorer = 'contains', scorer_options = NULL WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		concludeRun(t, e, id)
		if err := conclude.PairRunQualities(context.Background(), e.store, id); err != nil {
			t.Fatal(err)
		}
	}
	var kept int
	if err := e.store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM run_qualities WHERE run_id = ANY($1)`, runs).Scan(&kept); err != nil || kept != 4 {
		t.Fatalf("rescored: %d qualities kept (%v), want 2 per run", kept, err)
	}
	vc = surfacesAgree(t, e, tok, b, runs)
	if vc["quality"] == nil || vc["quality"]["comparable"] != true {
		t.Errorf("rescored: quality claim %v", vc["quality"])
	}
}

// surfacesAgree checks that the verdict API, the compare API and the
// recommendation give benchmark b's pair of runs the same leader, test, p,
// significance and comparability on each criterion, and returns the
// verdict's claims by metric.
func surfacesAgree(t *testing.T, e *env, tok, b string, runs []int64) map[string]map[string]any {
	t.Helper()
	verdict := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", tok, nil, "")
	cmp := e.api(http.MethodGet, fmt.Sprintf("/api/v1/compare?runs=%d,%d", runs[0], runs[1]), tok, nil, "")
	if verdict.status != 200 || cmp.status != 200 {
		t.Fatalf("verdict %d, compare %d", verdict.status, cmp.status)
	}
	vc, cc := claimsBy(verdict.body["claims"].([]any)), claimsBy(cmp.body["claims"].([]any))
	weights := map[string]string{"quality": "w_quality=1&w_speed=0&w_cost=0", "output_tokens_per_s": "w_quality=0&w_speed=1&w_cost=0",
		"cost_per_1m_tokens": "w_quality=0&w_speed=0&w_cost=1"}
	for _, metric := range []string{"quality", "output_tokens_per_s", "e2e_p95_ms", "cost_per_1m_tokens"} {
		v, c := vc[metric], cc[metric]
		if v == nil || c == nil {
			t.Errorf("%s: verdict %v, compare %v", metric, v, c)
			continue
		}
		for _, k := range []string{"test", "p", "significant", "comparable"} {
			if fmt.Sprint(v[k]) != fmt.Sprint(c[k]) {
				t.Errorf("%s %s: verdict %v, compare %v", metric, k, v[k], c[k])
			}
		}
		if lv, lc := v["leader"].(map[string]any)["run_id"], c["leader"].(map[string]any)["run_id"]; lv != lc {
			t.Errorf("%s leader: verdict run %v, compare run %v", metric, lv, lc)
		}
		q, ok := weights[metric]
		if !ok {
			continue
		}
		rec := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/recommendation?"+q, tok, nil, "")
		ranks := map[float64]bool{}
		for _, x := range rec.body["feasible"].([]any) {
			ranks[x.(map[string]any)["rank"].(float64)] = true
		}
		if apart := len(ranks) == 2; apart != (v["significant"] == true) {
			t.Errorf("%s: the recommendation ranks the pair apart %v, the verdict calls it significant %v", metric, apart, v["significant"])
		}
	}
	return vc
}

// The comparison's figures table colours a delta better or worse only
// where a test establishes the difference; other deltas are shown plain,
// and none at all between runs its claims call not comparable.
func TestFiguresTableColoursOnlyEstablishedDeltas(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	price := 3.6
	_, runs := finishedBenchmark(t, e, tok, 60, &price, []fakeRun{
		smallFake,
		{model: "m/big", seconds: 12, tokens: 15, e2e: millis(180), score: func(i int) float64 { return float64(min(i%4, 1)) }},
		// Answers three times as long: another load, not comparable.
		{model: "m/long", seconds: 10, tokens: 45, e2e: millis(300), score: func(i int) float64 { return float64(min(i%4, 1)) }},
	})
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get(fmt.Sprintf("/compare?runs=%d,%d,%d&baseline=%d", runs[0], runs[1], runs[2], runs[0]))
	if page.status != 200 {
		t.Fatalf("compare: %d", page.status)
	}
	row := func(name string) []string {
		var classes []string
		page.doc.Find(`table tbody tr`).Each(func(_ int, tr *goquery.Selection) {
			if strings.TrimSpace(tr.Find("th").Text()) != name {
				return
			}
			tr.Find("td").Each(func(_ int, td *goquery.Selection) {
				classes = append(classes, td.Find("small").AttrOr("class", "none"))
			})
		})
		return classes
	}
	// Columns: the baseline, m/big, m/long.
	if got := row("Output tokens/s"); fmt.Sprint(got) != "[none delta-better none]" {
		t.Errorf("output tokens/s deltas %v: want m/big's established (faster: 75 against 60) and none against m/long", got)
	}
	if got := row("TTFT p95 ms"); len(got) != 3 || got[1] == "delta-better" || got[1] == "delta-worse" {
		t.Errorf("TTFT p95 deltas %v: no test decides them, so none is coloured", got)
	}
	if got := row("Quality (mean score)"); len(got) != 3 || got[1] == "delta-better" || got[1] == "delta-worse" {
		t.Errorf("quality deltas %v: not established, so not coloured", got)
	}
}

// Once a deployment has repeated its targets, a single run's speed is
// tested with the between-run spread those repeats showed (conclude.WithDrift
// read where conclusions weigh runs), not the 3 % floor (which a
// deployment without repeats gets: TestVerdictOnAFinishedBenchmark).
func TestComparisonTakesTheDeploymentsMeasuredSpread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	price := 3.6
	run := func(model string, seconds float64) fakeRun {
		return fakeRun{model: model, seconds: seconds, tokens: 10, e2e: millis(100), score: smallFake.score}
	}
	// Three repeats of each target: 2 + 2 degrees of freedom of spread.
	_, runs := finishedBenchmark(t, e, tok, 30, &price, []fakeRun{run("m/a", 10), run("m/a", 10.4), run("m/a", 9.7),
		run("m/b", 10.5), run("m/b", 10.1), run("m/b", 10.9)})
	// Two single runs compared, the last of each target's repeats (a
	// spread is measured as of the runs compared): each carries it.
	res := e.api(http.MethodGet, fmt.Sprintf("/api/v1/compare?runs=%d,%d", runs[2], runs[5]), tok, nil, "")
	if res.status != 200 {
		t.Fatalf("compare: %d %v", res.status, res.body)
	}
	got := fmt.Sprint(claimsBy(res.body["claims"].([]any))["output_tokens_per_s"]["reason"])
	if !strings.Contains(got, "with the between-run spread of the deployments' own repeated runs (4 and 4 degrees of freedom)") {
		t.Errorf("speed claim's basis %q", got)
	}
}

// A pair that cannot be ranked has no leader on any surface: two runs
// whose answers are three times apart in length (outside the factor of
// two loads compare within) give the verdict API and the compare API a
// speed claim with no leader and no runner-up, not comparable, with the
// engine's reason (the same on both), and both runs listed under
// not_comparable.
func TestLoneLeaderAmongIncomparableRunsIsNoComparableClaim(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	price := 3.6
	b, runs := finishedBenchmark(t, e, tok, 60, &price, []fakeRun{
		smallFake,
		{model: "m/big", seconds: 10, tokens: 30, e2e: millis(200), score: func(int) float64 { return 1 }},
	})
	verdict := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", tok, nil, "")
	cmp := e.api(http.MethodGet, fmt.Sprintf("/api/v1/compare?runs=%d,%d", runs[0], runs[1]), tok, nil, "")
	if verdict.status != 200 || cmp.status != 200 {
		t.Fatalf("verdict %d, compare %d", verdict.status, cmp.status)
	}
	v, c := claimsBy(verdict.body["claims"].([]any))["output_tokens_per_s"], claimsBy(cmp.body["claims"].([]any))["output_tokens_per_s"]
	if v == nil || c == nil {
		t.Fatalf("speed claims: verdict %v, compare %v", v, c)
	}
	if c["comparable"] != false {
		t.Fatalf("fixture: the comparison calls the pair's speed comparable: %v", c)
	}
	for name, cl := range map[string]map[string]any{"verdict": v, "compare": c} {
		if cl["comparable"] != false || cl["significant"] != false || cl["leader"] != nil || cl["runner_up"] != nil ||
			!strings.Contains(fmt.Sprint(cl["reason"]), "mean output length") || cl["reason"] != v["reason"] {
			t.Errorf("%s's speed claim: %v, want no leader, not comparable, the engine's reason", name, cl)
		}
	}
	listed := 0
	for _, x := range verdict.body["not_comparable"].([]any) {
		if x.(map[string]any)["metric"] == "output_tokens_per_s" {
			listed++
		}
	}
	if listed != 2 {
		t.Errorf("the verdict lists %d runs as not comparable on speed, want 2: %v", listed, verdict.body["not_comparable"])
	}
}
