package conclude

import (
	"math"
	"slices"

	"github.com/ruckus/ruckus/app/store"
)

// Today is what a user runs now, to weigh a move against: a model on a
// hardware profile, with so many replicas, and what moving would cost
// once (engineering time, re-validation, rollout).
// Its tags are the rules of a planner's question (app/valid).
type Today struct {
	Model         string  `json:"model" validate:"required,model_name" msg:"advise_form.today_model"`
	Hardware      string  `json:"hardware" validate:"required,hardware" msg:"advise_form.today_hardware"`
	Replicas      int     `json:"replicas" validate:"min=1,max=100000" msg:"advise_form.today_replicas"`
	MigrationCost float64 `json:"migration_cost" validate:"finite,min=0,max=1000000000000" msg:"advise_form.migration_cost"`
}

// TodayMeasured is what Ruckus knows of today's deployment: its
// hardware's price, its energy per token and its quality where a run of
// today's model on the dataset measured them.
type TodayMeasured struct {
	Today
	// PricePerHour is today's hardware's price per hour (nil: not set).
	PricePerHour *float64
	// JoulesPerToken is from EnergyRun, a run of today's model on today's
	// hardware; nil when none measured it.
	JoulesPerToken *float64
	EnergyRun      int64
	// QualityRun is a run of today's model on the dataset (on today's
	// hardware when there is one), 0 when none; Qualities its qualities
	// under each scorer identity it was scored with.
	QualityRun int64
	Qualities  []store.Quality
}

// TodayCost is today's deployment's monthly cost, each figure with its
// source.
type TodayCost struct {
	Today
	PricePerHour    *float64          `json:"price_per_hour"`
	MonthlyHardware *float64          `json:"monthly_hardware"`
	MonthlyEnergy   *float64          `json:"monthly_energy"`
	QualityRun      *int64            `json:"quality_run_id"`
	Sources         map[string]string `json:"sources"`
	// SourcesSaid is Sources for a page to word.
	SourcesSaid map[string]Said `json:"-"`
	// Problem says why no saving can be worked out (no price for today's
	// hardware): ProblemSaid's English, for the API.
	Problem     string `json:"problem,omitempty"`
	ProblemSaid Said   `json:"-"`
}

// QualityChange is a target's quality against today's: the difference
// (target − today) with its 95 % interval, only under one scorer identity
// both were scored with (Comparable), by the paired test over the items
// both scored where there are any (Compare).
type QualityChange struct {
	Comparable  bool     `json:"comparable"`
	ScorerKey   string   `json:"scorer"`
	Difference  *float64 `json:"difference"`
	Lo          *float64 `json:"lo"`
	Hi          *float64 `json:"hi"`
	P           *float64 `json:"p"`
	Test        string   `json:"test"`
	Significant bool     `json:"significant"`
	// Basis says how the difference was tested, or why it was not;
	// BasisSaid says the same for a page to word.
	Basis     string `json:"basis"`
	BasisSaid Said   `json:"-"`
	// Margin is the comparison the difference comes from (nil where none
	// was made); Claim its claim in words (Margin.ClaimSaid): a difference
	// the test does not establish is "not established", with Detectable,
	// the smallest difference in per cent of today's quality this
	// comparison could have detected (docs/benchmarks.md#capacity-planner).
	Margin     *Margin  `json:"-"`
	Claim      string   `json:"claim,omitempty"`
	Detectable *float64 `json:"detectable_pct,omitempty"`
}

// ROIRow is one sized target against today: what it saves a month, how
// its quality differs, and how soon the move pays for itself.
type ROIRow struct {
	RunID    int64  `json:"run_id"`
	Model    string `json:"model"`
	Runtime  string `json:"runtime"`
	Hardware string `json:"hardware"`
	Replicas int    `json:"replicas"`
	// MonthlyCost and TodayMonthly are the two sides compared: hardware,
	// plus energy only when both sides measured it (else neither counts
	// it, and EnergyLeftOut says why). The licence is the same on both
	// sides and left out.
	MonthlyCost   float64  `json:"monthly_cost"`
	TodayMonthly  *float64 `json:"today_monthly_cost"`
	EnergyLeftOut string   `json:"energy_left_out,omitempty"`
	// EnergyLeftOutSaid is EnergyLeftOut for a page to word.
	EnergyLeftOutSaid Said `json:"-"`
	// MonthlySaving is today's cost less the target's (negative: the
	// target costs more); nil without today's cost.
	MonthlySaving *float64 `json:"monthly_saving"`
	// PaybackMonths is the migration cost ÷ the monthly saving; nil when
	// the move never pays back (no saving) or cannot be worked out.
	// Payback says the same in words: PaybackSaid's English, for the API.
	PaybackMonths *float64 `json:"payback_months"`
	Payback       string   `json:"payback"`
	PaybackSaid   Said     `json:"-"`
	// SameAsToday: the target is today's model on today's hardware (only
	// the replicas may differ).
	SameAsToday bool          `json:"same_as_today"`
	Quality     QualityChange `json:"quality"`
}

