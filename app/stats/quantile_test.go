package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The ranks and coverages are scipy's (1.10, Debian 12's python3-scipy):
// F = binom.cdf(k, n, q), the pair (l, u) of least u − l, then most
// alike tails, with F(u−1) − F(l−1) ≥ 0.95.
func TestQuantileIntervalMatchesScipy(t *testing.T) {
	for _, c := range []struct {
		q    float64
		n    int
		l, u int
		cov  float64
	}{
		{0.95, 59, 50, 59, 0.9508618638358861},
		{0.95, 60, 52, 60, 0.9510815952108823},
		{0.95, 100, 91, 100, 0.9658911766162497},
		{0.95, 200, 183, 196, 0.9614637562599905},
		{0.95, 1000, 937, 964, 0.9504167703041976},
		{0.5, 10, 2, 9, 0.978515625},
		{0.5, 25, 8, 18, 0.9567147493362427},
		{0.99, 500, 491, 500, 0.9623274103090973},
	} {
		xs := make([]float64, c.n)
		for i := range xs {
			xs[i] = float64(i + 1) // x(k) = k
		}
		ci, ok := QuantileInterval(xs, c.q, 0.95)
		if !ok || ci.L != c.l || ci.U != c.u || ci.Lo != float64(c.l) || ci.Hi != float64(c.u) || math.Abs(ci.Coverage-c.cov) > 1e-9 {
			t.Errorf("q %g n %d: %+v (ok %v), scipy ranks %d–%d coverage %.15g", c.q, c.n, ci, ok, c.l, c.u, c.cov)
		}
	}
	if _, ok := QuantileInterval(make([]float64, 58), 0.95, 0.95); ok {
		t.Error("58 values gave a 95 % interval of the p95")
	}
	if n := MinQuantileN(0.95, 0.95); n != 59 {
		t.Errorf("MinQuantileN(0.95, 0.95) = %d, want 59", n)
	}
}

// The interval covers the true p95 at least 95 % of the time at any n
// from the least that has one, for a heavy tail (lognormal σ 1.2): the
// normal approximation it replaces covered 76 % at n = 30.
func TestQuantileIntervalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	truth := math.Exp(1.2 * 1.6448536269514722)
	for _, n := range []int{59, 100, 200} {
		hit, trials := 0, 4000
		xs := make([]float64, n)
		for range trials {
			for i := range xs {
				xs[i] = math.Exp(1.2 * rng.NormFloat64())
			}
			slices.Sort(xs)
			ci, ok := QuantileInterval(xs, 0.95, 0.95)
			if !ok {
				t.Fatalf("n %d: no interval", n)
			}
			if ci.Lo <= truth && truth <= ci.Hi {
				hit++
			}
		}
		// 4,000 trials: a coverage of 95 % falls below 94 % by chance
		// with probability about 0.1 %.
		if got := float64(hit) / float64(trials); got < 0.94 {
			t.Errorf("n %d: coverage %.3f, want ≥ 0.95", n, got)
		}
	}
}

// The paired permutation test's size is α on partial-credit scores where
// A and B are alike (the paired bootstrap's p it replaces called 8.7 % of
// such pairs significant at n = 50), and it finds a real shift.
func TestPairedPermutationSizeAndPower(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{50, 200} {
		aa, boot, found, trials := 0, 0, 0, 600
		a, b, c := make([]float64, n), make([]float64, n), make([]float64, n)
		for range trials {
			for i := range a {
				base := rng.Float64()
				a[i] = clamp01(base + 0.25*rng.NormFloat64())
				b[i] = clamp01(base + 0.25*rng.NormFloat64())
				c[i] = clamp01(base + 0.2 + 0.25*rng.NormFloat64())
			}
			seed := rng.Uint64()
			if PairedPermutationP(a, b, 999, seed) < Alpha {
				aa++
			}
			if PairedBootstrap(a, b, 1000, seed).P < Alpha {
				boot++
			}
			if PairedPermutationP(c, b, 999, seed) < Alpha {
				found++
			}
		}
		size, bootSize, power := float64(aa)/float64(trials), float64(boot)/float64(trials), float64(found)/float64(trials)
		t.Logf("n %d: permutation A/A %.3f, bootstrap A/A %.3f, power at +0.2 %.3f", n, size, bootSize, power)
		// 600 trials at a true 5 %: above 8 % with probability < 0.1 %.
		if size > 0.08 {
			t.Errorf("n %d: A/A rate %.3f, want ≤ α", n, size)
		}
		if power < 0.8 {
			t.Errorf("n %d: a shift of 0.2 found %.3f of the time", n, power)
		}
	}
	a := []float64{0.2, 0.4, 0.9, 0.5}
	if p := PairedPermutationP(a, a, 999, 1); p != 1 {
		t.Errorf("identical scores: p = %g, want 1", p)
	}
	b := []float64{0.1, 0.5, 0.3, 0.5}
	if p, q := PairedPermutationP(a, b, 999, 9), PairedPermutationP(b, a, 999, 9); p != q {
		t.Errorf("p(a, b) %g ≠ p(b, a) %g", p, q)
	}
}

func clamp01(x float64) float64 { return min(max(x, 0), 1) }

// The between-run floor widens a single run's interval, leaves repeats'
// as they are, and a log-ratio test of two equal figures finds nothing.
func TestDriftAndLogRatio(t *testing.T) {
	e := Estimate{Mean: 100, SE: 1, DF: 9, N: 10}
	w := e.WithDrift(0.03)
	if math.Abs(w.SE-math.Hypot(1, 3)) > 1e-12 || w.DF <= e.DF || w.Lo >= e.Mean-1.96*3 {
		t.Errorf("with drift %+v", w)
	}
	r := Estimate{Mean: 100, SE: 1, DF: 2, N: 3, Repeats: true}
	if r.WithDrift(0.03) != r {
		t.Error("repeats took the floor on top of their own spread")
	}
	d, ok := LogRatioTest(100, 0.05, 100, 0.05, "z")
	if !ok || d.P != 1 || d.Diff != 0 {
		t.Errorf("equal figures: %+v", d)
	}
	d, _ = LogRatioTest(200, 0.05, 100, 0.05, "z")
	if d.P > 1e-6 || math.Abs(d.Diff-math.Ln2) > 1e-12 {
		t.Errorf("2× apart: %+v", d)
	}
	if got, want := Detectable(1, math.Inf(1)), 1.959964+0.841621; math.Abs(got-want) > 1e-9 {
		t.Errorf("Detectable(1, ∞) = %g, want %g", got, want)
	}
	// With few degrees of freedom more is needed: t(0.975, 4) + t(0.8, 4)
	// = 2.776445 + 0.940965 (scipy).
	if got := Detectable(1, 4); math.Abs(got-(2.7764451051977987+0.94096457719753)) > 1e-6 {
		t.Errorf("Detectable(1, 4) = %g", got)
	}
	if se := LogSEFromInterval(90, 110, 0.95); math.Abs(se-(math.Log(110)-math.Log(90))/(2*1.959964)) > 1e-6 {
		t.Errorf("LogSEFromInterval = %g", se)
	}
}
