package conclude

import (
	"math"
	"sort"

	"github.com/ruckus/ruckus/app/store"
)

// Traffic is the load a deployment must serve.
// Its tags are the rules of a planner's question (app/valid).
type Traffic struct {
	PeakRPS      float64 `json:"peak_rps" validate:"finite,gt=0,max=1000000" msg:"advise_form.peak_rps"`
	AverageRPS   float64 `json:"average_rps" validate:"finite,gt=0,max=1000000,ltefield=PeakRPS" msg:"advise_form.average_rps" msg_ltefield:"advise_form.average_above_peak"`
	InputTokens  float64 `json:"input_tokens" validate:"finite,min=1,max=10000000" msg:"advise_form.input_tokens"`
	OutputTokens float64 `json:"output_tokens" validate:"finite,min=1,max=10000000" msg:"advise_form.output_tokens"`
}

// Costs are the total cost of ownership's terms besides the hardware's
// price per hour: how many hours a month the replicas run, the share of
// them they are up (utilisation), energy and licences.
type Costs struct {
	HoursPerMonth     float64 `json:"hours_per_month" validate:"finite,min=0,max=744" msg:"advise_form.hours_per_month"`
	Utilisation       float64 `json:"utilisation" validate:"finite,min=0,max=1" msg:"advise_form.utilisation"`
	EnergyPricePerKWh float64 `json:"energy_price_per_kwh" validate:"finite,min=0,max=100" msg:"advise_form.energy_price"`
	LicencePerMonth   float64 `json:"licence_per_month" validate:"finite,min=0,max=1000000000" msg:"advise_form.licence"`
}

// DefaultHoursPerMonth is 365.25 × 24 / 12.
const DefaultHoursPerMonth = 730.5

// month is the hours a month the replicas run and the share of them they
// are up, their zero values taking the defaults (730.5 hours, always up).
func (c Costs) month() (hours, util float64) {
	hours, util = c.HoursPerMonth, c.Utilisation
	if hours <= 0 {
		hours = DefaultHoursPerMonth
	}
	if util <= 0 {
		util = 1
	}
	return hours, util
}

