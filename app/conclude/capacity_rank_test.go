package conclude

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
)

// sizedAt is a run that held the SLOs at rate req/s per replica (the low
// end of its interval lo; 0: no interval) on hardware priced price an
// hour, its answers 200 tokens long.
func sizedAt(id int64, rate, lo, price float64) Measured {
	m := answered(Measured{RunID: id, Model: "m", Hardware: "h", PricePerHour: f64(price), SLORate: f64(rate), SLORateFrom: "run",
		SLOFrom: say("capacity.said.from_one_load", "Run", id), MaxMeasuredRPS: rate, InputTokens: 500, OutputTokens: 200}, 200, 200, 200)
	if lo != 0 {
		m.SLORateLo = &lo
	}
	return m
}

// Replicas are sized on the low end of the rate's interval where the
// engine estimated it, so the claim that they serve the peak holds the
// rate's noise: 11 req/s at 20 % headroom takes ⌈11 ÷ (3 × 0.8)⌉ = 5
// replicas on the estimate alone, ⌈11 ÷ (2.5 × 0.8)⌉ = 6 on its low end;
// an interval that reaches 0 sizes nothing.
func TestPlanCapacitySizesOnTheRateInterval(t *testing.T) {
	t.Parallel()
	traffic := Traffic{PeakRPS: 11, AverageRPS: 4, InputTokens: 500, OutputTokens: 200}
	plan := PlanCapacity(traffic, 0.2, Costs{}, nil, []Measured{sizedAt(1, 3, 0, 1), sizedAt(2, 3, 2.5, 1), sizedAt(3, 3, -0.4, 1)})
	replicas := map[int64]int{}
	for _, a := range plan.Feasible {
		replicas[a.RunID] = a.Replicas
	}
	if replicas[1] != 5 || replicas[2] != 6 || len(plan.Feasible) != 2 {
		t.Errorf("replicas %v, want 5 on the estimate alone and 6 on its interval's low end", replicas)
	}
	if len(plan.Excluded) != 1 || plan.Excluded[0].RunID != 3 || plan.Excluded[0].ReasonCodes[0] != ExcludedRateNotBounded {
		t.Errorf("excluded %+v, want run 3: its rate's interval reaches 0", plan.Excluded)
	}
	for _, a := range plan.Feasible {
		if a.RunID == 2 && !strings.Contains(a.Sources["replicas"], "the low end of the 95 % interval of 3.00 req/s") {
			t.Errorf("run 2's replicas: %q", a.Sources["replicas"])
		}
	}
}

// A remote provider's run is paid by the token: no replicas, GPUs or
// price per hour, whatever its agent machine costs; a month at 1 req/s
// on average of 500 input and 200 output tokens at $0.25 and $1.25 per
// 1M is 2,629,800 × (500 × 0.25 + 200 × 1.25) ÷ 10⁶ = $986.18, plus the
// licence, and a peak above the busiest load it was measured at is
// extrapolated.
func TestPlanCapacityPricesAProviderByItsTokens(t *testing.T) {
	t.Parallel()
	traffic := Traffic{PeakRPS: 5, AverageRPS: 1, InputTokens: 500, OutputTokens: 200}
	m := sizedAt(1, 2, 1.5, 3.6)
	m.TokenPrice, m.TokenPriced, m.PricePerHour = &store.ProviderPrice{Provider: "anthropic", Model: "claude", InputPer1M: 0.25, OutputPer1M: 1.25}, true, nil
	plan := PlanCapacity(traffic, 0.2, Costs{HoursPerMonth: 730.5, LicencePerMonth: 10}, nil, []Measured{m})
	if len(plan.Feasible) != 1 {
		t.Fatalf("plan %+v", plan)
	}
	a := plan.Feasible[0]
	requests := 1 * 3600 * 730.5
	tokens := requests * (500*0.25 + 200*1.25) / 1e6
	if a.Replicas != 0 || a.TotalGPUs != 0 || a.CostPerHour != nil || a.MonthlyHardware != nil || a.MonthlyTokens == nil ||
		math.Abs(*a.MonthlyTokens-tokens) > 1e-9 || math.Abs(*a.MonthlyCost-tokens-10) > 1e-9 ||
		math.Abs(*a.CostPer1MTokens-(tokens+10)/(requests*200)*1e6) > 1e-9 {
		t.Errorf("provider: %+v (want $%.2f of tokens a month)", a, tokens)
	}
	if len(a.Extrapolated) != 1 || !strings.Contains(a.Extrapolated[0], "above the busiest load the provider was measured at") {
		t.Errorf("extrapolated %v", a.Extrapolated)
	}
	if !strings.Contains(a.Sources["monthly_tokens"], "anthropic's prices for claude") {
		t.Errorf("sources %v", a.Sources)
	}
}

