package recommend

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/views/charts"
	"github.com/ruckus/ruckus/views/said"
)

func num(ctx context.Context, v *float64, places int) string {
	if v == nil {
		return i18n.T(ctx, "recommend.not_measured")
	}
	return said.Fixed(ctx, *v, places)
}

// rank is "1", or "=1" when the rank is shared.
func rank(r conclude.Ranked) string {
	if len(r.TiedWith) > 0 {
		return fmt.Sprintf("=%d", r.Rank)
	}
	return fmt.Sprint(r.Rank)
}

// label names a candidate among others in the reader's language.
func label(ctx context.Context, c conclude.Candidate, all []conclude.Candidate) string {
	return said.Label(ctx, c, all)
}

// headline names the recommended target, or the targets tied first.
func headline(ctx context.Context, rec conclude.Recommendation) string {
	var first []conclude.Candidate
	var all []conclude.Candidate
	for _, r := range rec.Feasible {
		all = append(all, r.Candidate)
		if r.Rank == 1 {
			first = append(first, r.Candidate)
		}
	}
	if len(first) == 0 {
		return ""
	}
	if len(first) == 1 {
		return i18n.T(ctx, "recommend.recommended", "Name", label(ctx, first[0], all))
	}
	names := make([]string, len(first))
	for i, c := range first {
		names[i] = label(ctx, c, all)
	}
	return i18n.T(ctx, "recommend.tie_first", "Names", said.JoinAnd(ctx, names))
}

// explanation says why a target has its rank, in the reader's language.
func explanation(ctx context.Context, r conclude.Ranked) string {
	if r.ExplanationSaid.Code == "" {
		return r.Explanation
	}
	return said.Word(ctx, r.ExplanationSaid)
}

// notes say what the ranking left out and why, in the reader's language.
func notes(ctx context.Context, rec conclude.Recommendation) []string {
	if len(rec.NotesSaid) != len(rec.Notes) {
		return rec.Notes
	}
	return said.WordAll(ctx, rec.NotesSaid)
}

// unrankedReason says what sets a target apart from the ranked ones.
func unrankedReason(ctx context.Context, x conclude.Unranked) string {
	if x.ReasonSaid.Code == "" {
		return x.Reason
	}
	return said.Word(ctx, x.ReasonSaid)
}

func quality(ctx context.Context, c conclude.Candidate) string {
	if c.Quality == nil {
		return i18n.T(ctx, "recommend.not_scored")
	}
	if c.QualityLo != nil && c.QualityHi != nil {
		return fmt.Sprintf("%s [%s, %s]", said.Fixed(ctx, *c.Quality, 3), said.Fixed(ctx, *c.QualityLo, 3), said.Fixed(ctx, *c.QualityHi, 3))
	}
	return said.Fixed(ctx, *c.Quality, 3)
}

// Charts draws quality against cost and against p95 E2E for every
// candidate, with the Pareto front as a line.
func Charts(ctx context.Context, all []conclude.Candidate, rec conclude.Recommendation) []charts.Chart {
	mk := func(id, title, xl string, x func(conclude.Candidate) *float64, front []int64) charts.Chart {
		pts := charts.Series{Name: i18n.T(ctx, "recommend.chart_targets"), Dots: true}
		line := charts.Series{Name: i18n.T(ctx, "recommend.chart_front")}
		byID := map[int64]conclude.Candidate{}
		for _, c := range all {
			byID[c.RunID] = c
			if c.Quality == nil || x(c) == nil {
				continue
			}
			pts.Points = append(pts.Points, charts.Point{X: *x(c), Y: *c.Quality,
				Label: i18n.T(ctx, "recommend.chart_point", "ID", fmt.Sprint(c.RunID), "Model", c.Model, "Hardware", c.Hardware,
					"Quality", said.Fixed(ctx, *c.Quality, 3), "Axis", xl, "X", said.PValue(ctx, *x(c)))})
		}
		for _, id := range front {
			c := byID[id]
			line.Points = append(line.Points, charts.Point{X: *x(c), Y: *c.Quality, Label: i18n.T(ctx, "recommend.chart_front_point", "ID", fmt.Sprint(id))})
		}
		slices.SortFunc(line.Points, func(a, b charts.Point) int { return cmp.Compare(a.X, b.X) })
		return charts.Chart{ID: id, Title: title, XLabel: xl, YLabel: i18n.T(ctx, "compare.chart_quality"), Series: []charts.Series{pts, line}}
	}
	var out []charts.Chart
	// Without a price there is no cost to draw: the ranking's notes say so.
	for _, c := range all {
		if c.Quality != nil && c.CostPer1M != nil {
			out = append(out, mk("pareto-cost", i18n.T(ctx, "compare.chart_quality_cost"), i18n.T(ctx, "recommend.chart_usd_1m"),
				func(c conclude.Candidate) *float64 { return c.CostPer1M }, rec.ParetoQualityCost))
			break
		}
	}
	return append(out, mk("pareto-latency", i18n.T(ctx, "recommend.chart_quality_latency"), i18n.T(ctx, "recommend.chart_e2e"),
		func(c conclude.Candidate) *float64 { return c.E2Ep95 }, rec.ParetoQualityLaten))
}

// subject is what the recommendation is over: the benchmark or the dataset.
func (d Data) subject() string {
	if d.Dataset != nil {
		return d.Dataset.Name
	}
	return d.Benchmark.Name
}

// message is what is wrong with the form, in the reader's language.
func (d Data) message() string {
	if d.Form.Message != "" {
		return d.Form.Message
	}
	return d.Form.Error
}

func (d Data) backURL() string {
	if d.Dataset != nil {
		return fmt.Sprintf("/datasets/%d/leaderboard", d.Dataset.ID)
	}
	return fmt.Sprintf("/benchmarks/%d", d.Benchmark.ID)
}

// apiPath is the same recommendation in the API.
func (d Data) apiPath() string {
	if d.Dataset != nil {
		return fmt.Sprintf("/api/v1/datasets/%d/recommendation", d.Dataset.ID)
	}
	return fmt.Sprintf("/api/v1/benchmarks/%d/recommendation", d.Benchmark.ID)
}
