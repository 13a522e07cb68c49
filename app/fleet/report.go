package fleet

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Report is a fleet's outcome: how many runs completed, what they cost,
// by provider (runtime) and by item category, and a row per scenario ×
// target. A figure that was not measured is null, never zero.
type Report struct {
	FleetID     int64     `json:"fleet_id"`
	Name        string    `json:"name"`
	SubmittedAt time.Time `json:"submitted_at"`
	Runs        int       `json:"runs"`
	Completed   int       `json:"completed"`
	Failed      int       `json:"failed"`
	Cancelled   int       `json:"cancelled"`
	Active      int       `json:"active"`
	// SuccessRate is completed runs / runs.
	SuccessRate float64 `json:"success_rate"`
	// TotalCost is the sum of the runs' costs in USD (see Row.Cost); null
	// when no run has one. CostUnknown counts the finished runs whose
	// hardware has no price.
	TotalCost   *float64      `json:"total_cost"`
	CostUnknown int           `json:"cost_unknown_runs"`
	Providers   []ProviderRow `json:"providers"`
	Categories  []CategoryRow `json:"categories"`
	Rows        []Row         `json:"rows"`
}

// ProviderRow sums the runs of one runtime (a remote provider's runs are
// those of its runtime, "openai").
type ProviderRow struct {
	Provider     string   `json:"provider"`
	Runs         int      `json:"runs"`
	Completed    int      `json:"completed"`
	SuccessRate  float64  `json:"success_rate"`
	Requests     int      `json:"requests"`
	OK           int      `json:"ok"`
	OutputTokens int64    `json:"output_tokens"`
	Cost         *float64 `json:"cost"`
}

// CategoryRow sums the fleet's answers to the items of one category
// ("" for items without one).
type CategoryRow struct {
	Category    string   `json:"category"`
	Requests    int      `json:"requests"`
	OK          int      `json:"ok"`
	SuccessRate float64  `json:"success_rate"`
	Scored      int      `json:"scored"`
	Quality     *float64 `json:"quality"`
	MeanE2EMs   *float64 `json:"mean_e2e_ms"`
}

// Row is one scenario × target.
type Row struct {
	FleetRunID  string `json:"fleet_run_id"`
	RunID       int64  `json:"run_id"`
	BenchmarkID int64  `json:"benchmark_id"`
	Scenario    string `json:"scenario"`
	Model       string `json:"model"`
	Runtime     string `json:"runtime"`
	Hardware    string `json:"hardware"`
	State       string `json:"state"`
	// Quality is the mean item score (null until scored, or unscored).
	Quality *float64 `json:"quality"`
	// OutputTokensPerS and RequestsPerS are over the measured window.
	OutputTokensPerS *float64 `json:"output_tokens_per_s"`
	RequestsPerS     *float64 `json:"requests_per_s"`
	TTFTP50Ms        *float64 `json:"ttft_p50_ms"`
	E2EP50Ms         *float64 `json:"e2e_p50_ms"`
	E2EP95Ms         *float64 `json:"e2e_p95_ms"`
	// Cost is the hardware's price per hour × the measured hours, in USD;
	// CostPer1M the same price / (output tokens/s × 3600) × 10⁶, as on
	// benchmark pages. Null without a price or before the run finishes.
	Cost      *float64 `json:"cost"`
	CostPer1M *float64 `json:"cost_per_1m_tokens"`
}

