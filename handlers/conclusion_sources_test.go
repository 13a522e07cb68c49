package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
)

// The comparison, the benchmark's recommendation and its report take
// their runs, scorer identity and figures from the engine, as the verdict
// does (docs/verdict.md#which-runs-and-which-scorer).

// scoreAgain scores run id again under the contains scorer, item i
// scoring sc(i): a quality beside the run's first, which the run keeps,
// and the run's latest (its headline quality), as a rescoring leaves it.
func scoreAgain(t *testing.T, e *env, id int64, n int, sc func(int) float64) {
	t.Helper()
	ctx := context.Background()
	idx, scores, vals := make([]int32, n), make([]*float64, n), make([]float64, n)
	for i := range n {
		vals[i] = sc(i)
		idx[i], scores[i] = int32(i), &vals[i]
	}
	mean, lo, hi := score.MeanCI(vals, uint64(id))
	if err := e.store.SaveScores(ctx, id, idx, nil, scores, store.RunQuality{Scorer: "contains", Scored: n, Mean: &mean, Low: &lo, High: &hi}); err != nil {
		t.Fatal(err)
	}
	if err := conclude.PairRunQualities(ctx, e.store, id); err != nil {
		t.Fatal(err)
	}
}

// qualityCell is the value, delta and delta class of the quality row's
// column col (0: the baseline) in a figures table.
func qualityCell(doc *goquery.Document, table string, col int) (value, delta, class string) {
	doc.Find(`[data-testid="` + table + `"] tbody tr`).Each(func(_ int, tr *goquery.Selection) {
		if strings.TrimSpace(tr.Find("th").Text()) != "Quality (mean score)" {
			return
		}
		td := tr.Find("td").Eq(col)
		small := td.Find("small")
		delta, class = strings.TrimSpace(small.Text()), small.AttrOr("class", "")
		value = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(td.Text()), delta))
	})
	return value, delta, class
}

// A cancelled run keeps its partial summary and its scores; the verdict
// leaves it out, and so do the benchmark's recommendation (page and API)
// and its report, each listing it with its state instead of ranking it.
func TestRecommendationAndReportLeaveOutWhatTheVerdictLeavesOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	price := 3.6
	// The second target is faster and cheaper; it is cancelled once its
	// answers were written and scored.
	fast := fakeRun{model: "m/big", seconds: 5, tokens: 20, e2e: millis(80), score: bigFake.score}
	b, ids := finishedBenchmark(t, e, tok, 30, &price, []fakeRun{smallFake, fast})
	if _, err := e.store.Pool().Exec(context.Background(), `UPDATE runs SET state = 'cancelled', stopped_by = 'cancelled' WHERE id = $1`, ids[1]); err != nil {
		t.Fatal(err)
	}
	cancelled := float64(ids[1])
	verdict := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", tok, nil, "")
	if fmt.Sprint(verdict.body["left_out"]) != fmt.Sprintf("[map[run_id:%d state:cancelled]]", ids[1]) {
		t.Fatalf("fixture: the verdict leaves out %v", verdict.body["left_out"])
	}
	rec := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/recommendation", tok, nil, "")
	feasible, _ := rec.body["feasible"].([]any)
	if rec.status != 200 || len(feasible) != 1 || feasible[0].(map[string]any)["run_id"] != float64(ids[0]) {
		t.Errorf("the recommendation API ranks %v; the verdict weighs run %d alone", feasible, ids[0])
	}
	left, _ := rec.body["left_out"].([]any)
	if len(left) != 1 || left[0].(map[string]any)["run_id"] != cancelled || left[0].(map[string]any)["state"] != "cancelled" ||
		!strings.Contains(fmt.Sprint(left[0].(map[string]any)["reason"]), "cancelled") {
		t.Errorf("the recommendation API's left_out: %v", rec.body["left_out"])
	}
	cl := e.client()
	cl.signIn("ada@example.com", "correct horse")
	page := cl.get("/benchmarks/" + b + "/recommend")
	if page.doc.Find(fmt.Sprintf(`[data-testid="feasible-%d"]`, ids[1])).Length() != 0 ||
		!strings.Contains(page.text(fmt.Sprintf(`[data-testid="left-out-%d"]`, ids[1])), "cancelled") {
		t.Errorf("the recommendation page ranks the cancelled run or does not list it as left out: %q", page.text(`[data-testid="left-out"]`))
	}
	report := cl.get("/benchmarks/" + b + "/report.html")
	ranked := report.text(`[data-testid="report-recommendation"]`)
	if strings.Contains(ranked, fmt.Sprintf("run %d ", ids[1])) || !strings.Contains(ranked, fmt.Sprintf("run %d ", ids[0])) {
		t.Errorf("the report ranks %q; the verdict weighs run %d alone", ranked, ids[0])
	}
	if !strings.Contains(report.text(fmt.Sprintf(`[data-testid="report-left-out-%d"]`, ids[1])), "cancelled") ||
		report.doc.Find(fmt.Sprintf(`[data-testid="report-run-%d"]`, ids[1])).Length() != 1 {
		t.Errorf("the report does not list the cancelled run as left out, or drops it from its runs table")
	}
	if report.doc.Find(`[data-testid="report-compare"]`).Length() != 0 {
		t.Errorf("the report's comparison table sets the cancelled run against the other")
	}
	js := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/report.html?format=json", tok, nil, "")
	jrec, _ := js.body["recommendation"].(map[string]any)
	if js.status != 200 || jrec == nil || len(jrec["feasible"].([]any)) != 1 || len(jrec["left_out"].([]any)) != 1 {
		t.Errorf("the JSON report's recommendation: %d %v", js.status, jrec)
	}
}

