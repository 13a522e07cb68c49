package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// McNemarExactBelow is the number of discordant pairs (b+c) below which
// McNemar's test uses the exact binomial distribution; from it on, the
// chi-square approximation without continuity correction.
const McNemarExactBelow = 25

// McNemar is McNemar's test of two paired 0/1 samples from the counts of
// discordant pairs: b items right in A only, c right in B only. Below
// McNemarExactBelow discordant pairs it is statsmodels'
// mcnemar(table, exact=True): the statistic is min(b, c) and the two-sided
// p is 2·P(X ≤ min(b, c)) for X ~ Binomial(b+c, ½), capped at 1. From
// there on it is mcnemar(table, exact=False, correction=False): the
// statistic (b−c)² / (b+c) and p its chi-square (1 degree of freedom)
// survival. No discordant pair gives p = 1.
//
// The χ² form leaves out Edwards' continuity correction, as Fagerland,
// Lydersen and Laake (2013, "The McNemar test for binary matched-pairs
// data: mid-p and asymptotic are better than exact conditional", BMC
// Medical Research Methodology 13:91) recommend: with the correction the
// test is conservative (its actual size well under α), so it misses real
// differences, while the uncorrected test keeps its size close to α. The
// exact test is kept for few discordant pairs, where it errs on the side
// of calling nothing.
func McNemar(b, c int) (statistic, p float64, exact bool) {
	n := b + c
	if n < McNemarExactBelow {
		k := min(b, c)
		return float64(k), min(2*binomHalfCDF(k, n), 1), true
	}
	d := float64(b - c)
	statistic = d * d / float64(n)
	// The chi-square survival with one degree of freedom: erfc(√(x/2)).
	return statistic, math.Erfc(math.Sqrt(statistic / 2)), false
}

// binomHalfCDF is P(X ≤ k) for X ~ Binomial(n, ½), summed in log space so
// that it stays exact to rounding for any n the exact test is used for.
func binomHalfCDF(k, n int) float64 {
	if k >= n {
		return 1
	}
	sum := 0.0
	lgN, _ := math.Lgamma(float64(n + 1))
	for i := 0; i <= k; i++ {
		a, _ := math.Lgamma(float64(i + 1))
		b, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(lgN - a - b - float64(n)*math.Ln2)
	}
	return min(sum, 1)
}

// BootstrapResamples is how many resamples PairedBootstrap draws (as
// sacreBLEU's paired bootstrap does by default).
const BootstrapResamples = 1000

// Paired is the comparison of two runs' scores on the same items: the
// mean difference A − B, its 95 % interval and a two-sided p.
type Paired struct {
	N    int     // items compared
	Mean float64 // mean of A's score minus B's
	Lo   float64 // 95 % interval of Mean
	Hi   float64
	P    float64 // two-sided p of "A and B score alike"
	// Test names the test that gave P: "mcnemar-exact", "mcnemar-chi2-uc"
	// (χ² without continuity correction) or "paired-permutation". Pairs
	// kept before the correction was dropped say "mcnemar-chi2", pairs
	// kept before the permutation test replaced the bootstrap's p
	// "paired-bootstrap".
	Test string
	// B and C are McNemar's discordant counts (A right only, B right
	// only); zero for the bootstrap.
	B, C int
}

// Significant says whether the difference is significant at Alpha.
func (p Paired) Significant() bool { return p.N > 0 && p.P < Alpha }

// Binary reports whether every score is exactly 0 or 1.
func Binary(xs []float64) bool {
	for _, x := range xs {
		if x != 0 && x != 1 {
			return false
		}
	}
	return true
}

// ComparePaired compares a[i] with b[i] over the same items (a and b have
// the same length). The interval is PairedBootstrap's. When every score is
// 0 or 1 the p is McNemar's; otherwise (partial credit) the paired
// permutation test's (PairedPermutationP). seed makes the resampling
// repeatable.
func ComparePaired(a, b []float64, seed uint64) Paired {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	if n == 0 {
		return Paired{P: 1, Test: "none"}
	}
	r := PairedBootstrap(a, b, BootstrapResamples, seed)
	r.P, r.Test = PairedPermutationP(a, b, PermutationResamples, seed), "paired-permutation"
	if Binary(a) && Binary(b) {
		var bc, cb int
		for i := range a {
			switch {
			case a[i] > b[i]:
				bc++
			case a[i] < b[i]:
				cb++
			}
		}
		_, p, exact := McNemar(bc, cb)
		r.P, r.B, r.C, r.Test = p, bc, cb, "mcnemar-chi2-uc"
		if exact {
			r.Test = "mcnemar-exact"
		}
	}
	return r
}

