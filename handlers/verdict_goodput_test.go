package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// openLoopBenchmark makes a benchmark of n items sent as a poisson load
// with an end-to-end SLO of 500 ms (none when slo is false), one run per
// model, where the run of model k answers its first late[k] requests in
// 900 ms (past the SLO) and the others in 200 ms, spread evenly over a
// 20 s measured window as the offered rate sends them.
func openLoopBenchmark(t *testing.T, e *env, tok string, n int, slo bool, models []string, late []int) (string, []int64) {
	t.Helper()
	return openLoopRepeated(t, e, tok, n, slo, models, 1, func(k, _ int) int { return late[k] })
}

// openLoopRepeated is openLoopBenchmark with each model run repeats times,
// the r-th run of model k answering its first late(k, r) requests late.
func openLoopRepeated(t *testing.T, e *env, tok string, n int, slo bool, models []string, repeats int, late func(k, r int) int) (string, []int64) {
	t.Helper()
	ctx := context.Background()
	var ds strings.Builder
	for i := range n {
		fmt.Fprintf(&ds, "{\"custom_id\":\"c%03d\",\"prompt\":\"%s q%d\",\"reference\":\"%d\"}\n", i, models[0], i, i)
	}
	up := e.upload(tok, strings.ReplaceAll(models[0], "/", "-")+".jsonl", []byte(ds.String()), nil)
	var targets []string
	for _, m := range models {
		testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: m, Quantization: "bf16"})
		targets = append(targets, fmt.Sprintf(`{"model":%q,"runtime":"sim","hardware":"cpu-2c"}`, m))
	}
	agent := testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	bound, sloSet := ``, jobs.SLO{}
	if slo {
		bound, sloSet = `,"slo":{"e2e":"500ms"}`, jobs.SLO{E2E: jobs.Duration(500 * time.Millisecond)}
	}
	manifest := fmt.Sprintf(`{"name":"open","dataset":%v,"targets":[%s],"load":{"profile":"poisson","rate":10},"sampling":{"max_tokens":32},"repeats":%d%s}`,
		up.body["dataset_id"], strings.Join(targets, ","), repeats, bound)
	res := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(manifest), "application/json")
	if res.status != 201 {
		t.Fatalf("create: %d %v", res.status, res.body)
	}
	var ids []int64
	seen := map[int]int{}
	for _, rr := range res.body["runs"].([]any) {
		id := int64(rr.(map[string]any)["run_id"].(float64))
		k := 0
		for k < len(models) && models[k] != rr.(map[string]any)["model"].(string) {
			k++
		}
		r := seen[k]
		seen[k]++
		var job int64
		_ = e.store.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, id).Scan(&job)
		claim, err := e.store.ClaimRun(ctx, id, agent.ID, job, "sim")
		if err != nil {
			t.Fatal(err)
		}
		const window = 20 * time.Second
		start := time.Now().Add(-time.Minute)
		var rs []store.ResultRecord
		for i := range n {
			e2e := 200*time.Millisecond + time.Duration(i%7)*time.Millisecond
			if i < late(k, r) {
				e2e = 900 * time.Millisecond
			}
			rs = append(rs, store.ResultRecord{Result: jobs.Result{Idx: i, CustomID: fmt.Sprintf("c%03d", i), Status: jobs.StatusOK, Output: "x",
				CompletionTokens: 10, ContentEvents: 10, TTFT: 20 * time.Millisecond, E2E: e2e}, SentAt: start.Add(window * time.Duration(i) / time.Duration(n))})
		}
		if _, err := e.store.WriteResults(ctx, claim.Lease, rs); err != nil {
			t.Fatal(err)
		}
		sum, err := summary.Run(ctx, e.store, id, sloSet, window)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(sum)
		if err := e.store.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", StoppedBy: "completed", Segment: window, Summary: raw,
			Throughput: sum.OutputTokensPerS}); err != nil {
			t.Fatal(err)
		}
		// No scorer: the run's figures are kept once its score job ran.
		if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET scored_at = now() WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		concludeRun(t, e, id)
		ids = append(ids, id)
	}
	return fmt.Sprint(res.body["benchmark_id"]), ids
}