// The plan's ranks and lead are the engine's cost test's: a target
// shares the rank of the one before it unless the test establishes that
// one as cheaper, and the lead between the two cheapest names the
// verdict's leader, test and p (Ordered on Cost), or no leader where the
// pair is not comparable.
func TestRankCapacityFollowsTheCostTest(t *testing.T) {
	t.Parallel()
	traffic := Traffic{PeakRPS: 1, AverageRPS: 1, InputTokens: 500, OutputTokens: 200}
	// Runs 1 and 2 cost $1.00 and $1.01 an hour at one speed (noise),
	// run 3 $4.00: one replica each.
	prices := []float64{1, 1.01, 4}
	var cands []Candidate
	var ms []Measured
	for i, p := range prices {
		cands = append(cands, priced(int64(i+1), 100, 2, p))
		ms = append(ms, sizedAt(int64(i+1), 2, 1.8, p).WeighedBy(cands[i]))
	}
	plan := PlanCapacity(traffic, 0, Costs{}, nil, ms)
	must(t, RankCapacity(context.Background(), nil, &plan, Evidence{}))
	ranks := map[int64]int{}
	for _, a := range plan.Feasible {
		ranks[a.RunID] = a.Rank
	}
	if ranks[1] != 1 || ranks[2] != 1 || ranks[3] != 3 {
		t.Errorf("ranks %v, want 1 and 2 sharing the first (1 %% apart, not established) and 3 third", ranks)
	}
	l := plan.Lead
	want := Compare(cands[0], cands[1], Cost, Evidence{})
	if l == nil || l.Leader == nil || *l.Leader != 1 || l.Significant || l.Margin.Test != "t-log-cost" || l.Margin.P == nil ||
		*l.Margin.P != *want.P || l.Margin.Detectable == nil {
		t.Fatalf("lead %+v, want run 1 not established, as Compare says: %+v", l, want)
	}
	// Another load: no leader, the engine's reason.
	other, l2 := cands[1], *cands[1].Load
	l2.Params = "(concurrency=16)"
	other.Load = &l2
	ms[1] = ms[1].WeighedBy(other)
	plan = PlanCapacity(traffic, 0, Costs{}, nil, ms)
	must(t, RankCapacity(context.Background(), nil, &plan, Evidence{}))
	if l := plan.Lead; l == nil || l.Leader != nil || l.Margin.Comparable || l.Margin.Reason == "" || plan.Feasible[1].Rank != 1 {
		t.Errorf("another load: lead %+v, ranks %d %d", l, plan.Feasible[0].Rank, plan.Feasible[1].Rank)
	}
}

// ReplicaRate is the steady window's requests/s with the between-run
// floor a single run carries: its interval is wider than the batch means'
// alone; a run without a kept interval has none.
func TestReplicaRate(t *testing.T) {
	t.Parallel()
	c := Candidate{RPS: stats.TInterval(3, 0.01, 9, 10)}
	e, ok := ReplicaRate(c)
	if !ok || e.Mean != 3 || !(e.Lo < c.RPS.Lo) || !(e.Lo > 2.5) {
		t.Errorf("rate %+v, batch means alone %+v", e, c.RPS)
	}
	if _, ok := ReplicaRate(Candidate{RPS: stats.TInterval(3, 0, 0, 1)}); ok {
		t.Error("a rate without an interval has one")
	}
}

