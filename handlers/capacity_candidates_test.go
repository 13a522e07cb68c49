package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/jobs"
)

// finishRunOver re-measures a finished run as if its requests had been
// sent one after another over seconds (as finishRun does over 10 s), so
// its rate is histItems ÷ seconds, with the summary an agent writes.
func finishRunOver(t *testing.T, e *env, runID int64, seconds float64) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET measured_seconds = $2 WHERE id = $1`, runID, seconds); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE results SET sent_at = now() - interval '10 minutes' + (idx + 0.5) * $2 * interval '1 second' / n.n
		FROM (SELECT count(*) AS n FROM results WHERE run_id = $1) n WHERE run_id = $1`, runID, seconds); err != nil {
		t.Fatal(err)
	}
	sum, err := summary.Run(ctx, e.store, runID, jobs.SLO{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(sum)
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET summary = $2 WHERE id = $1`, runID, raw); err != nil {
		t.Fatal(err)
	}
	concludeRun(t, e, runID)
}

// planRows are the plan's rows by run, each with the list it is in.
func planRows(t *testing.T, body map[string]any) map[int64]map[string]any {
	t.Helper()
	rows := map[int64]map[string]any{}
	for _, list := range []string{"feasible", "excluded"} {
		xs, _ := body[list].([]any)
		for _, x := range xs {
			row := x.(map[string]any)
			row["list"] = list
			id := int64(row["run_id"].(float64))
			if _, twice := rows[id]; twice {
				t.Errorf("run %d listed twice", id)
			}
			rows[id] = row
		}
	}
	return rows
}

// The capacity planner weighs a dataset's targets as its recommendation
// does (conclude.PlannerRuns over conclude.DatasetCandidates): a target
// benchmarked twice with repeats: 3 is sized once, from the newest
// benchmark's three repeats merged (their mean rate, its interval from
// the spread between them; conclude.MergeMeasured), never tested against
// its own repeats; the older benchmark's runs are listed as not sized,
// "measured again later", in the API and on the page in English and
// German.
func TestCapacityPlannerWeighsDatasetCandidatesWithRepeatsMerged(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	e := h.e
	_, old := h.repeatedDays(t, spec{model: "m/a", hw: "cpu-2c", day: 0, right: below(30), e2e: 200}, []float64{100, 100, 100})
	b2, reps := h.repeatedDays(t, spec{model: "m/a", hw: "cpu-2c", day: 3, right: below(30), e2e: 200}, []float64{100, 100, 100})
	_, other := h.run(t, spec{model: "m/b", hw: "cpu-2c", day: 7, right: below(30), tps: 100, e2e: 200})
	// 40 requests over 8, 10 and 12.5 s: 5, 4 and 3.2 req/s.
	for i, s := range []float64{8, 10, 12.5} {
		finishRunOver(t, e, old[i], 10)
		finishRunOver(t, e, reps[i], s)
	}
	finishRunOver(t, e, other, 10)

	body := fmt.Sprintf(`{"dataset_id":%d,"traffic":{"peak_rps":2,"average_rps":1,"input_tokens":5,"output_tokens":5},
		"slo":{"e2e_ms":100000},"headroom":0.2}`, h.ds)
	res := e.api(http.MethodPost, "/api/v1/capacity", h.tok, strings.NewReader(body), "application/json")
	if res.status != 200 {
		t.Fatalf("capacity: %d %v", res.status, res.body)
	}
	rows := planRows(t, res.body)
	if len(rows) != 5 {
		t.Errorf("%d rows, want 5: the merged target, the other and 3 older runs: %v", len(rows), rows)
	}
	merged := rows[reps[0]]
	if merged == nil || merged["list"] != "feasible" || merged["repeats"] != 3.0 {
		t.Fatalf("run %d: %v, want sized from 3 repeats", reps[0], merged)
	}
	var repeatRuns []int64
	for _, x := range merged["repeat_run_ids"].([]any) {
		repeatRuns = append(repeatRuns, int64(x.(float64)))
	}
	if !slices.Equal(repeatRuns, reps) {
		t.Errorf("repeat runs %v, want %v", repeatRuns, reps)
	}
	for _, id := range reps[1:] {
		if rows[id] != nil {
			t.Errorf("repeat run %d listed on its own: %v", id, rows[id])
		}
	}
	// The mean of the repeats' own rates (each its steady window's batch
	// mean, as a single run is sized; near the whole runs' 5, 4 and 3.2
	// req/s), sized on the low end of its interval from the spread between
	// them (3 repeats, t on 2 degrees of freedom).
	kept, err := e.store.RunStats(context.Background(), reps)
	if err != nil {
		t.Fatal(err)
	}
	steady := make([]float64, len(reps))
	for i, id := range reps {
		steady[i] = conclude.KeptEstimate(kept[id].RPS, kept[id].Batches).Mean
	}
	want := stats.MeanInterval(steady)
	rate, lo := merged["slo_rate_rps"].(float64), merged["slo_rate_lo_rps"]
	if math.Abs(rate-want.Mean) > 1e-9 || lo == nil || math.Abs(lo.(float64)-want.Lo) > 1e-9 || math.Abs(rate-(5+4+3.2)/3) > 0.2 {
		t.Errorf("rate %v (lo %v), want the repeats' steady rates' mean %.3f (lo %.3f) from %v", rate, lo, want.Mean, want.Lo, steady)
	}
	if from, want := merged["slo_rate_from"], i18n.Default().Lang("en").T("capacity.said.from_repeats", "Run", reps[0], "N", 3); from != want ||
		!strings.Contains(want, fmt.Sprintf("the 3 repeats of run %d", reps[0])) {
		t.Errorf("rate from %q, want the catalogue's %q", from, want)
	}
	var leadRuns []int64
	lead, _ := res.body["lead"].(map[string]any)
	if lead != nil {
		for _, x := range lead["runs"].([]any) {
			leadRuns = append(leadRuns, int64(x.(float64)))
		}
	}
	if slices.Sort(leadRuns); !slices.Equal(leadRuns, []int64{reps[0], other}) {
		t.Errorf("lead %v, want between run %d and run %d", lead, reps[0], other)
	}
	for _, id := range old {
		row := rows[id]
		why := fmt.Sprintf("measured again later (run %d, benchmark %d)", reps[0], b2)
		if row == nil || row["list"] != "excluded" || fmt.Sprint(row["reason_codes"]) != "[measured_again_later]" ||
			!strings.Contains(fmt.Sprint(row["reasons"]), why) {
			t.Errorf("run %d: %v, want not sized: %q", id, row, why)
		}
	}

	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	q := fmt.Sprintf("/capacity?dataset=%d&peak_rps=2&average_rps=1&input_tokens=5&output_tokens=5&ttft_ms=&tpot_ms=&e2e_ms=100000", h.ds)
	for lang, want := range map[string]string{"en": "measured again later", "de": "später erneut gemessen"} {
		page := c.getIn(q, lang)
		if page.status != 200 {
			t.Fatalf("%s page: %d", lang, page.status)
		}
		for _, id := range old {
			if got := page.text(fmt.Sprintf(`[data-testid="capacity-excluded-%d"]`, id)); !strings.Contains(got, want) {
				t.Errorf("%s: run %d not sized as %q, want %q", lang, id, got, want)
			}
		}
		for id, shown := range map[int64]bool{reps[0]: true, reps[1]: false, reps[2]: false, other: true} {
			if got := page.doc.Find(fmt.Sprintf(`[data-testid="capacity-run-%d"]`, id)).Length() == 1; got != shown {
				t.Errorf("%s: run %d sized %v, want %v", lang, id, got, shown)
			}
		}
	}
}