// Measured is what one benchmarked target (a run) says about serving: the
// highest request rate one replica served within the SLOs, and the
// figures around it. Source names the measurement each figure comes from.
type Measured struct {
	RunID    int64  `json:"run_id"`
	Model    string `json:"model"`
	Runtime  string `json:"runtime"`
	Hardware string `json:"hardware"`
	// Engine is the run's engine settings (jobs.Engine.Key; "" for the
	// runtime's defaults): the configuration replicas are sized from.
	Engine string `json:"engine,omitempty"`
	// GPUs per replica (ReplicaGPUs: the tensor parallelism set, else
	// the hardware profile's); 0 on CPU.
	GPUs         int      `json:"gpus_per_replica"`
	PricePerHour *float64 `json:"price_per_hour"`
	Quality      *float64 `json:"quality"`
	QualityLo    *float64 `json:"quality_lo"`
	QualityHi    *float64 `json:"quality_hi"`
	// SLORate is the highest measured rate (req/s per replica) at which
	// the SLOs held; nil when they held at no measured load.
	SLORate *float64 `json:"slo_rate_rps"`
	// SLOFrom names the measurement (the run and sweep step, the one
	// load, or the repeats) for a page to word; SLORateFrom is its
	// English (English(SLOFrom)), the API's, so the sentence is the
	// catalogue's and never written twice.
	SLORateFrom string `json:"slo_rate_from"`
	SLOFrom     Said   `json:"-"`
	// SLORateLo is the low end of SLORate's 95 % interval where the rate
	// is the engine's estimate of one measured load (ReplicaRate): the
	// replicas are sized on it, so that the run's own noise and the
	// between-run spread are in the claim that they serve the peak. Nil
	// for a sweep's step, which keeps no interval.
	SLORateLo *float64 `json:"slo_rate_lo_rps"`
	// MaxMeasuredRPS is the busiest load measured at all.
	MaxMeasuredRPS float64 `json:"max_measured_rps"`
	// TokensPerS and RunCostPer1M are the run's output tokens/s and cost
	// per 1M output tokens as every conclusion weighs them (Speed.Value,
	// Cost.Value of its Candidate: the steady window's estimate the speed
	// test uses, a remote provider's run priced from its token prices),
	// so the plan shows a run as the verdict does; nil when not measured.
	TokensPerS   *float64 `json:"output_tokens_per_s"`
	RunCostPer1M *float64 `json:"run_cost_per_1m_output_tokens"`
	// TokenPrice is a remote provider's price by the token the run was
	// made under (TokenPriced): it is paid per token, with no replicas to
	// size and no hourly price.
	TokenPrice  *store.ProviderPrice `json:"-"`
	TokenPriced bool                 `json:"token_priced,omitempty"`
	// Candidate is the run as the engine weighs it (nil when not given):
	// what RankCapacity compares.
	Candidate *Candidate `json:"-"`
	// Repeats is how many runs of one benchmark the target was measured
	// in (MergeMeasured; 0 for one run), RepeatRuns those runs, the
	// first (RunID) first.
	Repeats    int     `json:"repeats,omitempty"`
	RepeatRuns []int64 `json:"repeat_run_ids,omitempty"`
	// Imported: results made elsewhere and imported, which measured no
	// speed to size replicas from (ExcludedImported).
	Imported bool `json:"imported,omitempty"`
	// QualityScorer is the scorer identity Quality was measured under
	// (store.ScorerIdentity); "" when the run has no quality.
	QualityScorer string `json:"quality_scorer"`
	// The requests' mean lengths as measured.
	InputTokens  float64 `json:"measured_input_tokens"`
	OutputTokens float64 `json:"measured_output_tokens"`
	// The median, 90th percentile and longest of the output tokens per
	// successful request, from the run's summary; nil when the summary
	// does not have them.
	OutputTokensP50 *float64 `json:"measured_output_tokens_p50"`
	OutputTokensP90 *float64 `json:"measured_output_tokens_p90"`
	OutputTokensMax *float64 `json:"measured_output_tokens_max"`
	// JoulesPerToken is the measured energy per output token; nil without
	// GPU readings.
	JoulesPerToken *float64 `json:"joules_per_token"`
	// Problem says why there is no SLO rate (no summary, SLOs missed);
	// ProblemSaid says the same for a page to word.
	Problem     string `json:"problem,omitempty"`
	ProblemSaid Said   `json:"-"`
}

// WithProblem is m with why it has no SLO rate, in the API's English beside
// its Said.
func (m Measured) WithProblem(s Said) Measured {
	m.Problem, m.ProblemSaid = English(s), s
	return m
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
	// MonthlyTokens is what a remote provider's run costs a month by its
	// token prices (nil for a run priced by the hour).
	MonthlyTokens  *float64 `json:"monthly_tokens,omitempty"`
	MonthlyLicence float64  `json:"monthly_licence"`
	// Rank is the target's place, cheapest per month first; a target
	// shares the rank of the one before it unless the engine's cost test
	// establishes that one as cheaper (RankCapacity).
	Rank int `json:"rank"`
	// Sources says, per figure, the measurement or input it comes from.
	Sources map[string]string `json:"sources"`
	// Extrapolated lists where the traffic leaves what was measured.
	Extrapolated []string `json:"extrapolated"`
	// SourcesSaid, ExtrapolatedSaid and ReasonsSaid are Sources,
	// Extrapolated and Reasons for a page to word.
	SourcesSaid      map[string]Said `json:"-"`
	ExtrapolatedSaid []Said          `json:"-"`
	ReasonsSaid      []Said          `json:"-"`
	// Reasons are why the target cannot serve the traffic (excluded only),
	// and ReasonCodes the same reasons as stable codes, one each: one of
	// the Exclusion constants.
	Reasons     []string    `json:"reasons,omitempty"`
	ReasonCodes []Exclusion `json:"reason_codes,omitempty"`
}

// Exclusion names why a target is not sized.
type Exclusion string

