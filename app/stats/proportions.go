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

// RunEffect is the between-run variance of a share beyond binomial
// (Var), estimated as the spread of shares between a deployment's repeated
// runs less their mean binomial variance (Within) on DF degrees of
// freedom (poolGoodput).
type RunEffect struct {
	Var, Within float64
	DF          int
}

// sampling is the estimate Var's term in Welch–Satterthwaite's
// denominator, (Var + Within)² ÷ DF: Var is a sample variance (Var +
// Within, χ² on DF degrees of freedom) less a constant, and a sample
// variance s² on ν degrees of freedom enters as s⁴ ÷ ν.
func (r RunEffect) sampling() float64 {
	return (r.Var + r.Within) * (r.Var + r.Within) / float64(max(r.DF, 1))
}

// TwoProportionsWithRunEffect is TwoProportions with each share carrying
// a run effect: the between-run variance of its deployment's share beyond
// binomial (ra for the first, rb for the second) added to the variance of
// the difference — the random-effects model of a meta-analysis of
// proportions (DerSimonian and Laird, Controlled Clinical Trials 7, 1986,
// 177–188), each run one study. The statistic is the difference over
// √(pooled SE² + Va + Vb), referred to Student's t on the degrees of
// freedom of Welch–Satterthwaite, the binomial part known and each run
// effect as uncertain as the sample variance it was estimated from
// (RunEffect.sampling; where both come from one estimate, shared, their
// errors add in full rather than in quadrature); Lo–Hi is the difference ± t(0.975, df)·√(SE² + Va + Vb). se
// is the standard error of the interval.
func TwoProportionsWithRunEffect(x1, n1, x2, n2 int, ra, rb RunEffect, shared bool) (d Difference, se float64, ok bool) {
	d, seW, ok := TwoProportions(x1, n1, x2, n2)
	bad := func(r RunEffect) bool {
		return !(r.Var >= 0) || !(r.Within >= 0) || math.IsInf(r.Var, 0) || math.IsInf(r.Within, 0) || r.DF <= 0
	}
	if !ok || bad(ra) || bad(rb) {
		return Difference{}, 0, false
	}
	d.Test = "t-two-proportions-run-effect"
	extra := ra.Var + rb.Var
	p1, p2 := float64(x1)/float64(n1), float64(x2)/float64(n2)
	pool := float64(x1+x2) / float64(n1+n2)
	pooled := pool * (1 - pool) * (1/float64(n1) + 1/float64(n2))
	den := ra.sampling() + rb.sampling()
	if shared {
		den = math.Pow(math.Sqrt(ra.sampling())+math.Sqrt(rb.sampling()), 2)
	}
	d.DF = math.Inf(1)
	if den > 0 {
		d.DF = (pooled + extra) * (pooled + extra) / den
	}
	d.P = StudentTTwoSided((p1-p2)/math.Sqrt(pooled+extra), min(d.DF, 1e9))
	se = math.Sqrt(seW*seW + extra)
	h := StudentTQuantile(0.975, min(d.DF, 1e9)) * se
	d.Lo, d.Hi = d.Diff-h, d.Diff+h
	return d, se, true
}

// poolGoodput is the between-run variance of a goodput share beyond
// binomial, pooled over a deployment's targets each run at least twice
// under one SLO, by the method of moments for overdispersed binomial
// counts (Agresti, Categorical Data Analysis, 3rd ed., § 4.7; a moment
// estimator like DerSimonian and Laird's, with equal weights): for a target's
// k runs with shares p_j over n_j requests, the sample variance s² of the
// shares has expectation τ² + mean_j p(1−p) ÷ n_j, so s² − mean_j
// p̄(1−p̄) ÷ n_j (p̄ the target's pooled share) estimates the run effect τ²
// on k − 1 degrees of freedom; the targets' estimates are pooled
// (Σ (k−1)·τ̂² ÷ Σ (k−1)) and the pool truncated at 0. Within is the
// pooled binomial part, which says how uncertain the estimate is. The variance is of
// the share itself, as the goodput test is of the difference of shares
// (docs/concepts.md#drift).
func poolGoodput(runs []RepeatedRun) RunEffect {
	type share struct{ good, n int }
	groups := map[string][]share{}
	var order []string
	for _, r := range runs {
		if r.SLO == "" || r.Requests <= 0 || r.Good < 0 || r.Good > r.Requests {
			continue
		}
		k := r.Target + "\x00" + r.SLO
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], share{r.Good, r.Requests})
	}
	var sum, within float64
	df := 0
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		var good, n int
		var mean float64
		for _, s := range g {
			good, n = good+s.good, n+s.n
			mean += float64(s.good) / float64(s.n) / float64(len(g))
		}
		pool := float64(good) / float64(n)
		var ss, binomial float64
		for _, s := range g {
			p := float64(s.good) / float64(s.n)
			ss += (p - mean) * (p - mean)
			binomial += pool * (1 - pool) / float64(s.n) / float64(len(g))
		}
		k1 := len(g) - 1
		sum += float64(k1) * (ss/float64(k1) - binomial)
		within += float64(k1) * binomial
		df += k1
	}
	if df == 0 {
		return RunEffect{}
	}
	return RunEffect{Var: max(sum/float64(df), 0), Within: within / float64(df), DF: df}
}
