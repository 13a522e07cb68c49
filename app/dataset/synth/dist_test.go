package synth

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDistDraws(t *testing.T) {
	t.Parallel()
	const n = 200_000
	tests := []struct {
		name   string
		d      Dist
		lo, hi int
		// mean, or median when median is set, within tol (relative).
		mean, median, tol float64
	}{
		{name: "fixed", d: Fixed(256), lo: 256, hi: 256, mean: 256, tol: 0},
		{name: "uniform", d: Dist{Kind: DistUniform, Min: 100, Max: 300}, lo: 100, hi: 300, mean: 200, tol: 0.01},
		{name: "uniform of one value", d: Dist{Kind: DistUniform, Min: 7, Max: 7}, lo: 7, hi: 7, mean: 7},
		{name: "normal", d: Dist{Kind: DistNormal, Mean: 512, StdDev: 64}, lo: 1, hi: MaxTokens, mean: 512, tol: 0.01},
		{name: "normal clipped at max", d: Dist{Kind: DistNormal, Mean: 100, StdDev: 50, Max: 120}, lo: 1, hi: 120},
		{name: "normal clipped at 1", d: Dist{Kind: DistNormal, Mean: 5, StdDev: 50}, lo: 1, hi: MaxTokens},
		{name: "normal with min", d: Dist{Kind: DistNormal, Mean: 100, StdDev: 50, Min: 80, Max: 150}, lo: 80, hi: 150},
		{name: "lognormal by median", d: Dist{Kind: DistLognormal, Median: 300, Sigma: 0.6}, lo: 1, hi: MaxTokens, median: 300, tol: 0.02},
		{name: "lognormal by mean", d: Dist{Kind: DistLognormal, Mean: 300, Sigma: 0.5}, lo: 1, hi: MaxTokens, mean: 300, tol: 0.02},
		{name: "lognormal clipped", d: Dist{Kind: DistLognormal, Median: 1000, Sigma: 1, Max: 2000, Min: 500}, lo: 500, hi: 2000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if errs := tc.d.validate("input", MaxTokens); len(errs) > 0 {
				t.Fatalf("validate: %v", errs)
			}
			draw := func(seed uint64) []int {
				rng := rand.New(rand.NewPCG(seed, 1))
				out := make([]int, n)
				for i := range out {
					out[i] = tc.d.draw(rng, MaxTokens)
				}
				return out
			}
			xs := draw(42)
			if !slices.Equal(xs, draw(42)) {
				t.Fatal("the same seed gave different draws")
			}
			if tc.d.Kind != DistFixed && tc.lo != tc.hi && slices.Equal(xs, draw(43)) {
				t.Fatal("different seeds gave the same draws")
			}
			sum := 0.0
			sawLo, sawHi := false, false
			for _, x := range xs {
				if x < tc.lo || x > tc.hi {
					t.Fatalf("draw %d outside [%d, %d]", x, tc.lo, tc.hi)
				}
				sawLo, sawHi = sawLo || x == tc.lo, sawHi || x == tc.hi
				sum += float64(x)
			}
			if tc.d.Kind == DistUniform && (!sawLo || !sawHi) {
				t.Errorf("uniform never drew its bounds (min %v, max %v)", sawLo, sawHi)
			}
			if tc.mean > 0 {
				if got := sum / n; math.Abs(got-tc.mean) > tc.tol*tc.mean {
					t.Errorf("mean %.2f, want %.2f ± %.0f%%", got, tc.mean, tc.tol*100)
				}
			}
			if tc.median > 0 {
				s := slices.Clone(xs)
				slices.Sort(s)
				if got := float64(s[n/2]); math.Abs(got-tc.median) > tc.tol*tc.median {
					t.Errorf("median %.1f, want %.1f ± %.0f%%", got, tc.median, tc.tol*100)
				}
			}
		})
	}
}

func TestDistValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		d     Dist
		field string // "" = valid
	}{
		{"fixed", Fixed(1), ""},
		{"no kind", Dist{}, "x.dist"},
		{"unknown kind", Dist{Kind: "zipf"}, "x.dist"},
		{"fixed zero", Fixed(0), "x.value"},
		{"fixed too long", Fixed(MaxTokens + 1), "x.value"},
		{"uniform reversed", Dist{Kind: DistUniform, Min: 10, Max: 5}, "x.max"},
		{"uniform from zero", Dist{Kind: DistUniform, Min: 0, Max: 5}, "x.min"},
		{"max beyond bound", Dist{Kind: DistUniform, Min: 1, Max: MaxTokens + 1}, "x.max"},
		{"normal NaN", Dist{Kind: DistNormal, Mean: math.NaN(), StdDev: 1}, "x.mean"},
		{"normal Inf stddev", Dist{Kind: DistNormal, Mean: 10, StdDev: math.Inf(1)}, "x.stddev"},
		{"normal negative stddev", Dist{Kind: DistNormal, Mean: 10, StdDev: -1}, "x.stddev"},
		{"normal min above max", Dist{Kind: DistNormal, Mean: 10, StdDev: 1, Min: 20, Max: 15}, "x.min"},
		{"lognormal both", Dist{Kind: DistLognormal, Mean: 10, Median: 10, Sigma: 1}, "x.median"},
		{"lognormal neither", Dist{Kind: DistLognormal, Sigma: 1}, "x.median"},
		{"lognormal no sigma", Dist{Kind: DistLognormal, Median: 10}, "x.sigma"},
		{"lognormal huge sigma", Dist{Kind: DistLognormal, Median: 10, Sigma: 40}, "x.sigma"},
		{"lognormal", Dist{Kind: DistLognormal, Median: 10, Sigma: 1}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := tc.d.validate("x", MaxTokens)
			if tc.field == "" {
				if len(errs) > 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			if len(errs) == 0 || errs[0].Path != tc.field {
				t.Fatalf("want an error on %s, got %v", tc.field, errs)
			}
		})
	}
}
