// Package history renders a dataset's history across benchmarks: the
// leaderboard of every run the viewer may read, one model's figures over
// time as a chart, and the regression flag shown beside runs.
package history

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/charts"
)

// Form is the leaderboard's and history's query as typed.
type Form struct {
	Model, Runtime, Hardware, Scorer, Load, From, To, Sort, Metric, Limit, After string
}

// LeaderboardData is a leaderboard page.
type LeaderboardData struct {
	Dataset store.Dataset
	Form    Form
	Sort    string
	// SortReason says why the list is by date where another sort was
	// asked (conclude.LeaderboardSort); empty otherwise.
	SortReason conclude.Said
	Errors     []string
	Facets     store.LeaderboardFacets
	Rows       []store.LeaderboardRow
	// LeftOut are the runs of the load ranked that the ranking leaves out,
	// with why (conclude.LeaderboardLengths).
	LeftOut []conclude.LeaderboardLeftOut
	// NextURL is the next page ("" on the last); NextCursor its after.
	NextURL    string
	NextCursor string
}

// Metric is what a history charts.
type Metric string

// The metrics a history charts.
const (
	MetricQuality    Metric = "quality"
	MetricThroughput Metric = "throughput"
	MetricLatency    Metric = "latency"
	MetricCost       Metric = "cost"
)

// Metrics are every metric, in the order offered.
var Metrics = []Metric{MetricQuality, MetricThroughput, MetricLatency, MetricCost}

// Label is the metric in words, with its unit, in the reader's language.
func (m Metric) Label(ctx context.Context) string {
	switch m {
	case MetricThroughput:
		return i18n.T(ctx, "history.metric_throughput")
	case MetricLatency:
		return i18n.T(ctx, "history.metric_latency")
	case MetricCost:
		return i18n.T(ctx, "history.metric_cost")
	}
	return i18n.T(ctx, "history.metric_quality")
}

// HistoryData is a history page.
type HistoryData struct {
	Dataset store.Dataset
	Form    Form
	Metric  Metric
	Errors  []string
	Facets  store.LeaderboardFacets
	// Rows are the model's runs, oldest first.
	Rows  []store.LeaderboardRow
	Chart charts.Chart
}

// Value is the row's figure for the metric; nil when not measured.
func Value(r store.LeaderboardRow, m Metric) *float64 {
	switch m {
	case MetricThroughput:
		return r.TokensPerS
	case MetricLatency:
		return r.E2Ep95
	case MetricCost:
		return r.CostPer1M
	}
	return r.Quality
}

// Criterion is the conclusions engine's criterion the metric is compared
// on.
func (m Metric) Criterion() conclude.Criterion {
	switch m {
	case MetricThroughput:
		return conclude.Speed
	case MetricLatency:
		return conclude.Latency
	case MetricCost:
		return conclude.Cost
	}
	return conclude.Quality
}

// Chart draws the metric over time: one series per line of the engine's
// (conclude.HistorySeries: a runtime × hardware × engine settings, and for
// speed, latency and cost one load identity, named in the legend), x in
// days since the first run, every point a link to its run and a
// regression drawn ringed. Its words are in ctx's language.
func Chart(ctx context.Context, rows []store.LeaderboardRow, m Metric) charts.Chart {
	c := charts.Chart{ID: "history", Title: i18n.T(ctx, "history.chart_title", "Metric", m.Label(ctx)), YLabel: m.Label(ctx)}
	if len(rows) == 0 {
		return c
	}
	first := rows[0].FinishedAt
	for _, r := range rows {
		if r.FinishedAt.Before(first) {
			first = r.FinishedAt
		}
	}
	c.XLabel = i18n.T(ctx, "history.days_since", "Date", i18n.Date(ctx, first))
	for _, line := range conclude.HistorySeries(rows, m.Criterion()) {
		series := charts.Series{Name: lineName(ctx, line, m)}
		for _, r := range line.Rows {
			v := Value(r, m)
			if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
				continue
			}
			label := i18n.T(ctx, "history.point", "ID", r.RunID, "When", i18n.DateTime(ctx, r.FinishedAt), "Value", format(ctx, *v, m))
			if len(r.Regressions) > 0 {
				label += " — " + i18n.T(ctx, "history.point_regression", "Detail", RegressionText(ctx, r.Regressions[0]))
			}
			series.Points = append(series.Points, charts.Point{X: r.FinishedAt.Sub(first).Hours() / 24, Y: *v,
				Label: label, Href: fmt.Sprintf("/runs/%d", r.RunID), Flagged: len(r.Regressions) > 0})
		}
		if len(series.Points) == 0 {
			continue
		}
		sort.SliceStable(series.Points, func(a, b int) bool { return series.Points[a].X < series.Points[b].X })
		c.Series = append(c.Series, series)
	}
	return c
}

