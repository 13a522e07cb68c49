package conclude

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
)

func f64(v float64) *float64 { return &v }

// answered gives m measured answer lengths: median, 90th percentile and
// longest output tokens per request.
func answered(m Measured, p50, p90, longest float64) Measured {
	m.OutputTokensP50, m.OutputTokensP90, m.OutputTokensMax = &p50, &p90, &longest
	return m
}

func TestPlanCapacity(t *testing.T) {
	t.Parallel()
	traffic := Traffic{PeakRPS: 10, AverageRPS: 4, InputTokens: 500, OutputTokens: 200}
	costs := Costs{HoursPerMonth: 730, Utilisation: 1, EnergyPricePerKWh: 0.2, LicencePerMonth: 100}
	ms := []Measured{
		// 3 req/s within the SLOs, 20 % headroom → 2.4 per replica → ⌈10/2.4⌉ = 5 replicas × 2 GPUs.
		answered(Measured{RunID: 1, Model: "big", Hardware: "h100-80gb-x2", GPUs: 2, PricePerHour: f64(8), SLORate: f64(3), SLORateFrom: `run 1, sweep step "rate 3.00/s"`,
			SLOFrom: say("capacity.said.from_step", "Run", int64(1), "Step", "rate 3.00/s"), MaxMeasuredRPS: 4, InputTokens: 480, OutputTokens: 210, JoulesPerToken: f64(0.5)}, 205, 250, 256),
		// 12 req/s × 0.8 = 9.6 per replica → 2 replicas; measured with 100
		// output tokens: extrapolated.
		answered(Measured{RunID: 2, Model: "small", Hardware: "l4-24gb-x1", GPUs: 1, PricePerHour: f64(1), SLORate: f64(12), SLORateFrom: "run 2",
			SLOFrom: say("capacity.said.from_one_load", "Run", int64(2)), MaxMeasuredRPS: 12, InputTokens: 500, OutputTokens: 100}, 80, 200, 256),
		Measured{RunID: 3, Model: "slow", Hardware: "cpu", SLORate: nil}.WithProblem(say("capacity.said.slos_no_step", "Run", 3, "RPS", Dec{V: 1.5, Places: 2})),
		answered(Measured{RunID: 4, Model: "unpriced", Hardware: "a10-24gb-x1", GPUs: 1, SLORate: f64(20), MaxMeasuredRPS: 20, InputTokens: 500, OutputTokens: 200}, 200, 200, 200),
	}
	plan := PlanCapacity(traffic, 0.2, costs, nil, ms)
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
	// Every source in the API is its message's English from the
	// catalogue: one sentence, never a second one written beside it.
	en := i18n.Default().Lang("en")
	for _, a := range []Capacity{big, small} {
		if len(a.Sources) != len(a.SourcesSaid) || len(a.Sources) < 5 {
			t.Errorf("run %d: sources %v, said %v", a.RunID, a.Sources, a.SourcesSaid)
		}
		for k, said := range a.SourcesSaid {
			if got, want := a.Sources[k], said.In(en); got != want || want == "" {
				t.Errorf("run %d's %s: %q, want the catalogue's %q", a.RunID, k, got, want)
			}
		}
	}
	if want := `peak 10.00 req/s ÷ (3.00 req/s within the SLOs, run 1, sweep step "rate 3.00/s", × 80 % after headroom)`; big.Sources["replicas"] != want {
		t.Errorf("big's replicas: %q, want %q", big.Sources["replicas"], want)
	}
	if len(small.Extrapolated) != 1 || !strings.Contains(small.Extrapolated[0], "measured with 100 output tokens") {
		t.Errorf("small: extrapolated %v", small.Extrapolated)
	}
	reasons := map[int64]string{}
	for _, x := range plan.Excluded {
		reasons[x.RunID] = strings.Join(x.Reasons, "; ")
	}
	if reasons[3] != "the SLOs held at no step of run 3's sweep (down to 1.50 req/s)" || !strings.Contains(reasons[4], "no price per hour for a10-24gb-x1") {
		t.Errorf("excluded: %v", reasons)
	}
	// Beyond the busiest measured load: with no headroom one replica takes
	// all 12 req/s, above the 10 req/s measured.
	over := PlanCapacity(Traffic{PeakRPS: 12, AverageRPS: 12, InputTokens: 500, OutputTokens: 100}, 0, costs, nil,
		[]Measured{answered(Measured{RunID: 5, PricePerHour: f64(1), SLORate: f64(12), MaxMeasuredRPS: 10, InputTokens: 500, OutputTokens: 100}, 100, 100, 100)})
	if x := over.Feasible[0].Extrapolated; len(x) != 1 || !strings.Contains(x[0], "above the busiest measured load") {
		t.Errorf("extrapolated load: %v", x)
	}
}

