package stats

import (
	"cmp"
	"math"
	"slices"
)

// Alpha is the significance level of every test a conclusion names.
const Alpha = 0.05

// Estimate is a figure measured from a run's own data with its 95 %
// interval: the mean of DF+1 independent-enough observations (batches of
// the steady window, or repeated runs), their standard error and the
// Student t interval Mean ± t(0.975, DF)·SE. DF is 0 when there was too
// little data for an interval; then Lo and Hi equal Mean and nothing may
// be concluded from it.
type Estimate struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	SE   float64 `json:"se"`
	DF   float64 `json:"df"`
	// N is the number of observations the interval is over: batches, or
	// runs when Repeats.
	N       int  `json:"n"`
	Repeats bool `json:"repeats,omitempty"`
}

// OK says whether the estimate has an interval to test against.
func (e Estimate) OK() bool {
	return e.DF >= 1 && !math.IsNaN(e.SE) && !math.IsInf(e.SE, 0)
}

// MeanInterval is the Student t interval of the mean of xs: the
// between-run estimate of a target repeated len(xs) times (AIPerf's
// multi-run confidence reporting: mean ± t(0.975, n−1)·s/√n).
func MeanInterval(xs []float64) Estimate {
	n := len(xs)
	if n == 0 {
		return Estimate{}
	}
	m := Mean(xs)
	e := Estimate{Mean: m, Lo: m, Hi: m, N: n}
	if n < 2 {
		return e
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	e.SE = math.Sqrt(ss / float64(n-1) / float64(n))
	e.DF = float64(n - 1)
	h := StudentTQuantile(0.975, e.DF) * e.SE
	e.Lo, e.Hi = m-h, m+h
	return e
}

// Event is an amount (tokens, a request) completed at time T (seconds
// from any fixed origin).
type Event struct {
	T      float64
	Amount float64
}

// SteadyBatches is how many batches BatchMeansRate divides the steady
// window into (Law & Kelton recommend 10 to 30 batches; fewer, longer
// batches are less autocorrelated with the short runs benchmarks make).
const SteadyBatches = 10

// msErBins is the fine division MSER-5 looks at: 20 batches of 5 bins.
const msErBins = 100

// BatchMeansRate is the rate of events per second over [start, end] with a
// batch-means 95 % interval (Law & Kelton, Simulation Modeling and
// Analysis, § 9.5.3), over the window's steady part:
//
//  1. the window is cut into 100 equal bins and each bin's rate
//     (amount ÷ bin length) taken; consecutive bins are grouped by 5;
//  2. MSER-5 (White 1997; White, Cobb & Spratt 2000) picks the warm-up to
//     drop: the number d of leading groups minimising
//     Σ_{j>d} (Z_j − Z̄_d)² / (m − d)², d ≤ m/2. Only the start is
//     truncated: the same rule run on the reversed series as well picks
//     the calmest stretch of a stationary run and understates its
//     variance (an A/A false-positive rate of 8 % instead of 5 % in
//     TestBatchMeansRateFalseAndTruePositives); a closed loop draining
//     its last requests stays in, which only widens the interval;
//  3. what is left is cut into SteadyBatches equal batches (fewer when
//     fewer than 5 events a batch would land), each batch's rate is an
//     observation, and the interval is their mean ± t(0.975, k−1)·s/√k.
//
// ok is false when the window is empty or holds fewer than 4 events:
// then the rate has no interval.
func BatchMeansRate(events []Event, start, end float64) (Estimate, bool) {
	if !(end > start) || len(events) < 4 {
		return Estimate{}, false
	}
	w := (end - start) / msErBins
	bins := make([]float64, msErBins)
	for _, e := range events {
		i := int((e.T - start) / w)
		if i < 0 || e.T < start || e.T > end {
			continue
		}
		bins[min(i, msErBins-1)] += e.Amount
	}
	groups := make([]float64, msErBins/5)
	for i, b := range bins {
		groups[i/5] += b / (5 * w)
	}
	head := mser(groups)
	s := start + float64(head*5)*w
	t := end
	var inside []Event
	for _, e := range events {
		if e.T >= s && e.T <= t {
			inside = append(inside, e)
		}
	}
	k := min(SteadyBatches, len(inside)/5)
	if k < 2 {
		k = 2
	}
	if len(inside) < 4 {
		return Estimate{}, false
	}
	bw := (t - s) / float64(k)
	obs := make([]float64, k)
	for _, e := range inside {
		obs[min(int((e.T-s)/bw), k-1)] += e.Amount / bw
	}
	return MeanInterval(obs), true
}

// mser is MSER's truncation point over zs: the number of leading
// observations whose removal minimises the squared standard error of the
// rest's mean, searched up to half the series.
func mser(zs []float64) int {
	best, bestD := 0.0, 0
	for d := 0; d <= len(zs)/2; d++ {
		rest := zs[d:]
		m := Mean(rest)
		ss := 0.0
		for _, z := range rest {
			ss += (z - m) * (z - m)
		}
		n := float64(len(rest))
		if v := ss / (n * n); d == 0 || v < best*(1-1e-12) {
			best, bestD = v, d
		}
	}
	return bestD
}

// Difference is a test of A − B: the difference, its 95 % interval, the
// two-sided p and the test that gave it.
type Difference struct {
	Diff float64 `json:"difference"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	P    float64 `json:"p"`
	DF   float64 `json:"df"`
	Test string  `json:"test"`
}

// Significant says whether the test finds a difference at Alpha.
func (d Difference) Significant() bool { return d.P < Alpha }

// Welch is Welch's unequal-variances t-test of two estimates' means, with
// the Welch–Satterthwaite degrees of freedom. ok is false when either has
// no interval.
func Welch(a, b Estimate) (Difference, bool) {
	if !a.OK() || !b.OK() {
		return Difference{}, false
	}
	va, vb := a.SE*a.SE, b.SE*b.SE
	d := Difference{Diff: a.Mean - b.Mean, Test: "welch-t"}
	v := va + vb
	if v == 0 {
		d.Lo, d.Hi, d.DF = d.Diff, d.Diff, a.DF+b.DF
		if d.Diff == 0 {
			d.P = 1
		}
		return d, true
	}
	d.DF = v * v / (va*va/a.DF + vb*vb/b.DF)
	se := math.Sqrt(v)
	t := d.Diff / se
	d.P = StudentTTwoSided(t, d.DF)
	h := StudentTQuantile(0.975, d.DF) * se
	d.Lo, d.Hi = d.Diff-h, d.Diff+h
	return d, true
}

// ZFromIntervals tests a − b for two figures known only by their 95 %
// intervals (such as a percentile's distribution-free interval): each
// standard error is the interval's width ÷ (2 · 1.96), and z = (a − b) ÷
// √(se_a² + se_b²) against the normal distribution.
func ZFromIntervals(a, aLo, aHi, b, bLo, bHi float64) Difference {
	sa, sb := (aHi-aLo)/(2*1.959964), (bHi-bLo)/(2*1.959964)
	d := Difference{Diff: a - b, Test: "z-from-intervals"}
	se := math.Sqrt(sa*sa + sb*sb)
	if se == 0 || math.IsNaN(se) {
		d.Lo, d.Hi = d.Diff, d.Diff
		if d.Diff == 0 {
			d.P = 1
		}
		return d
	}
	d.P = math.Erfc(math.Abs(d.Diff/se) / math.Sqrt2)
	d.Lo, d.Hi = d.Diff-1.959964*se, d.Diff+1.959964*se
	return d
}

// BenjaminiHochberg says which of the p-values are discoveries with the
// false discovery rate controlled at q (Benjamini & Hochberg 1995): with
// the p's sorted p(1) ≤ … ≤ p(m), the largest k with p(k) ≤ k·q/m, and
// every p at or below p(k). The answer is in the order of ps.
func BenjaminiHochberg(ps []float64, q float64) []bool {
	m := len(ps)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ps[a], ps[b]) })
	k := -1
	for rank, i := range order {
		if ps[i] <= float64(rank+1)*q/float64(m) {
			k = rank
		}
	}
	out := make([]bool, m)
	for rank := 0; rank <= k; rank++ {
		out[order[rank]] = true
	}
	return out
}

// StudentTTwoSided is P(|T| ≥ |t|) for T Student's t with df degrees of
// freedom: the regularised incomplete beta I_{df/(df+t²)}(df/2, ½).
func StudentTTwoSided(t, df float64) float64 {
	if math.IsNaN(t) || df <= 0 {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		return 0
	}
	return regIncBeta(df/2, 0.5, df/(df+t*t))
}

// StudentTQuantile is the p-quantile of Student's t with df degrees of
// freedom (0 < p < 1), found by bisection on the distribution function to
// 1e-12.
func StudentTQuantile(p, df float64) float64 {
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -StudentTQuantile(1-p, df)
	}
	// P(T ≤ t) = 1 − ½·P(|T| ≥ t) for t ≥ 0.
	lo, hi := 0.0, 1.0
	for 1-0.5*StudentTTwoSided(hi, df) < p {
		hi *= 2
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for hi-lo > 1e-12*max(1, hi) {
		mid := (lo + hi) / 2
		if 1-0.5*StudentTTwoSided(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// regIncBeta is the regularised incomplete beta function I_x(a, b), by its
// continued fraction evaluated with the modified Lentz method (the
// fraction converges for x < (a+1)/(a+b+2); beyond, the symmetry
// I_x(a, b) = 1 − I_{1−x}(b, a)).
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, 1-x)/b
}

// betaFraction evaluates the incomplete beta's continued fraction.
func betaFraction(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	// step multiplies in one term of the fraction whose numerator is num.
	step := func(num float64) float64 {
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		return d * c
	}
	for m := 1; m <= 10000; m++ {
		fm := float64(m)
		h *= step(fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)))              // even
		del := step(-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))) // odd
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// DriftCV is the between-run coefficient of variation every single run's
// speed and latency estimate carries on top of its within-run interval
// when its target was not repeated (docs/concepts.md#drift): batch means
// and order statistics see only the noise inside one run, while two runs
// of one deployment one after another differ by more (a GPU's clocks and
// temperature, the runtime's caches, neighbours on the host). The
// design follows the two-level model of repeated measurements (Montgomery,
// Design and Analysis of Experiments, ch. 13, random effects): a run's
// figure is the deployment's true figure plus a run effect plus the
// within-run noise, so a difference between two single runs has the
// variance of both. Where a target is repeated in a benchmark its test
// takes the measured spread between its repeats instead (MeanInterval);
// where it is not, the run effect's size cannot be seen from one run, and
// this floor stands for it: 3 %, the drift make bench-verdict injects
// between runs, at which its A/A pairs stay at α.
const DriftCV = 0.03

// WithDrift is e with a between-run component of relative size cv added
// to its variance: SE² + (cv·Mean)², the added part taken as known (its
// degrees of freedom infinite), so the Welch–Satterthwaite degrees of
// freedom become (SE² + f²)² ÷ (SE⁴ ÷ DF). An estimate from repeats
// already holds the between-run variance and is returned as it is.
func (e Estimate) WithDrift(cv float64) Estimate {
	if e.Repeats || !e.OK() || cv <= 0 {
		return e
	}
	f := cv * e.Mean
	return e.withVariance(f*f, math.Inf(1))
}

// withVariance is e with a variance f of dfF degrees of freedom (+Inf:
// known) added to its own: SE² + f, the degrees of freedom by
// Welch–Satterthwaite, (SE² + f)² ÷ (SE⁴ ÷ DF + f² ÷ dfF), and the t
// interval anew.
func (e Estimate) withVariance(f, dfF float64) Estimate {
	w := e.SE * e.SE
	v := w + f
	if d := w*w/e.DF + f*f/dfF; d > 0 {
		e.DF = v * v / d
	} else {
		e.DF = math.Inf(1)
	}
	e.SE = math.Sqrt(v)
	h := StudentTQuantile(0.975, min(e.DF, 1e9)) * e.SE
	e.Lo, e.Hi = e.Mean-h, e.Mean+h
	return e
}

// LogRatioTest tests ln a − ln b for two positive figures known by the
// standard errors of their logarithms (seA, seB), with a z-test: the
// difference, its 95 % interval (on the log scale) and the two-sided p.
// test names it.
func LogRatioTest(a, seA, b, seB float64, test string) (Difference, bool) {
	if !(a > 0 && b > 0) || math.IsNaN(seA) || math.IsNaN(seB) || math.IsInf(seA, 0) || math.IsInf(seB, 0) {
		return Difference{}, false
	}
	d := Difference{Diff: math.Log(a) - math.Log(b), Test: test, DF: math.Inf(1)}
	se := math.Hypot(seA, seB)
	if se == 0 {
		d.Lo, d.Hi, d.P = d.Diff, d.Diff, 0
		if d.Diff == 0 {
			d.P = 1
		}
		return d, true
	}
	d.P = math.Erfc(math.Abs(d.Diff/se) / math.Sqrt2)
	d.Lo, d.Hi = d.Diff-1.959964*se, d.Diff+1.959964*se
	return d, true
}

// LogSEFromInterval is the standard error of ln x that a confidence
// interval [lo, hi] of exact coverage cov implies on the log scale:
// (ln hi − ln lo) ÷ (2·z), z the normal quantile at (1 + cov) ÷ 2.
func LogSEFromInterval(lo, hi, cov float64) float64 {
	if !(lo > 0 && hi >= lo && cov > 0 && cov < 1) {
		return math.NaN()
	}
	z := math.Sqrt2 * math.Erfinv(cov)
	return (math.Log(hi) - math.Log(lo)) / (2 * z)
}

// Detectable is the smallest true difference a two-sided test at Alpha
// with standard error se (and df degrees of freedom; +Inf for a z-test)
// finds with 80 % power: (t(1 − α/2) + t(0.8))·se (Cohen's approximation,
// the one power calculators such as G*Power use for t-tests).
func Detectable(se, df float64) float64 {
	if math.IsNaN(se) || se <= 0 {
		return math.NaN()
	}
	if math.IsInf(df, 1) || df > 1e6 {
		return (1.959964 + 0.841621) * se
	}
	return (StudentTQuantile(1-Alpha/2, df) + StudentTQuantile(0.8, df)) * se
}

// Drift is the between-run spread a deployment's own repeated runs show:
// the pooled variance of ln figure between runs of one target under one
// load (TPS for output tokens/s, P95 for p95 latency), each a single
// run's total relative variance (its own noise and the run effect), with
// DF degrees of freedom (Σ (runs − 1) over the targets repeated). DF 0
// means nothing was measured.
//
// Goodput is the between-run variance of a run's goodput share beyond its
// binomial variance (poolGoodput), over the repeats of one target under
// one SLO, apart from TPS's and P95's because only runs with an SLO have
// a goodput share.
type Drift struct {
	TPS, P95 float64
	DF       int
	Goodput  RunEffect
}

// MinDriftDF is the degrees of freedom a measured Drift needs to stand in
// for the DriftCV floor: fewer repeats say too little about the spread.
const MinDriftDF = 4

// Measured says whether the drift was measured well enough to use.
func (d Drift) Measured() bool { return d.DF >= MinDriftDF }

// GoodputMeasured says whether the goodput share's between-run variance
// was measured well enough to use (MinDriftDF, as for speed).
func (d Drift) GoodputMeasured() bool { return d.Goodput.DF >= MinDriftDF }

// WithRunEffect is e with the between-run variance a single run carries:
// where the deployment's drift was measured (relVar, the pooled relative
// variance of a single run, with df degrees of freedom), the run's total
// relative variance is the larger of its own and relVar, and the degrees
// of freedom those of the part that dominates (Welch–Satterthwaite on
// the two parts); else the DriftCV floor added (WithDrift). Repeats hold
// their own between-run variance and are returned as they are.
func (e Estimate) WithRunEffect(relVar float64, df int) Estimate {
	if e.Repeats || !e.OK() {
		return e
	}
	if df < MinDriftDF || math.IsNaN(relVar) || relVar < 0 {
		return e.WithDrift(DriftCV)
	}
	own := (e.SE / e.Mean) * (e.SE / e.Mean)
	if relVar <= own {
		return e
	}
	// The part beyond the run's own noise is the run effect, estimated
	// from the pooled spread with df degrees of freedom.
	return e.withVariance((relVar-own)*e.Mean*e.Mean, float64(df))
}

// TInterval is the estimate of mean with standard error se on df degrees
// of freedom over n observations: its Student t interval mean ±
// t(0.975, df)·se, or mean alone when df < 1 (as run_stats keeps a rate
// without an interval).
func TInterval(mean, se, df float64, n int) Estimate {
	e := Estimate{Mean: mean, Lo: mean, Hi: mean, N: n}
	if df >= 1 {
		e.SE, e.DF = se, df
		h := StudentTQuantile(0.975, df) * se
		e.Lo, e.Hi = mean-h, mean+h
	}
	return e
}

// RepeatedRun is one run of a target repeated on a deployment: the
// target (model and load identity) and the run's output tokens/s and p95;
// Good of its Requests met the SLO its benchmark set, named by SLO ("" when
// it set none, or when its load was not an open loop, where goodput is no
// conclusion).
type RepeatedRun struct {
	Target         string
	TPS, P95       float64
	Good, Requests int
	SLO            string
}

// PoolDrift is the between-run spread of runs (docs/concepts.md#drift):
// the variance of ln output tokens/s and of ln p95 between the runs of
// each target run at least twice, pooled over those targets
// (Σ (n−1)·s² ÷ Σ (n−1)), with Σ (n−1) degrees of freedom. Runs without
// a positive figure are left out; no repeated target gives DF 0. The
// goodput share's between-run variance is pooled alike (poolGoodput).
func PoolDrift(runs []RepeatedRun) Drift {
	byTarget := map[string][][2]float64{}
	var order []string
	for _, r := range runs {
		if !(r.TPS > 0) || !(r.P95 > 0) {
			continue
		}
		if _, ok := byTarget[r.Target]; !ok {
			order = append(order, r.Target)
		}
		byTarget[r.Target] = append(byTarget[r.Target], [2]float64{math.Log(r.TPS), math.Log(r.P95)})
	}
	var ssT, ssP float64
	var d Drift
	d.Goodput = poolGoodput(runs)
	for _, t := range order {
		xs := byTarget[t]
		if len(xs) < 2 {
			continue
		}
		var mT, mP float64
		for _, x := range xs {
			mT += x[0] / float64(len(xs))
			mP += x[1] / float64(len(xs))
		}
		for _, x := range xs {
			ssT += (x[0] - mT) * (x[0] - mT)
			ssP += (x[1] - mP) * (x[1] - mP)
		}
		d.DF += len(xs) - 1
	}
	if d.DF > 0 {
		d.TPS, d.P95 = ssT/float64(d.DF), ssP/float64(d.DF)
	}
	return d
}