// Runs scored under exact and then rescored the other way round under
// contains: the comparison ranks quality under the scorer identity the
// verdict ranks by (the owner's choice first), and its figures table and
// header show the mean under that identity beside the claim, never the
// newest scoring's.
func TestComparisonRanksQualityUnderTheVerdictsScorer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	price := 3.6
	// exact: m/small 0.667, m/big 1.000; contains: m/small 1.000, m/big 0.667.
	b, ids := finishedBenchmark(t, e, tok, 30, &price, []fakeRun{smallFake, bigFake})
	scoreAgain(t, e, ids[0], 30, bigFake.score)
	scoreAgain(t, e, ids[1], 30, smallFake.score)
	cl := e.client()
	cl.signIn("ada@example.com", "correct horse")

	// No choice: exact, the benchmark's own scorer, ranks; m/big leads
	// significantly, and its figure is exact's 1.000 (+50 %), not
	// contains' 0.667.
	cmp := cl.get(fmt.Sprintf("/compare?runs=%d,%d", ids[0], ids[1]))
	claim := cmp.text(`[data-testid="claim-quality"]`)
	if !strings.Contains(claim, "significant") || strings.Contains(claim, "not established") {
		t.Fatalf("fixture: the quality claim under exact is %q", claim)
	}
	for _, table := range []struct{ page, id string }{{"/compare?runs=" + fmt.Sprintf("%d,%d", ids[0], ids[1]), "compare-table"}, {"/benchmarks/" + b + "/report.html", "report-compare"}} {
		v, delta, class := qualityCell(cl.get(table.page).doc, table.id, 1)
		if v != "1.000" || !strings.HasPrefix(delta, "+50") || class != "delta-better" {
			t.Errorf("%s: run %d's quality %q %q (%s); under exact it is 1.000, +50 %% better", table.id, ids[1], v, delta, class)
		}
	}
	if q := cmp.text(fmt.Sprintf(`[data-testid="compare-run-%d"] [data-testid="quality-ci"]`, ids[1])); !strings.HasPrefix(q, "quality 1.000") {
		t.Errorf("the header shows %q beside a claim made under exact", q)
	}
	if s := cmp.text(`[data-testid="compare-scorer"]`); !strings.Contains(s, "exact") {
		t.Errorf("the comparison says it compares quality under %q", s)
	}

	// The owner ranks by contains: the verdict's leader is m/small, and so
	// is the comparison's (API and the page the verdict links to).
	if r := e.api(http.MethodPatch, "/api/v1/benchmarks/"+b, tok, strings.NewReader(`{"verdict_scorer":"contains"}`), "application/json"); r.status != 200 {
		t.Fatalf("choose contains: %d %v", r.status, r.body)
	}
	v := claimsBy(e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", tok, nil, "").body["claims"].([]any))["quality"]
	if leaderOf(v) != float64(ids[0]) || v["scorer"] != "contains" {
		t.Fatalf("fixture: the verdict's quality claim under contains: %v", v)
	}
	c := claimsBy(e.api(http.MethodGet, fmt.Sprintf("/api/v1/compare?runs=%d,%d", ids[0], ids[1]), tok, nil, "").body["claims"].([]any))["quality"]
	if leaderOf(c) != leaderOf(v) || c["scorer"] != "contains" || fmt.Sprint(c["p"]) != fmt.Sprint(v["p"]) {
		t.Errorf("the compare API's quality claim %v; the verdict's %v", c, v)
	}
	link, _ := cl.get("/benchmarks/" + b).doc.Find(`[data-testid="verdict-compare"]`).Attr("href")
	linked := cl.get(link)
	val, delta, class := qualityCell(linked.doc, "compare-table", 1)
	if val != "0.667" || !strings.HasPrefix(delta, "-33") || class != "delta-worse" {
		t.Errorf("%s: run %d's quality %q %q (%s); under contains it is 0.667, worse", link, ids[1], val, delta, class)
	}
	report := cl.get("/benchmarks/" + b + "/report.html")
	for name, s := range map[string]string{"comparison": linked.text(`[data-testid="compare-scorer"]`), "report": report.text(`[data-testid="report-scorer"]`)} {
		if !strings.Contains(s, "contains") {
			t.Errorf("the %s says it compares quality under %q; the verdict ranks by contains", name, s)
		}
	}
}

