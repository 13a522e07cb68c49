// Package history renders a dataset's history across benchmarks: the
// leaderboard of every run the viewer may read, one model's figures over
// time as a chart, and the regression flag shown beside runs.
package history

import (
	"fmt"
	"math"
	"sort"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/charts"
)

// Form is the leaderboard's and history's query as typed.
type Form struct {
	Model, Runtime, Hardware, Scorer, From, To, Sort, Metric, Limit, After string
}

// LeaderboardData is a leaderboard page.
type LeaderboardData struct {
	Dataset store.Dataset
	Form    Form
	Sort    string
	Errors  []string
	Facets  store.LeaderboardFacets
	Rows    []store.LeaderboardRow
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

// Label is the metric in words, with its unit.
func (m Metric) Label() string {
	switch m {
	case MetricThroughput:
		return "output tokens/s"
	case MetricLatency:
		return "p95 end-to-end latency (ms)"
	case MetricCost:
		return "USD per 1M output tokens"
	}
	return "quality (mean score)"
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

// Chart draws the metric over time: one series per runtime × hardware, x
// in days since the first run, every point a link to its run and a
// regression drawn ringed.
func Chart(rows []store.LeaderboardRow, m Metric) charts.Chart {
	c := charts.Chart{ID: "history", Title: fmt.Sprintf("%s over time", m.Label()), YLabel: m.Label()}
	if len(rows) == 0 {
		return c
	}
	first := rows[0].FinishedAt
	for _, r := range rows {
		if r.FinishedAt.Before(first) {
			first = r.FinishedAt
		}
	}
	c.XLabel = "days since " + first.UTC().Format("2006-01-02")
	at := map[string]int{}
	for _, r := range rows {
		v := Value(r, m)
		if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
			continue
		}
		key := r.Runtime + " / " + r.Hardware
		i, ok := at[key]
		if !ok {
			i = len(c.Series)
			at[key] = i
			c.Series = append(c.Series, charts.Series{Name: key})
		}
		label := fmt.Sprintf("run %d, %s: %s", r.RunID, r.FinishedAt.UTC().Format("2006-01-02 15:04"), format(*v, m))
		if len(r.Regressions) > 0 {
			label += " — regression: " + r.Regressions[0].Detail
		}
		c.Series[i].Points = append(c.Series[i].Points, charts.Point{X: r.FinishedAt.Sub(first).Hours() / 24, Y: *v,
			Label: label, Href: fmt.Sprintf("/runs/%d", r.RunID), Flagged: len(r.Regressions) > 0})
	}
	for i := range c.Series {
		sort.SliceStable(c.Series[i].Points, func(a, b int) bool { return c.Series[i].Points[a].X < c.Series[i].Points[b].X })
	}
	return c
}

func format(v float64, m Metric) string {
	switch m {
	case MetricThroughput:
		return fmt.Sprintf("%.1f tokens/s", v)
	case MetricLatency:
		return fmt.Sprintf("%.0f ms", v)
	case MetricCost:
		return fmt.Sprintf("$%.3f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// opt is an optional figure with format f, or a dash for not measured.
func opt(v *float64, f string) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf(f, *v)
}

// quality is the mean score with its interval.
func quality(r store.LeaderboardRow) string {
	if r.Quality == nil {
		return "—"
	}
	if r.QualityLo != nil && r.QualityHi != nil {
		return fmt.Sprintf("%.3f [%.3f, %.3f]", *r.Quality, *r.QualityLo, *r.QualityHi)
	}
	return fmt.Sprintf("%.3f", *r.Quality)
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

func valueText(r store.LeaderboardRow, m Metric) string {
	v := Value(r, m)
	if v == nil {
		return "—"
	}
	return format(*v, m)
}

func metricWord(metric string) string {
	switch metric {
	case store.RegressionLatency:
		return "p95 latency"
	case store.RegressionThroughput:
		return "throughput"
	}
	return metric
}

func sortWord(s string) string {
	switch s {
	case store.SortQuality:
		return "quality (best first)"
	case store.SortSpeed:
		return "speed (fastest first)"
	case store.SortLatency:
		return "p95 latency (lowest first)"
	case store.SortCost:
		return "cost (cheapest first)"
	}
	return "date (newest first)"
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