// PairedBootstrap is the paired bootstrap of the difference of means
// (Koehn 2004, as sacreBLEU's paired_bs test computes it): resamples
// resamples of item indices drawn with replacement from a PCG source
// seeded with seed, the same indices for A and B. The 95 % interval is the
// percentile interval of the resampled differences A* − B*, taking the
// order statistics sacreBLEU's estimate_ci takes (the ⌊R/40⌋-th from each
// end). p is sacreBLEU's: with d = |mean A − mean B| and s_r = |A*_r −
// B*_r|, the count c of resamples whose s_r − mean(s) exceeds d, and
// p = (c + 1) / (R + 1).
func PairedBootstrap(a, b []float64, resamples int, seed uint64) Paired {
	n := min(len(a), len(b))
	rng := rand.New(rand.NewPCG(seed, 0x9a1bed))
	return pairedBootstrap(a[:n], b[:n], resamples, func() int { return rng.IntN(n) })
}

// pairedBootstrap is PairedBootstrap with the index source given, so the
// definition can be checked against indices drawn elsewhere.
func pairedBootstrap(a, b []float64, resamples int, next func() int) Paired {
	n := len(a)
	out := Paired{N: n, Test: "paired-bootstrap", P: 1}
	if n == 0 || resamples < 1 {
		return out
	}
	sumA, sumB := 0.0, 0.0
	for i := range a {
		sumA += a[i]
		sumB += b[i]
	}
	out.Mean = sumA/float64(n) - sumB/float64(n)
	diffs := make([]float64, resamples)
	abs := make([]float64, resamples)
	absSum := 0.0
	for r := range diffs {
		sa, sb := 0.0, 0.0
		for range n {
			i := next()
			sa += a[i]
			sb += b[i]
		}
		diffs[r] = sa/float64(n) - sb/float64(n)
		abs[r] = math.Abs(diffs[r])
		absSum += abs[r]
	}
	observed := math.Abs(out.Mean)
	absMean := absSum / float64(resamples)
	c := 0
	for _, s := range abs {
		if s-absMean > observed {
			c++
		}
	}
	out.P = float64(c+1) / float64(resamples+1)
	slices.Sort(diffs)
	lo := resamples / 40
	out.Lo, out.Hi = diffs[lo], diffs[resamples-lo-1]
	return out
}

// PairScores lines up two runs' scored items by index (each list sorted by
// index): the scores of the items both scored, in order, and how many
// each scored alone.
func PairScores(aIdx []int32, aScores []float64, bIdx []int32, bScores []float64) (xa, xb []float64, onlyA, onlyB int) {
	i, j := 0, 0
	for i < len(aIdx) && j < len(bIdx) {
		switch {
		case aIdx[i] < bIdx[j]:
			onlyA++
			i++
		case aIdx[i] > bIdx[j]:
			onlyB++
			j++
		default:
			xa, xb = append(xa, aScores[i]), append(xb, bScores[j])
			i++
			j++
		}
	}
	return xa, xb, onlyA + len(aIdx) - i, onlyB + len(bIdx) - j
}

// PairSeed is the resampling seed of the paired comparison of runs a and
// b: the same in either order, so comparing b with a gives exactly the
// negated result.
func PairSeed(a, b int64) uint64 { return uint64(min(a, b))<<32 ^ uint64(max(a, b)) }

// PermutationResamples is how many random sign assignments
// PairedPermutationP draws.
const PermutationResamples = 9999

// PairedPermutationP is the two-sided p of the paired permutation
// (randomisation) test of "A and B score alike" (Fisher 1935; Good,
// Permutation Tests, § 3.2; the paired "approximate randomization" test
// NLP evaluations use, Riezler & Maxwell 2005): under the null each
// item's difference d_i = a_i − b_i is as likely to have either sign, so
// with T = |Σ d_i| and resamples random sign assignments s,
// p = (1 + #{|Σ s_i·d_i| ≥ T}) ÷ (resamples + 1). Unlike the paired
// bootstrap's p (sacreBLEU's paired_bs, whose resampled differences are
// not centred under the null and so call noise significant 9–13 % of the
// time at α = 5 %), its size is α by construction. Items scored alike
// carry no sign and are left out of the resampling; no differing item
// gives p = 1. seed makes the draws repeatable; the same seed for (a, b)
// and (b, a) gives the same p.
func PairedPermutationP(a, b []float64, resamples int, seed uint64) float64 {
	n := min(len(a), len(b))
	var d []float64
	sum := 0.0
	for i := range n {
		if x := a[i] - b[i]; x != 0 {
			d = append(d, math.Abs(x))
			sum += x
		}
	}
	if len(d) == 0 || resamples < 1 {
		return 1
	}
	observed := math.Abs(sum)
	// A resampled sum ties the observed one when it differs by rounding
	// only.
	tol := 1e-9 * max(observed, 1)
	rng := rand.New(rand.NewPCG(seed, 0x5eed5))
	c := 0
	for range resamples {
		s := 0.0
		var bits uint64
		for i, x := range d {
			if i%64 == 0 {
				bits = rng.Uint64()
			}
			if bits&1 == 1 {
				s += x
			} else {
				s -= x
			}
			bits >>= 1
		}
		if math.Abs(s) >= observed-tol {
			c++
		}
	}
	return float64(c+1) / float64(resamples+1)
}
