package stats

import "math"

// QuantileCI is a distribution-free confidence interval of a quantile by
// exact binomial order statistics (Hahn & Meeker, Statistical Intervals,
// § 5.2; Conover, Practical Nonparametric Statistics, § 3.2): for the
// order statistics x(l) < x(u) of n values (1-based ranks), the number B
// of values below the true q-quantile is Binomial(n, q), so
//
//	P(x(l) ≤ ξ_q ≤ x(u)) ≥ P(l ≤ B ≤ u−1) = F(u−1) − F(l−1).
//
// Of the pairs whose coverage reaches conf, it takes the one spanning the
// fewest ranks, and of those the one whose two tails are most alike. No
// pair reaches conf when n is too small (p95 at 95 % needs n ≥ 59,
// MinQuantileN): then ok is false and the quantile may be shown but not
// tested. Coverage is the pair's exact coverage.
type QuantileCI struct {
	Lo, Hi   float64
	L, U     int // 1-based ranks of Lo and Hi
	Coverage float64
}

// QuantileInterval is QuantileCI of values sorted ascending.
func QuantileInterval(sorted []float64, q, conf float64) (QuantileCI, bool) {
	n := len(sorted)
	if n == 0 || !(q > 0 && q < 1) {
		return QuantileCI{}, false
	}
	cdf := binomCDFs(n, q)
	// F(k) for k = −1..n: cdf[k+1].
	F := func(k int) float64 { return cdf[k+1] }
	best, found := QuantileCI{}, false
	bestSpan, bestSkew := n+1, math.Inf(1)
	// The least u reaching conf never falls as l grows: one pass.
	u := 2
	for l := 1; l <= n; l++ {
		lower := F(l - 1)
		if 1-lower < conf {
			break // no u can reach conf from here on
		}
		u = max(u, l+1)
		for u <= n && F(u-1)-lower < conf {
			u++
		}
		if u > n {
			break
		}
		cov := F(u-1) - lower
		skew := math.Abs(lower - (1 - F(u-1)))
		if span := u - l; span < bestSpan || span == bestSpan && skew < bestSkew {
			best = QuantileCI{Lo: sorted[l-1], Hi: sorted[u-1], L: l, U: u, Coverage: cov}
			bestSpan, bestSkew, found = span, skew, true
		}
	}
	return best, found
}

// MinQuantileN is the least number of values for which QuantileInterval
// has an interval of the q-quantile at confidence conf: the n with
// 1 − q^n ≥ conf, since the widest pair (x(1), x(n)) covers
// 1 − q^n − (1−q)^n.
func MinQuantileN(q, conf float64) int {
	for n := 2; n < 1<<20; n++ {
		if 1-math.Pow(q, float64(n))-math.Pow(1-q, float64(n)) >= conf {
			return n
		}
	}
	return 1 << 20
}

// binomCDFs is F(k) = P(B ≤ k) for B ~ Binomial(n, p), k = −1..n, at
// index k+1; the terms are summed in log space so that large n stay exact
// to rounding.
func binomCDFs(n int, p float64) []float64 {
	out := make([]float64, n+2)
	lgN, _ := math.Lgamma(float64(n + 1))
	lp, lq := math.Log(p), math.Log1p(-p)
	sum := 0.0
	for k := 0; k <= n; k++ {
		a, _ := math.Lgamma(float64(k + 1))
		b, _ := math.Lgamma(float64(n - k + 1))
		sum += math.Exp(lgN - a - b + float64(k)*lp + float64(n-k)*lq)
		out[k+1] = min(sum, 1)
	}
	return out
}