// Under an open loop the target that meets the SLO on clearly more
// requests leads on goodput, significant by the z-test for two
// proportions, alike on the verdict page (English and German), the
// verdict API and the compare API; speed is not ranked, and the
// recommendation ranks the target first by goodput.
func TestOpenLoopGoodputLeadOnEverySurface(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	b, runs := openLoopBenchmark(t, e, tok, 200, true, []string{"m/steady", "m/late"}, []int{10, 60})
	api := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", tok, nil, "")
	g := claimsBy(api.body["claims"].([]any))["goodput_share"]
	if g == nil || g["leader"].(map[string]any)["model"] != "m/steady" || g["test"] != "z-two-proportions" || g["significant"] != true ||
		g["comparable"] != true || g["p"].(float64) >= 0.001 || g["leader"].(map[string]any)["value"] != 0.95 {
		t.Fatalf("verdict API goodput claim: %v in %v", g, api.body)
	}
	// Speed under an open loop is the offered load: no surface names a
	// leader for it (before, the engine's lead named the faster run while
	// its own test called the pair not ranked, and the start page read
	// "Fastest: m/steady (0.2 % faster)").
	if s := claimsBy(api.body["claims"].([]any))["output_tokens_per_s"]; s == nil || s["comparable"] != false || s["leader"] != nil ||
		!strings.Contains(fmt.Sprint(s["reason"]), "offered load") {
		t.Errorf("speed under an open loop: %v", s)
	}
	cmp := e.api(http.MethodGet, fmt.Sprintf("/api/v1/compare?runs=%d,%d", runs[1], runs[0]), tok, nil, "")
	c := claimsBy(cmp.body["claims"].([]any))["goodput_share"]
	if c == nil || c["leader"].(map[string]any)["run_id"].(float64) != float64(runs[0]) || c["test"] != g["test"] || c["p"] != g["p"] || c["significant"] != true {
		t.Errorf("compare API's goodput claim %v, verdict's %v", c, g)
	}
	rec := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/recommendation", tok, nil, "")
	feasible, _ := rec.body["feasible"].([]any)
	if rec.status != 200 || len(feasible) != 2 || feasible[0].(map[string]any)["model"] != "m/steady" || feasible[0].(map[string]any)["goodput_score"] == nil ||
		!strings.Contains(fmt.Sprint(rec.body["notes"]), "weighs goodput") {
		t.Errorf("recommendation under an open loop: %d %v", rec.status, rec.body)
	}
	cl := e.client()
	cl.signIn("ada@example.com", "correct horse")
	for _, lang := range []string{"en", "de"} {
		page := cl.getIn("/benchmarks/"+b, lang)
		line := page.doc.Find(`[data-testid="verdict-goodput"]`)
		loc := i18n.Default().Lang(lang)
		if line.Length() != 1 || !strings.Contains(line.Find(`[data-testid="verdict-winner"]`).Text(), "m/steady") ||
			strings.TrimSpace(line.Find(`[data-testid="verdict-significance"]`).Text()) != loc.T("vline.significant") ||
			!strings.Contains(line.Text(), loc.T("vline.title_goodput")) {
			t.Errorf("%s: goodput line %q", lang, strings.Join(strings.Fields(line.Text()), " "))
		}
		basis := strings.Join(strings.Fields(line.Find(`[data-testid="verdict-basis"]`).Text()), " ")
		want := map[string]string{"en": "z-test for two proportions", "de": "z-Test für zwei Anteile"}[lang]
		if !strings.Contains(basis, want) {
			t.Errorf("%s: basis %q lacks %q", lang, basis, want)
		}
		// The start page's one line names goodput, not speed (the
		// offered load), for this benchmark.
		summary := cl.getIn("/", lang).doc.Find(`[data-testid="recent-verdict"]`).First().Text()
		if !strings.Contains(summary, loc.T("vline.short_goodput")+": ") || !strings.Contains(summary, "m/steady") ||
			strings.Contains(summary, loc.T("vline.short_speed")+": ") {
			t.Errorf("%s: the start page's verdict %q, want goodput led by m/steady and no speed", lang, summary)
		}
	}
}