// ROI is "compare with what I run today": today's cost and, for every
// target the plan sized, the saving, the quality difference and the
// payback.
type ROI struct {
	Today TodayCost `json:"today"`
	Rows  []ROIRow  `json:"rows"`
}

// PlanROI weighs each feasible target of plan against today, under the
// same traffic and costs the plan used (hours, utilisation, energy
// price). quality compares a target's run with today's quality run
// (QualityAgainst, which needs the kept paired comparisons).
//   - today's monthly = replicas × price per hour × hours × utilisation
//     (+ energy: J per output token × the month's output tokens, when a
//     run of today's model on today's hardware measured it);
//   - monthly saving = today's monthly − the target's monthly, energy in
//     both or in neither;
//   - payback = migration cost ÷ monthly saving, in months; "never" when
//     the target saves nothing.
func PlanROI(today TodayMeasured, t Traffic, c Costs, plan CapacityPlan, quality func(Capacity) QualityChange) ROI {
	hours, util := c.month()
	monthTokens := t.AverageRPS * t.OutputTokens * 3600 * hours
	tc := todayCost(today, c, hours, util, monthTokens)
	roi := ROI{Today: tc, Rows: []ROIRow{}}
	for _, a := range plan.Feasible {
		// A remote provider's run costs its tokens a month, in place of
		// hardware (docs/benchmarks.md#capacity-planner).
		monthly := a.MonthlyHardware
		if monthly == nil {
			monthly = a.MonthlyTokens
		}
		if monthly == nil {
			continue
		}
		row := ROIRow{RunID: a.RunID, Model: a.Model, Runtime: a.Runtime, Hardware: a.Hardware, Replicas: a.Replicas,
			SameAsToday: a.Model == today.Model && a.Hardware == today.Hardware}
		row.MonthlyCost = *monthly
		var todayMonthly *float64
		if tc.MonthlyHardware != nil {
			v := *tc.MonthlyHardware
			todayMonthly = &v
		}
		switch {
		case a.MonthlyEnergy != nil && tc.MonthlyEnergy != nil:
			row.MonthlyCost += *a.MonthlyEnergy
			if todayMonthly != nil {
				*todayMonthly += *tc.MonthlyEnergy
			}
		case a.MonthlyEnergy != nil:
			row.EnergyLeftOutSaid = say("capacity.said.roi_energy_left_out_today")
			row.EnergyLeftOut = English(row.EnergyLeftOutSaid)
		case tc.MonthlyEnergy != nil:
			row.EnergyLeftOutSaid = say("capacity.said.roi_energy_left_out_run", "Run", a.RunID)
			row.EnergyLeftOut = English(row.EnergyLeftOutSaid)
		}
		row.TodayMonthly = todayMonthly
		if todayMonthly != nil {
			saving := *todayMonthly - row.MonthlyCost
			row.MonthlySaving = &saving
			row.PaybackMonths, row.PaybackSaid = payback(today.MigrationCost, saving)
		} else {
			row.PaybackSaid = say("capacity.payback_unknown", "Problem", tc.ProblemSaid)
		}
		row.Payback = English(row.PaybackSaid)
		row.Quality = quality(a)
		roi.Rows = append(roi.Rows, row)
	}
	// The biggest saving first; a target with no saving known last.
	slices.SortStableFunc(roi.Rows, func(x, y ROIRow) int {
		switch {
		case x.MonthlySaving == nil && y.MonthlySaving == nil:
			return 0
		case x.MonthlySaving == nil:
			return 1
		case y.MonthlySaving == nil:
			return -1
		}
		return -cmpFloat(*x.MonthlySaving, *y.MonthlySaving)
	})
	return roi
}

// todayCost is what today's deployment costs a month: its hardware at
// its price, and its energy where a run of it measured some.
func todayCost(today TodayMeasured, c Costs, hours, util, monthTokens float64) TodayCost {
	tc := TodayCost{Today: today.Today, PricePerHour: today.PricePerHour, Sources: map[string]string{},
		SourcesSaid: map[string]Said{}}
	if today.QualityRun != 0 {
		id := today.QualityRun
		tc.QualityRun = &id
	}
	if today.PricePerHour == nil {
		tc.ProblemSaid = say("capacity.today_no_price", "Hardware", today.Hardware)
		tc.Problem = English(tc.ProblemSaid)
	} else {
		hw := float64(today.Replicas) * *today.PricePerHour * hours * util
		tc.MonthlyHardware = &hw
		tc.source("monthly_hardware", say("capacity.said.roi_source_hardware", "Replicas", today.Replicas, "Price", dec(*today.PricePerHour, 4),
			"Hardware", today.Hardware, "Hours", dec(hours, 0), "Up", dec(util*100, 0)))
	}
	if today.JoulesPerToken != nil {
		e := *today.JoulesPerToken * monthTokens / 3.6e6 * c.EnergyPricePerKWh
		tc.MonthlyEnergy = &e
		tc.source("monthly_energy", say("capacity.said.roi_source_energy", "J", dec(*today.JoulesPerToken, 3), "Run", today.EnergyRun,
			"Model", today.Model, "Hardware", today.Hardware, "Tokens", dec(monthTokens, 0), "Price", dec(c.EnergyPricePerKWh, 4)))
	} else {
		tc.source("monthly_energy", say("capacity.said.roi_source_energy_none", "Model", today.Model, "Hardware", today.Hardware))
	}
	return tc
}

