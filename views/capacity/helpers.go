package capacity

import (
	"context"
	"fmt"
	"strings"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/said"
)

// sourceKeys are the planned figures in the order they are explained.
var sourceKeys = []string{"replicas", "cost_per_hour", "monthly_energy", "monthly_tokens", "monthly_cost", "cost_per_1m_output_tokens"}

// leadText is the engine's cost claim between the plan's two cheapest
// targets (conclude.RankCapacity), with the runs it names.
func leadText(ctx context.Context, l conclude.CapacityLead) string {
	name := func(model string, run int64) string {
		return model + " (" + i18n.T(ctx, "capacity.run_lower", "ID", fmt.Sprint(run)) + ")"
	}
	leader, other := name(l.Models[0], l.Runs[0]), name(l.Models[1], l.Runs[1])
	key := "capacity.lead_none"
	if l.Leader != nil {
		key = "capacity.lead"
		leader, other = name(l.LeaderModel, *l.Leader), name(l.RunnerUpModel, *l.RunnerUp)
	}
	return i18n.T(ctx, key, "Leader", leader, "Other", other, "Claim", said.Word(ctx, l.Claim()))
}

// replicas is a sized target's replicas; a remote provider's run is paid
// by the token and has none to size.
func replicas(ctx context.Context, a conclude.Capacity) string {
	if a.TokenPriced && a.MonthlyTokens != nil {
		return i18n.T(ctx, "capacity.by_token")
	}
	return fmt.Sprint(a.Replicas)
}

// tokensPerS is the run's output tokens/s as the engine tests it.
func tokensPerS(ctx context.Context, a conclude.Capacity) string {
	if a.TokensPerS == nil {
		return i18n.T(ctx, "capacity.not_measured")
	}
	return fixed(ctx, *a.TokensPerS, 1)
}

func fixed(ctx context.Context, v float64, places int) string { return said.Fixed(ctx, v, places) }

func usd(ctx context.Context, v float64) string { return said.USD(ctx, v, 2) }

func money(ctx context.Context, v *float64) string {
	if v == nil {
		return i18n.T(ctx, "capacity.not_measured")
	}
	return usd(ctx, *v)
}

func quality(ctx context.Context, a conclude.Capacity) string {
	switch {
	case a.Quality == nil:
		return i18n.T(ctx, "capacity.not_scored")
	case a.QualityLo != nil && a.QualityHi != nil:
		return fmt.Sprintf("%s [%s, %s]", fixed(ctx, *a.Quality, 3), fixed(ctx, *a.QualityLo, 3), fixed(ctx, *a.QualityHi, 3))
	}
	return fixed(ctx, *a.Quality, 3)
}

// outputLengths is what a run measured of its answers' lengths.
func outputLengths(ctx context.Context, a conclude.Capacity) string {
	if a.OutputTokensP50 == nil || a.OutputTokensP90 == nil || a.OutputTokensMax == nil {
		return i18n.T(ctx, "capacity.not_measured")
	}
	return i18n.T(ctx, "capacity.output_lengths", "Median", fixed(ctx, *a.OutputTokensP50, 0),
		"P90", fixed(ctx, *a.OutputTokensP90, 0), "Max", fixed(ctx, *a.OutputTokensMax, 0))
}

// sloRate is the rate per replica at which a target holds its SLOs; a
// plan built elsewhere than conclude.PlanCapacity may size a target
// without one, and then it was not measured (never a nil dereference).
func sloRate(ctx context.Context, m conclude.Measured) string {
	if m.SLORate == nil {
		return i18n.T(ctx, "capacity.not_measured")
	}
	return i18n.T(ctx, "capacity.rps", "N", fixed(ctx, *m.SLORate, 2))
}

// sloFrom names the measurement a target's SLO-bound rate comes from.
func sloFrom(ctx context.Context, m conclude.Measured) string {
	if m.SLOFrom.Code == "" {
		return m.SLORateFrom
	}
	return said.Word(ctx, m.SLOFrom)
}

// source says where a planned figure comes from.
func source(ctx context.Context, a conclude.Capacity, key string) string {
	if s, ok := a.SourcesSaid[key]; ok {
		return said.Word(ctx, s)
	}
	return a.Sources[key]
}

