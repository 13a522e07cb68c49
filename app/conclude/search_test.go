package conclude

import (
	"fmt"
	"testing"
)

// TestPlanSearch: six configurations within 11 runs halve (6, 3, 2: η 2),
// each rung spending about the same requests, the last rung a half of the
// full run's; a tighter budget cuts harder; fewer runs than
// configurations is no plan.
func TestPlanSearch(t *testing.T) {
	t.Parallel()
	p, ok := PlanSearch(6, 11, 96, 8)
	if !ok || p.Eta != 2 || p.Runs != 11 || fmt.Sprint(p.Rungs) != "[{0 6 12} {1 3 24} {2 2 48}]" || p.Requests != 240 || p.GridRequests != 576 {
		t.Fatalf("6 configurations in 11 runs: %+v %v", p, ok)
	}
	p, ok = PlanSearch(6, 10, 96, 8)
	if !ok || p.Eta != 3 || fmt.Sprint(p.Rungs) != "[{0 6 11} {1 2 32}]" || p.Runs != 8 {
		t.Fatalf("6 configurations in 10 runs: %+v %v", p, ok)
	}
	if p, ok = PlanSearch(6, 6, 96, 8); !ok || p.Eta != 6 || len(p.Rungs) != 1 || p.Rungs[0].Requests != 16 {
		t.Fatalf("6 in 6: %+v %v", p, ok)
	}
	if _, ok := PlanSearch(6, 5, 96, 8); ok {
		t.Fatal("6 configurations in 5 runs")
	}
	if _, ok := PlanSearch(1, 5, 96, 8); ok {
		t.Fatal("one configuration is no search")
	}
	if p, _ := PlanSearch(4, 10, 10, 8); p.Rungs[0].Requests != 8 || p.Rungs[1].Requests != 8 {
		t.Fatalf("the least requests: %+v", p)
	}
}

// TestCutRung: candidates are ranked by goodput per dollar (a pricier
// configuration with more goodput can rank below a cheaper one), the best
// keep kept, the unmeasured cut as such whatever keep is.
func TestCutRung(t *testing.T) {
	t.Parallel()
	cut := CutRung(0, 2, []SearchCandidate{
		{Config: "a", RunID: 1, Measured: true, Requests: 10, Good: 10, Seconds: 10, PricePerHour: 1, GPUs: 1}, // 3600 per $
		{Config: "b", RunID: 2, Measured: true, Requests: 10, Good: 10, Seconds: 5, PricePerHour: 4, GPUs: 2},  // 1800 per $
		{Config: "c", RunID: 3, Measured: true, Requests: 10, Good: 5, Seconds: 2, PricePerHour: 1, GPUs: 1},   // 9000 per $
		{Config: "d", RunID: 4},
	})
	got := ""
	for _, v := range cut.Verdicts {
		got += fmt.Sprintf("%s:%d:%v:%s:%.0f ", v.Config, v.Rank, v.Kept, v.Reason, v.PerDollar)
	}
	if got != "c:1:true::9000 a:2:true::3600 b:3:false:ranked:1800 d:4:false:unmeasured:0 " || cut.Best() != "c" {
		t.Fatalf("cut %s", got)
	}
	cut = CutRung(1, 3, []SearchCandidate{{Config: "x", RunID: 9}})
	if cut.Verdicts[0].Kept || cut.Best() != "" {
		t.Fatalf("an unmeasured run kept: %+v", cut)
	}
	unpriced := SearchCandidate{Measured: true, Good: 36, Seconds: 36, GPUs: 2}
	if unpriced.PerDollar() != 1800 {
		t.Fatalf("per GPU-hour: %v", unpriced.PerDollar())
	}
}
