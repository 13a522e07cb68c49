package fleet

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/export"
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
	TotalCost   *float64 `json:"total_cost"`
	CostUnknown int      `json:"cost_unknown_runs"`
	// Summary is the fleet document's summary metrics.
	Summary      Summary         `json:"summary"`
	Providers    []ProviderRow   `json:"providers"`
	Repositories []RepositoryRow `json:"repositories"`
	Categories   []CategoryRow   `json:"categories"`
	Rows         []Row           `json:"rows"`
	// Failures are the runs that failed or were cancelled, and why: the
	// others carried on (a fleet continues on failure).
	Failures []Failure `json:"failures"`
}

// Summary is the fleet's summary as the fleet document lists its metrics
// (docs/fleets.md#the-report). A test is one request: an item (or one of
// its samples) sent to a target. Succeeded, failed (timeouts apart) and
// timed out count the requests sent; skipped the requests a finished run
// never sent (it failed, was cancelled or hit a limit), pending those an
// active run has still to send. Durations are the end-to-end latencies of
// the successful requests, null when there is none.
type Summary struct {
	TotalRepositories int     `json:"total_repositories"`
	TotalTests        int     `json:"total_tests"`
	TotalSucceeded    int     `json:"total_succeeded"`
	TotalFailed       int     `json:"total_failed"`
	TotalTimeout      int     `json:"total_timeout"`
	TotalSkipped      int     `json:"total_skipped"`
	TotalPending      int     `json:"total_pending"`
	SuccessRate       float64 `json:"success_rate"`
	Durations
	TotalTokens int64 `json:"total_tokens"`
	// AvgTokensPerRequest is over the requests sent.
	AvgTokensPerRequest   *float64 `json:"avg_tokens_per_request"`
	TotalCost             *float64 `json:"total_cost"`
	AvgCostPerRepository  *float64 `json:"avg_cost_per_repository"`
	AvgTestsPerRepository float64  `json:"avg_tests_per_repository"`
	// TotalDurationMs is from the first run's start to the last one's
	// end (to now's last progress while runs are active); null before any
	// run starts.
	TotalDurationMs *float64 `json:"total_duration_ms"`
}

// Durations are end-to-end latencies in ms.
type Durations struct {
	AvgDurationMs *float64 `json:"avg_duration_ms"`
	P50DurationMs *float64 `json:"p50_duration_ms"`
	P95DurationMs *float64 `json:"p95_duration_ms"`
	P99DurationMs *float64 `json:"p99_duration_ms"`
	MinDurationMs *float64 `json:"min_duration_ms"`
	MaxDurationMs *float64 `json:"max_duration_ms"`
}

func durationsOf(d store.FleetDurations) Durations {
	return Durations{AvgDurationMs: d.Mean, P50DurationMs: d.P50, P95DurationMs: d.P95, P99DurationMs: d.P99, MinDurationMs: d.Min, MaxDurationMs: d.Max}
}

// tests are the request counts of a run, a repository, a provider or the
// fleet.
type tests struct {
	Tests     int `json:"total_tests"`
	Succeeded int `json:"total_succeeded"`
	Failed    int `json:"total_failed"`
	Timeout   int `json:"total_timeout"`
	Skipped   int `json:"total_skipped"`
	Pending   int `json:"total_pending"`
}

func (t *tests) add(o tests) {
	t.Tests += o.Tests
	t.Succeeded += o.Succeeded
	t.Failed += o.Failed
	t.Timeout += o.Timeout
	t.Skipped += o.Skipped
	t.Pending += o.Pending
}

func (t tests) sent() int { return t.Succeeded + t.Failed + t.Timeout }

// RepositoryRow sums the runs of one repository's scenarios ("" for
// scenarios outside any).
type RepositoryRow struct {
	Repository string `json:"repository"`
	Scenarios  int    `json:"scenarios"`
	Runs       int    `json:"runs"`
	tests
	SuccessRate float64 `json:"success_rate"`
	Durations
	TotalTokens int64    `json:"total_tokens"`
	Cost        *float64 `json:"cost"`
}