// lineName is a history line in the legend: its target (a configuration
// is its own line, docs/benchmarks.md#engine-settings) and, for speed,
// latency and cost, the load it was measured under and, where the load's
// runs were split by their lengths, the line's lengths and why.
func lineName(ctx context.Context, l conclude.HistoryLine, m Metric) string {
	name := l.Runtime + " / " + l.Hardware
	if l.Engine != "" {
		name += " " + l.Engine
	}
	switch {
	case m.Criterion() == conclude.Quality:
	case l.LoadKept:
		name += " · " + l.Load
	default:
		name += " · " + i18n.T(ctx, "history.load_not_kept")
	}
	if l.Lengths != nil && m.Criterion() != conclude.Quality {
		name += " · " + i18n.T(ctx, "history.line_lengths", "In", i18n.Num(ctx, l.Lengths.In, 0), "Out", i18n.Num(ctx, l.Lengths.Out, 0),
			"Ratio", i18n.Num(ctx, jobs.LengthRatio, 0))
	}
	return name
}

func format(ctx context.Context, v float64, m Metric) string {
	switch m {
	case MetricThroughput:
		return i18n.T(ctx, "home.tokens_per_s", "N", i18n.Num(ctx, v, 1))
	case MetricLatency:
		return i18n.Num(ctx, v, 0) + " ms"
	case MetricCost:
		return "$" + i18n.Num(ctx, v, 3)
	}
	return i18n.Num(ctx, v, 3)
}

// opt is an optional figure with the given decimals, or a dash for not
// measured.
func opt(ctx context.Context, v *float64, decimals int) string {
	if v == nil {
		return "—"
	}
	return i18n.Num(ctx, *v, decimals)
}

// quality is the mean score with its interval.
func quality(ctx context.Context, r store.LeaderboardRow) string {
	if r.Quality == nil {
		return "—"
	}
	if r.QualityLo != nil && r.QualityHi != nil {
		return i18n.Num(ctx, *r.Quality, 3) + " " + i18n.T(ctx, "history.interval", "Lo", i18n.Num(ctx, *r.QualityLo, 3), "Hi", i18n.Num(ctx, *r.QualityHi, 3))
	}
	return i18n.Num(ctx, *r.Quality, 3)
}

// sortURL is the leaderboard sorted by s, the filters kept.
func (d LeaderboardData) sortURL(s string) string {
	return fmt.Sprintf("/datasets/%d/leaderboard?%s", d.Dataset.ID, query(d.Form, "sort", s))
}

// historyURL is the history of a model, the filters kept.
func historyURL(datasetID int64, f Form, model string) string {
	f.Sort, f.After, f.Limit = "", "", ""
	return fmt.Sprintf("/datasets/%d/history?%s", datasetID, query(f, "model", model))
}

// metricURL is the history with another metric.
func (d HistoryData) metricURL(m Metric) string {
	return fmt.Sprintf("/datasets/%d/history?%s", d.Dataset.ID, query(d.Form, "metric", string(m)))
}

func valueText(ctx context.Context, r store.LeaderboardRow, m Metric) string {
	v := Value(r, m)
	if v == nil {
		return "—"
	}
	return format(ctx, *v, m)
}

func metricWord(ctx context.Context, metric string) string {
	switch metric {
	case store.RegressionLatency:
		return i18n.T(ctx, "history.regressed_latency")
	case store.RegressionThroughput:
		return i18n.T(ctx, "history.regressed_throughput")
	case store.RegressionQuality:
		return i18n.T(ctx, "history.regressed_quality")
	}
	return metric
}

func sortWord(ctx context.Context, s string) string {
	switch s {
	case store.SortQuality:
		return i18n.T(ctx, "history.sort_quality")
	case store.SortSpeed:
		return i18n.T(ctx, "history.sort_speed")
	case store.SortLatency:
		return i18n.T(ctx, "history.sort_latency")
	case store.SortCost:
		return i18n.T(ctx, "history.sort_cost")
	}
	return i18n.T(ctx, "history.sort_date")
}

func ariaSort(s string) string {
	if s == store.SortLatency || s == store.SortCost {
		return "ascending"
	}
	return "descending"
}

func sortArrow(s string) string {
	if ariaSort(s) == "ascending" {
		return "↑"
	}
	return "↓"
}
