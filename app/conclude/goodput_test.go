package conclude

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/jobs"
)

// openTarget is a target run under a poisson load at 2 requests/s with
// good of n requests within its benchmark's SLOs (slo: it set one).
func openTarget(id int64, good, n int, slo bool) Candidate {
	c := target(id, "m", 0.5, 0.4, 0.6, 100)
	c.Load = &jobs.LoadIdentity{Profile: jobs.LoadPoisson, Params: "(rate=2)", Sampling: "max_tokens=256 n=1 temperature=0", DatasetID: 1, MeanIn: 100, MeanOut: 100}
	c.Requests, c.GoodRequests, c.SLOSet = n, good, slo
	return c
}

// Under an open loop, the target that meets the SLOs on clearly more
// requests leads on goodput by the z-test for two proportions; alike
// shares are "not established" with the smallest detectable difference;
// without an SLO goodput is not ranked, and a closed loop has no goodput.
func TestGoodputUnderOpenLoop(t *testing.T) {
	a, b := openTarget(1, 190, 200, true), openTarget(2, 150, 200, true)
	m := Compare(a, b, Goodput, Evidence{})
	if !m.Comparable || m.Tie || m.Test != "z-two-proportions" || m.Better != 1 || m.P == nil || *m.P > 1e-7 {
		t.Fatalf("clear lead: %+v", m)
	}
	if m.A != 0.95 || m.B != 0.75 || !strings.Contains(m.Basis, "z-test for two proportions") || !strings.Contains(m.Basis, "190 of 200 vs 150 of 200") {
		t.Errorf("lead figures: %v %v %q", m.A, m.B, m.Basis)
	}
	l := Leads([]Candidate{b, a}, Goodput, Evidence{})
	if l.Best == nil || l.Best.RunID != 1 || l.Margin.Tie || l.Absent() {
		t.Errorf("lead: %+v", l)
	}

	aa := Compare(openTarget(1, 181, 200, true), openTarget(2, 180, 200, true), Goodput, Evidence{})
	if !aa.Comparable || !aa.Tie || aa.Detectable == nil || aa.ToDetect5 == nil || aa.ToDetect5.Requests <= 200 ||
		!strings.Contains(aa.Basis, "not established") || !strings.Contains(aa.Basis, "requests a run would detect 5 %") {
		t.Errorf("A/A: %+v", aa)
	}

	if m := Compare(openTarget(1, 190, 200, false), openTarget(2, 150, 200, false), Goodput, Evidence{}); m.Comparable || !strings.Contains(m.Reason, "sets no SLO") || m.P != nil {
		t.Errorf("no SLO: %+v", m)
	}

	ca, cb := openTarget(1, 190, 200, true), openTarget(2, 150, 200, true)
	closed := *ca.Load
	closed.Profile, closed.Params = jobs.LoadConcurrency, "(concurrency=4)"
	ca.Load, cb.Load = &closed, &closed
	if m := Compare(ca, cb, Goodput, Evidence{}); m.Measured {
		t.Errorf("closed loop: %+v", m)
	}
	if l := Leads([]Candidate{ca, cb}, Goodput, Evidence{}); !l.Absent() {
		t.Errorf("closed loop lead shown: %+v", l)
	}
	if _, claims := AgainstBaseline([]Candidate{ca, cb}, Evidence{}, 1); len(claims[2]) != len(Criteria)-1 {
		t.Errorf("closed loop claims: %+v", claims[2])
	}
}

// Under an open loop the recommendation's speed weight weighs goodput:
// the target within the SLOs on clearly more requests ranks first, its
// explanation says so in the catalogue's words, and a note says why;
// under a closed loop speed stays speed.
func TestRecommendationWeighsGoodputUnderOpenLoop(t *testing.T) {
	a, b := openTarget(1, 150, 200, true), openTarget(2, 190, 200, true)
	a.TokensPS, b.TokensPS = f(200), f(100) // the offered load, whatever it says
	rec := RecommendWith([]Candidate{a, b}, Constraints{}, Weights{Speed: 1}, Evidence{})
	if len(rec.Feasible) != 2 || rec.Feasible[0].RunID != 2 || rec.Feasible[0].GoodputScore == nil || rec.Feasible[0].SpeedScore != nil ||
		!slices.Contains(rec.Ranked, Goodput) || slices.Contains(rec.Ranked, Speed) {
		t.Fatalf("open loop recommendation: %+v", rec)
	}
	if !strings.Contains(strings.Join(rec.Notes, " "), "weighs goodput") || !strings.Contains(rec.Feasible[1].Explanation, "less often within the SLOs") {
		t.Errorf("notes %q, explanation %q", rec.Notes, rec.Feasible[1].Explanation)
	}
	closed := *a.Load
	closed.Profile, closed.Params = jobs.LoadConcurrency, "(concurrency=4)"
	a.Load, b.Load = &closed, &closed
	if rec := RecommendWith([]Candidate{a, b}, Constraints{}, Weights{Speed: 1}, Evidence{}); slices.Contains(rec.Ranked, Goodput) || rec.Feasible[0].GoodputScore != nil {
		t.Errorf("closed loop recommendation: %+v", rec)
	}
}

// The goodput phrases the catalogue words are the engine's English ones,
// for a lead, a deficit, a tie and equal shares.
func TestGoodputPhrasesAreTheCatalogues(t *testing.T) {
	for _, p := range [][2]int{{190, 150}, {150, 190}, {181, 180}, {180, 180}} {
		m := Compare(openTarget(1, p[0], 200, true), openTarget(2, p[1], 200, true), Goodput, Evidence{})
		for _, b := range []any{"X", nil} {
			want := m.Phrase()
			if b != nil {
				want = m.PhraseThan("X")
			}
			if got := English(m.PhraseSaid(b)); got != want || got == "" {
				t.Errorf("%v: catalogue %q, engine %q", p, got, want)
			}
		}
	}
}

// A/A: two runs drawing each request within the SLOs with the same
// chance are called different about α of the time (n from 60 to 400,
// shares from 0.80 to 0.98), and a planted 0.90 against 0.80 at n = 200
// is found about as often as the test's power there says (about 80 %).
func TestGoodputAAAtAlpha(t *testing.T) {
	rng := rand.New(rand.NewPCG(40, 2))
	draw := func(n int, p float64) int {
		k := 0
		for range n {
			if rng.Float64() < p {
				k++
			}
		}
		return k
	}
	for _, tc := range []struct {
		n    int
		p, q float64
		lo   float64
		hi   float64
	}{{60, 0.9, 0.9, 0, 0.08}, {200, 0.8, 0.8, 0, 0.07}, {400, 0.98, 0.98, 0, 0.07}, {200, 0.9, 0.8, 0.7, 1}} {
		called, trials := 0, 2000
		for range trials {
			m := Compare(openTarget(1, draw(tc.n, tc.p), tc.n, true), openTarget(2, draw(tc.n, tc.q), tc.n, true), Goodput, Evidence{})
			if m.P != nil && !m.Tie {
				called++
			}
		}
		rate := float64(called) / float64(trials)
		t.Logf("n = %d, %.2f vs %.2f: called different in %.1f %%", tc.n, tc.p, tc.q, rate*100)
		if rate < tc.lo || rate > tc.hi {
			t.Errorf("n = %d, %.2f vs %.2f: %.3f outside [%.2f, %.2f]", tc.n, tc.p, tc.q, rate, tc.lo, tc.hi)
		}
	}
}
