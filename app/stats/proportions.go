package stats

import "math"

// TwoProportions is the z-test for two proportions (Agresti, Categorical
// Data Analysis, 3rd ed., §3.1.2 and §3.2.3): x1 of n1 against x2 of n2.
// P is two-sided from the pooled standard error, which makes it equal to
// Pearson's χ² test of the 2×2 table without continuity correction; Lo–Hi
// is the Wald 95 % interval of p1 − p2 from the unpooled standard error,
// as SE is. ok is false when either count is empty or the pooled share is
// 0 or 1 (both all met or none did: nothing to test). Goodput shares are
// over a run's hundreds of requests, where the normal approximation
// holds (docs/verdict.md#goodput).
func TwoProportions(x1, n1, x2, n2 int) (d Difference, se float64, ok bool) {
	if n1 <= 0 || n2 <= 0 || x1 < 0 || x2 < 0 || x1 > n1 || x2 > n2 {
		return Difference{}, 0, false
	}
	p1, p2 := float64(x1)/float64(n1), float64(x2)/float64(n2)
	pool := float64(x1+x2) / float64(n1+n2)
	pooled := math.Sqrt(pool * (1 - pool) * (1/float64(n1) + 1/float64(n2)))
	if pooled == 0 {
		return Difference{}, 0, false
	}
	z := (p1 - p2) / pooled
	se = math.Sqrt(p1*(1-p1)/float64(n1) + p2*(1-p2)/float64(n2))
	d = Difference{Diff: p1 - p2, P: math.Erfc(math.Abs(z) / math.Sqrt2), Test: "z-two-proportions"}
	d.Lo, d.Hi = d.Diff-1.959964*se, d.Diff+1.959964*se
	return d, se, true
}
