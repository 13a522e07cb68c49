package advise

import (
	"math"

	"github.com/ruckus/ruckus/app/stats"
)

// MergeRepeats folds the runs of one target (model × runtime × hardware)
// repeated in a benchmark into one candidate, the first run's, whose
// figures are the means over its runs and whose intervals are the spread
// between them (stats.MeanInterval: mean ± t(0.975, n−1)·s/√n, AIPerf's
// multi-run confidence reporting): output tokens/s and cost are then
// tested on the between-run variance, quality by its between-run interval.
// Targets run once stay as they are. The order is the first runs' order.
func MergeRepeats(cs []Candidate) []Candidate {
	type key struct{ model, runtime, hardware string }
	groups := map[key][]Candidate{}
	var order []key
	for _, c := range cs {
		k := key{c.Model, c.Runtime, c.Hardware}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], c)
	}
	out := make([]Candidate, 0, len(order))
	for _, k := range order {
		g := groups[k]
		if len(g) == 1 {
			out = append(out, g[0])
			continue
		}
		m := g[0]
		m.Repeats = len(g)
		mean := func(v func(Candidate) *float64) (*float64, stats.Estimate) {
			var xs []float64
			for _, c := range g {
				if x := v(c); x != nil && !math.IsNaN(*x) {
					xs = append(xs, *x)
				}
			}
			if len(xs) != len(g) {
				return nil, stats.Estimate{}
			}
			e := stats.MeanInterval(xs)
			e.Repeats = true
			return &e.Mean, e
		}
		var q stats.Estimate
		m.Quality, q = mean(func(c Candidate) *float64 { return c.Quality })
		m.QualityLo, m.QualityHi = nil, nil
		if m.Quality != nil && q.OK() {
			m.QualityLo, m.QualityHi = &q.Lo, &q.Hi
		}
		m.TokensPS, m.TPS = mean(func(c Candidate) *float64 { return c.TokensPS })
		m.CostPer1M, _ = mean(func(c Candidate) *float64 { return c.CostPer1M })
		m.TTFTp95, _ = mean(func(c Candidate) *float64 { return c.TTFTp95 })
		var e2e stats.Estimate
		m.E2Ep95, e2e = mean(func(c Candidate) *float64 { return c.E2Ep95 })
		m.E2Ep95Lo, m.E2Ep95Hi = nil, nil
		if m.E2Ep95 != nil && e2e.OK() {
			m.E2Ep95Lo, m.E2Ep95Hi = &e2e.Lo, &e2e.Hi
		}
		m.GPUMemGiB, _ = mean(func(c Candidate) *float64 { return c.GPUMemGiB })
		out = append(out, m)
	}
	return out
}
