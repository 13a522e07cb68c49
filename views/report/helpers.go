package report

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/views/compare"
	"github.com/ruckus/ruckus/views/said"
)

func simulated(fs []compare.Figures) bool {
	for _, f := range fs {
		if f.Run.Mode == "sim" {
			return true
		}
	}
	return false
}

func qualityText(ctx context.Context, f compare.Figures) string {
	q, lo, hi, scorer := f.Quality, f.QualityLo, f.QualityHi, f.ScorerKey
	if scorer == "" {
		// Not weighed (a run left out): its latest scoring.
		q, lo, hi, scorer = f.Run.Quality, f.Run.QualityLo, f.Run.QualityHi, f.Run.Scorer
	}
	switch {
	case q == nil:
		return i18n.T(ctx, "report.not_scored")
	case lo != nil && hi != nil:
		return fmt.Sprintf("%s [%s, %s] (%s)", said.Fixed(ctx, *q, 3), said.Fixed(ctx, *lo, 3), said.Fixed(ctx, *hi, 3), scorer)
	}
	return fmt.Sprintf("%s (%s)", said.Fixed(ctx, *q, 3), scorer)
}

func opt(ctx context.Context, v *float64, places int) string {
	if v == nil {
		return i18n.T(ctx, "compare.not_measured")
	}
	return said.Fixed(ctx, *v, places)
}

// triple writes percentiles with places decimals: "1.0 / 2.0 / 3.0".
func triple(ctx context.Context, places int, vs ...float64) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = said.Fixed(ctx, v, places)
	}
	return strings.Join(parts, " / ")
}

// stamp is a moment to the minute, in UTC.
func stamp(ctx context.Context, t time.Time) string { return i18n.DateTime(ctx, t) + " UTC" }

// runState is a run's state in the reader's language.
func runState(ctx context.Context, state string) string {
	if key, ok := stateKeys[state]; ok {
		return i18n.T(ctx, key)
	}
	return state
}

var stateKeys = map[string]string{"queued": "state.queued", "running": "state.running", "completed": "state.completed",
	"failed": "state.failed", "cancelled": "state.cancelled"}

func join(s []string) string { return strings.Join(s, ", ") }

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