// The reasons a target is not sized.
const (
	// ExcludedShortAnswers: the run's median answer is under
	// MinMedianOutputTokens tokens (it did not really answer).
	ExcludedShortAnswers Exclusion = "short_answers"
	// ExcludedNotMeasuredAtLength: the run's answers do not cover the
	// traffic's output tokens (OutputCoverageRule).
	ExcludedNotMeasuredAtLength Exclusion = "not_measured_at_length"
	// ExcludedQualityNotMeasured: a minimum quality was asked and the run
	// has no quality.
	ExcludedQualityNotMeasured Exclusion = "quality_not_measured"
	// ExcludedOtherScorer: the run's quality was measured under another
	// scorer identity than the minimum's, so the two do not compare.
	ExcludedOtherScorer Exclusion = "quality_other_scorer"
	// ExcludedBelowMinQuality: the run's quality is under the minimum.
	ExcludedBelowMinQuality Exclusion = "quality_below_minimum"
	// ExcludedSLOs: the SLOs held at no measured load (or the run has no
	// figures).
	ExcludedSLOs Exclusion = "slos"
	// ExcludedNoPrice: the hardware has no price per hour.
	ExcludedNoPrice Exclusion = "no_price"
	// ExcludedImported: the run's results were imported from elsewhere:
	// they have a quality and no speed to size replicas from.
	ExcludedImported Exclusion = "imported"
	// ExcludedRateNotBounded: the 95 % interval of the rate one replica
	// served reaches 0, so no replica count is known to serve the peak.
	ExcludedRateNotBounded Exclusion = "rate_not_bounded"
	// ExcludedMeasuredAgain: the same target under the same load was
	// measured again in a later benchmark, which is sized instead
	// (DatasetCandidates), as the dataset's recommendation weighs it.
	ExcludedMeasuredAgain Exclusion = "measured_again_later"
	// ExcludedNotNewest: the target is older than the newest targets the
	// planner sizes (PlannerRuns).
	ExcludedNotNewest Exclusion = "not_among_newest"
)

// Exclusions lists every Exclusion, in the order PlanCapacity checks
// them, then those of the runs PlannerRuns leaves out (ListLeft).
func Exclusions() []Exclusion {
	return []Exclusion{ExcludedShortAnswers, ExcludedNotMeasuredAtLength, ExcludedQualityNotMeasured, ExcludedOtherScorer,
		ExcludedBelowMinQuality, ExcludedImported, ExcludedSLOs, ExcludedRateNotBounded, ExcludedNoPrice,
		ExcludedMeasuredAgain, ExcludedNotNewest}
}

// MinMedianOutputTokens is the shortest median answer, in output tokens,
// of a run the planner sizes: a run whose answers are mostly one token
// long (an empty or truncated answer, a stop at once) measured a load
// nothing like a real one, whatever its rate.
const MinMedianOutputTokens = 2

// OutputCoverageRule says when a run's measured answers cover the
// traffic's output tokens per request, as the page and the API docs say
// it.
const OutputCoverageRule = "a run is sized only when the 90th percentile of its output tokens per successful request is at least the traffic's output tokens per request (at least a tenth of its answers were that long)"

// QualityFloor is an optional minimum quality, under one scorer identity:
// a quality measured under another identity does not compare with it.
type QualityFloor struct {
	Min    float64 `json:"min_quality"`
	Scorer string  `json:"quality_scorer"`
}

// exclude records one reason a target is not sized.
func (a *Capacity) exclude(code Exclusion, said Said) {
	a.Reasons = append(a.Reasons, English(said))
	a.ReasonCodes = append(a.ReasonCodes, code)
	a.ReasonsSaid = append(a.ReasonsSaid, said)
}

// extrapolated notes where the plan goes beyond what was measured, in
// the API's English beside its Said.
func (a *Capacity) extrapolated(s Said) {
	a.Extrapolated, a.ExtrapolatedSaid = append(a.Extrapolated, English(s)), append(a.ExtrapolatedSaid, s)
}

