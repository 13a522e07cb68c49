package agent

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// A length sweep on the simulated runtime's serving model, end to end
// through the benchmark service, agentd and its scrapes of the runtime's
// /metrics: four input lengths of 256-token answers at 4 in flight, on a
// KV cache of 4,882 tokens (gpu_memory_utilization 0.11 of 24 GB, less 2
// GB of weights, at 128 KiB a token). The prompts are exactly the asked
// lengths (calibrated on the runtime's usage), TTFT rises with the input
// length (prefill at 50 µs a token), prefill tokens/s is reported with an
// interval, and preemption begins at input 1024 — the first step whose
// four prompts fit the cache (4,096 tokens) but not with their answers
// (5,120) — and not before.
func TestLengthSweepEndToEnd(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 40)
	startAgent(t, w.agentURL("node-l"), "node-l", "--sim-ttft", "const:5ms", "--sim-itl", "const:2ms", "--sim-output-tokens", "const:300",
		"--progress-interval", "100ms")
	testkit.WaitFor(t, "agent online", func() bool { return w.online() == 1 })
	target := bench.Target{Model: "sim/tiny", Runtime: "sim", Hardware: "cpu", Engine: map[string]any{"gpu_memory_utilization": 0.11}}
	load := jobs.LoadProfile{Profile: jobs.LoadLengthSweep, Concurrency: 4, Lengths: &jobs.Lengths{Input: []int{128, 512, 1024, 2048}, Output: []int{256}}}
	c, err := w.svc.Create(context.Background(), w.viewer, bench.Manifest{Name: "lengths", Dataset: bench.DatasetRef{ID: w.dataset},
		Targets: []bench.Target{target}, Load: load, Sampling: jobs.Sampling{MaxTokens: 64}})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitWithin(t, 120*time.Second, "the run to finish", func() bool { s := w.run(c.BenchmarkID).State; return s == "completed" || s == "failed" })
	r := w.run(c.BenchmarkID)
	if r.State != "completed" || r.Completed != 40 {
		t.Fatalf("run %+v", r)
	}
	sum := lengthSweepSummary(t, w.st, r.ID)
	if len(sum.Steps) != 4 || sum.Saturation != nil {
		t.Fatalf("steps %+v, saturation %+v", sum.Steps, sum.Saturation)
	}
	prevTTFT := 0.0
	for i, st := range sum.Steps {
		want := load.Lengths.Steps()[i]
		pf := st.PrefillTokensPerS
		t.Logf("%s: %d ok, prompt tokens %v..%v, TTFT p50 %.1f ms, prefill tokens/s %s, ITL p50 %.2f ms, runtime %s",
			st.Name, st.OK, st.PromptTokens.Min, st.PromptTokens.Max, st.TTFT.P50, stateText(pf), st.ITL.P50, stateText(st.Runtime))
		if st.Name != want.Phase() || st.InputTarget != want.Input || st.OutputTarget != 256 || st.OK != 10 {
			t.Errorf("step %d: %+v, want %+v with 10 answers", i, st, want)
		}
		if st.PromptTokensOff == nil || *st.PromptTokensOff != 0 {
			t.Errorf("%s: prompts off their length by %v tokens, want exactly %d", st.Name, st.PromptTokensOff, want.Input)
		}
		if st.TTFT.P50 <= prevTTFT {
			t.Errorf("%s: TTFT p50 %.1f ms, not above the shorter step's %.1f ms", st.Name, st.TTFT.P50, prevTTFT)
		}
		prevTTFT = st.TTFT.P50
		if pf == nil || pf.N != 10 || pf.Lo == nil || pf.Hi == nil || !(*pf.Lo <= pf.Median && pf.Median <= *pf.Hi) || pf.Median <= 0 {
			t.Errorf("%s: prefill tokens/s %+v", st.Name, pf)
		}
		if st.Runtime == nil || st.Runtime.Readings == 0 {
			t.Fatalf("%s: no reading of the runtime's /metrics: %+v", st.Name, st.Runtime)
		}
		if i < 2 && (st.Runtime.Preempting() || st.Runtime.Queueing()) {
			t.Errorf("%s: the cache holds four prompts and answers, yet %s", st.Name, stateText(st.Runtime))
		}
	}
	lim := sum.LengthLimits
	if lim == nil || lim.Measured != 4 || lim.PreemptingStep != "input 1024 output 256" || lim.PreemptingInput != 1024 || lim.QueueingInput < 1024 {
		t.Fatalf("limits %+v: want preemption from input 1024", lim)
	}
	if !sum.Steps[3].Runtime.Queueing() {
		t.Errorf("input 2048: two prompts fill the cache, yet nothing waited: %s", stateText(sum.Steps[3].Runtime))
	}
}

// lengthSweepSummary is the run's stored summary with the runtime's
// states read beside it, as the server shows it.
func lengthSweepSummary(t *testing.T, st *store.Store, runID int64) jobs.RunSummary {
	t.Helper()
	ctx := context.Background()
	figs, err := st.RunFiguresByID(ctx, store.Viewer{Admin: true}, []int64{runID})
	if err != nil || len(figs) != 1 {
		t.Fatalf("run figures: %v", err)
	}
	var sum jobs.RunSummary
	if err := json.Unmarshal(figs[0].Summary, &sum); err != nil {
		t.Fatal(err)
	}
	states, err := st.RunStepStates(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	sum.SetRuntimeStates(states)
	return sum
}

func stateText(r any) string {
	b, _ := json.Marshal(r)
	return string(b)
}
