package advise

import (
	"fmt"
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }

func cand(id int64, hw string, q, lo, hi, ttft, e2e, tps, cost, mem float64) Candidate {
	return Candidate{RunID: id, Model: fmt.Sprint("m", id), Hardware: hw, Quality: f(q), QualityLo: f(lo), QualityHi: f(hi),
		TTFTp95: f(ttft), E2Ep95: f(e2e), TokensPS: f(tps), CostPer1M: f(cost), GPUMemGiB: f(mem)}
}

func TestRecommend(t *testing.T) {
	cs := []Candidate{
		cand(1, "h100", 0.90, 0.86, 0.94, 200, 4000, 2000, 2.0, 60), // best quality, dear
		cand(2, "a10", 0.80, 0.75, 0.85, 300, 6000, 800, 0.8, 20),   // cheap
		cand(3, "a10", 0.70, 0.65, 0.75, 900, 9000, 500, 1.5, 20),   // dominated by 2
		cand(4, "h100", 0.88, 0.84, 0.92, 150, 3000, 2500, 2.5, 70), // fastest
		{RunID: 5, Model: "m5", Hardware: "cpu"},                    // nothing measured
	}
	// No constraints: everything with figures is feasible; run 5 too.
	r := Recommend(cs, Constraints{}, Weights{Quality: 1})
	if len(r.Feasible) != 5 || r.Feasible[0].RunID != 1 || r.Feasible[0].Score != 1 {
		t.Fatalf("by quality: %+v", r.Feasible)
	}
	// Pareto, quality vs cost: 2 (cheapest), 1 (best); 3 and 4 dominated.
	if fmt.Sprint(r.ParetoQualityCost) != "[2 1]" {
		t.Errorf("quality–cost front %v", r.ParetoQualityCost)
	}
	// Quality vs p95 E2E: 4 (fastest, 0.88) and 1 (0.90).
	if fmt.Sprint(r.ParetoQualityLaten) != "[4 1]" {
		t.Errorf("quality–latency front %v", r.ParetoQualityLaten)
	}
	// Runs 1 and 4 overlap ([0.86, 0.94] and [0.84, 0.92]).
	for _, x := range r.Feasible {
		if x.RunID == 1 && fmt.Sprint(x.SameQualityAs) != "[4]" {
			t.Errorf("run 1 not significantly different from %v", x.SameQualityAs)
		}
	}
	// Cost only: run 2 first.
	if r := Recommend(cs[:4], Constraints{}, Weights{Cost: 1}); r.Feasible[0].RunID != 2 {
		t.Errorf("by cost: %d first", r.Feasible[0].RunID)
	}
	// Constraints exclude with reasons.
	r = Recommend(cs, Constraints{MinQuality: f(0.75), MaxE2Ep95: f(5000), Hardware: []string{"h100", "a10"}}, Weights{1, 1, 1})
	if len(r.Feasible) != 2 || len(r.Excluded) != 3 {
		t.Fatalf("feasible %+v excluded %+v", r.Feasible, r.Excluded)
	}
	reasons := map[int64]string{}
	for _, x := range r.Excluded {
		reasons[x.RunID] = strings.Join(x.Reasons, "; ")
	}
	if !strings.Contains(reasons[2], "p95 E2E 6000 ms is above the limit 5000 ms") ||
		!strings.Contains(reasons[3], "quality 0.7 is below the minimum 0.75") ||
		!strings.Contains(reasons[5], "no quality measured") || !strings.Contains(reasons[5], "hardware cpu") {
		t.Fatalf("reasons %v", reasons)
	}
}
