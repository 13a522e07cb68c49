package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMcNemarPowerMatchesConnor checks the power formula against values
// scipy 1.10 gives for Connor's (1987) approximation,
// norm.cdf((√n·|δ| − norm.ppf(0.975)·√ψ) / √(ψ − δ²)).
func TestMcNemarPowerMatchesConnor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b, phi float64
		n         int
		want      float64
	}{
		{0.6, 0.7, 0.3, 200, 0.7011672136344483},
		{0.6, 0.7, 0.5, 200, 0.8352601580322206},
		{0.6, 0.7, 0.7, 200, 0.9647087091563916},
		{0.5, 0.55, 0, 1000, 0.6090319508415174},
	} {
		if got := mcnemarPower(tc.a, tc.b, tc.phi, tc.n); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("mcnemarPower(%v, %v, %v, %d) = %.12f, scipy %.12f", tc.a, tc.b, tc.phi, tc.n, got, tc.want)
		}
	}
}

// TestQualityModelHasTheAskedCorrelation draws many pairs of runs from
// the latent-difficulty model at the spread spreadFor chose and checks
// their item scores' correlation and accuracies against what was asked.
func TestQualityModelHasTheAskedCorrelation(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	z := make([]float64, 2000)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	for _, phi := range []float64{0, 0.3, 0.5, 0.7} {
		sd := spreadFor(z, 0.6, 0.7, phi)
		ds := make([]float64, len(z))
		for i := range z {
			ds[i] = z[i] * sd
		}
		if got := itemCorrelation(ds, 0.6, 0.7); math.Abs(got-phi) > 1e-6 {
			t.Fatalf("φ %.1f: the chosen spread %.3f gives %.6f", phi, sd, got)
		}
		ta, tb := calibrate(ds, 0.6), calibrate(ds, 0.7)
		var sa, sb, sab, n float64
		for range 20 {
			for _, d := range ds {
				a, b := 0.0, 0.0
				if rng.Float64() < logistic(ta-d) {
					a = 1
				}
				if rng.Float64() < logistic(tb-d) {
					b = 1
				}
				sa, sb, sab, n = sa+a, sb+b, sab+a*b, n+1
			}
		}
		ma, mb := sa/n, sb/n
		emp := (sab/n - ma*mb) / math.Sqrt(ma*(1-ma)*mb*(1-mb))
		// 40,000 draws: the sample φ's standard error is about 0.005.
		if math.Abs(emp-phi) > 0.025 || math.Abs(ma-0.6) > 0.015 || math.Abs(mb-0.7) > 0.015 {
			t.Errorf("φ %.1f (spread %.2f): drawn φ %.3f, accuracies %.3f and %.3f", phi, sd, emp, ma, mb)
		}
	}
}