// A/A under an open loop: goodput alike is "not established" with the
// smallest difference it could detect; without an SLO it is not ranked
// and says why; a closed loop has no goodput line or claim.
func TestOpenLoopGoodputNotEstablished(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	b, _ := openLoopBenchmark(t, e, tok, 200, true, []string{"m/one", "m/two"}, []int{20, 21})
	g := claimsBy(e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", tok, nil, "").body["claims"].([]any))["goodput_share"]
	if g == nil || g["significant"] != false || g["comparable"] != true || g["detectable_pct"] == nil || !strings.Contains(g["reason"].(string), "not established") {
		t.Errorf("A/A goodput claim: %v", g)
	}
	b2, _ := openLoopBenchmark(t, e, tok, 200, false, []string{"m/three", "m/four"}, []int{20, 60})
	g2 := claimsBy(e.api(http.MethodGet, "/api/v1/benchmarks/"+b2+"/verdict", tok, nil, "").body["claims"].([]any))["goodput_share"]
	if g2 == nil || g2["comparable"] != false || g2["p"] != nil || !strings.Contains(g2["reason"].(string), "sets no SLO") {
		t.Errorf("goodput without an SLO: %v", g2)
	}
	cl := e.client()
	cl.signIn("ada@example.com", "correct horse")
	if txt := cl.getIn("/benchmarks/"+b2, "de").doc.Find(`[data-testid="verdict-goodput"]`).Text(); !strings.Contains(strings.Join(strings.Fields(txt), " "), "setzt kein SLO") {
		t.Errorf("German line without an SLO: %q", txt)
	}
	price := 3.6
	closed, _ := finishedBenchmark(t, e, tok, 30, &price, []fakeRun{smallFake, bigFake})
	if _, ok := claimsBy(e.api(http.MethodGet, "/api/v1/benchmarks/"+closed+"/verdict", tok, nil, "").body["claims"].([]any))["goodput_share"]; ok {
		t.Error("a closed loop has a goodput claim")
	}
	if n := cl.get("/benchmarks/" + closed).doc.Find(`[data-testid="verdict-goodput"]`).Length(); n != 0 {
		t.Error("a closed loop has a goodput line")
	}
}

// Once a deployment has repeated open-loop targets under one SLO, goodput
// carries the run effect those repeats measured (docs/concepts.md#drift):
// the verdict API, the compare API of two single runs and the verdict page
// (English and German) name the t-test for two proportions with it, with
// the same test and p on both APIs for the same pair.
func TestGoodputCarriesTheDeploymentsRunEffect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	// Three repeats of each target whose shares move by 3 points from run
	// to run: 2 + 2 degrees of freedom.
	b, runs := openLoopRepeated(t, e, tok, 200, true, []string{"m/x", "m/y"}, 3, func(k, r int) int { return 10 + 40*k + 6*r })
	api := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", tok, nil, "")
	g := claimsBy(api.body["claims"].([]any))["goodput_share"]
	if g == nil || g["test"] != "t-two-proportions-run-effect" || g["leader"].(map[string]any)["model"] != "m/x" || g["comparable"] != true ||
		!strings.Contains(fmt.Sprint(g["reason"]), "between-run spread beyond binomial") {
		t.Fatalf("verdict API goodput claim: %v", g)
	}
	var x, y int64
	for _, id := range runs {
		var model string
		if err := e.store.Pool().QueryRow(context.Background(), `SELECT m.name FROM runs r JOIN models m ON m.id = r.model_id WHERE r.id = $1`, id).Scan(&model); err != nil {
			t.Fatal(err)
		}
		// The last run of each target: the spread is measured as of the
		// runs compared, so the repeats before them carry it.
		if model == "m/x" {
			x = id
		}
		if model == "m/y" {
			y = id
		}
	}
	single := claimsBy(e.api(http.MethodGet, fmt.Sprintf("/api/v1/compare?runs=%d,%d", x, y), tok, nil, "").body["claims"].([]any))["goodput_share"]
	if single == nil || single["test"] != "t-two-proportions-run-effect" || !strings.Contains(fmt.Sprint(single["reason"]), "(4 and 4 degrees of freedom)") {
		t.Errorf("compare API goodput claim of two single runs: %v", single)
	}
	back := claimsBy(e.api(http.MethodGet, fmt.Sprintf("/api/v1/compare?runs=%d,%d", y, x), tok, nil, "").body["claims"].([]any))["goodput_share"]
	if back == nil || back["p"] != single["p"] || back["test"] != single["test"] || back["leader"].(map[string]any)["run_id"] != single["leader"].(map[string]any)["run_id"] {
		t.Errorf("the pair asked the other way round: %v, first way %v", back, single)
	}
	cl := e.client()
	cl.signIn("ada@example.com", "correct horse")
	for lang, want := range map[string]string{"en": "t-test for two proportions", "de": "t-Test für zwei Anteile"} {
		basis := strings.Join(strings.Fields(cl.getIn("/benchmarks/"+b, lang).doc.Find(`[data-testid="verdict-goodput"] [data-testid="verdict-basis"]`).Text()), " ")
		if !strings.Contains(basis, want) {
			t.Errorf("%s: goodput basis %q lacks %q", lang, basis, want)
		}
	}
}