// screen records every reason, besides the SLOs and price, that m is not
// sized for t under the floor q (nil: no minimum quality): answers too
// short, output lengths not measured as long as the traffic's, quality
// not comparable or too low.
func (a *Capacity) screen(t Traffic, q *QualityFloor) {
	m := a.Measured
	switch {
	case m.OutputTokensP50 == nil || m.OutputTokensP90 == nil:
		if m.SLORate != nil {
			a.exclude(ExcludedNotMeasuredAtLength, say("capacity.said.no_lengths"))
		}
	case *m.OutputTokensP50 < MinMedianOutputTokens:
		a.exclude(ExcludedShortAnswers, say("capacity.said.short_answers", "Median", tokensSaid(*m.OutputTokensP50), "Min", MinMedianOutputTokens))
		fallthrough
	default:
		if *m.OutputTokensP90 < t.OutputTokens {
			a.exclude(ExcludedNotMeasuredAtLength, say("capacity.said.not_at_length", "P90", tokensSaid(*m.OutputTokensP90), "Traffic", trimmed(t.OutputTokens)))
		}
	}
	if q == nil {
		return
	}
	switch {
	case m.Quality == nil || m.QualityScorer == "":
		said := say("capacity.said.quality_not_measured")
		if q.Scorer != "" {
			said = say("capacity.said.quality_not_measured_with", "Min", trimmed(q.Min), "Scorer", q.Scorer)
		}
		a.exclude(ExcludedQualityNotMeasured, said)
	case m.QualityScorer != q.Scorer:
		a.exclude(ExcludedOtherScorer, say("capacity.said.other_scorer", "Scorer", m.QualityScorer, "Wanted", q.Scorer))
	case *m.Quality < q.Min:
		a.exclude(ExcludedBelowMinQuality, say("capacity.said.below_min", "Quality", dec(*m.Quality, 3), "Scorer", q.Scorer, "Min", trimmed(q.Min)))
	}
}

// CapacityPlan is the targets that can serve the traffic, cheapest per
// month first, and those that cannot, with their reasons; the minimum
// quality it applied (nil: none) and the rule for output lengths.
type CapacityPlan struct {
	Feasible       []Capacity    `json:"feasible"`
	Excluded       []Capacity    `json:"excluded"`
	MinQuality     *QualityFloor `json:"min_quality"`
	OutputCoverage string        `json:"output_coverage"`
	// QualityScorers are the scorer identities the candidates' qualities
	// were measured under (the choices for a minimum quality's).
	QualityScorers []string `json:"quality_scorers"`
	// ROI weighs the feasible targets against what the user runs today;
	// absent when the question named nothing run today.
	ROI *ROI `json:"roi,omitempty"`
	// Lead is the engine's cost claim between the two cheapest sized
	// targets (RankCapacity); nil with fewer than two.
	Lead *CapacityLead `json:"lead"`
}

// lengthTolerance is how far the traffic's request lengths may be from the
// measured ones before the answer counts as extrapolated.
const lengthTolerance = 0.2

// noteExtrapolation says where the plan goes beyond what m measured: a
// replica's load above the busiest measured step, or requests much longer
// or shorter than the measured ones.
func (a *Capacity) noteExtrapolation(t Traffic, m Measured) {
	if load := t.PeakRPS / float64(a.Replicas); load > m.MaxMeasuredRPS*(1+1e-9) {
		a.extrapolated(say("capacity.said.above_busiest", "Load", dec(load, 2), "Max", dec(m.MaxMeasuredRPS, 2)))
	}
	for _, l := range []struct {
		key               string
		traffic, measured float64
	}{{"capacity.said.other_input_length", t.InputTokens, m.InputTokens}, {"capacity.said.other_output_length", t.OutputTokens, m.OutputTokens}} {
		if l.measured > 0 && l.traffic > 0 && math.Abs(l.traffic-l.measured) > lengthTolerance*l.measured {
			a.extrapolated(say(l.key, "Measured", dec(l.measured, 0), "Traffic", dec(l.traffic, 0)))
		}
	}
}

