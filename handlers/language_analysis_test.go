package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/said"
)

// twoScoredRuns is a finished benchmark of two targets on one dataset,
// both scored with exact match (quality 1 and 0.667), priced, with their
// summaries: what the comparison, the recommendation, the report and the
// capacity planner weigh.
func twoScoredRuns(t *testing.T, e *env) (tok, benchmark string, runs []int64) {
	t.Helper()
	ctx := context.Background()
	tok = e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	var ds strings.Builder
	for i := range 30 {
		fmt.Fprintf(&ds, "{\"custom_id\":\"c%02d\",\"prompt\":\"q%d\"}\n", i, i)
	}
	up := e.upload(tok, "d.jsonl", []byte(ds.String()), nil)
	for _, m := range []string{"m/small", "m/big"} {
		testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: m, Quantization: "bf16"})
	}
	agent := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	price := 3.6
	if err := e.store.SetHardwarePrice(ctx, "cpu-2c", &price); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`{"name":"cmp","dataset":%v,"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"},
		{"model":"m/big","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":8}}`, up.body["dataset_id"])
	r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json")
	if r.status != 201 {
		t.Fatalf("create: %v", r.body)
	}
	benchmark = fmt.Sprint(r.body["benchmark_id"])
	for k, rr := range r.body["runs"].([]any) {
		id := int64(rr.(map[string]any)["run_id"].(float64))
		runs = append(runs, id)
		var job int64
		_ = e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, id).Scan(&job)
		claim, err := e.store.ClaimRun(ctx, id, agent.ID, job, "sim")
		if err != nil {
			t.Fatal(err)
		}
		var rs []store.ResultRecord
		for i := range 30 {
			rs = append(rs, store.ResultRecord{Result: jobs.Result{Idx: i, CustomID: fmt.Sprintf("c%02d", i), Status: jobs.StatusOK, Output: fmt.Sprintf("answer %d", i),
				CompletionTokens: 10 * (k + 1), ContentEvents: 10, TTFT: time.Duration(10*(k+1)) * time.Millisecond, E2E: 100 * time.Millisecond}, SentAt: time.Now()})
		}
		if _, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil {
			t.Fatal(err)
		}
		sum, _ := summary.Run(ctx, e.store, id, jobs.SLO{}, 10*time.Second)
		raw, _ := json.Marshal(sum)
		if err := e.store.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", StoppedBy: "completed", Segment: 10 * time.Second, Summary: raw}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE results SET score = CASE WHEN run_id = $2 AND idx % 3 = 0 THEN 0 ELSE 1 END WHERE run_id IN ($1, $2)`, runs[0], runs[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET scorer = 'exact', scored = 30, quality = CASE WHEN id = $1 THEN 1 ELSE 20 / 30.0 END,
		quality_lo = CASE WHEN id = $1 THEN 1 ELSE 0.5 END, quality_hi = CASE WHEN id = $1 THEN 1 ELSE 0.833 END WHERE id IN ($1, $2)`, runs[0], runs[1]); err != nil {
		t.Fatal(err)
	}
	concludeRun(t, e, runs[0])
	concludeRun(t, e, runs[1])
	return tok, benchmark, runs
}

// A German browser reads the comparison, the recommendation, the report
// and the capacity planner in German, the sentences app/conclude builds
// included, with German decimal commas; the JSON API stays English.
func TestAnalysisPagesInGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok, b, runs := twoScoredRuns(t, e)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")

	cmp := c.getIn(fmt.Sprintf("/compare?runs=%d,%d", runs[0], runs[1]), "de")
	if cmp.status != 200 || cmp.text("h1") != "Läufe vergleichen" || cmp.text(`[data-testid="baseline"]`) != "Referenz" {
		t.Fatalf("compare page in German: %d h1 %q baseline %q", cmp.status, cmp.text("h1"), cmp.text(`[data-testid="baseline"]`))
	}
	if q := cmp.text(fmt.Sprintf(`[data-testid="compare-run-%d"] [data-testid="quality-ci"]`, runs[1])); q != "Qualität 0,667 [0,500, 0,833]" {
		t.Errorf("quality interval in German: %q", q)
	}
	if table := cmp.text(`[data-testid="compare-table"]`); !strings.Contains(table, "Qualität (mittlere Bewertung)") || !strings.Contains(table, "-33,3%") {
		t.Errorf("comparison table in German:\n%s", table)
	}
	if claim := cmp.text(`[data-testid="claim-quality"]`); !strings.HasPrefix(claim, "Qualität: -33,3 %, signifikant (") {
		t.Errorf("quality claim in German: %q", claim)
	}
	if en := c.getIn(fmt.Sprintf("/compare?runs=%d,%d", runs[0], runs[1]), "en"); !strings.HasPrefix(en.text(`[data-testid="claim-quality"]`), "quality: -33.3 %, significant (") {
		t.Errorf("quality claim in English: %q", en.text(`[data-testid="claim-quality"]`))
	}

	rec := c.getIn("/benchmarks/"+b+"/recommend?min_quality=0.9", "de")
	if rec.status != 200 || rec.text("h1") != "Welches Ziel Sie wählen sollten" {
		t.Fatalf("recommendation in German: %d %q", rec.status, rec.text("h1"))
	}
	if why := rec.text(fmt.Sprintf(`[data-testid="excluded-%d"]`, runs[1])); !strings.Contains(why, "Qualität 0,6667 liegt unter dem Minimum 0,9") {
		t.Errorf("exclusion reason in German: %q", why)
	}
	if why := rec.text(fmt.Sprintf(`[data-testid="explain-%d"]`, runs[0])); why != "1. Das einzige zulässige Ziel." {
		t.Errorf("explanation in German: %q", why)
	}
	both := c.getIn("/benchmarks/"+b+"/recommend", "de")
	if why := both.text(fmt.Sprintf(`[data-testid="explain-%d"]`, runs[0])); !strings.Contains(why, "Auf Rang eins: beste Qualität (1,000)") {
		t.Errorf("first-ranked explanation in German: %q", why)
	}
	bad := c.getIn("/benchmarks/"+b+"/recommend?max_cost=cheap", "de")
	if bad.status != 422 || !strings.Contains(bad.text(`[data-testid="recommend-error"]`), `max_cost muss eine endliche Zahl ≥ 0 sein (angegeben: "cheap")`) {
		t.Errorf("the form's mistake in German: %d %q", bad.status, bad.text(`[data-testid="recommend-error"]`))
	}
	req := httptest.NewRequest(http.MethodGet, "/api/v1/benchmarks/"+b+"/recommendation?max_cost=cheap", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept-Language", "de")
	res, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	var apiErr struct{ Error string }
	_ = json.NewDecoder(res.Body).Decode(&apiErr)
	res.Body.Close()
	if res.StatusCode != 422 || apiErr.Error != `max_cost must be a finite number ≥ 0 (got "cheap")` {
		t.Errorf("the API's mistake stays English: %d %q", res.StatusCode, apiErr.Error)
	}

	rep := c.getIn("/benchmarks/"+b+"/report.html", "de")
	if lang, _ := rep.doc.Find("html").Attr("lang"); rep.status != 200 || lang != "de" || !strings.Contains(rep.text("main"), "Konfiguration wie eingereicht") {
		t.Fatalf("report in German: %d lang %q", rep.status, lang)
	}
	if ranked := rep.text(`[data-testid="report-recommendation"]`); !strings.Contains(ranked, "Punktzahl") {
		t.Errorf("report's ranking in German: %q", ranked)
	}

	var datasetID int64
	if err := e.store.Pool().QueryRow(context.Background(), `SELECT dataset_id FROM benchmarks WHERE id = $1`, b).Scan(&datasetID); err != nil {
		t.Fatal(err)
	}
	capURL := fmt.Sprintf("/capacity?dataset=%d&peak_rps=10&output_tokens=5&min_quality=0.95", datasetID)
	plan := c.getIn(capURL, "de")
	if plan.status != 200 || plan.text("h1") != "Wie viele Replikate, zu welchen Kosten" {
		t.Fatalf("capacity planner in German: %d %q %q", plan.status, plan.text("h1"), plan.text(`[data-testid="capacity-errors"]`))
	}
	below := plan.text(fmt.Sprintf(`[data-testid="capacity-excluded-%d"] [data-testid="reason-quality_below_minimum"]`, runs[1]))
	if !strings.HasPrefix(below, "Qualität 0,667 mit ") || !strings.HasSuffix(below, ", unter dem Minimum 0,95") {
		t.Errorf("capacity exclusion in German: %q", below)
	}
	if en := c.getIn(capURL, "en"); !strings.HasSuffix(en.text(fmt.Sprintf(`[data-testid="capacity-excluded-%d"] [data-testid="reason-quality_below_minimum"]`, runs[1])), ", below the minimum 0.95") {
		t.Errorf("capacity exclusion in English: %q", en.text(`[data-testid="capacity-excluded"]`))
	}
	wrong := c.getIn(fmt.Sprintf("/capacity?dataset=%d&peak_rps=many", datasetID), "de")
	if wrong.status != 422 || !strings.Contains(wrong.text(`[data-testid="capacity-errors"]`), "traffic.peak_rps: muss eine Zahl sein") {
		t.Errorf("capacity field error in German: %d %q", wrong.status, wrong.text(`[data-testid="capacity-errors"]`))
	}
}

// The analysis pages' errors speak the reader's language; the API's stay
// English.
func TestAnalysisErrorsInGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok, b, runs := twoScoredRuns(t, e)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	if p := c.getIn(fmt.Sprintf("/compare?runs=%d,999999", runs[0]), "de"); p.status != 404 || !strings.Contains(p.text("main"), "Einer dieser Läufe existiert nicht oder gehört nicht Ihnen.") {
		t.Errorf("missing run in German: %d %q", p.status, p.text("main"))
	}
	if p := c.getIn(fmt.Sprintf("/compare?runs=%d", runs[0]), "de"); p.status != 422 || p.text(`[data-testid="compare-error"]`) != "Wählen Sie 2 bis 8 Läufe zum Vergleichen (runs=1,2,…)." {
		t.Errorf("one run in German: %d %q", p.status, p.text(`[data-testid="compare-error"]`))
	}
	if p := c.getIn(fmt.Sprintf("/compare?runs=%d,%d&baseline=7", runs[0], runs[1]), "de"); p.status != 422 ||
		p.text(`[data-testid="compare-error"]`) != "Die Referenz muss einer der verglichenen Läufe sein (angegeben: 7)" {
		t.Errorf("foreign baseline in German: %d %q", p.status, p.text(`[data-testid="compare-error"]`))
	}
	if p := c.getIn("/benchmarks/"+b+"/report.html?format=pdf", "de"); p.status != 400 || !strings.Contains(p.text("main"), `Format "pdf": verwenden Sie html oder json`) {
		t.Errorf("report format in German: %d %q", p.status, p.text("main"))
	}
	req := httptest.NewRequest(http.MethodGet, "/api/v1/benchmarks/"+b+"/report.html?format=pdf", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept-Language", "de")
	res, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	var apiErr struct{ Error string }
	_ = json.NewDecoder(res.Body).Decode(&apiErr)
	res.Body.Close()
	if res.StatusCode != 400 || apiErr.Error != `format "pdf": use html or json` {
		t.Errorf("the API's report format error stays English: %d %q", res.StatusCode, apiErr.Error)
	}
}

// Every sentence app/conclude gives a page as a code and values reads, in
// English through the catalogue, exactly as the English it gives the
// API: the two are written apart and must not drift.
func TestAdviseSentencesReadAsTheAPIsEnglish(t *testing.T) {
	t.Parallel()
	ctx := i18n.With(context.Background(), i18n.Default().Lang("en"))
	check := func(what string, s conclude.Said, english string) {
		t.Helper()
		if s.Code == "" {
			t.Errorf("%s: no code beside %q", what, english)
			return
		}
		if got := said.Word(ctx, s); got != english {
			t.Errorf("%s (%s):\n page %q\n API  %q", what, s.Code, got, english)
		}
	}
	// The rules the API states as constants read the same on the pages.
	if got := i18n.T(ctx, "capacity.coverage"); got != conclude.OutputCoverageRule {
		t.Errorf("capacity.coverage = %q, the API says %q", got, conclude.OutputCoverageRule)
	}
	if got := i18n.T(ctx, "recommend.ranking_tests"); got != conclude.RankingTests {
		t.Errorf("recommend.ranking_tests = %q, the API says %q", got, conclude.RankingTests)
	}
	f := func(v float64) *float64 { return &v }
	load := func(profile, sampling string) *jobs.LoadIdentity {
		return &jobs.LoadIdentity{Profile: profile, Params: "c=1", Sampling: sampling, DatasetID: 1, InputClass: "<64", OutputClass: "64–255"}
	}
	tps := func(mean, lo, hi float64, n int) stats.Estimate {
		return stats.Estimate{Mean: mean, Lo: lo, Hi: hi, SE: (hi - lo) / 3.92, N: n}
	}
	cands := []conclude.Candidate{
		{RunID: 1, Model: "m/a", Runtime: "vllm", Hardware: "h1", Quality: f(0.9), QualityLo: f(0.85), QualityHi: f(0.95), ScorerKey: "exact",
			TokensPS: f(1200), TPS: tps(1200, 1150, 1250, 20), CostPer1M: f(0.2), E2Ep95: f(800), E2Ep95Lo: f(780), E2Ep95Hi: f(820), Load: load("sequential", "t=0")},
		{RunID: 2, Model: "m/a", Runtime: "sglang", Hardware: "h1", Quality: f(0.6), QualityLo: f(0.5), QualityHi: f(0.7), ScorerKey: "exact",
			TokensPS: f(800), TPS: tps(800, 790, 810, 20), CostPer1M: f(0.3), E2Ep95: f(900), E2Ep95Lo: f(880), E2Ep95Hi: f(920), Load: load("sequential", "t=0")},
		{RunID: 3, Model: "m/b", Runtime: "vllm", Hardware: "h2", Quality: f(0.88), QualityLo: f(0.8), QualityHi: f(0.96), ScorerKey: "exact",
			TokensPS: f(1190), TPS: tps(1190, 1100, 1280, 20), Load: load("sequential", "t=0")},
		{RunID: 4, Model: "m/c", Runtime: "vllm", Hardware: "h1", Quality: f(0.7), ScorerKey: "rougeL", TokensPS: f(500), Load: load("constant", "t=1")},
		{RunID: 5, Model: "m/d", Runtime: "vllm", Hardware: "h3", Quality: f(0.95), ScorerKey: "exact", TokensPS: f(300), GPUMemGiB: f(70)},
	}
	ev := conclude.Evidence{Paired: []conclude.QualityDiff{{A: 1, B: 2, N: 30, Mean: 0.3, Lo: 0.1, Hi: 0.5, P: 0.004, Test: "mcnemar-exact", OnlyA: 2}}}
	for _, x := range cands {
		for _, y := range cands {
			for _, crit := range conclude.Criteria {
				m := conclude.Compare(x, y, crit, ev)
				if !m.Measured {
					continue
				}
				if !m.Comparable {
					check(fmt.Sprintf("reason %d vs %d on %s", x.RunID, y.RunID, crit), m.ReasonSaid, m.Reason)
				}
				check(fmt.Sprintf("basis %d vs %d on %s", x.RunID, y.RunID, crit), m.BasisSaid, m.Basis)
				if got := said.Word(ctx, m.PhraseSaid("X")); got != m.PhraseThan("X") {
					t.Errorf("phrase %d vs %d on %s: %q, want %q", x.RunID, y.RunID, crit, got, m.PhraseThan("X"))
				}
				if got := said.Word(ctx, m.PhraseSaid(nil)); got != m.Phrase() {
					t.Errorf("bare phrase %d vs %d on %s: %q, want %q", x.RunID, y.RunID, crit, got, m.Phrase())
				}
			}
		}
	}
	for _, tc := range []struct {
		cons conclude.Constraints
		w    conclude.Weights
	}{
		{conclude.Constraints{}, conclude.Weights{Quality: 1, Speed: 1, Cost: 1}},
		{conclude.Constraints{MinQuality: f(0.8), MaxE2Ep95: f(850), MaxCost: f(0.25), MaxGPUMem: f(40), MaxTTFTp95: f(100), Hardware: []string{"h1", "h3"}},
			conclude.Weights{Quality: 1, Speed: 1, Cost: 1}},
		{conclude.Constraints{}, conclude.Weights{Speed: 1}},
		{conclude.Constraints{Hardware: []string{"h2"}}, conclude.Weights{Quality: 1, Cost: 1}},
		{conclude.Constraints{Hardware: []string{"h1"}}, conclude.Weights{Quality: 1, Speed: 1}},
	} {
		rec := conclude.RecommendWith(cands, tc.cons, tc.w, ev)
		for _, r := range rec.Feasible {
			check(fmt.Sprintf("explanation of %d", r.RunID), r.ExplanationSaid, r.Explanation)
		}
		if len(rec.NotesSaid) != len(rec.Notes) {
			t.Errorf("%d notes, %d worded", len(rec.Notes), len(rec.NotesSaid))
		}
		for i := range rec.NotesSaid {
			check("note", rec.NotesSaid[i], rec.Notes[i])
		}
		for _, x := range rec.Excluded {
			for i := range x.Reasons {
				check(fmt.Sprintf("exclusion of %d", x.RunID), x.ReasonsSaid[i], x.Reasons[i])
			}
		}
		for _, x := range rec.NotComparable {
			check(fmt.Sprintf("not comparable %d", x.RunID), x.ReasonSaid, x.Reason)
		}
	}

	measured := []conclude.Measured{
		{RunID: 1, Model: "m/a", Hardware: "h1", GPUs: 1, PricePerHour: f(2), SLORate: f(4), SLORateFrom: "run 1 at its one measured load (a lower bound: no sweep)",
			SLOFrom: conclude.Say("capacity.said.from_one_load", "Run", int64(1)), MaxMeasuredRPS: 4, Quality: f(0.9), QualityScorer: "exact",
			InputTokens: 100, OutputTokens: 100, OutputTokensP50: f(90), OutputTokensP90: f(300), OutputTokensMax: f(400), JoulesPerToken: f(0.5)},
		{RunID: 2, Model: "m/b", Hardware: "h2", GPUs: 2, SLORate: f(1), SLORateFrom: `run 2, sweep step "rate 1.00/s"`,
			SLOFrom: conclude.Say("capacity.said.from_step", "Run", int64(2), "Step", "rate 1.00/s"), MaxMeasuredRPS: 1, Quality: f(0.5), QualityScorer: "rougeL",
			OutputTokensP50: f(1), OutputTokensP90: f(1), OutputTokensMax: f(1)},
		{RunID: 3, Model: "m/c", Hardware: "h1", PricePerHour: f(1), Problem: "the run has no figures", ProblemSaid: conclude.Say("capacity.said.no_figures")},
		{RunID: 4, Model: "m/d", Hardware: "h1", PricePerHour: f(1), SLORate: f(8), MaxMeasuredRPS: 8, Quality: f(0.6), QualityScorer: "exact",
			OutputTokensP50: f(200), OutputTokensP90: f(260), OutputTokensMax: f(300)},
		{RunID: 5, Model: "m/e", Hardware: "h1", PricePerHour: f(1), SLORate: f(8), MaxMeasuredRPS: 8},
	}
	traffic := conclude.Traffic{PeakRPS: 10, AverageRPS: 5, InputTokens: 512, OutputTokens: 256}
	costs := conclude.Costs{EnergyPricePerKWh: 0.15, LicencePerMonth: 100}
	for _, q := range []*conclude.QualityFloor{nil, {Min: 0.75, Scorer: "exact"}, {Min: 0.5}} {
		plan := conclude.PlanCapacity(traffic, 0.2, costs, q, measured)
		for _, a := range append(plan.Feasible, plan.Excluded...) {
			for i := range a.Reasons {
				check(fmt.Sprintf("run %d not sized", a.RunID), a.ReasonsSaid[i], a.Reasons[i])
			}
			for i := range a.Extrapolated {
				check(fmt.Sprintf("run %d extrapolated", a.RunID), a.ExtrapolatedSaid[i], a.Extrapolated[i])
			}
			for k, v := range a.Sources {
				check(fmt.Sprintf("run %d source of %s", a.RunID, k), a.SourcesSaid[k], v)
			}
		}
		for _, today := range []conclude.TodayMeasured{
			{Today: conclude.Today{Model: "m/a", Hardware: "h1", Replicas: 4, MigrationCost: 1000}, PricePerHour: f(3), JoulesPerToken: f(0.7), EnergyRun: 1},
			{Today: conclude.Today{Model: "m/z", Hardware: "h9", Replicas: 2}},
		} {
			roi := conclude.PlanROI(today, traffic, costs, plan, func(a conclude.Capacity) conclude.QualityChange {
				return conclude.QualityAgainst(a.RunID, nil, today, "", conclude.Evidence{})
			})
			for k, v := range roi.Today.Sources {
				check("today's "+k, roi.Today.SourcesSaid[k], v)
			}
			for _, row := range roi.Rows {
				check(fmt.Sprintf("run %d against today", row.RunID), row.Quality.BasisSaid, row.Quality.Basis)
				if row.EnergyLeftOut != "" {
					check(fmt.Sprintf("run %d energy", row.RunID), row.EnergyLeftOutSaid, row.EnergyLeftOut)
				}
			}
		}
	}
}