// BuildReport sums up a fleet from its runs and its category figures.
func BuildReport(f store.Fleet, cats []store.FleetCategory) Report {
	rep := Report{FleetID: f.ID, Name: f.Name, SubmittedAt: f.SubmittedAt, Runs: len(f.Runs),
		Providers: []ProviderRow{}, Categories: []CategoryRow{}, Rows: []Row{}}
	byProvider := map[string]int{}
	for _, r := range f.Runs {
		row := Row{FleetRunID: r.FleetRunID, RunID: r.ID, BenchmarkID: r.BenchmarkID, Scenario: r.Scenario, Model: r.ModelName,
			Runtime: r.Runtime, Hardware: r.HardwareProfile, State: r.State, Quality: r.Quality}
		var s jobs.RunSummary
		if r.Summary != nil && json.Unmarshal(r.Summary, &s) == nil {
			row.OutputTokensPerS, row.RequestsPerS = ptr(s.OutputTokensPerS), ptr(s.RequestsPerS)
			if s.OK > 0 {
				row.TTFTP50Ms, row.E2EP50Ms, row.E2EP95Ms = ptr(s.TTFT.P50), ptr(s.E2E.P50), ptr(s.E2E.P95)
			}
			if r.PricePerHour != nil {
				row.Cost = ptr(*r.PricePerHour * s.MeasuredSeconds / 3600)
				if c, ok := s.CostPer1M(*r.PricePerHour); ok {
					row.CostPer1M = ptr(c)
				}
			}
		}
		switch r.State {
		case "completed":
			rep.Completed++
		case "failed":
			rep.Failed++
		case "cancelled":
			rep.Cancelled++
		default:
			rep.Active++
		}
		finished := r.State == "completed" || r.State == "failed" || r.State == "cancelled"
		if finished && row.Cost == nil && r.PricePerHour == nil {
			rep.CostUnknown++
		}
		rep.TotalCost = addCost(rep.TotalCost, row.Cost)

		i, ok := byProvider[r.Runtime]
		if !ok {
			i = len(rep.Providers)
			byProvider[r.Runtime] = i
			rep.Providers = append(rep.Providers, ProviderRow{Provider: r.Runtime})
		}
		p := &rep.Providers[i]
		p.Runs++
		if r.State == "completed" {
			p.Completed++
		}
		p.Requests += r.Completed
		p.OK += r.Completed - r.Errors
		p.OutputTokens += r.OutputTokens
		p.Cost = addCost(p.Cost, row.Cost)
		rep.Rows = append(rep.Rows, row)
	}
	rep.SuccessRate = share(rep.Completed, rep.Runs)
	for i := range rep.Providers {
		rep.Providers[i].SuccessRate = share(rep.Providers[i].Completed, rep.Providers[i].Runs)
	}
	for _, c := range cats {
		rep.Categories = append(rep.Categories, CategoryRow{Category: c.Category, Requests: c.Requests, OK: c.OK,
			SuccessRate: share(c.OK, c.Requests), Scored: c.Scored, Quality: c.MeanScore, MeanE2EMs: c.MeanE2EMs})
	}
	return rep
}

func ptr(v float64) *float64 { return &v }

func addCost(sum, c *float64) *float64 {
	switch {
	case c == nil:
		return sum
	case sum == nil:
		return ptr(*c)
	}
	return ptr(*sum + *c)
}

func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// CSVColumns are the report's CSV columns: one line per scenario × target.
var CSVColumns = []string{"fleet_run_id", "run_id", "benchmark_id", "scenario", "model", "runtime", "hardware", "state",
	"quality", "output_tokens_per_s", "requests_per_s", "ttft_p50_ms", "e2e_p50_ms", "e2e_p95_ms", "cost_usd", "cost_per_1m_tokens"}

// WriteCSV writes the report's rows as CSV; an unmeasured figure is an
// empty cell. Every text cell comes from a validated name (fleet, scenario,
// model, runtime, hardware), none of which can start a spreadsheet formula.
func (r Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVColumns); err != nil {
		return err
	}
	num := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'g', -1, 64)
	}
	for _, row := range r.Rows {
		rec := []string{row.FleetRunID, strconv.FormatInt(row.RunID, 10), strconv.FormatInt(row.BenchmarkID, 10), row.Scenario,
			row.Model, row.Runtime, row.Hardware, row.State, num(row.Quality), num(row.OutputTokensPerS), num(row.RequestsPerS),
			num(row.TTFTP50Ms), num(row.E2EP50Ms), num(row.E2EP95Ms), num(row.Cost), num(row.CostPer1M)}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
