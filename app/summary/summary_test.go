package summary_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// fixtureSLO is the fixture run's benchmark's SLOs: goodput counts only
// requests within both bounds.
var fixtureSLO = jobs.SLO{TTFT: jobs.Duration(200 * time.Millisecond), E2E: jobs.Duration(2 * time.Second)}

// fixtureRun stores a run whose results exercise every part of a summary:
// successes and failures of two classes, estimated tokens, inter-token
// gaps with events carrying several tokens, a rate step, a closed-loop
// step and a length-sweep step (prompt lengths and prefill rates), at
// fixed times so its figures never move. It returns the run's id.
func fixtureRun(ctx context.Context, tb testing.TB, st *store.Store) int64 {
	tb.Helper()
	rs := fixtureResults()
	w := testkit.NewWorld(ctx, tb, st, &testkit.WorldOpts{Dataset: testkit.DatasetOpts{Items: len(rs)}, Run: testkit.RunOpts{JobID: 4242}})
	c, err := st.ClaimRun(ctx, w.Run, w.Agent.ID, 4242, "sim")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := st.WriteResults(ctx, c.Lease, rs); err != nil {
		tb.Fatal(err)
	}
	return w.Run
}

// fixtureResults are the fixture run's 32 results.
func fixtureResults() []store.ResultRecord {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var rs []store.ResultRecord
	add := func(phase string, at time.Duration, ttftMS, e2eMS float64, prompt, tokens int, gaps ...int32) *store.ResultRecord {
		i := len(rs)
		r := jobs.Result{Idx: i, CustomID: "item", Status: jobs.StatusOK, Phase: phase, PromptTokens: prompt, CompletionTokens: tokens,
			ContentEvents: tokens, TTFT: time.Duration(ttftMS * float64(time.Millisecond)), E2E: time.Duration(e2eMS * float64(time.Millisecond))}
		if tokens > 1 {
			r.TPOT = (r.E2E - r.TTFT) / time.Duration(tokens-1)
		}
		r.ITLGapsMicros = gaps
		rs = append(rs, store.ResultRecord{Result: r, SentAt: t0.Add(at)})
		return &rs[i]
	}
	fail := func(phase string, at time.Duration, class string) {
		r := add(phase, at, 0, 0, 7, 0)
		r.Status, r.ErrorClass, r.Error, r.ContentEvents = jobs.StatusError, class, "failed", 0
	}
	// Outside any step: eight answers, two failures.
	add("", 0, 120, 900, 11, 12, 70_000, 65_000, 80_000, 75_000)
	add("", 300*time.Millisecond, 95, 640, 9, 8, 60_000, 90_000, 500_000)
	add("", 700*time.Millisecond, 310, 1800, 14, 20, 72_000, 71_000, 73_000)
	add("", time.Second, 180, 2400, 10, 25, 40_000, 41_000)
	add("", 1300*time.Millisecond, 150, 700, 12, 6).TokensEstimated = true
	shared := add("", 1700*time.Millisecond, 90, 500, 13, 5, 120_000, 30_000, 50_000)
	shared.ITLTokens = []int32{2, 1, 1}
	add("", 2100*time.Millisecond, 205, 1000, 8, 9)
	add("", 2500*time.Millisecond, 133.5, 777.25, 15, 11, 33_333)
	fail("", 2600*time.Millisecond, jobs.ErrHTTP5xx)
	fail("", 2900*time.Millisecond, "timeout")
	// A rate step: five sent 0.5 s apart, one over the TTFT SLO.
	for i, ttft := range []float64{100, 110, 140, 260, 125} {
		add("rate 2.00/s", 10*time.Second+time.Duration(i)*500*time.Millisecond, ttft, 600+float64(i)*40, 10, 12, 45_000, 47_000+int32(i)*1000)
	}
	// A closed-loop step: four at once, one failure.
	for i := range 3 {
		add("max", 20*time.Second, 300+float64(i)*25, 1500+float64(i)*100, 10, 15, 90_000, 91_000)
	}
	fail("max", 20*time.Second, jobs.ErrHTTP5xx)
	// A length sweep's step: prompts near 64 tokens, answers of 16.
	for i, p := range []int{62, 64, 65, 63, 66, 64, 61, 67, 64, 65} {
		add("input 64 output 16", 30*time.Second+time.Duration(i)*300*time.Millisecond, 80+float64(i*7%23), 400+float64(i)*11, p, 16, 20_000, 21_000)
	}
	return rs
}

