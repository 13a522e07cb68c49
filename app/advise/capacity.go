package advise

import (
	"fmt"
	"math"
	"sort"
)

// Traffic is the load a deployment must serve.
// Its tags are the rules of a planner's question (app/valid).
type Traffic struct {
	PeakRPS      float64 `json:"peak_rps" validate:"finite,gt=0,max=1000000" msg:"requests per second at peak, above 0 and at most 1,000,000"`
	AverageRPS   float64 `json:"average_rps" validate:"finite,gt=0,max=1000000,ltefield=PeakRPS" msg:"requests per second on average, above 0" msg_ltefield:"cannot be above the peak"`
	InputTokens  float64 `json:"input_tokens" validate:"finite,min=1,max=10000000" msg:"input tokens per request, from 1 to 10,000,000"`
	OutputTokens float64 `json:"output_tokens" validate:"finite,min=1,max=10000000" msg:"output tokens per request, from 1 to 10,000,000"`
}

// Costs are the total cost of ownership's terms besides the hardware's
// price per hour: how many hours a month the replicas run, the share of
// them they are up (utilisation), energy and licences.
type Costs struct {
	HoursPerMonth     float64 `json:"hours_per_month" validate:"finite,min=0,max=744" msg:"hours a month, from 0 (default 730.5) to 744"`
	Utilisation       float64 `json:"utilisation" validate:"finite,min=0,max=1" msg:"the share of those hours the replicas are up, from 0 (default 1) to 1"`
	EnergyPricePerKWh float64 `json:"energy_price_per_kwh" validate:"finite,min=0,max=100" msg:"USD per kWh, from 0 to 100"`
	LicencePerMonth   float64 `json:"licence_per_month" validate:"finite,min=0,max=1000000000" msg:"USD a month, from 0"`
}

// DefaultHoursPerMonth is 365.25 × 24 / 12.
const DefaultHoursPerMonth = 730.5

// Measured is what one benchmarked target (a run) says about serving: the
// highest request rate one replica served within the SLOs, and the
// figures around it. Source names the measurement each figure comes from.
type Measured struct {
	RunID    int64  `json:"run_id"`
	Model    string `json:"model"`
	Runtime  string `json:"runtime"`
	Hardware string `json:"hardware"`
	// GPUs per replica (the hardware profile's); 0 on CPU.
	GPUs         int      `json:"gpus_per_replica"`
	PricePerHour *float64 `json:"price_per_hour"`
	Quality      *float64 `json:"quality"`
	QualityLo    *float64 `json:"quality_lo"`
	QualityHi    *float64 `json:"quality_hi"`
	// SLORate is the highest measured rate (req/s per replica) at which
	// the SLOs held; nil when they held at no measured load.
	SLORate *float64 `json:"slo_rate_rps"`
	// SLORateFrom names the measurement: the run and sweep step.
	SLORateFrom string `json:"slo_rate_from"`
	// MaxMeasuredRPS is the busiest load measured at all.
	MaxMeasuredRPS float64 `json:"max_measured_rps"`
	// The requests' mean lengths as measured.
	InputTokens  float64 `json:"measured_input_tokens"`
	OutputTokens float64 `json:"measured_output_tokens"`
	// JoulesPerToken is the measured energy per output token; nil without
	// GPU readings.
	JoulesPerToken *float64 `json:"joules_per_token"`
	// Problem says why there is no SLO rate (no summary, SLOs missed).
	Problem string `json:"problem,omitempty"`
}

// Capacity is one target's answer to the traffic: replicas, GPUs and what
// they cost, with where each figure comes from and what was extrapolated.
type Capacity struct {
	Measured
	Replicas        int      `json:"replicas"`
	TotalGPUs       int      `json:"gpus"`
	CostPerHour     *float64 `json:"cost_per_hour"`
	CostPer1MTokens *float64 `json:"cost_per_1m_output_tokens"`
	MonthlyCost     *float64 `json:"monthly_cost"`
	MonthlyHardware *float64 `json:"monthly_hardware"`
	MonthlyEnergy   *float64 `json:"monthly_energy"`
	MonthlyLicence  float64  `json:"monthly_licence"`
	// Sources says, per figure, the measurement or input it comes from.
	Sources map[string]string `json:"sources"`
	// Extrapolated lists where the traffic leaves what was measured.
	Extrapolated []string `json:"extrapolated"`
	// Reasons are why the target cannot serve the traffic (excluded only).
	Reasons []string `json:"reasons,omitempty"`
}

// CapacityPlan is the targets that can serve the traffic, cheapest per
// month first (those without a price last, by replicas), and those that
// cannot, with their reasons.
type CapacityPlan struct {
	Feasible []Capacity `json:"feasible"`
	Excluded []Capacity `json:"excluded"`
}

// lengthTolerance is how far the traffic's request lengths may be from the
// measured ones before the answer counts as extrapolated.
const lengthTolerance = 0.2