// todaySource says where a figure of today's cost comes from.
func todaySource(ctx context.Context, t conclude.TodayCost, key string) string {
	if s, ok := t.SourcesSaid[key]; ok {
		return said.Word(ctx, s)
	}
	return t.Sources[key]
}

// extrapolated says where the traffic leaves what a target measured.
func extrapolated(ctx context.Context, a conclude.Capacity) []string {
	if len(a.ExtrapolatedSaid) != len(a.Extrapolated) {
		return a.Extrapolated
	}
	return said.WordAll(ctx, a.ExtrapolatedSaid)
}

// reason is a target's i-th reason not to be sized.
func reason(ctx context.Context, a conclude.Capacity, i int) string {
	if i < len(a.ReasonsSaid) && a.ReasonsSaid[i].Code != "" {
		return said.Word(ctx, a.ReasonsSaid[i])
	}
	return a.Reasons[i]
}

// reasonCode is the code of a target's i-th reason.
func reasonCode(a conclude.Capacity, i int) string {
	if i < len(a.ReasonCodes) {
		return string(a.ReasonCodes[i])
	}
	return "other"
}

// hardwareOption names a hardware profile with its price, or says it has
// none.
func hardwareOption(ctx context.Context, h store.HardwareProfile) string {
	if h.PricePerHour == nil {
		return i18n.T(ctx, "capacity.hardware_no_price", "Hardware", h.Slug)
	}
	return i18n.T(ctx, "capacity.hardware_price", "Hardware", h.Slug, "Price", fixed(ctx, *h.PricePerHour, 2))
}

// noPrice says that today's hardware has no price, so no saving can be
// worked out.
func noPrice(ctx context.Context, hardware string) string {
	return i18n.T(ctx, "capacity.today_no_price", "Hardware", hardware)
}

// saving is a monthly saving, a negative one said as a cost.
func saving(ctx context.Context, v *float64) string {
	switch {
	case v == nil:
		return i18n.T(ctx, "capacity.unknown")
	case *v < 0:
		return i18n.T(ctx, "capacity.costs_more", "USD", fixed(ctx, -*v, 2))
	}
	return usd(ctx, *v)
}

// payback is how soon moving to a row's target pays for itself, as
// conclude.PlanROI works it out and says it (the API's English is the
// same message's).
func payback(ctx context.Context, row conclude.ROIRow) string {
	return said.Word(ctx, row.PaybackSaid)
}

// energyLeftOut says why energy is left out of a row's comparison; "" when
// it is not.
func energyLeftOut(ctx context.Context, row conclude.ROIRow) string {
	if row.EnergyLeftOutSaid.Code != "" {
		return said.Word(ctx, row.EnergyLeftOutSaid)
	}
	return row.EnergyLeftOut
}

// qualityBasis says how a quality difference was tested, or why it was
// not.
func qualityBasis(ctx context.Context, q conclude.QualityChange) string {
	if q.BasisSaid.Code != "" {
		return said.Word(ctx, q.BasisSaid)
	}
	return q.Basis
}

// qualityChange is a target's quality against today's, with its interval
// and the comparison's claim as the engine words it (Margin.ClaimSaid: a
// lead the test does not establish is "not established", with the
// smallest difference it could have detected); or why it was not
// compared.
func qualityChange(ctx context.Context, q conclude.QualityChange) string {
	if !q.Comparable || q.Difference == nil {
		return i18n.T(ctx, "capacity.not_compared")
	}
	sgn := func(v float64) string { return said.Signed(ctx, v, 3) }
	s := sgn(*q.Difference)
	if q.Lo != nil && q.Hi != nil {
		s += fmt.Sprintf(" [%s, %s]", sgn(*q.Lo), sgn(*q.Hi))
	}
	switch {
	case q.Test == "none":
		s += " " + i18n.T(ctx, "capacity.same_run")
	case q.Margin != nil:
		s += " · " + said.Word(ctx, q.Margin.ClaimSaid())
	}
	return s + " · " + q.ScorerKey
}

// configEngine is a configuration's settings as typed, or that it runs
// the runtime's defaults.
func configEngine(ctx context.Context, settings string) string {
	if strings.TrimSpace(settings) == "" {
		return i18n.T(ctx, "configs.defaults")
	}
	return settings
}
