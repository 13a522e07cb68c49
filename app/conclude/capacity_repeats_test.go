package conclude

import (
	"testing"
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