// PlanCapacity answers, for each measured target, how many replicas serve
// t at peak within the SLOs with headroom (a share of the SLO-bound rate
// kept free, 0 ≤ headroom < 1), and what that costs. It sizes only a
// target whose median answer is at least MinMedianOutputTokens long,
// whose answers cover t's output tokens (OutputCoverageRule) and, with a
// floor q, whose quality under q's scorer identity is at least q's
// minimum; the others are excluded with every reason that applies. A
// sized target's figures:
//   - replicas = ⌈peak ÷ (SLO rate × (1 − headroom))⌉, the SLO rate being
//     the low end of its 95 % interval where the engine estimated it
//     (SLORateLo; excluded when that reaches 0), GPUs = replicas × GPUs
//     per replica;
//   - cost per hour = replicas × the hardware's price per hour;
//   - monthly = hardware (cost per hour × hours × utilisation) + energy
//     (measured J per output token × the month's output tokens at the
//     average rate, in kWh × the energy price) + licence;
//   - a remote provider's run has no replicas: monthly = the month's
//     input and output tokens at its token prices + licence;
//   - cost per 1M output tokens = monthly ÷ the month's output tokens × 10⁶.
//
// Targets are listed cheapest per month first; RankCapacity says which
// places the engine's cost test establishes.
func PlanCapacity(t Traffic, headroom float64, c Costs, q *QualityFloor, ms []Measured) CapacityPlan {
	hours, util := c.month()
	plan := CapacityPlan{MinQuality: q, OutputCoverage: OutputCoverageRule}
	for _, m := range ms {
		a := Capacity{Measured: m, MonthlyLicence: c.LicencePerMonth, Sources: map[string]string{}, Extrapolated: []string{},
			SourcesSaid: map[string]Said{}}
		a.screen(t, q)
		if m.Imported {
			a.exclude(ExcludedImported, say("capacity.said.imported"))
		} else if m.SLORate == nil || !(*m.SLORate > 0) {
			said := m.ProblemSaid
			if said.Code == "" {
				said = say("capacity.said.slos_nowhere")
			}
			a.exclude(ExcludedSLOs, said)
		}
		if len(a.Reasons) > 0 {
			plan.Excluded = append(plan.Excluded, a)
			continue
		}
		if m.TokenPrice != nil {
			a.priceByToken(t, c, hours)
			plan.Feasible = append(plan.Feasible, a)
			continue
		}
		if !a.size(t, headroom) {
			plan.Excluded = append(plan.Excluded, a)
			continue
		}
		a.noteExtrapolation(t, m)
		if m.PricePerHour == nil {
			a.exclude(ExcludedNoPrice, say("capacity.said.no_price", "Hardware", m.Hardware))
			plan.Excluded = append(plan.Excluded, a)
			continue
		}
		a.priceByHour(t, c, hours, util)
		plan.Feasible = append(plan.Feasible, a)
	}
	sort.SliceStable(plan.Feasible, func(i, j int) bool {
		return *plan.Feasible[i].MonthlyCost < *plan.Feasible[j].MonthlyCost
	})
	for i := range plan.Feasible {
		plan.Feasible[i].Rank = i + 1
	}
	if plan.Feasible == nil {
		plan.Feasible = []Capacity{}
	}
	if plan.Excluded == nil {
		plan.Excluded = []Capacity{}
	}
	return plan
}

// size sets the replicas and GPUs that serve t's peak with headroom: on
// the low end of the rate's interval where the engine estimated one
// (SLORateLo), else on the rate measured. It reports false, the target
// excluded, when that interval reaches 0.
func (a *Capacity) size(t Traffic, headroom float64) bool {
	m := a.Measured
	rate := *m.SLORate
	if m.SLORateLo != nil {
		if !(*m.SLORateLo > 0) {
			a.exclude(ExcludedRateNotBounded, say("capacity.said.rate_not_bounded", "Rate", dec(*m.SLORate, 2), "From", m.SLOFrom))
			return false
		}
		rate = *m.SLORateLo
	}
	perReplica := rate * (1 - headroom)
	a.Replicas = max(int(math.Ceil(t.PeakRPS/perReplica-1e-9)), 1)
	a.TotalGPUs = a.Replicas * m.GPUs
	if m.SLORateLo != nil {
		a.source("replicas", say("capacity.said.source_replicas_lo", "Peak", dec(t.PeakRPS, 2), "Rate", dec(rate, 2),
			"Mean", dec(*m.SLORate, 2), "From", m.SLOFrom, "Share", dec((1-headroom)*100, 0)))
	} else {
		a.source("replicas", say("capacity.said.source_replicas", "Peak", dec(t.PeakRPS, 2), "Rate", dec(rate, 2),
			"From", m.SLOFrom, "Share", dec((1-headroom)*100, 0)))
	}
	return true
}

