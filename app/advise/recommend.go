package advise

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Candidate is one target's measured figures; nil where unknown.
type Candidate struct {
	RunID     int64    `json:"run_id"`
	Model     string   `json:"model"`
	Runtime   string   `json:"runtime"`
	Hardware  string   `json:"hardware"`
	Quality   *float64 `json:"quality"`
	QualityLo *float64 `json:"quality_lo"`
	QualityHi *float64 `json:"quality_hi"`
	TTFTp95   *float64 `json:"ttft_p95_ms"`
	E2Ep95    *float64 `json:"e2e_p95_ms"`
	TokensPS  *float64 `json:"output_tokens_per_s"`
	CostPer1M *float64 `json:"cost_per_1m_tokens"`
	GPUMemGiB *float64 `json:"peak_gpu_mem_gib"`
}

// Constraints are the user's limits; nil (or empty) means none.
type Constraints struct {
	MinQuality *float64
	MaxTTFTp95 *float64
	MaxE2Ep95  *float64
	MaxCost    *float64
	MaxGPUMem  *float64
	// Hardware the user has; empty allows every profile.
	Hardware []string
}

// Weights say how much quality, speed (output tokens/s) and cost count in
// the ranking; they need not add up to 1.
type Weights struct {
	Quality, Speed, Cost float64
}

// Ranked is a feasible candidate with its weighted score (0..1) and the
// candidates whose quality it cannot be told apart from.
type Ranked struct {
	Candidate
	Score float64 `json:"score"`
	// SameQualityAs lists feasible runs whose 95 % quality intervals overlap
	// this one's: "not significantly different".
	SameQualityAs []int64 `json:"not_significantly_different_from"`
}

// Excluded is a candidate left out, with every reason.
type Excluded struct {
	Candidate
	Reasons []string `json:"reasons"`
}

// Recommendation is the ranked feasible candidates, the excluded ones and
// the Pareto fronts (run ids) over all candidates with the figures.
type Recommendation struct {
	Feasible           []Ranked   `json:"feasible"`
	Excluded           []Excluded `json:"excluded"`
	ParetoQualityCost  []int64    `json:"pareto_quality_cost"`
	ParetoQualityLaten []int64    `json:"pareto_quality_latency"`
}

// Recommend applies the constraints, ranks what is left by the weighted
// sum of min–max normalised quality (higher is better), output tokens/s
// (higher) and cost per 1M tokens (lower) — a figure unknown for a
// candidate counts as the worst — and finds the Pareto fronts of quality
// vs cost and quality vs p95 E2E latency.
func Recommend(cs []Candidate, c Constraints, w Weights) Recommendation {
	var rec Recommendation
	var ok []Candidate
	for _, x := range cs {
		var why []string
		check := func(v *float64, limit *float64, name, unit string, max bool) {
			if limit == nil {
				return
			}
			switch {
			case v == nil:
				why = append(why, fmt.Sprintf("no %s measured (limit %g%s)", name, *limit, unit))
			case max && *v > *limit:
				why = append(why, fmt.Sprintf("%s %.4g%s is above the limit %g%s", name, *v, unit, *limit, unit))
			case !max && *v < *limit:
				why = append(why, fmt.Sprintf("%s %.4g%s is below the minimum %g%s", name, *v, unit, *limit, unit))
			}
		}
		check(x.Quality, c.MinQuality, "quality", "", false)
		check(x.TTFTp95, c.MaxTTFTp95, "p95 TTFT", " ms", true)
		check(x.E2Ep95, c.MaxE2Ep95, "p95 E2E", " ms", true)
		check(x.CostPer1M, c.MaxCost, "cost per 1M tokens", " USD", true)
		check(x.GPUMemGiB, c.MaxGPUMem, "peak GPU memory", " GiB", true)
		if len(c.Hardware) > 0 && !slices.Contains(c.Hardware, x.Hardware) {
			why = append(why, fmt.Sprintf("hardware %s is not among the hardware you have", x.Hardware))
		}
		if len(why) > 0 {
			rec.Excluded = append(rec.Excluded, Excluded{Candidate: x, Reasons: why})
			continue
		}
		ok = append(ok, x)
	}
	norm := func(get func(Candidate) *float64, higherBetter bool) func(Candidate) float64 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range ok {
			if v := get(x); v != nil {
				lo, hi = math.Min(lo, *v), math.Max(hi, *v)
			}
		}
		return func(x Candidate) float64 {
			v := get(x)
			if v == nil {
				return 0
			}
			if hi == lo {
				return 1
			}
			n := (*v - lo) / (hi - lo)
			if !higherBetter {
				n = 1 - n
			}
			return n
		}
	}
	q := norm(func(x Candidate) *float64 { return x.Quality }, true)
	sp := norm(func(x Candidate) *float64 { return x.TokensPS }, true)
	co := norm(func(x Candidate) *float64 { return x.CostPer1M }, false)
	total := w.Quality + w.Speed + w.Cost
	if total <= 0 {
		w, total = Weights{1, 1, 1}, 3
	}
	for _, x := range ok {
		r := Ranked{Candidate: x, Score: (w.Quality*q(x) + w.Speed*sp(x) + w.Cost*co(x)) / total}
		for _, y := range ok {
			if y.RunID != x.RunID && overlap(x, y) {
				r.SameQualityAs = append(r.SameQualityAs, y.RunID)
			}
		}
		rec.Feasible = append(rec.Feasible, r)
	}
	sort.SliceStable(rec.Feasible, func(i, j int) bool { return rec.Feasible[i].Score > rec.Feasible[j].Score })
	rec.ParetoQualityCost = pareto(cs, func(x Candidate) *float64 { return x.CostPer1M })
	rec.ParetoQualityLaten = pareto(cs, func(x Candidate) *float64 { return x.E2Ep95 })
	return rec
}

func overlap(a, b Candidate) bool {
	if a.QualityLo == nil || a.QualityHi == nil || b.QualityLo == nil || b.QualityHi == nil {
		return false
	}
	return *a.QualityLo <= *b.QualityHi && *b.QualityLo <= *a.QualityHi
}

// pareto returns the candidates no other beats on both quality (higher)
// and the cost-like figure (lower), in increasing order of that figure.
func pareto(cs []Candidate, cost func(Candidate) *float64) []int64 {
	var pts []Candidate
	for _, x := range cs {
		if x.Quality != nil && cost(x) != nil {
			pts = append(pts, x)
		}
	}
	var front []Candidate
	for _, a := range pts {
		dominated := false
		for _, b := range pts {
			if b.RunID == a.RunID {
				continue
			}
			if *b.Quality >= *a.Quality && *cost(b) <= *cost(a) && (*b.Quality > *a.Quality || *cost(b) < *cost(a)) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, a)
		}
	}
	sort.Slice(front, func(i, j int) bool { return *cost(front[i]) < *cost(front[j]) })
	ids := make([]int64, len(front))
	for i, x := range front {
		ids[i] = x.RunID
	}
	return ids
}