// Replicas sized on the low end of the rate's interval serve the peak
// at the deployment's real rate: of 4,000 runs drawn from a deployment
// serving 3 req/s per replica (each run off by a 3 % between-run effect,
// 10 batch means each with 10 % noise), sized for a peak drawn between 5
// and 50 req/s at 20 % headroom, the count falls short of what the real
// rate needs far less often than when sized on the estimate alone.
func TestReplicasOnTheLowEndServeThePeak(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(40, 5))
	const mu, headroom, draws = 3.0, 0.2, 4000
	short := map[string]int{}
	extra := map[string]float64{} // replicas beyond the need, summed
	for range draws {
		run := mu * (1 + stats.DriftCV*rng.NormFloat64())
		var xs []float64
		for range 10 {
			xs = append(xs, run*(1+0.1*rng.NormFloat64()))
		}
		mean, sd := meanSD(xs)
		e, ok := ReplicaRate(Candidate{RPS: stats.TInterval(mean, sd/math.Sqrt(10), 9, 10)})
		if !ok {
			t.Fatal("no rate")
		}
		traffic := Traffic{PeakRPS: 5 + 45*rng.Float64(), AverageRPS: 1, InputTokens: 500, OutputTokens: 200}
		need := int(math.Ceil(traffic.PeakRPS/(mu*(1-headroom)) - 1e-9))
		for name, lo := range map[string]float64{"estimate": 0, "low end": e.Lo} {
			plan := PlanCapacity(traffic, headroom, Costs{}, nil, []Measured{sizedAt(1, e.Mean, lo, 1)})
			if plan.Feasible[0].Replicas < need {
				short[name]++
			}
			extra[name] += float64(plan.Feasible[0].Replicas-need) / float64(need)
		}
	}
	est, low := float64(short["estimate"])/draws, float64(short["low end"])/draws
	t.Logf("replicas short of the real rate's need: %.1f %% sized on the estimate, %.1f %% on its interval's low end (%d runs); "+
		"replicas beyond the need on average: %+.1f %% and %+.1f %%", est*100, low*100, draws, extra["estimate"]/draws*100, extra["low end"]/draws*100)
	if low > 0.05 || !(low < est) {
		t.Errorf("short %.3f on the low end, %.3f on the estimate: want at most 5 %% and fewer", low, est)
	}
}

// meanSD is xs's mean and sample standard deviation.
func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// An imported run is listed as not sized for what it is, results made
// elsewhere, not for SLOs it could not have been measured against.
func TestPlanCapacityListsAnImportedRun(t *testing.T) {
	t.Parallel()
	plan := PlanCapacity(Traffic{PeakRPS: 1, AverageRPS: 1, InputTokens: 5, OutputTokens: 2}, 0, Costs{}, nil,
		[]Measured{{RunID: 7, Model: "outside/model", Runtime: "imported", Hardware: "imported", Quality: f64(0.6), Imported: true}})
	if len(plan.Feasible) != 0 || len(plan.Excluded) != 1 || !slices.Equal(plan.Excluded[0].ReasonCodes, []Exclusion{ExcludedImported}) {
		t.Errorf("plan %+v", plan)
	}
}

// A remote provider's run is weighed against what runs today by its
// tokens a month: 2 replicas at $1/h for 730.5 h ($1,461) against the
// provider's $986.18 saves $474.83 a month.
func TestROIWeighsAProviderByItsTokens(t *testing.T) {
	t.Parallel()
	traffic := Traffic{PeakRPS: 5, AverageRPS: 1, InputTokens: 500, OutputTokens: 200}
	m := sizedAt(1, 10, 9, 3.6)
	m.TokenPrice, m.TokenPriced, m.PricePerHour = &store.ProviderPrice{Provider: "anthropic", Model: "claude", InputPer1M: 0.25, OutputPer1M: 1.25}, true, nil
	costs := Costs{HoursPerMonth: 730.5}
	plan := PlanCapacity(traffic, 0, costs, nil, []Measured{m})
	roi := PlanROI(TodayMeasured{Today: Today{Model: "m", Hardware: "h", Replicas: 2}, PricePerHour: f64(1)}, traffic, costs, plan,
		func(Capacity) QualityChange { return QualityChange{} })
	tokens := 3600 * 730.5 * (500*0.25 + 200*1.25) / 1e6
	if len(roi.Rows) != 1 || math.Abs(roi.Rows[0].MonthlyCost-tokens) > 1e-9 || roi.Rows[0].MonthlySaving == nil ||
		math.Abs(*roi.Rows[0].MonthlySaving-(2*730.5-tokens)) > 1e-9 {
		t.Errorf("ROI %+v, want a saving of $%.2f a month", roi.Rows, 2*730.5-tokens)
	}
}
