package recommend

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ruckus/ruckus/app/advise"
	"github.com/ruckus/ruckus/views/charts"
)

func num(v *float64, format string) string {
	if v == nil {
		return "not measured"
	}
	return fmt.Sprintf(format, *v)
}

// rank is "1", or "=1" when the rank is shared.
func rank(r advise.Ranked) string {
	if len(r.TiedWith) > 0 {
		return fmt.Sprintf("=%d", r.Rank)
	}
	return fmt.Sprint(r.Rank)
}

// headline names the recommended target, or the targets tied first.
func headline(rec advise.Recommendation) string {
	var first []advise.Candidate
	var all []advise.Candidate
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
		return "Recommended: " + advise.Label(first[0], all) + "."
	}
	names := make([]string, len(first))
	for i, c := range first {
		names[i] = advise.Label(c, all)
	}
	return fmt.Sprintf("Effectively a tie between %s: choose on what the ranking does not weigh (price of the hardware you have, licence, context length).",
		strings.Join(names[:len(names)-1], ", ")+" and "+names[len(names)-1])
}

func quality(c advise.Candidate) string {
	if c.Quality == nil {
		return "not scored"
	}
	if c.QualityLo != nil && c.QualityHi != nil {
		return fmt.Sprintf("%.3f [%.3f, %.3f]", *c.Quality, *c.QualityLo, *c.QualityHi)
	}
	return fmt.Sprintf("%.3f", *c.Quality)
}

// Charts draws quality against cost and against p95 E2E for every
// candidate, with the Pareto front as a line.
func Charts(all []advise.Candidate, rec advise.Recommendation) []charts.Chart {
	mk := func(id, title, xl string, x func(advise.Candidate) *float64, front []int64) charts.Chart {
		pts := charts.Series{Name: "targets", Dots: true}
		line := charts.Series{Name: "Pareto front"}
		byID := map[int64]advise.Candidate{}
		for _, c := range all {
			byID[c.RunID] = c
			if c.Quality == nil || x(c) == nil {
				continue
			}
			pts.Points = append(pts.Points, charts.Point{X: *x(c), Y: *c.Quality,
				Label: fmt.Sprintf("run %d %s on %s: quality %.3f, %s %.3g", c.RunID, c.Model, c.Hardware, *c.Quality, xl, *x(c))})
		}
		for _, id := range front {
			c := byID[id]
			line.Points = append(line.Points, charts.Point{X: *x(c), Y: *c.Quality, Label: fmt.Sprintf("run %d (Pareto front)", id)})
		}
		slices.SortFunc(line.Points, func(a, b charts.Point) int { return cmp.Compare(a.X, b.X) })
		return charts.Chart{ID: id, Title: title, XLabel: xl, YLabel: "quality", Series: []charts.Series{pts, line}}
	}
	var out []charts.Chart
	// Without a price there is no cost to draw: the ranking's notes say so.
	for _, c := range all {
		if c.Quality != nil && c.CostPer1M != nil {
			out = append(out, mk("pareto-cost", "Quality vs cost", "USD per 1M tokens", func(c advise.Candidate) *float64 { return c.CostPer1M }, rec.ParetoQualityCost))
			break
		}
	}
	return append(out, mk("pareto-latency", "Quality vs p95 E2E latency", "p95 E2E ms", func(c advise.Candidate) *float64 { return c.E2Ep95 }, rec.ParetoQualityLaten))
}

// subject is what the recommendation is over: the benchmark or the dataset.
func (d Data) subject() string {
	if d.Dataset != nil {
		return d.Dataset.Name
	}
	return d.Benchmark.Name
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
