package benchmarks

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/charts"
	"github.com/ruckus/ruckus/views/said"
)

// engineText is a configuration's settings as the page shows them, or
// that it runs the runtime's defaults.
func engineText(ctx context.Context, e jobs.Engine) string {
	if len(e) == 0 {
		return i18n.T(ctx, "configs.defaults")
	}
	return e.Key()
}

// costHeading names the cost the Pareto front is drawn on.
func costHeading(ctx context.Context, frontCost string) string {
	if frontCost == "cost_per_hour" {
		return i18n.T(ctx, "configs.cost_per_hour")
	}
	return i18n.T(ctx, "configs.cost_per_1m")
}

// frontCostOf is c's figure of the cost the front is drawn on.
func frontCostOf(c conclude.Configuration, frontCost string) *float64 {
	if frontCost == "cost_per_hour" {
		return c.PricePerHour
	}
	return c.CostPer1M
}

// figure is v with places decimals, or "not measured".
func figure(ctx context.Context, v *float64, places int) string {
	if v == nil {
		return i18n.T(ctx, "configs.not_measured")
	}
	return said.Fixed(ctx, *v, places)
}

// dollars is v in US dollars, or "not measured".
func dollars(ctx context.Context, v *float64, places int) string {
	if v == nil {
		return i18n.T(ctx, "configs.not_measured")
	}
	return said.USD(ctx, *v, places)
}

// percent is a share in per cent, or "not measured".
func percent(ctx context.Context, v *float64) string {
	if v == nil {
		return i18n.T(ctx, "configs.not_measured")
	}
	return said.Fixed(ctx, *v*100, 1) + " %"
}

// frontChart draws the configurations' cost against their p95 latency,
// the Pareto front as a line through the ones on it, cheapest first; ok
// is false when no configuration has both figures.
func frontChart(ctx context.Context, r conclude.ConfigurationRanking) (charts.Chart, bool) {
	cost := costHeading(ctx, r.FrontCost)
	dots := charts.Series{Name: i18n.T(ctx, "configs.chart_configurations"), Dots: true}
	front := charts.Series{Name: i18n.T(ctx, "configs.front")}
	for _, c := range r.Ranked {
		y := frontCostOf(c, r.FrontCost)
		if y == nil || c.E2Ep95 == nil {
			continue
		}
		p := charts.Point{X: *c.E2Ep95, Y: *y, Href: fmt.Sprintf("/runs/%d", c.RunID),
			Label: i18n.T(ctx, "configs.chart_point", "Rank", c.Rank, "Engine", engineText(ctx, c.Engine), "E2E", said.Fixed(ctx, *c.E2Ep95, 0))}
		dots.Points = append(dots.Points, p)
		if c.OnFront {
			front.Points = append(front.Points, p)
		}
	}
	slices.SortFunc(front.Points, func(a, b charts.Point) int { return cmp.Compare(a.X, b.X) })
	c := charts.Chart{ID: "configurations-front", Title: i18n.T(ctx, "configs.chart_title", "Cost", cost),
		XLabel: i18n.T(ctx, "configs.e2e"), YLabel: cost, Series: []charts.Series{dots, front}}
	return c, len(dots.Points) > 0
}