// source says where today's figure k comes from: the message for a page
// to word and, for the API, its English from the catalogue.
func (tc *TodayCost) source(k string, s Said) {
	tc.SourcesSaid[k], tc.Sources[k] = s, English(s)
}

// qualityBasis is q with its basis said, the API's English from the
// catalogue.
func qualityBasis(q QualityChange, s Said) QualityChange {
	q.BasisSaid, q.Basis = s, English(s)
	return q
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// payback is the months a migration costing cost takes to pay back at
// saving a month, and the same in words.
func payback(cost, saving float64) (*float64, Said) {
	switch {
	case saving == 0:
		return nil, say("capacity.payback_never")
	case saving < 0:
		return nil, say("capacity.payback_never_more", "USD", dec(-saving, 2))
	case cost == 0:
		zero := 0.0
		return &zero, say("capacity.payback_at_once")
	}
	months := cost / saving
	return &months, say("capacity.payback_months", "Months", dec(months, 1), "Cost", dec(cost, 2), "Saving", dec(saving, 2))
}

// ScorerInCommon is the scorer identity a target's quality is compared
// with today's under: the target's latest when today's run was scored
// with it too, else the first (oldest) identity both were scored with;
// "" when they share none.
func ScorerInCommon(target, today []store.Quality) string {
	has := func(qs []store.Quality, key string) bool {
		return slices.ContainsFunc(qs, func(q store.Quality) bool { return q.ScorerKey == key && q.Mean != nil })
	}
	if n := len(target); n > 0 && target[n-1].Mean != nil && has(today, target[n-1].ScorerKey) {
		return target[n-1].ScorerKey
	}
	for _, q := range target {
		if q.Mean != nil && has(today, q.ScorerKey) {
			return q.ScorerKey
		}
	}
	return ""
}

// candidateUnder is run's quality under key as a Candidate for Compare.
func candidateUnder(runID int64, qs []store.Quality, key string) Candidate {
	c := Candidate{RunID: runID, ScorerKey: key}
	for _, q := range qs {
		if q.ScorerKey == key {
			c.Quality, c.QualityLo, c.QualityHi = q.Mean, q.Lo, q.Hi
		}
	}
	return c
}

// QualityAgainst compares target's quality with today's under key (a
// scorer identity both were scored with: ScorerInCommon), by Compare's
// rule for quality: the paired comparison in ev where the two runs share
// items, else a z-test from their intervals. Without a key it says what
// is missing.
func QualityAgainst(targetRun int64, target []store.Quality, today TodayMeasured, key string, ev Evidence) QualityChange {
	switch {
	case today.QualityRun == 0:
		return qualityBasis(QualityChange{}, say("capacity.said.roi_no_scored_run", "Model", today.Model))
	case targetRun == today.QualityRun:
		zero := 0.0
		return qualityBasis(QualityChange{Comparable: true, ScorerKey: key, Difference: &zero, Lo: &zero, Hi: &zero, Test: "none"},
			say("capacity.said.roi_same_run", "Run", targetRun))
	case key == "":
		return qualityBasis(QualityChange{}, say("capacity.said.roi_no_common_scorer", "Run", targetRun, "Scorers", keysSaid(target),
			"Today", today.QualityRun, "TodayScorers", keysSaid(today.Qualities)))
	}
	m := Compare(candidateUnder(targetRun, target, key), candidateUnder(today.QualityRun, today.Qualities, key), Quality, ev)
	out := QualityChange{Comparable: m.Comparable, ScorerKey: key, Test: m.Test, Basis: m.Basis, BasisSaid: m.BasisSaid, P: m.P}
	if !m.Measured {
		out.Basis = "not compared: a run has no quality under " + key
		out.BasisSaid = say("capacity.said.roi_no_quality_under", "Scorer", key)
		return out
	}
	d := m.A - m.B
	out.Difference = &d
	if m.Paired != nil {
		out.Difference = &m.Paired.Mean
	}
	out.Lo, out.Hi = m.Lo, m.Hi
	out.Significant = !m.Tie && m.P != nil && !math.IsNaN(*m.P)
	out.Margin, out.Claim, out.Detectable = &m, English(m.ClaimSaid()), m.Detectable
	return out
}

// keysSaid is keysOf for a page to word.
func keysSaid(qs []store.Quality) any {
	if len(qs) == 0 {
		return say("compare.said.no_scorer")
	}
	return keysOf(qs)
}

func keysOf(qs []store.Quality) string {
	if len(qs) == 0 {
		return "no scorer"
	}
	s := ""
	for i, q := range qs {
		if i > 0 {
			s += ", "
		}
		s += q.ScorerKey
	}
	return s
}
