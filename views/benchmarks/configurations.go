package benchmarks

import (
	"context"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/jobs"
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
