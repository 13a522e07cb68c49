package advise

import (
	"math"
	"testing"
)

// A repeated target's speed is the mean of its runs with the between-run
// interval; its quality stays its first run's, with the interval over
// items (identical repeats of a deterministic model must not make any
// quality difference significant).
func TestMergeRepeats(t *testing.T) {
	a1, a2, a3 := target(1, "a", 0.6, 0.55, 0.65, 100), target(3, "a", 0.6, 0.55, 0.65, 104), target(5, "a", 0.6, 0.55, 0.65, 96)
	b1, b2, b3 := target(2, "b", 0.7, 0.65, 0.75, 110), target(4, "b", 0.7, 0.65, 0.75, 111), target(6, "b", 0.7, 0.65, 0.75, 109)
	solo := target(7, "c", 0.5, 0.45, 0.55, 90)
	got := MergeRepeats([]Candidate{a1, b1, a2, b2, a3, b3, solo})
	if len(got) != 3 || got[0].RunID != 1 || got[1].RunID != 2 || got[2].RunID != 7 || got[2].Repeats != 0 {
		t.Fatalf("merged %+v", got)
	}
	a := got[0]
	if a.Repeats != 3 || !a.TPS.Repeats || a.TPS.N != 3 || math.Abs(*a.TokensPS-100) > 1e-9 || a.TPS.DF != 2 {
		t.Errorf("a's speed %+v (%v)", a.TPS, *a.TokensPS)
	}
	// s = 4, se = 4/√3, t(0.975, 2) = 4.303.
	if h := a.TPS.Hi - a.TPS.Mean; math.Abs(h-4.302653*4/math.Sqrt(3)) > 1e-3 {
		t.Errorf("a's half-width %g", h)
	}
	if *a.Quality != 0.6 || *a.QualityLo != 0.55 || *a.QualityHi != 0.65 {
		t.Errorf("a's quality %v [%v, %v], want its first run's", *a.Quality, *a.QualityLo, *a.QualityHi)
	}
	m := Compare(got[1], got[0], Speed, Evidence{})
	if m.Test != "welch-t" || m.P == nil || *m.P >= 0.05 || m.Tie {
		t.Errorf("10 %% faster in every repeat: %+v", m)
	}
	if q := Compare(got[1], got[0], Quality, Evidence{}); q.P == nil || *q.P == 0 {
		t.Errorf("quality of repeats tested on a zero-width interval: %+v", q)
	}
}
