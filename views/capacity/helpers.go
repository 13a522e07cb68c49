package capacity

import (
	"fmt"

	"github.com/ruckus/ruckus/app/advise"
	"github.com/ruckus/ruckus/app/store"
)

// sourceKeys are the planned figures in the order they are explained.
var sourceKeys = []string{"replicas", "cost_per_hour", "monthly_energy", "monthly_cost", "cost_per_1m_output_tokens"}

func money(v *float64) string {
	if v == nil {
		return "not measured"
	}
	return fmt.Sprintf("$%.2f", *v)
}

func quality(a advise.Capacity) string {
	switch {
	case a.Quality == nil:
		return "not scored"
	case a.QualityLo != nil && a.QualityHi != nil:
		return fmt.Sprintf("%.3f [%.3f, %.3f]", *a.Quality, *a.QualityLo, *a.QualityHi)
	}
	return fmt.Sprintf("%.3f", *a.Quality)
}

// outputLengths is what a run measured of its answers' lengths.
func outputLengths(a advise.Capacity) string {
	if a.OutputTokensP50 == nil || a.OutputTokensP90 == nil || a.OutputTokensMax == nil {
		return "not measured"
	}
	return fmt.Sprintf("median %.0f, p90 %.0f, max %.0f", *a.OutputTokensP50, *a.OutputTokensP90, *a.OutputTokensMax)
}

// reasonCode is the code of a target's i-th reason.
func reasonCode(a advise.Capacity, i int) string {
	if i < len(a.ReasonCodes) {
		return string(a.ReasonCodes[i])
	}
	return "other"
}

// hardwareOption names a hardware profile with its price, or says it has
// none.
func hardwareOption(h store.HardwareProfile) string {
	if h.PricePerHour == nil {
		return h.Slug + " (no price)"
	}
	return fmt.Sprintf("%s ($%.2f/h)", h.Slug, *h.PricePerHour)
}

// saving is a monthly saving, a negative one said as a cost.
func saving(v *float64) string {
	switch {
	case v == nil:
		return "unknown"
	case *v < 0:
		return fmt.Sprintf("−$%.2f (costs more)", -*v)
	}
	return fmt.Sprintf("$%.2f", *v)
}

// qualityChange is a target's quality against today's, with its interval
// and whether the test finds it significant; or why it was not compared.
func qualityChange(q advise.QualityChange) string {
	if !q.Comparable || q.Difference == nil {
		return "not compared"
	}
	s := fmt.Sprintf("%+.3f", *q.Difference)
	if q.Lo != nil && q.Hi != nil {
		s += fmt.Sprintf(" [%+.3f, %+.3f]", *q.Lo, *q.Hi)
	}
	switch {
	case q.Test == "none":
		s += " (same run)"
	case q.Significant:
		s += fmt.Sprintf(" significant (p = %.3g)", *q.P)
	default:
		s += " not significant"
	}
	return s + " · " + q.ScorerKey
}
