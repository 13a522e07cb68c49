package conclude

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
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

// TestCutRung: a rung is cut as the configurations page ranks
// (RankConfigurations): by goodput per dollar, a pricier configuration
// with more goodput below a cheaper one, the best keep kept and the cut's
// best the page's winner; a run that failed is cut as unmeasured; a
// configuration the page leaves out (no price, no SLO) is cut with the
// page's reason, never ranked per GPU-hour, and a rung none of whose
// configurations can be ranked chooses nothing and says why.
func TestCutRung(t *testing.T) {
	t.Parallel()
	a := config(1, jobs.Engine{"max_num_seqs": "2"}, 1, 10, 10, 1, 300, 100)          // 3600 per $
	b := config(2, jobs.Engine{"max_num_seqs": "4"}, 2, 10, 10, 4, 300, 100)          // 1800 per $
	c := config(3, jobs.Engine{"max_num_seqs": "8"}, 5, 5, 10, 1, 300, 100)           // 9000 per $
	unpriced := config(5, jobs.Engine{"max_num_seqs": "16"}, 50, 10, 10, 1, 300, 100) // would lead per GPU-hour
	unpriced.Hardware, unpriced.PricePerHour = "cpu", nil
	failed := store.Run{ID: 4, ModelName: "m", Runtime: "sim", HardwareProfile: "l4", State: "failed"}
	cands := []Candidate{a, b, c, unpriced}
	cut := CutRung(0, 2, cands, []store.Run{failed}, map[int64]int{1: 1, 2: 2, 3: 1, 4: 1, 5: 1})
	got := ""
	for _, v := range cut.Verdicts {
		pd := "nil"
		if v.PerDollar != nil {
			pd = fmt.Sprintf("%.0f", *v.PerDollar)
		}
		got += fmt.Sprintf("%d:%d:%v:%s:%s ", v.RunID, v.Rank, v.Kept, v.Reason, pd)
	}
	if got != "3:1:true::9000 1:2:true::3600 2:3:false:ranked:1800 5:0:false:not_ranked:nil 4:0:false:unmeasured:nil " {
		t.Fatalf("cut %s", got)
	}
	page := RankConfigurations(cands, []store.Run{failed})
	if w := page.Winner(); w == nil || cut.Best() != SearchConfig(w.Model, w.Runtime, w.Hardware, w.Engine.Key()) {
		t.Fatalf("the cut's best %q, the configurations page's winner %+v", cut.Best(), w)
	}
	if v := cut.Verdicts[3]; v.DetailSaid == nil || v.DetailSaid.Code != "configurations.said.left_unpriced" || !strings.Contains(v.Detail, "cpu has no price") {
		t.Fatalf("the unpriced configuration's reason: %+v", v)
	}
	if cut.UnrankedSaid != nil {
		t.Fatalf("a ranked rung says it was not ranked: %q", cut.Unranked)
	}
	noSLO := []Candidate{a, b}
	noSLO[0].SLOSet, noSLO[1].SLOSet = false, false
	cut = CutRung(1, 1, noSLO, nil, nil)
	if cut.Best() != "" || cut.UnrankedSaid == nil || cut.UnrankedSaid.Code != "configurations.said.left_no_slo" || !strings.Contains(cut.Unranked, "no SLO") {
		t.Fatalf("a rung without an SLO: best %q, %+v", cut.Best(), cut)
	}
	cut = CutRung(1, 3, nil, []store.Run{failed}, nil)
	if cut.Verdicts[0].Kept || cut.Best() != "" || cut.UnrankedSaid != nil {
		t.Fatalf("an unmeasured run kept: %+v", cut)
	}
}