// The summary of the fixture run is what testdata/fixture_run.golden
// says: that file was written by the store's own summary (RunAggregate,
// before the summary moved here) and is never rewritten. Every count,
// string and structure must match exactly, every number to within float
// rounding: a mean adds its values in the order they are read, and
// PostgreSQL added a step's values in the order its grouping delivered
// them (one step's TPOT mean differs in its last bit).
func TestFixtureRunSummary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testkit.Store(t)
	runID := fixtureRun(ctx, t, st)
	sum, err := summary.Run(ctx, st, runID, fixtureSLO, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := summary.Steps(ctx, st, runID, fixtureSLO)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(map[string]any{"summary": sum, "steps": steps})
	if err != nil {
		t.Fatal(err)
	}
	wantRaw, err := os.ReadFile(filepath.Join("testdata", "fixture_run.golden"))
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(wantRaw, &want); err != nil {
		t.Fatal(err)
	}
	numbers, rounded := 0, 0
	for _, d := range jsonDiffs("", want, got, &numbers, &rounded) {
		t.Error(d)
	}
	// The fixture must reach every part of a summary.
	if numbers < 200 || sum.ITLTokens == 0 || sum.Saturation == nil || len(sum.Steps) != 3 || sum.Steps[2].PrefillTokensPerS == nil ||
		sum.Steps[2].PrefillTokensPerS.Lo == nil || sum.Steps[0].OfferedRPS == nil || sum.OutputLength == nil || len(sum.ErrorsByClass) != 2 {
		t.Errorf("the fixture no longer covers the summary (%d numbers): %s", numbers, raw)
	}
	t.Logf("%d numbers compared, %d equal to within rounding but not bit for bit", numbers, rounded)
}

// jsonDiffs lists where got differs from want, numbers to within a few
// units in the last place (relative 1e-15); numbers counts the numbers
// compared and rounded those equal only to within rounding.
func jsonDiffs(at string, want, got any, numbers, rounded *int) []string {
	switch w := want.(type) {
	case float64:
		g, ok := got.(float64)
		if !ok {
			return []string{fmt.Sprintf("%s: %v, want %v", at, got, want)}
		}
		*numbers++
		if g == w {
			return nil
		}
		if math.Abs(g-w) <= 1e-15*math.Max(math.Abs(g), math.Abs(w)) {
			*rounded++
			return nil
		}
		return []string{fmt.Sprintf("%s: %v, want %v", at, g, w)}
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: %v, want %v", at, got, want)}
		}
		var out []string
		for _, k := range slices.Sorted(maps.Keys(w)) {
			out = append(out, jsonDiffs(at+"."+k, w[k], g[k], numbers, rounded)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: %v, want %v", at, got, want)}
		}
		var out []string
		for i := range w {
			out = append(out, jsonDiffs(fmt.Sprintf("%s[%d]", at, i), w[i], g[i], numbers, rounded)...)
		}
		return out
	default:
		if want != got {
			return []string{fmt.Sprintf("%s: %v, want %v", at, got, want)}
		}
		return nil
	}
}

// A run without results, and one whose every request failed, have no
// distributions (all zero, never NaN, so the summary's JSON is written),
// no answers' lengths, no ITL and no steps; failures are counted by class.
func TestSummaryOfRunsWithoutAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testkit.Store(t)
	w := testkit.NewWorld(ctx, t, st, &testkit.WorldOpts{Run: testkit.RunOpts{JobID: 4444}})
	empty, err := summary.Run(ctx, st, w.Run, fixtureSLO, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Requests != 0 || empty.ErrorsByClass == nil || empty.OutputLength != nil || empty.Steps != nil || empty.ITLTokens != 0 ||
		empty.TTFT != (jobs.Dist{}) || empty.RequestsPerS != 0 || empty.MeasuredSeconds != 5 {
		t.Fatalf("summary of a run without results: %+v", empty)
	}
	c, err := st.ClaimRun(ctx, w.Run, w.Agent.ID, 4444, "sim")
	if err != nil {
		t.Fatal(err)
	}
	var rs []store.ResultRecord
	for i, class := range []string{jobs.ErrHTTP5xx, jobs.ErrHTTP5xx} {
		r := jobs.Result{Idx: i, CustomID: "item", Status: jobs.StatusError, ErrorClass: class, Error: "failed", PromptTokens: 4, Phase: "max"}
		rs = append(rs, store.ResultRecord{Result: r, SentAt: time.Date(2026, 3, 1, 12, 0, i, 0, time.UTC)})
	}
	if _, err := st.WriteResults(ctx, c.Lease, rs); err != nil {
		t.Fatal(err)
	}
	failed, err := summary.Run(ctx, st, w.Run, fixtureSLO, 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(failed); err != nil {
		t.Fatal(err)
	}
	if failed.Requests != 2 || failed.OK != 0 || failed.ErrorsByClass[jobs.ErrHTTP5xx] != 2 || failed.OutputLength != nil || failed.E2E != (jobs.Dist{}) ||
		failed.RequestsPerS != 0.5 || failed.GoodRequests != 0 || len(failed.Steps) != 1 {
		t.Fatalf("summary of a run whose requests failed: %+v", failed)
	}
	step := failed.Steps[0]
	if step.Name != "max" || step.Requests != 2 || step.ErrorsByClass[jobs.ErrHTTP5xx] != 2 || step.TTFT != (jobs.Dist{}) || step.SLOsHold ||
		step.WindowSeconds != 1 || step.AchievedRPS != 2 {
		t.Fatalf("its step: %+v", step)
	}
}
