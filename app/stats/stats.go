// Package stats holds the summary statistics every figure in Ruckus uses:
// percentiles by linear interpolation between closest ranks (numpy's
// default method, and PostgreSQL's percentile_cont), means and extremes.
package stats

import (
	"math"
	"slices"
)

// Summary is a sample's count, mean, extremes and percentiles.
type Summary struct {
	N                  int
	Mean, Min, Max     float64
	P50, P90, P95, P99 float64
}

// Percentile returns the p-th quantile (p in [0, 1]) of sorted values by
// linear interpolation: rank h = (n−1)·p, value x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1]−x[⌊h⌋]).
// It returns 0 for no values.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	h := float64(n-1) * min(max(p, 0), 1)
	lo := int(math.Floor(h))
	if lo+1 >= n {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// Summarize sorts a copy of values and summarises it.
func Summarize(values []float64) Summary {
	if len(values) == 0 {
		return Summary{}
	}
	s := slices.Clone(values)
	slices.Sort(s)
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	return Summary{N: len(s), Mean: sum / float64(len(s)), Min: s[0], Max: s[len(s)-1],
		P50: Percentile(s, 0.50), P90: Percentile(s, 0.90), P95: Percentile(s, 0.95), P99: Percentile(s, 0.99)}
}
