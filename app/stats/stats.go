// Package stats holds the summary statistics every figure in Ruckus uses,
// so a p99 means the same thing in the agent, the UI, the API and the
// exports (docs/metrics.md#percentiles): percentiles by linear
// interpolation between closest ranks (numpy's default method "linear",
// which is also PostgreSQL's percentile_cont), the mean and the extremes.
//
// Results are meant to agree with numpy to the last few bits; they are not
// bit-for-bit identical, since numpy sums pairwise and interpolates with a
// slightly different (but mathematically equal) formula.
package stats

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Summary is a sample's count, mean, extremes and the percentiles Ruckus
// reports. The zero Summary stands for an empty sample, so a run with no
// successful request shows zeros rather than failing.
type Summary struct {
	N                  int
	Mean, Min, Max     float64
	P50, P90, P95, P99 float64
}

// Percentile returns the p-th quantile (p in [0, 1]) of values already
// sorted in ascending order, by numpy's "linear" method: with n values the
// rank is h = (n−1)·p and the result x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1]−x[⌊h⌋]).
//
// It takes sorted input so that callers asking for several percentiles of
// the same sample sort once. p below 0 or above 1 is clamped; a NaN p
// gives NaN; no values give 0 (the same convention as the zero Summary).
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return 0
	case math.IsNaN(p):
		return math.NaN()
	}
	p = min(max(p, 0), 1)
	h := float64(n-1) * p
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	frac := h - float64(lo)
	a, b := sorted[lo], sorted[lo+1]
	// Exact ranks and equal neighbours return the value itself, so that
	// infinities do not turn into NaN through 0·∞ or ∞−∞.
	if frac == 0 || a == b {
		return a
	}
	return a + frac*(b-a)
}

// Summarize summarises values without changing them (it sorts a copy).
// NaN values are left out and not counted in N: a NaN is a measurement that
// did not happen, and one of them must not turn every figure into NaN.
// No values (or only NaNs) give the zero Summary.
func Summarize(values []float64) Summary {
	s := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) {
			s = append(s, v)
		}
	}
	if len(s) == 0 {
		return Summary{}
	}
	slices.Sort(s)
	return Summary{
		N:    len(s),
		Mean: Mean(s),
		Min:  s[0],
		Max:  s[len(s)-1],
		P50:  Percentile(s, 0.50),
		P90:  Percentile(s, 0.90),
		P95:  Percentile(s, 0.95),
		P99:  Percentile(s, 0.99),
	}
}

// Mean is the arithmetic mean of values, 0 for none. It is exported for
// figures that need only the mean (such as a run's mean quality score) and
// should not pay for a sort.
func Mean(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	return sum / float64(len(values))
}

// Repeated is a value that occurs Count times in a sample.
type Repeated struct {
	Value float64
	Count int
}

// SummarizeRepeated summarises the sample in which each Value occurs Count
// times, with the same result as Summarize of that sample written out,
// in memory proportional to len(rs) rather than to the sample's size. It
// exists for inter-token latencies: a gap shared by k tokens is k equal
// samples, and k comes from a runtime's usage report, which must not be
// able to make the agent allocate without bound. Entries with a NaN value
// or a Count below 1 are left out.
func SummarizeRepeated(rs []Repeated) Summary {
	s := make([]Repeated, 0, len(rs))
	n, sum := 0, 0.0
	for _, r := range rs {
		if r.Count >= 1 && !math.IsNaN(r.Value) {
			s = append(s, r)
			n += r.Count
			sum += r.Value * float64(r.Count)
		}
	}
	if n == 0 {
		return Summary{}
	}
	slices.SortFunc(s, func(a, b Repeated) int { return cmp.Compare(a.Value, b.Value) })
	// ends[i] is the index, in the written-out sample, just past s[i].
	ends := make([]int, len(s))
	end := 0
	for i, r := range s {
		end += r.Count
		ends[i] = end
	}
	x := func(j int) float64 {
		i, _ := slices.BinarySearch(ends, j+1)
		return s[i].Value
	}
	pct := func(p float64) float64 {
		h := float64(n-1) * p
		lo := int(math.Floor(h))
		if lo >= n-1 {
			return x(n - 1)
		}
		return Percentile([]float64{x(lo), x(lo + 1)}, h-float64(lo))
	}
	return Summary{
		N: n, Mean: sum / float64(n), Min: s[0].Value, Max: s[len(s)-1].Value,
		P50: pct(0.50), P90: pct(0.90), P95: pct(0.95), P99: pct(0.99),
	}
}

// DurationSummary is a Summary of latencies, kept as time.Duration so
// callers do not convert units by hand (a frequent source of ms/ns
// mistakes). Values between whole nanoseconds are truncated.
type DurationSummary struct {
	N                  int
	Mean, Min, Max     time.Duration
	P50, P90, P95, P99 time.Duration
}

// SummarizeDurations summarises latencies exactly as Summarize does
// numbers (computed in float64 nanoseconds, exact below about 104 days).
func SummarizeDurations(ds []time.Duration) DurationSummary {
	f := make([]float64, len(ds))
	for i, d := range ds {
		f[i] = float64(d)
	}
	s := Summarize(f)
	return DurationSummary{
		N:    s.N,
		Mean: time.Duration(s.Mean), Min: time.Duration(s.Min), Max: time.Duration(s.Max),
		P50: time.Duration(s.P50), P90: time.Duration(s.P90), P95: time.Duration(s.P95), P99: time.Duration(s.P99),
	}
}

// Milliseconds converts a duration to fractional milliseconds, the unit
// every latency figure is shown and exported in (jobs.MetricTTFT and the
// other *_ms metrics).
func Milliseconds(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
