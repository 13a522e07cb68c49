package conclude

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/stats"
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

// goodputWorld draws open-loop runs on one deployment whose chance of
// meeting the SLO moves from run to run by a run effect of standard
// deviation tau (percentage points ÷ 100): the deployment's history (4
// targets run 3 times each, 200 requests a run) gives its measured drift,
// and run draws one more run of a target whose share is p.
type goodputWorld struct {
	rng *rand.Rand
	tau float64
}

func (w goodputWorld) share(p float64, n int) int {
	q := min(max(p+w.tau*w.rng.NormFloat64(), 0), 1)
	k := 0
	for range n {
		if w.rng.Float64() < q {
			k++
		}
	}
	return k
}

func (w goodputWorld) drift() stats.Drift {
	var hist []stats.RepeatedRun
	for t := range 4 {
		for range 3 {
			hist = append(hist, stats.RepeatedRun{Target: string(rune('a' + t)), TPS: 1, P95: 1, Good: w.share(0.85, 200), Requests: 200, SLO: "e2e"})
		}
	}
	return stats.PoolDrift(hist)
}

// calledRate is how often Compare calls a pair of runs (shares p and q,
// n requests each) different on goodput over trials draws, with the
// deployment's measured drift (measured) or without it.
func (w goodputWorld) calledRate(p, q float64, n, trials int, measured bool) (float64, string) {
	called, test := 0, ""
	for range trials {
		a, b := openTarget(1, w.share(p, n), n, true), openTarget(2, w.share(q, n), n, true)
		if measured {
			d := w.drift()
			a.Drift, b.Drift = d, d
		}
		m := Compare(a, b, Goodput, Evidence{})
		test = m.Test
		if m.P != nil && !m.Tie {
			called++
		}
	}
	return float64(called) / float64(trials), test
}

// A/A under drift: two runs of alike targets on a deployment whose goodput
// share moves by 3 percentage points from run to run are called different
// far more often than α by the binomial test alone, and about α once each
// share carries the run effect its deployment's repeated runs measured
// (t-two-proportions-run-effect); without drift the measured run effect
// keeps the test at or below α (below: a run effect estimated on 8 degrees
// of freedom cannot rule drift out, the price of not assuming there is
// none). Power for a planted 0.90 against 0.80 (n 200) is reported with
// and without drift.
func TestGoodputAAUnderDrift(t *testing.T) {
	const trials = 2000
	for _, tc := range []struct {
		name     string
		tau      float64
		p, q     float64
		measured bool
		test     string
		lo, hi   float64
	}{
		{"A/A, no drift, binomial", 0, 0.85, 0.85, false, "z-two-proportions", 0.03, 0.07},
		{"A/A, no drift, run effect", 0, 0.85, 0.85, true, "t-two-proportions-run-effect", 0, 0.07},
		{"A/A, 3 pp drift, binomial", 0.03, 0.85, 0.85, false, "z-two-proportions", 0.12, 1},
		{"A/A, 3 pp drift, run effect", 0.03, 0.85, 0.85, true, "t-two-proportions-run-effect", 0.02, 0.07},
		{"0.90 vs 0.80, no drift, run effect", 0, 0.90, 0.80, true, "t-two-proportions-run-effect", 0.5, 1},
		{"0.90 vs 0.80, 3 pp drift, run effect", 0.03, 0.90, 0.80, true, "t-two-proportions-run-effect", 0.2, 1},
	} {
		w := goodputWorld{rng: rand.New(rand.NewPCG(40, uint64(len(tc.name)))), tau: tc.tau}
		rate, test := w.calledRate(tc.p, tc.q, 200, trials, tc.measured)
		lo, hi := wilson(int(math.Round(rate*trials)), trials)
		t.Logf("%s: called different in %.1f %% [%.1f, %.1f] of %d (%s)", tc.name, rate*100, lo*100, hi*100, trials, test)
		if test != tc.test {
			t.Errorf("%s: test %q, want %q", tc.name, test, tc.test)
		}
		if rate < tc.lo || rate > tc.hi {
			t.Errorf("%s: %.3f outside [%.2f, %.2f]", tc.name, rate, tc.lo, tc.hi)
		}
	}
}

// wilson is the 95 % Wilson score interval of k of n.
func wilson(k, n int) (lo, hi float64) {
	const z = 1.959963984540054
	p, fn := float64(k)/float64(n), float64(n)
	mid := (p + z*z/(2*fn)) / (1 + z*z/fn)
	half := z / (1 + z*z/fn) * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn))
	return max(0, mid-half), min(1, mid+half)
}

// A pair that cannot be ranked has no leader (docs/verdict.md#not-comparable):
// under an open loop speed and cost lead nothing — Leads names no best and
// lists both runs with the reason, and Compare leaves the pair without a
// better side or a lead — whichever run is faster; a run alone in its
// group while the other was measured otherwise leads nothing either, and
// the reason is the same whichever way the pair is asked.
func TestAPairThatCannotBeRankedHasNoLeader(t *testing.T) {
	a, b := openTarget(1, 190, 200, true), openTarget(2, 150, 200, true)
	a.TokensPS, b.TokensPS = f(200), f(100)
	a.CostPer1M, b.CostPer1M = f(1), f(2)
	for _, c := range []Criterion{Speed, Cost} {
		l := Leads([]Candidate{a, b}, c, Evidence{})
		if l.Best != nil || l.RunnerUp != nil || len(l.NotComparable) != 2 || !strings.Contains(l.NotComparable[0].Reason, "offered load") {
			t.Errorf("%s under an open loop: %+v", c, l)
		}
		m := Compare(a, b, c, Evidence{})
		if m.Comparable || m.Better != 0 || m.Pct != 0 || m.Relative || m.Abs != 0 || m.P != nil || !m.Measured {
			t.Errorf("%s pair under an open loop: %+v", c, m)
		}
	}
	long := target(2, "b", 0.7, 0.68, 0.72, 1500)
	l1, l2 := *long.Load, *long.Load
	l1.InputClass, l1.OutputClass, l1.MeanIn, l1.MeanOut = "", "", 100, 100
	l2.InputClass, l2.OutputClass, l2.MeanIn, l2.MeanOut = "", "", 100, 300
	long.Load = &l2
	short := target(1, "a", 0.6, 0.58, 0.62, 1000)
	short.Load = &l1
	l := Leads([]Candidate{short, long}, Speed, Evidence{})
	if l.Best != nil || len(l.NotComparable) != 2 || l.NotComparable[0].Reason != l.NotComparable[1].Reason ||
		l.NotComparable[0].Reason != Compare(long, short, Speed, Evidence{}).Reason || !strings.Contains(l.NotComparable[0].Reason, "mean output length") {
		t.Errorf("lengths 3× apart: %+v", l)
	}
	if l := Leads([]Candidate{short}, Speed, Evidence{}); l.Best == nil || len(l.NotComparable) != 0 {
		t.Errorf("one run alone: %+v", l)
	}
}
