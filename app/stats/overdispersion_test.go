package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// drawShares is a deployment's history: targets × runs runs of n requests
// each, every run's chance of meeting the SLO drawn around p with a run
// effect of standard deviation tau (clamped to [0, 1]), under SLO "e2e".
func drawShares(rng *rand.Rand, targets, runs, n int, p, tau float64) []RepeatedRun {
	var out []RepeatedRun
	for t := range targets {
		for range runs {
			q := min(max(p+tau*rng.NormFloat64(), 0), 1)
			good := 0
			for range n {
				if rng.Float64() < q {
					good++
				}
			}
			out = append(out, RepeatedRun{Target: string(rune('a' + t)), TPS: 1, P95: 1, Good: good, Requests: n, SLO: "e2e"})
		}
	}
	return out
}

// The pooled goodput run effect (poolGoodput through PoolDrift) recovers
// a planted between-run variance on average, is near 0 where runs vary
// only binomially, counts k − 1 degrees of freedom per target repeated
// under one SLO, and leaves out runs without an SLO or requests and
// targets run once.
func TestPoolGoodputRecoversARunEffect(t *testing.T) {
	rng := rand.New(rand.NewPCG(40, 5))
	for _, c := range []struct {
		tau, lo, hi float64
	}{{0, 0, 0.00015}, {0.03, 0.0009 * 0.85, 0.0009 * 1.15}, {0.06, 0.0036 * 0.85, 0.0036 * 1.15}} {
		var sum float64
		const deployments = 400
		for range deployments {
			d := PoolDrift(drawShares(rng, 4, 3, 300, 0.85, c.tau))
			if d.Goodput.DF != 8 || !d.GoodputMeasured() {
				t.Fatalf("df %d, want 8", d.Goodput.DF)
			}
			sum += d.Goodput.Var
		}
		if mean := sum / deployments; mean < c.lo || mean > c.hi {
			t.Errorf("τ = %.2f: mean estimate %.6f, want in [%.6f, %.6f]", c.tau, mean, c.lo, c.hi)
		}
	}
	runs := []RepeatedRun{
		{Target: "a", Good: 90, Requests: 100, SLO: "x"}, {Target: "a", Good: 70, Requests: 100, SLO: "x"},
		{Target: "a", Good: 50, Requests: 100, SLO: "y"}, // another SLO: another target
		{Target: "a", Good: 10, Requests: 100},           // no SLO
		{Target: "b", Good: 0, Requests: 0, SLO: "x"},    // no requests
		{Target: "b", Good: 5, Requests: 10, SLO: "x"},   // run once
	}
	r := poolGoodput(runs)
	// s² of 0.9 and 0.7 is 0.02; binomial part 0.8·0.2 ÷ 100 = 0.0016.
	if r.DF != 1 || math.Abs(r.Var-(0.02-0.0016)) > 1e-12 || math.Abs(r.Within-0.0016) > 1e-12 {
		t.Errorf("pooled %+v, want 0.0184 and 0.0016 on 1 df", r)
	}
	if r := poolGoodput(runs[2:]); r != (RunEffect{}) {
		t.Errorf("nothing repeated: %+v", r)
	}
}

// With no run effect measured (variance 0, nothing beyond binomial) the
// test keeps TwoProportions' difference and standard error, and is wider
// only by the uncertainty of that zero; with one, the variance of the
// difference grows by it and the statistic is referred to Student's t on
// Welch–Satterthwaite's degrees of freedom (by hand: 190 of 200 vs 150 of
// 200, a run effect of 0.001 over a binomial part of 0.0006 on 6 degrees
// of freedom from two deployments gives df ≈ 12.57; from one, shared,
// ≈ 6.28).
func TestTwoProportionsWithRunEffect(t *testing.T) {
	z, seZ, _ := TwoProportions(190, 200, 150, 200)
	d, se, ok := TwoProportionsWithRunEffect(190, 200, 150, 200, RunEffect{DF: 6}, RunEffect{DF: 6}, true)
	if !ok || d.Diff != z.Diff || se != seZ || !math.IsInf(d.DF, 1) || math.Abs(d.P-z.P) > 1e-12 || d.Test != "t-two-proportions-run-effect" {
		t.Errorf("no run effect: %+v (%v), z-test %+v (%v)", d, se, z, seZ)
	}
	r := RunEffect{Var: 0.001, Within: 0.0006, DF: 6}
	pooled := 0.85 * 0.15 * 0.01
	total := pooled + 0.002
	s := 0.0016 * 0.0016 / 6
	for _, c := range []struct {
		shared bool
		df     float64
	}{{false, total * total / (2 * s)}, {true, total * total / (4 * s)}} {
		d, se, ok = TwoProportionsWithRunEffect(190, 200, 150, 200, r, r, c.shared)
		if !ok || math.Abs(d.DF-c.df) > 1e-9 {
			t.Fatalf("shared %v: df %v, want %v", c.shared, d.DF, c.df)
		}
		if want := StudentTTwoSided(0.2/math.Sqrt(total), c.df); math.Abs(d.P-want) > 1e-12 || d.P <= z.P {
			t.Errorf("shared %v: p %v, want %v (more than the z-test's %v)", c.shared, d.P, want, z.P)
		}
		if wantSE := math.Sqrt(seZ*seZ + 0.002); math.Abs(se-wantSE) > 1e-12 || d.Hi-d.Lo <= z.Hi-z.Lo {
			t.Errorf("se %v, want %v; interval [%v, %v]", se, wantSE, d.Lo, d.Hi)
		}
	}
	if math.Abs(total*total/(2*s)-12.57) > 0.01 {
		t.Errorf("hand value %v", total*total/(2*s))
	}
	for _, bad := range []RunEffect{{Var: -1, DF: 6}, {Var: math.NaN(), DF: 6}, {Var: math.Inf(1), DF: 6}, {Var: 0.001}} {
		if _, _, ok := TwoProportionsWithRunEffect(190, 200, 150, 200, bad, r, false); ok {
			t.Errorf("run effect %+v tested", bad)
		}
	}
}