// Failure is a run that did not complete, with its error.
type Failure struct {
	FleetRunID string `json:"fleet_run_id"`
	Repository string `json:"repository,omitempty"`
	Scenario   string `json:"scenario"`
	Target     string `json:"target"`
	State      string `json:"state"`
	Error      string `json:"error"`
}

// ProviderRow sums the runs of one runtime (a remote provider's runs are
// those of the runtime named after it). SuccessRate is completed runs /
// runs; TestSuccessRate succeeded tests / tests.
type ProviderRow struct {
	Provider        string  `json:"provider"`
	RepositoryCount int     `json:"repository_count"`
	Runs            int     `json:"runs"`
	Completed       int     `json:"completed"`
	SuccessRate     float64 `json:"success_rate"`
	tests
	TestSuccessRate float64  `json:"test_success_rate"`
	Requests        int      `json:"requests"`
	OK              int      `json:"ok"`
	OutputTokens    int64    `json:"output_tokens"`
	TotalTokens     int64    `json:"total_tokens"`
	Cost            *float64 `json:"cost"`
	repos           map[string]bool
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
	Repository  string `json:"repository"`
	Scenario    string `json:"scenario"`
	// Provider is the remote provider of a "provider:model" target.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model"`
	Runtime  string `json:"runtime"`
	Hardware string `json:"hardware"`
	State    string `json:"state"`
	// Error is why a run failed.
	Error string `json:"error,omitempty"`
	tests
	PromptTokens int64 `json:"prompt_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// Quality is the mean item score (null until scored, or unscored).
	Quality *float64 `json:"quality"`
	// OutputTokensPerS is the output tokens/s the run's conclusions test
	// (the steady window's mean where one was kept,
	// docs/metrics.md#throughput-output-tokenss-and-requestss), the speed
	// CostPer1M is priced over; RequestsPerS is over the measured window.
	OutputTokensPerS *float64 `json:"output_tokens_per_s"`
	RequestsPerS     *float64 `json:"requests_per_s"`
	TTFTP50Ms        *float64 `json:"ttft_p50_ms"`
	E2EP50Ms         *float64 `json:"e2e_p50_ms"`
	E2EP95Ms         *float64 `json:"e2e_p95_ms"`
	// Cost is, for a remote provider's run created under its price, the
	// input tokens × the input price + the output tokens × the output
	// price per 1M (warm-up included: it is billed); else the price per
	// hour of the run's replica (conclude.PricePerHour: a tensor-parallel
	// replica pays its share of the profile) × the measured hours, in
	// USD. CostPer1M is the cost
	// per 1M output tokens: for hardware, price / (output tokens/s × 3600)
	// × 10⁶, as on benchmark pages. Null without a price or before the
	// run finishes.
	Cost      *float64 `json:"cost"`
	CostPer1M *float64 `json:"cost_per_1m_tokens"`
	// PriceInputPer1M and PriceOutputPer1M are the provider's price the
	// run was created under (null for hardware).
	PriceInputPer1M  *float64 `json:"price_input_per_1m"`
	PriceOutputPer1M *float64 `json:"price_output_per_1m"`
}

// BuildReport sums up a fleet from its runs, its results per run, its
// latency distributions and its category figures.
func BuildReport(f store.Fleet, cats []store.FleetCategory, results []store.FleetRunResults, durations []store.FleetDurations) Report {
	rep := Report{FleetID: f.ID, Name: f.Name, SubmittedAt: f.SubmittedAt, Runs: len(f.Runs),
		Providers: []ProviderRow{}, Repositories: []RepositoryRow{}, Categories: []CategoryRow{}, Rows: []Row{}, Failures: []Failure{}}
	perRun := map[int64]store.FleetRunResults{}
	for _, r := range results {
		perRun[r.RunID] = r
	}
	b := reportBuilder{rep: &rep, byProvider: map[string]int{}, byRepo: map[string]int{}, scenarios: map[string]map[string]bool{}}
	for _, r := range f.Runs {
		row := buildRow(r, perRun[r.ID])
		b.count(r, row)
		b.addToProvider(r, row)
		b.addToRepository(r, row)
		rep.Rows = append(rep.Rows, row)
	}
	b.rates()
	for _, d := range durations {
		if d.All {
			rep.Summary.Durations = durationsOf(d)
		} else if j, ok := b.byRepo[d.Repository]; ok {
			rep.Repositories[j].Durations = durationsOf(d)
		}
	}
	for _, c := range cats {
		rep.Categories = append(rep.Categories, CategoryRow{Category: c.Category, Requests: c.Requests, OK: c.OK,
			SuccessRate: share(c.OK, c.Requests), Scored: c.Scored, Quality: c.MeanScore, MeanE2EMs: c.MeanE2EMs})
	}
	b.summarise()
	return rep
}

// reportBuilder adds a fleet's runs up into its report, one run at a
// time, then works out the rates and the summary.
type reportBuilder struct {
	rep        *Report
	byProvider map[string]int // index in rep.Providers
	byRepo     map[string]int // index in rep.Repositories
	scenarios  map[string]map[string]bool
	first      *time.Time // the earliest start
	last       *time.Time // the latest finish
	all        tests
	tokens     int64
}

// count adds the run to the fleet's totals: its state, failure, cost,
// tests, tokens and time span.
func (b *reportBuilder) count(r store.FleetRun, row Row) {
	rep := b.rep
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
	if r.State == "failed" || r.State == "cancelled" {
		rep.Failures = append(rep.Failures, Failure{FleetRunID: r.FleetRunID, Repository: r.Repository, Scenario: r.Scenario,
			Target: targetOf(row), State: r.State, Error: r.Error})
	}
	finished := r.State == "completed" || r.State == "failed" || r.State == "cancelled"
	if finished && row.Cost == nil {
		rep.CostUnknown++
	}
	rep.TotalCost = addCost(rep.TotalCost, row.Cost)
	b.all.add(row.tests)
	b.tokens += row.PromptTokens + row.OutputTokens
	if r.StartedAt != nil && (b.first == nil || r.StartedAt.Before(*b.first)) {
		b.first = r.StartedAt
	}
	if r.FinishedAt != nil && (b.last == nil || r.FinishedAt.After(*b.last)) {
		b.last = r.FinishedAt
	}
}

// addToProvider adds the run to its provider's row, made on its first run.
func (b *reportBuilder) addToProvider(r store.FleetRun, row Row) {
	i, ok := b.byProvider[r.Runtime]
	if !ok {
		i = len(b.rep.Providers)
		b.byProvider[r.Runtime] = i
		b.rep.Providers = append(b.rep.Providers, ProviderRow{Provider: r.Runtime, repos: map[string]bool{}})
	}
	p := &b.rep.Providers[i]
	p.Runs++
	if r.State == "completed" {
		p.Completed++
	}
	p.repos[r.Repository] = true
	p.tests.add(row.tests)
	p.Requests += r.Completed
	p.OK += r.Completed - r.Errors
	p.OutputTokens += r.OutputTokens
	p.TotalTokens += row.PromptTokens + row.OutputTokens
	p.Cost = addCost(p.Cost, row.Cost)
}

// addToRepository adds the run to its repository's row, made on its
// first run.
func (b *reportBuilder) addToRepository(r store.FleetRun, row Row) {
	j, ok := b.byRepo[r.Repository]
	if !ok {
		j = len(b.rep.Repositories)
		b.byRepo[r.Repository] = j
		b.rep.Repositories = append(b.rep.Repositories, RepositoryRow{Repository: r.Repository})
		b.scenarios[r.Repository] = map[string]bool{}
	}
	g := &b.rep.Repositories[j]
	g.Runs++
	b.scenarios[r.Repository][r.Scenario] = true
	g.tests.add(row.tests)
	g.TotalTokens += row.PromptTokens + row.OutputTokens
	g.Cost = addCost(g.Cost, row.Cost)
}

// rates fills the success rates of the fleet, its providers and its
// repositories once every run is counted.
func (b *reportBuilder) rates() {
	rep := b.rep
	rep.SuccessRate = share(rep.Completed, rep.Runs)
	for i := range rep.Providers {
		p := &rep.Providers[i]
		p.SuccessRate, p.TestSuccessRate, p.RepositoryCount = share(p.Completed, p.Runs), share(p.Succeeded, p.Tests), len(p.repos)
	}
	for i := range rep.Repositories {
		g := &rep.Repositories[i]
		g.Scenarios, g.SuccessRate = len(b.scenarios[g.Repository]), share(g.Succeeded, g.Tests)
	}
}

// summarise fills the summary's totals and averages; the duration runs
// from the first start to the last finish, or to now while runs are
// active.
func (b *reportBuilder) summarise() {
	rep, all := b.rep, b.all
	s := &rep.Summary
	s.TotalRepositories = len(rep.Repositories)
	s.TotalTests, s.TotalSucceeded, s.TotalFailed, s.TotalTimeout, s.TotalSkipped, s.TotalPending =
		all.Tests, all.Succeeded, all.Failed, all.Timeout, all.Skipped, all.Pending
	s.SuccessRate = share(all.Succeeded, all.Tests)
	s.TotalTokens = b.tokens
	if n := all.sent(); n > 0 {
		s.AvgTokensPerRequest = ptr(float64(b.tokens) / float64(n))
	}
	s.TotalCost = rep.TotalCost
	if rep.TotalCost != nil && s.TotalRepositories > 0 {
		s.AvgCostPerRepository = ptr(*rep.TotalCost / float64(s.TotalRepositories))
	}
	if s.TotalRepositories > 0 {
		s.AvgTestsPerRepository = float64(all.Tests) / float64(s.TotalRepositories)
	}
	if b.first != nil {
		end := time.Now()
		if rep.Active == 0 && b.last != nil {
			end = *b.last
		}
		s.TotalDurationMs = ptr(float64(end.Sub(*b.first).Microseconds()) / 1000)
	}
}

// buildRow is a run's row: its figures, its tests and its cost.
func buildRow(r store.FleetRun, res store.FleetRunResults) Row {
	row := Row{FleetRunID: r.FleetRunID, RunID: r.ID, BenchmarkID: r.BenchmarkID, Repository: r.Repository, Scenario: r.Scenario,
		Model: r.ModelName, Runtime: r.Runtime, Hardware: r.HardwareProfile, State: r.State, Quality: r.Quality,
		Provider: r.Provider, PromptTokens: res.PromptTokens, OutputTokens: res.OutputTokens}
	if r.State == "failed" || r.State == "cancelled" {
		row.Error = r.Error
	}
	row.Succeeded, row.Failed, row.Timeout = res.Succeeded, res.Failed, res.Timeout
	row.Tests = max(r.Total, row.sent())
	switch r.State {
	case "completed", "failed", "cancelled":
		row.Skipped = row.Tests - row.sent()
	default:
		row.Pending = row.Tests - row.sent()
	}
	var s jobs.RunSummary
	if r.Summary != nil && json.Unmarshal(r.Summary, &s) == nil {
		// Output tokens/s as the run's conclusions test it and its cost per
		// 1M is priced over (conclude.ReadFigures: the steady window's mean
		// where run_stats kept one).
		row.OutputTokensPerS, row.RequestsPerS = conclude.ReadFigures(r.RunFigures).TokensPerS, ptr(s.RequestsPerS)
		if s.OK > 0 {
			row.TTFTP50Ms, row.E2EP50Ms, row.E2EP95Ms = ptr(s.TTFT.P50), ptr(s.E2E.P50), ptr(s.E2E.P95)
		}
	}
	switch {
	case r.Price != nil:
		row.PriceInputPer1M, row.PriceOutputPer1M = ptr(r.Price.InputPer1M), ptr(r.Price.OutputPer1M)
		if r.State == "completed" || r.State == "failed" || r.State == "cancelled" {
			row.Cost = ptr((float64(res.PromptTokens)*r.Price.InputPer1M + float64(res.OutputTokens)*r.Price.OutputPer1M) / 1e6)
		}
	case r.PricePerHour != nil && r.Summary != nil:
		// The replica's price, the one CostPer1M below rests on
		// (docs/benchmarks.md#tensor-parallelism-and-price): the whole
		// profile's would charge a run on one of its GPUs for all of them.
		row.Cost = ptr(*conclude.PricePerHour(r.RunFigures) * s.MeasuredSeconds / 3600)
	}
	// Per 1M output tokens a run costs what its conclusions price it at
	// (the verdict's cost), not a second computation of it.
	if row.Cost != nil {
		row.CostPer1M = conclude.RunCostPer1M(r.RunFigures)
	}
	return row
}

// targetOf is a row's target as a person reads it.
func targetOf(r Row) string {
	if r.Provider != "" {
		return r.Provider + ":" + r.Model
	}
	return r.Model + " on " + r.Runtime + " / " + r.Hardware
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

// CSV tables of a report: the fleet document's four (summary,
// repositories, providers, categories) and a line per run.
const (
	TableRuns         = "runs"
	TableSummary      = "summary"
	TableRepositories = "repositories"
	TableProviders    = "providers"
	TableCategories   = "categories"
)

// CSVTables are the report's CSV tables, in order, each with the file name
// the fleet document gives it.
var CSVTables = []struct{ Name, File string }{
	{TableSummary, "fleet-summary.csv"},
	{TableRepositories, "repositories.csv"},
	{TableProviders, "providers.csv"},
	{TableCategories, "categories.csv"},
	{TableRuns, "runs.csv"},
}

// CSVColumns are the runs table's columns: one line per scenario × target.
var CSVColumns = []string{"fleet_run_id", "run_id", "benchmark_id", "scenario", "model", "runtime", "hardware", "state",
	"quality", "output_tokens_per_s", "requests_per_s", "ttft_p50_ms", "e2e_p50_ms", "e2e_p95_ms", "cost_usd", "cost_per_1m_tokens",
	"repository", "total_tests", "total_succeeded", "total_failed", "total_timeout", "total_skipped", "prompt_tokens", "output_tokens", "error"}

// SummaryColumns are the summary table's columns (one line).
var SummaryColumns = []string{"fleet_id", "name", "total_repositories", "total_tests", "total_succeeded", "total_failed", "total_timeout",
	"total_skipped", "total_pending", "success_rate", "avg_duration_ms", "p50_duration_ms", "p95_duration_ms", "p99_duration_ms",
	"min_duration_ms", "max_duration_ms", "total_tokens", "avg_tokens_per_request", "total_cost", "avg_cost_per_repository",
	"avg_tests_per_repository", "total_duration_ms"}

// RepositoryColumns, ProviderColumns and CategoryColumns are the other
// tables' columns.
var (
	RepositoryColumns = []string{"repository", "scenarios", "runs", "total_tests", "total_succeeded", "total_failed", "total_timeout",
		"total_skipped", "success_rate", "avg_duration_ms", "p50_duration_ms", "p95_duration_ms", "p99_duration_ms", "min_duration_ms",
		"max_duration_ms", "total_tokens", "cost"}
	ProviderColumns = []string{"provider", "repository_count", "runs", "completed", "total_tests", "total_succeeded", "success_rate",
		"total_tokens", "cost"}
	CategoryColumns = []string{"category", "total_tests", "total_succeeded", "success_rate", "avg_duration_ms", "scored", "quality"}
)

func num(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

func itoa(n int) string { return strconv.Itoa(n) }

func flt(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func (d Durations) cells() []string {
	return []string{num(d.AvgDurationMs), num(d.P50DurationMs), num(d.P95DurationMs), num(d.P99DurationMs), num(d.MinDurationMs), num(d.MaxDurationMs)}
}

// WriteCSV writes one of the report's tables (CSVTables) as CSV; an
// unmeasured figure is an empty cell. Names are validated and cannot
// start a formula; a run's error comes from an agent or a runtime and is
// made formula-safe.
func (r Report) WriteCSV(w io.Writer, table string) error {
	var recs [][]string
	switch table {
	case TableRuns:
		recs = append(recs, CSVColumns)
		for _, row := range r.Rows {
			recs = append(recs, []string{row.FleetRunID, strconv.FormatInt(row.RunID, 10), strconv.FormatInt(row.BenchmarkID, 10), row.Scenario,
				row.Model, row.Runtime, row.Hardware, row.State, num(row.Quality), num(row.OutputTokensPerS), num(row.RequestsPerS),
				num(row.TTFTP50Ms), num(row.E2EP50Ms), num(row.E2EP95Ms), num(row.Cost), num(row.CostPer1M),
				row.Repository, itoa(row.Tests), itoa(row.Succeeded), itoa(row.Failed), itoa(row.Timeout), itoa(row.Skipped),
				strconv.FormatInt(row.PromptTokens, 10), strconv.FormatInt(row.OutputTokens, 10), export.FormulaSafe(row.Error)})
		}
	case TableSummary:
		s := r.Summary
		rec := []string{strconv.FormatInt(r.FleetID, 10), r.Name, itoa(s.TotalRepositories), itoa(s.TotalTests), itoa(s.TotalSucceeded),
			itoa(s.TotalFailed), itoa(s.TotalTimeout), itoa(s.TotalSkipped), itoa(s.TotalPending), flt(s.SuccessRate)}
		rec = append(rec, s.Durations.cells()...)
		rec = append(rec, strconv.FormatInt(s.TotalTokens, 10), num(s.AvgTokensPerRequest), num(s.TotalCost), num(s.AvgCostPerRepository),
			flt(s.AvgTestsPerRepository), num(s.TotalDurationMs))
		recs = [][]string{SummaryColumns, rec}
	case TableRepositories:
		recs = append(recs, RepositoryColumns)
		for _, g := range r.Repositories {
			rec := []string{g.Repository, itoa(g.Scenarios), itoa(g.Runs), itoa(g.Tests), itoa(g.Succeeded), itoa(g.Failed), itoa(g.Timeout),
				itoa(g.Skipped), flt(g.SuccessRate)}
			rec = append(rec, g.Durations.cells()...)
			recs = append(recs, append(rec, strconv.FormatInt(g.TotalTokens, 10), num(g.Cost)))
		}
	case TableProviders:
		recs = append(recs, ProviderColumns)
		for _, p := range r.Providers {
			recs = append(recs, []string{p.Provider, itoa(p.RepositoryCount), itoa(p.Runs), itoa(p.Completed), itoa(p.Tests), itoa(p.Succeeded),
				flt(p.TestSuccessRate), strconv.FormatInt(p.TotalTokens, 10), num(p.Cost)})
		}
	case TableCategories:
		recs = append(recs, CategoryColumns)
		for _, c := range r.Categories {
			recs = append(recs, []string{export.FormulaSafe(c.Category), itoa(c.Requests), itoa(c.OK), flt(c.SuccessRate), num(c.MeanE2EMs),
				itoa(c.Scored), num(c.Quality)})
		}
	default:
		return fmt.Errorf("no table %q", table)
	}
	cw := csv.NewWriter(w)
	if err := cw.WriteAll(recs); err != nil {
		return err
	}
	return cw.Error()
}
