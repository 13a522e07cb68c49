package advise

import (
	"math"
	"strings"
	"testing"
)

func f64(v float64) *float64 { return &v }

func TestPlanCapacity(t *testing.T) {
	t.Parallel()
	traffic := Traffic{PeakRPS: 10, AverageRPS: 4, InputTokens: 500, OutputTokens: 200}
	costs := Costs{HoursPerMonth: 730, Utilisation: 1, EnergyPricePerKWh: 0.2, LicencePerMonth: 100}
	ms := []Measured{
		// 3 req/s within the SLOs, 20 % headroom → 2.4 per replica → ⌈10/2.4⌉ = 5 replicas × 2 GPUs.
		{RunID: 1, Model: "big", Hardware: "h100-80gb-x2", GPUs: 2, PricePerHour: f64(8), SLORate: f64(3), SLORateFrom: `run 1, sweep step "rate 3.00/s"`,
			MaxMeasuredRPS: 4, InputTokens: 480, OutputTokens: 210, JoulesPerToken: f64(0.5)},
		// 12 req/s × 0.8 = 9.6 per replica → 2 replicas; measured with 100
		// output tokens: extrapolated.
		{RunID: 2, Model: "small", Hardware: "l4-24gb-x1", GPUs: 1, PricePerHour: f64(1), SLORate: f64(12), SLORateFrom: "run 2",
			MaxMeasuredRPS: 12, InputTokens: 500, OutputTokens: 100},
		{RunID: 3, Model: "slow", Hardware: "cpu", SLORate: nil, Problem: "the SLOs held at no step"},
		{RunID: 4, Model: "unpriced", Hardware: "a10-24gb-x1", GPUs: 1, SLORate: f64(20), MaxMeasuredRPS: 20, InputTokens: 500, OutputTokens: 200},
	}
	plan := PlanCapacity(traffic, 0.2, costs, ms)
	if len(plan.Feasible) != 2 || len(plan.Excluded) != 2 {
		t.Fatalf("plan %+v", plan)
	}
	// Cheapest first: 2 × $1/h × 730 + licence = $1,560; the big one 5 × 8 × 730 + energy + licence.
	small, big := plan.Feasible[0], plan.Feasible[1]
	if small.RunID != 2 || small.Replicas != 2 || small.TotalGPUs != 2 || *small.MonthlyCost != 1560 || small.MonthlyEnergy != nil {
		t.Errorf("small: %+v", small)
	}
	monthTokens := 4.0 * 200 * 3600 * 730
	energy := 0.5 * monthTokens / 3.6e6 * 0.2
	want := 5*8*730.0 + energy + 100
	if big.Replicas != 5 || big.TotalGPUs != 10 || *big.CostPerHour != 40 || math.Abs(*big.MonthlyCost-want) > 1e-6 ||
		math.Abs(*big.CostPer1MTokens-want/monthTokens*1e6) > 1e-9 || math.Abs(*big.MonthlyEnergy-energy) > 1e-9 {
		t.Errorf("big: %+v (want monthly %v)", big, want)
	}
	// Each replica of the big target takes 2 req/s, within what was measured.
	if len(big.Extrapolated) != 0 || !strings.Contains(big.Sources["replicas"], "rate 3.00/s") {
		t.Errorf("big: extrapolated %v, sources %v", big.Extrapolated, big.Sources)
	}
	if len(small.Extrapolated) != 1 || !strings.Contains(small.Extrapolated[0], "measured with 100 output tokens") {
		t.Errorf("small: extrapolated %v", small.Extrapolated)
	}
	reasons := map[int64]string{}
	for _, x := range plan.Excluded {
		reasons[x.RunID] = strings.Join(x.Reasons, "; ")
	}
	if reasons[3] != "the SLOs held at no step" || !strings.Contains(reasons[4], "no price per hour for a10-24gb-x1") {
		t.Errorf("excluded: %v", reasons)
	}
	// Beyond the busiest measured load: with no headroom one replica takes
	// all 12 req/s, above the 10 req/s measured.
	over := PlanCapacity(Traffic{PeakRPS: 12, AverageRPS: 12, InputTokens: 500, OutputTokens: 100}, 0, costs,
		[]Measured{{RunID: 5, PricePerHour: f64(1), SLORate: f64(12), MaxMeasuredRPS: 10, InputTokens: 500, OutputTokens: 100}})
	if x := over.Feasible[0].Extrapolated; len(x) != 1 || !strings.Contains(x[0], "above the busiest measured load") {
		t.Errorf("extrapolated load: %v", x)
	}
}