// Runs of two datasets: the page refuses them (items are set side by
// side), and the compare API calls them not comparable on quality, by the
// engine's rule, and pairs no items of unrelated datasets.
func TestComparisonOfTwoDatasetsPairsNoItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	_, one := finishedBenchmark(t, e, tok, 30, nil, []fakeRun{smallFake})
	_, other := finishedBenchmark(t, e, tok, 31, nil, []fakeRun{bigFake})
	a, b := one[0], other[0]
	res := e.api(http.MethodGet, fmt.Sprintf("/api/v1/compare?runs=%d,%d", a, b), tok, nil, "")
	if res.status != 200 {
		t.Fatalf("compare API: %d %v", res.status, res.body)
	}
	q := claimsBy(res.body["claims"].([]any))["quality"]
	if q == nil || q["comparable"] != false || q["leader"] != nil || q["p"] != nil || !strings.Contains(fmt.Sprint(q["reason"]), "dataset") {
		t.Errorf("quality between two datasets: %v", q)
	}
	var kept int
	if err := e.store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM quality_pairs WHERE run_a = $1 AND run_b = $2`, min(a, b), max(a, b)).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if kept != 0 {
		t.Errorf("%d paired comparisons kept between runs of two datasets", kept)
	}
	cl := e.client()
	cl.signIn("ada@example.com", "correct horse")
	page := cl.get(fmt.Sprintf("/compare?runs=%d,%d", a, b))
	if page.status != 422 || !strings.Contains(page.text(`[data-testid="compare-error"]`), "another dataset") {
		t.Errorf("the page on two datasets: %d %q", page.status, page.text(`[data-testid="compare-error"]`))
	}
}

// Runs that share no scored item are compared by a z-test from their
// intervals: 0.72 [0.62, 0.82] against 0.56 [0.46, 0.66] is significant
// (z ≈ 2.2) though the intervals overlap, and the comparison's header
// says nothing of significance against its claim.
func TestComparisonHeaderFollowsTheQualityClaim(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	_, ids := finishedBenchmark(t, e, tok, 30, nil, []fakeRun{smallFake, bigFake})
	for i, q := range [][3]float64{{0.56, 0.46, 0.66}, {0.72, 0.62, 0.82}} {
		// The quality kept without item scores: nothing to pair.
		if err := e.store.SaveScores(context.Background(), ids[i], nil, nil, nil,
			store.RunQuality{Scorer: "exact", Scored: 30, Mean: &q[0], Low: &q[1], High: &q[2]}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.Pool().Exec(context.Background(), `UPDATE run_qualities SET idx = '{}', scores = '{}' WHERE run_id = $1`, ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	cl := e.client()
	cl.signIn("ada@example.com", "correct horse")
	page := cl.get(fmt.Sprintf("/compare?runs=%d,%d", ids[0], ids[1]))
	head := fmt.Sprintf(`[data-testid="compare-run-%d"] `, ids[1])
	claim := page.text(head + `[data-testid="claim-quality"]`)
	if !strings.Contains(claim, "z-from-intervals") || strings.Contains(claim, "not established") {
		t.Fatalf("fixture: the quality claim is %q", claim)
	}
	if page.doc.Find(head+`[data-testid="not-significant"]`).Length() != 0 {
		t.Errorf("the header says %q beside the claim %q", page.text(head+`[data-testid="not-significant"]`), claim)
	}
	if q := page.text(head + `[data-testid="quality-ci"]`); q != "quality 0.720 [0.620, 0.820]" {
		t.Errorf("the header's quality %q", q)
	}
}
