package fleet

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"time"
)

//go:embed templates/dashboard.html
var dashboardFS embed.FS

// dashboard is the fleet report as one self-contained HTML file: inline
// CSS and SVG charts, no script and nothing fetched, so it opens offline
// from an artifact directory. html/template escapes every value.
var dashboard = template.Must(template.New("dashboard.html").Funcs(template.FuncMap{
	"pct":    func(v float64) string { return fmt.Sprintf("%.1f %%", 100*v) },
	"ms":     func(v *float64) string { return orDash(v, "%.1f") },
	"money":  func(v *float64) string { return orDash(v, "$%.4f") },
	"score":  func(v *float64) string { return orDash(v, "%.3f") },
	"repo":   func(s string) string { return cmpOr(s, "(none)") },
	"target": targetOf,
}).ParseFS(dashboardFS, "templates/dashboard.html"))

func orDash(v *float64, format string) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf(format, *v)
}

func cmpOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// Metric is one summary figure as shown: its key in the report, a label
// and its value formatted ("–" when unmeasured).
type Metric struct{ Key, Label, Value string }

// Metrics are the summary's figures in the fleet document's order.
func (s Summary) Metrics() []Metric {
	num := func(v *float64, f string) string { return orDash(v, f) }
	return []Metric{
		{"total_repositories", "repositories", fmt.Sprint(s.TotalRepositories)},
		{"total_tests", "tests", fmt.Sprint(s.TotalTests)},
		{"total_succeeded", "succeeded", fmt.Sprint(s.TotalSucceeded)},
		{"total_failed", "failed", fmt.Sprint(s.TotalFailed)},
		{"total_timeout", "timed out", fmt.Sprint(s.TotalTimeout)},
		{"total_skipped", "skipped", fmt.Sprint(s.TotalSkipped)},
		{"total_pending", "pending", fmt.Sprint(s.TotalPending)},
		{"success_rate", "success rate", fmt.Sprintf("%.1f %%", 100*s.SuccessRate)},
		{"avg_duration_ms", "mean duration (ms)", num(s.AvgDurationMs, "%.1f")},
		{"p50_duration_ms", "p50 duration (ms)", num(s.P50DurationMs, "%.1f")},
		{"p95_duration_ms", "p95 duration (ms)", num(s.P95DurationMs, "%.1f")},
		{"p99_duration_ms", "p99 duration (ms)", num(s.P99DurationMs, "%.1f")},
		{"min_duration_ms", "min duration (ms)", num(s.MinDurationMs, "%.1f")},
		{"max_duration_ms", "max duration (ms)", num(s.MaxDurationMs, "%.1f")},
		{"total_tokens", "tokens", fmt.Sprint(s.TotalTokens)},
		{"avg_tokens_per_request", "tokens per request", num(s.AvgTokensPerRequest, "%.1f")},
		{"total_cost", "total cost", num(s.TotalCost, "$%.4f")},
		{"avg_cost_per_repository", "cost per repository", num(s.AvgCostPerRepository, "$%.4f")},
		{"avg_tests_per_repository", "tests per repository", fmt.Sprintf("%.1f", s.AvgTestsPerRepository)},
		{"total_duration_ms", "execution time (s)", orDash(scale(s.TotalDurationMs, 1e-3), "%.1f")},
	}
}

// bar is one row of a horizontal bar chart, of parts laid end to end.
type bar struct {
	Y     int
	Label string
	Parts []barPart
	EndX  float64
	Note  string
}

type barPart struct {
	X, W        float64
	Y           int
	Fill, Title string
}

type chart struct {
	Height int
	Bars   []bar
}

// Chart geometry (the viewBox is 900 wide): labels on the left, bars from
// barX, at most barW long.
const (
	barX    = 260.0
	barW    = 520.0
	barStep = 26
)

// newChart lays out bars, one per values row, each value a part scaled so
// that max fills barW.
func newChart(labels []string, values [][]float64, fills, names []string, max float64, note func(i int) string) chart {
	c := chart{Height: max1(len(labels)*barStep, barStep)}
	for i, label := range labels {
		b := bar{Y: i * barStep, Label: clipLabel(label), Note: note(i)}
		x := barX
		for j, v := range values[i] {
			w := 0.0
			if max > 0 && v > 0 && !math.IsInf(v, 0) {
				w = v / max * barW
			}
			b.Parts = append(b.Parts, barPart{X: x, W: w, Y: b.Y, Fill: fills[j], Title: fmt.Sprintf("%s: %g", names[j], v)})
			x += w
		}
		b.EndX = x + 6
		c.Bars = append(c.Bars, b)
	}
	return c
}

func max1(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func clipLabel(s string) string {
	r := []rune(s)
	if len(r) > 38 {
		return string(r[:37]) + "…"
	}
	return s
}

// WriteHTML writes the report as a self-contained HTML dashboard.
func (r Report) WriteHTML(w io.Writer, generated time.Time) error {
	var labels []string
	var values [][]float64
	most := 0.0
	for _, g := range r.Repositories {
		labels = append(labels, cmpOr(g.Repository, "(none)"))
		values = append(values, []float64{float64(g.Succeeded), float64(g.Failed), float64(g.Timeout), float64(g.Skipped), float64(g.Pending)})
		most = math.Max(most, float64(g.Tests))
	}
	repos := newChart(labels, values, []string{"#2da44e", "#cf222e", "#d4a72c", "#afb8c1", "#e6eaef"},
		[]string{"succeeded", "failed", "timeout", "skipped", "pending"}, most,
		func(i int) string { return fmt.Sprintf("%d tests", r.Repositories[i].Tests) })

	labels, values = nil, nil
	for _, p := range r.Providers {
		labels = append(labels, p.Provider)
		values = append(values, []float64{100 * p.TestSuccessRate})
	}
	providers := newChart(labels, values, []string{"#0969da"}, []string{"success rate %"}, 100,
		func(i int) string { return fmt.Sprintf("%.1f %%", 100*r.Providers[i].TestSuccessRate) })

	labels, values = nil, nil
	most = 0
	for _, row := range r.Rows {
		p50, p95 := deref(row.E2EP50Ms), deref(row.E2EP95Ms)
		labels = append(labels, row.Scenario+" · "+targetOf(row))
		values = append(values, []float64{p50, math.Max(p95-p50, 0)})
		most = math.Max(most, p95)
	}
	latency := newChart(labels, values, []string{"#8250df", "#c297ff"}, []string{"p50 ms", "p95 − p50 ms"}, most,
		func(i int) string {
			return fmt.Sprintf("p50 %s · p95 %s ms", orDash(r.Rows[i].E2EP50Ms, "%.0f"), orDash(r.Rows[i].E2EP95Ms, "%.0f"))
		})

	return dashboard.Execute(w, struct {
		R                                      Report
		Generated                              string
		Tiles                                  []Metric
		RepoChart, ProviderChart, LatencyChart chart
	}{r, generated.UTC().Format("2006-01-02 15:04:05 UTC"), r.Summary.Metrics(), repos, providers, latency})
}

func deref(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

func scale(v *float64, k float64) *float64 {
	if v == nil {
		return nil
	}
	return ptr(*v * k)
}