// Each reason a run is not sized, alone, and its code: the median answer
// under 2 tokens, answers shorter than the traffic's, no output lengths in
// the summary, and under a minimum quality: not scored, scored under
// another scorer identity, below the minimum. Each candidate would be
// sized but for the one thing it lacks.
func TestPlanCapacityExclusions(t *testing.T) {
	t.Parallel()
	traffic := Traffic{PeakRPS: 4, AverageRPS: 4, InputTokens: 100, OutputTokens: 128}
	floor := &QualityFloor{Min: 0.5, Scorer: "rougeL"}
	good := func(id int64) Measured {
		return answered(Measured{RunID: id, Model: "m", Hardware: "l4-24gb-x1", GPUs: 1, PricePerHour: f64(1), SLORate: f64(2),
			MaxMeasuredRPS: 2, InputTokens: 100, OutputTokens: 128, Quality: f64(0.7), QualityScorer: "rougeL"}, 128, 128, 128)
	}
	oneToken := answered(good(2), 1, 1, 1) // what a runtime that stops at once measures
	oneToken.Quality = f64(0)
	short := answered(good(3), 40, 100, 120)
	unrecorded := good(4)
	unrecorded.OutputTokensP50, unrecorded.OutputTokensP90, unrecorded.OutputTokensMax = nil, nil, nil
	unscored := good(5)
	unscored.Quality, unscored.QualityScorer = nil, ""
	bleu := good(6)
	bleu.QualityScorer = "bleu"
	low := good(7)
	low.Quality = f64(0.42)
	regexA := good(8)
	regexA.QualityScorer = `regex{"pattern":"a"}`

	for _, tc := range []struct {
		name  string
		floor *QualityFloor
		m     Measured
		codes []Exclusion
		why   []string
	}{
		{"sized", floor, good(1), nil, nil},
		{"one-token answers", nil, oneToken, []Exclusion{ExcludedShortAnswers, ExcludedNotMeasuredAtLength},
			[]string{"the median answer is 1 output token long, under 2", "not measured at this length (measured up to 1 output token,"}},
		{"one-token answers under a minimum quality", floor, oneToken,
			[]Exclusion{ExcludedShortAnswers, ExcludedNotMeasuredAtLength, ExcludedBelowMinQuality},
			[]string{"under 2", "not measured at this length", "quality 0.000 with rougeL, below the minimum 0.5"}},
		{"answers shorter than the traffic's", nil, short, []Exclusion{ExcludedNotMeasuredAtLength},
			[]string{"not measured at this length (measured up to 100 output tokens, the 90th percentile of its answers; the traffic has 128)"}},
		{"no output lengths in the summary", nil, unrecorded, []Exclusion{ExcludedNotMeasuredAtLength},
			[]string{"not measured at this length (the run's summary has no output tokens per request)"}},
		{"not scored", floor, unscored, []Exclusion{ExcludedQualityNotMeasured}, []string{"quality not measured (the minimum 0.5 is with rougeL)"}},
		{"not scored, no minimum", nil, unscored, nil, nil},
		{"another scorer", floor, bleu, []Exclusion{ExcludedOtherScorer}, []string{"quality measured with bleu, not rougeL"}},
		{"same scorer, other options", &QualityFloor{Min: 0.5, Scorer: `regex{"pattern":"b"}`}, regexA, []Exclusion{ExcludedOtherScorer},
			[]string{`quality measured with regex{"pattern":"a"}, not regex{"pattern":"b"}`}},
		{"below the minimum", floor, low, []Exclusion{ExcludedBelowMinQuality}, []string{"quality 0.420 with rougeL, below the minimum 0.5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := PlanCapacity(traffic, 0, Costs{}, tc.floor, []Measured{tc.m})
			if tc.codes == nil {
				if len(plan.Feasible) != 1 || len(plan.Excluded) != 0 || plan.Feasible[0].Replicas != 2 {
					t.Fatalf("want it sized with 2 replicas: %+v", plan)
				}
				return
			}
			if len(plan.Feasible) != 0 || len(plan.Excluded) != 1 {
				t.Fatalf("want it excluded: %+v", plan)
			}
			x := plan.Excluded[0]
			if !slices.Equal(x.ReasonCodes, tc.codes) || len(x.Reasons) != len(tc.codes) || x.Replicas != 0 {
				t.Fatalf("codes %v, want %v; reasons %q", x.ReasonCodes, tc.codes, x.Reasons)
			}
			for i, want := range tc.why {
				if !strings.Contains(x.Reasons[i], want) {
					t.Errorf("reason %d: %q, want it to contain %q", i, x.Reasons[i], want)
				}
			}
		})
	}
	// Answers as long as the traffic's exactly, or longer, cover it.
	for _, p90 := range []float64{128, 500} {
		if plan := PlanCapacity(traffic, 0, Costs{}, nil, []Measured{answered(good(9), 128, p90, p90)}); len(plan.Feasible) != 1 {
			t.Errorf("p90 %v: %+v", p90, plan.Excluded)
		}
	}
}
