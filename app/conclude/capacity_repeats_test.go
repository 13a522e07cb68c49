package conclude

import (
	"math"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/stats"
)

// A target's repeats in one benchmark are sized once (MergeMeasured):
// sweeps, which keep no interval, on the lowest rate any repeat held the
// SLOs at; a target whose SLOs held at no load in one repeat is not sized,
// with that repeat's reason; the busiest load is any repeat's.
func TestMergeMeasuredSizesRepeatsOnce(t *testing.T) {
	rate := func(v float64) *float64 { return &v }
	sweep := func(id int64, v, busiest float64) Measured {
		return Measured{RunID: id, SLORate: rate(v), SLORateFrom: "sweep of run", SLOFrom: say("capacity.said.from_step", "Run", id, "Step", "s"),
			MaxMeasuredRPS: busiest}
	}
	c := Candidate{RunID: 1, Repeats: 3}

	m := MergeMeasured([]Measured{sweep(1, 4, 5), sweep(2, 3, 6), sweep(3, 3.5, 5)}, c)
	if m.RunID != 1 || m.Repeats != 3 || len(m.RepeatRuns) != 3 || m.RepeatRuns[1] != 2 {
		t.Errorf("merged %d from %d repeats %v, want run 1 from runs 1, 2 and 3", m.RunID, m.Repeats, m.RepeatRuns)
	}
	if m.SLORate == nil || *m.SLORate != 3 || m.SLORateLo != nil || m.MaxMeasuredRPS != 6 {
		t.Errorf("sweeps: rate %v (lo %v), busiest %v; want the lowest, 3, with no interval, and 6", m.SLORate, m.SLORateLo, m.MaxMeasuredRPS)
	}

	missed := Measured{RunID: 2}.WithProblem(say("capacity.said.slos_nowhere"))
	m = MergeMeasured([]Measured{sweep(1, 4, 5), missed, sweep(3, 3.5, 5)}, c)
	if m.SLORate != nil || m.ProblemSaid.Code != "capacity.said.slos_nowhere" || m.Problem == "" {
		t.Errorf("one repeat missed the SLOs: rate %v, problem %q", m.SLORate, m.Problem)
	}

	one := []Measured{{RunID: 7, SLORate: rate(2)}}
	if m := MergeMeasured(one, c); m.RunID != 7 || m.Repeats != 0 || m.RepeatRuns != nil {
		t.Errorf("one run: %+v, want it as measured", m)
	}
}

// A target run with repeats: 3 is sized on its repeats' own steady rates
// (each repeat's batch-mean rate, as a single run is sized), never on the
// mean of whole-run rates that a straggling drain pulls down: steady
// rates 3.0, 3.1 and 2.9 req/s have the interval 3.0 ± t(0.975, 2) ×
// 0.1 ÷ √3 (low end 2.752), so a peak of 10 req/s at 20 % headroom takes
// ⌈10 ÷ (2.752 × 0.8)⌉ = 5 replicas; the whole-run rates 2.0, 2.2 and 1.8
// (low end 1.503) would take 9. The merged candidate's requests/s (goodput
// per dollar's) is the same steady mean; the source's English is the
// catalogue's.
func TestMergeMeasuredSizesRepeatsOnTheirSteadyRates(t *testing.T) {
	t.Parallel()
	steady, whole := []float64{3.0, 3.1, 2.9}, []float64{2.0, 2.2, 1.8}
	cands := make([]Candidate, len(steady))
	ms := make([]Measured, len(steady))
	for i := range steady {
		rps := whole[i]
		cands[i] = Candidate{RunID: int64(i + 1), Model: "m", Runtime: "sim", Hardware: "h",
			RequestsPS: &rps, RPS: stats.TInterval(steady[i], 0.03, 9, 10)}
		est, ok := ReplicaRate(cands[i])
		if !ok || est.Mean != steady[i] {
			t.Fatalf("repeat %d: rate %+v", i, est)
		}
		ms[i] = sizedAt(int64(i+1), est.Mean, est.Lo, 1)
	}
	merged, members := RepeatsOf(cands)
	if len(merged) != 1 || len(members[0]) != 3 {
		t.Fatalf("merged %d targets from %v", len(merged), members)
	}
	// The merged candidate's requests/s, which goodput per dollar rests
	// on, is the same estimator's: the steady rates' mean.
	if rps := requestsPerS(merged[0]); rps == nil || math.Abs(*rps-3) > 1e-12 || !merged[0].RPS.Repeats {
		t.Errorf("merged requests/s %v (%+v), want the steady rates' mean 3 with the spread between them", rps, merged[0].RPS)
	}
	m := MergeMeasured(ms, merged[0])
	want := stats.MeanInterval(steady)
	if m.SLORate == nil || m.SLORateLo == nil {
		t.Fatalf("rate %v (lo %v), want the steady rates' mean with an interval", m.SLORate, m.SLORateLo)
	}
	if math.Abs(*m.SLORate-3) > 1e-12 || math.Abs(*m.SLORateLo-want.Lo) > 1e-12 {
		t.Fatalf("rate %.4f (lo %.4f), want the steady rates' mean 3 with low end %.4f", *m.SLORate, *m.SLORateLo, want.Lo)
	}
	plan := PlanCapacity(Traffic{PeakRPS: 10, AverageRPS: 4, InputTokens: 500, OutputTokens: 200}, 0.2, Costs{}, nil, []Measured{m})
	if len(plan.Feasible) != 1 || plan.Feasible[0].Replicas != 5 {
		t.Fatalf("plan %+v, want the target sized with 5 replicas", plan)
	}
	en := i18n.Default().Lang("en").T("capacity.said.from_repeats", "Run", int64(1), "N", 3)
	if m.SLORateFrom != en || !strings.Contains(en, "the 3 repeats of run 1") {
		t.Errorf("rate from %q, want the catalogue's English %q", m.SLORateFrom, en)
	}
}