// source says where figure k comes from: the message for a page to word
// and, for the API, its English from the catalogue (one sentence, never
// written twice).
func (a *Capacity) source(k string, s Said) {
	a.SourcesSaid[k], a.Sources[k] = s, English(s)
}

// priceByHour costs a sized target by its replicas' price per hour:
// hardware, energy and licence a month, and per 1M output tokens of the
// month's traffic.
func (a *Capacity) priceByHour(t Traffic, c Costs, hours, util float64) {
	m := a.Measured
	monthTokens := t.AverageRPS * t.OutputTokens * 3600 * hours
	perHour := float64(a.Replicas) * *m.PricePerHour
	hw := perHour * hours * util
	a.CostPerHour, a.MonthlyHardware = &perHour, &hw
	a.source("cost_per_hour", say("capacity.said.source_cost_per_hour", "Replicas", a.Replicas, "Price", dec(*m.PricePerHour, 4), "Hardware", m.Hardware))
	monthly := hw + c.LicencePerMonth
	if m.JoulesPerToken != nil {
		e := *m.JoulesPerToken * monthTokens / 3.6e6 * c.EnergyPricePerKWh
		a.MonthlyEnergy = &e
		monthly += e
		a.source("monthly_energy", say("capacity.said.source_energy", "J", dec(*m.JoulesPerToken, 3), "Run", m.RunID,
			"Tokens", dec(monthTokens, 0), "Price", dec(c.EnergyPricePerKWh, 4)))
	} else {
		a.source("monthly_energy", say("capacity.said.source_energy_none"))
	}
	a.MonthlyCost = &monthly
	a.source("monthly_cost", say("capacity.said.source_monthly", "Hardware", dec(hw, 2), "Hours", dec(hours, 0), "Up", dec(util*100, 0),
		"Licence", dec(c.LicencePerMonth, 2)))
	a.per1M(t, monthTokens)
}

// per1M sets the cost per 1M output tokens of the month's traffic.
func (a *Capacity) per1M(t Traffic, monthTokens float64) {
	if monthTokens <= 0 {
		return
	}
	per1M := *a.MonthlyCost / monthTokens * 1e6
	a.CostPer1MTokens = &per1M
	a.source("cost_per_1m_output_tokens", say("capacity.said.source_per_1m", "Tokens", dec(monthTokens, 0), "Average", dec(t.AverageRPS, 2),
		"Output", dec(t.OutputTokens, 0)))
}

// priceByToken costs a remote provider's run by its token prices: the
// month's input and output tokens at the average rate, whatever hours
// or share of them a replica would be up, plus the licence. A provider
// has no replicas to size (0, no GPUs, no price per hour); a peak above
// the busiest load it was measured at is extrapolated.
func (a *Capacity) priceByToken(t Traffic, c Costs, hours float64) {
	m, p := a.Measured, a.Measured.TokenPrice
	monthIn := t.AverageRPS * t.InputTokens * 3600 * hours
	monthOut := t.AverageRPS * t.OutputTokens * 3600 * hours
	tokens := (monthIn*p.InputPer1M + monthOut*p.OutputPer1M) / 1e6
	monthly := tokens + c.LicencePerMonth
	a.MonthlyTokens, a.MonthlyCost = &tokens, &monthly
	a.source("replicas", say("capacity.said.source_replicas_tokens"))
	a.source("monthly_tokens", say("capacity.said.source_tokens", "In", dec(monthIn, 0), "InPrice", dec(p.InputPer1M, 4),
		"Out", dec(monthOut, 0), "OutPrice", dec(p.OutputPer1M, 4), "Provider", p.Provider, "Model", p.Model))
	a.source("monthly_cost", say("capacity.said.source_monthly_tokens", "Tokens", dec(tokens, 2), "Licence", dec(c.LicencePerMonth, 2)))
	if t.PeakRPS > m.MaxMeasuredRPS*(1+1e-9) {
		a.extrapolated(say("capacity.said.above_busiest_provider", "Peak", dec(t.PeakRPS, 2), "Max", dec(m.MaxMeasuredRPS, 2)))
	}
	a.per1M(t, monthOut)
}