// PlanCapacity answers, for each measured target, how many replicas serve
// t at peak within the SLOs with headroom (a share of the SLO-bound rate
// kept free, 0 ≤ headroom < 1), and what that costs:
//   - replicas = ⌈peak ÷ (SLO rate × (1 − headroom))⌉, GPUs = replicas × GPUs
//     per replica;
//   - cost per hour = replicas × the hardware's price per hour;
//   - monthly = hardware (cost per hour × hours × utilisation) + energy
//     (measured J per output token × the month's output tokens at the
//     average rate, in kWh × the energy price) + licence;
//   - cost per 1M output tokens = monthly ÷ the month's output tokens × 10⁶.
func PlanCapacity(t Traffic, headroom float64, c Costs, ms []Measured) CapacityPlan {
	hours := c.HoursPerMonth
	if hours <= 0 {
		hours = DefaultHoursPerMonth
	}
	util := c.Utilisation
	if util <= 0 {
		util = 1
	}
	monthTokens := t.AverageRPS * t.OutputTokens * 3600 * hours
	var plan CapacityPlan
	for _, m := range ms {
		a := Capacity{Measured: m, MonthlyLicence: c.LicencePerMonth, Sources: map[string]string{}, Extrapolated: []string{}}
		if m.SLORate == nil || !(*m.SLORate > 0) {
			why := m.Problem
			if why == "" {
				why = "the SLOs held at no measured load"
			}
			a.Reasons = append(a.Reasons, why)
			plan.Excluded = append(plan.Excluded, a)
			continue
		}
		perReplica := *m.SLORate * (1 - headroom)
		a.Replicas = int(math.Ceil(t.PeakRPS/perReplica - 1e-9))
		a.Replicas = max(a.Replicas, 1)
		a.TotalGPUs = a.Replicas * m.GPUs
		a.Sources["replicas"] = fmt.Sprintf("peak %.2f req/s ÷ (%.2f req/s within the SLOs, %s, × %.0f %% after headroom)",
			t.PeakRPS, *m.SLORate, m.SLORateFrom, (1-headroom)*100)
		if load := t.PeakRPS / float64(a.Replicas); load > m.MaxMeasuredRPS*(1+1e-9) {
			a.Extrapolated = append(a.Extrapolated, fmt.Sprintf("each replica would take %.2f req/s, above the busiest measured load (%.2f req/s)", load, m.MaxMeasuredRPS))
		}
		for _, l := range []struct {
			name              string
			traffic, measured float64
		}{{"input", t.InputTokens, m.InputTokens}, {"output", t.OutputTokens, m.OutputTokens}} {
			if l.measured > 0 && l.traffic > 0 && math.Abs(l.traffic-l.measured) > lengthTolerance*l.measured {
				a.Extrapolated = append(a.Extrapolated, fmt.Sprintf("measured with %.0f %s tokens per request, the traffic has %.0f", l.measured, l.name, l.traffic))
			}
		}
		if m.PricePerHour == nil {
			a.Reasons = append(a.Reasons, "no price per hour for "+m.Hardware+" (an administrator sets it on the Hardware page)")
			plan.Excluded = append(plan.Excluded, a)
			continue
		}
		perHour := float64(a.Replicas) * *m.PricePerHour
		hw := perHour * hours * util
		a.CostPerHour, a.MonthlyHardware = &perHour, &hw
		a.Sources["cost_per_hour"] = fmt.Sprintf("%d replicas × $%.4f per hour (%s's price)", a.Replicas, *m.PricePerHour, m.Hardware)
		monthly := hw + c.LicencePerMonth
		if m.JoulesPerToken != nil {
			e := *m.JoulesPerToken * monthTokens / 3.6e6 * c.EnergyPricePerKWh
			a.MonthlyEnergy = &e
			monthly += e
			a.Sources["monthly_energy"] = fmt.Sprintf("%.3f J per output token (run %d's GPU readings) × %.0f output tokens a month × $%.4f per kWh",
				*m.JoulesPerToken, m.RunID, monthTokens, c.EnergyPricePerKWh)
		} else {
			a.Sources["monthly_energy"] = "not measured (no GPU readings): left out"
		}
		a.MonthlyCost = &monthly
		a.Sources["monthly_cost"] = fmt.Sprintf("hardware $%.2f (%.0f h × %.0f %% up) + energy + licence $%.2f", hw, hours, util*100, c.LicencePerMonth)
		if monthTokens > 0 {
			per1M := monthly / monthTokens * 1e6
			a.CostPer1MTokens = &per1M
			a.Sources["cost_per_1m_output_tokens"] = fmt.Sprintf("monthly cost ÷ %.0f output tokens a month (%.2f req/s on average × %.0f tokens)",
				monthTokens, t.AverageRPS, t.OutputTokens)
		}
		plan.Feasible = append(plan.Feasible, a)
	}
	sort.SliceStable(plan.Feasible, func(i, j int) bool {
		return *plan.Feasible[i].MonthlyCost < *plan.Feasible[j].MonthlyCost
	})
	if plan.Feasible == nil {
		plan.Feasible = []Capacity{}
	}
	if plan.Excluded == nil {
		plan.Excluded = []Capacity{}
	}
	return plan
}
