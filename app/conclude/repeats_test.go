package conclude

import (
	"math"
	"testing"

	"github.com/ruckus/ruckus/jobs"
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

// Runs of one model under different configured loads (a 0-shot and a
// 5-shot run) are two targets, never repeats; repeats whose measured
// output lengths fall either side of a class boundary still are repeats.
func TestMergeRepeatsKeepsConfiguredLoadsApart(t *testing.T) {
	load := func(fewshot, out string) *jobs.LoadIdentity {
		return &jobs.LoadIdentity{Profile: "concurrency", Params: "4", Sampling: "max_tokens 64", DatasetID: 1,
			InputClass: "<64", OutputClass: out, FewShot: fewshot}
	}
	zero1, zero2 := target(1, "a", 0.6, 0.55, 0.65, 100), target(3, "a", 0.6, 0.55, 0.65, 104)
	five1, five2 := target(2, "a", 0.7, 0.65, 0.75, 90), target(4, "a", 0.7, 0.65, 0.75, 92)
	zero1.Load, zero2.Load = load("", "<64"), load("", "64–255")
	five1.Load, five2.Load = load("5-shot seed=1234", "<64"), load("5-shot seed=1234", "<64")
	got := MergeRepeats([]Candidate{zero1, five1, zero2, five2})
	if len(got) != 2 || got[0].RunID != 1 || got[0].Repeats != 2 || got[1].RunID != 2 || got[1].Repeats != 2 {
		t.Fatalf("merged %d candidates: %+v", len(got), got)
	}
	if *got[0].TokensPS != 102 || *got[1].TokensPS != 91 {
		t.Errorf("means %v and %v, want 102 (0-shot) and 91 (5-shot)", *got[0].TokensPS, *got[1].TokensPS)
	}
}
