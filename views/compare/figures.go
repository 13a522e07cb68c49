package compare

import (
	"context"
	"fmt"
	"strings"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/charts"
	"github.com/ruckus/ruckus/views/said"
)

// Figures are one run's comparable numbers (conclude.Figures) with the
// grid's carbon intensity its emissions are estimated at.
type Figures struct {
	conclude.Figures
	// GridCO2 is g CO₂e per kWh for the estimated emissions.
	GridCO2 float64
}

// NewFigures reads a run's stored summaries (conclude.ReadFigures).
func NewFigures(r store.RunFigures) Figures {
	return Figures{Figures: conclude.ReadFigures(r)}
}

// Metric is one row of the comparison table.
type Metric struct {
	Name string
	// Key is the catalogue's message for the name; "" when the name is
	// not language (TTFT p95 ms).
	Key string
	// LowerBetter says which way a delta is an improvement.
	LowerBetter bool
	Format      string
	Value       func(Figures) *float64
	// Tested is the criterion whose test decides whether a delta is
	// better or worse ("" for a figure no conclusion tests: its delta is
	// shown uncoloured); Quality rows need the same scorer identity, the
	// others the same load (docs/concepts.md#comparability-and-noise).
	Tested  conclude.Criterion
	Quality bool
}

func ptr(v float64) *float64 { return &v }

// Metrics are the table's rows, in order.
var Metrics = []Metric{
	{"Quality (mean score)", "compare.metric.quality", false, "%.3f", func(f Figures) *float64 { return f.Quality }, conclude.Quality, true},
	{"TTFT p50 ms", "", true, "%.1f", func(f Figures) *float64 { return sumv(f, f.TTFT.P50) }, "", false},
	{"TTFT p95 ms", "", true, "%.1f", func(f Figures) *float64 { return sumv(f, f.TTFT.P95) }, "", false},
	{"TTFT p99 ms", "", true, "%.1f", func(f Figures) *float64 { return sumv(f, f.TTFT.P99) }, "", false},
	{"TPOT p50 ms", "", true, "%.2f", func(f Figures) *float64 { return sumv(f, f.TPOT.P50) }, "", false},
	{"TPOT p95 ms", "", true, "%.2f", func(f Figures) *float64 { return sumv(f, f.TPOT.P95) }, "", false},
	{"TPOT p99 ms", "", true, "%.2f", func(f Figures) *float64 { return sumv(f, f.TPOT.P99) }, "", false},
	{"ITL p50 ms", "", true, "%.2f", func(f Figures) *float64 { return itlv(f, f.ITL.P50) }, "", false},
	{"ITL p95 ms", "", true, "%.2f", func(f Figures) *float64 { return itlv(f, f.ITL.P95) }, "", false},
	{"ITL p99 ms", "", true, "%.2f", func(f Figures) *float64 { return itlv(f, f.ITL.P99) }, "", false},
	{"ITL max ms", "", true, "%.1f", func(f Figures) *float64 { return itlv(f, f.ITL.Max) }, "", false},
	{"E2E p50 ms", "", true, "%.1f", func(f Figures) *float64 { return sumv(f, f.E2E.P50) }, "", false},
	{"E2E p95 ms", "", true, "%.1f", func(f Figures) *float64 { return sumv(f, f.E2E.P95) }, conclude.Latency, false},
	{"E2E p99 ms", "", true, "%.1f", func(f Figures) *float64 { return sumv(f, f.E2E.P99) }, "", false},
	{"Output tokens/s", "compare.metric.output_tps", false, "%.1f", func(f Figures) *float64 { return f.TokensPerS }, conclude.Speed, false},
	{"Requests/s", "compare.metric.rps", false, "%.2f", func(f Figures) *float64 { return f.RequestsPerS }, "", false},
	{"Goodput req/s", "compare.metric.goodput", false, "%.2f", func(f Figures) *float64 { return f.Goodput }, "", false},
	{"Errors", "compare.metric.errors", true, "%.0f", func(f Figures) *float64 { return ptr(float64(f.Errors)) }, "", false},
	{"Peak GPU memory GiB", "compare.metric.gpu_mem", true, "%.1f", func(f Figures) *float64 { return f.PeakGPUGiB }, "", false},
	{"Energy J/token", "compare.metric.energy_j", true, "%.3f", func(f Figures) *float64 { return f.JPerToken }, "", false},
	{"Energy kWh", "compare.metric.energy_kwh", true, "%.4f", func(f Figures) *float64 {
		if f.EnergyJ == nil {
			return nil
		}
		return ptr(*f.EnergyJ / 3.6e6)
	}, "", false},
	{"CO₂e g (estimated)", "compare.metric.co2", true, "%.1f", func(f Figures) *float64 {
		if f.EnergyJ == nil {
			return nil
		}
		return ptr(*f.EnergyJ / 3.6e6 * f.GridCO2)
	}, "", false},
	{"Cost per 1M output tokens (USD)", "compare.metric.cost", true, "%.3f", func(f Figures) *float64 { return f.CostPer1M }, conclude.Cost, false},
}

func sumv(f Figures, v float64) *float64 {
	if !f.HasSummary {
		return nil
	}
	return &v
}

func itlv(f Figures, v float64) *float64 {
	if !f.ITLMeasured {
		return nil
	}
	return &v
}

// Label is the metric's name in the reader's language.
func (m Metric) Label(ctx context.Context) string {
	if m.Key == "" {
		return m.Name
	}
	return i18n.T(ctx, m.Key)
}

// Cell is a value and its change against the baseline, in the reader's
// language, with the class that colours it. claims are the run's margins
// against the baseline (d.Claims); whether a delta is shown and coloured
// is the engine's (conclude.FigureDelta): not where the claims call the
// runs not comparable, better or worse only where the metric's test
// establishes it, plain ("delta-untested") elsewhere.
func (m Metric) Cell(ctx context.Context, f, base Figures, isBase bool, claims []conclude.Margin) (string, string, string) {
	v := m.Value(f)
	if v == nil {
		return i18n.T(ctx, "compare.not_measured"), "", ""
	}
	text := said.DecimalSign(ctx, fmt.Sprintf(m.Format, *v))
	if isBase {
		return text, "", ""
	}
	d := conclude.FigureDelta(m.Tested, m.Quality, v, m.Value(base), claims)
	switch {
	case !d.Shown:
		return text, "", ""
	case d.Flat:
		return text, "±0%", ""
	}
	class := map[conclude.Shade]string{conclude.Untested: "delta-untested", conclude.Better: "delta-better", conclude.Worse: "delta-worse"}[d.Shade]
	return text, said.DecimalSign(ctx, fmt.Sprintf("%+.1f%%", d.Pct)), class
}

// Charts places the runs on quality vs cost and TTFT p95 vs throughput;
// quality only where it is under scorer identity key, the one the claims
// compare (a mean under another scorer is on another scale).
func Charts(ctx context.Context, fs []Figures, key string) []charts.Chart {
	runs := i18n.T(ctx, "compare.chart_runs")
	qc := charts.Series{Name: runs, Dots: true}
	tt := charts.Series{Name: runs, Dots: true}
	for _, f := range fs {
		name := i18n.T(ctx, "compare.chart_run", "ID", fmt.Sprint(f.Run.ID), "Model", f.Run.ModelName, "Runtime", f.Run.Runtime, "Hardware", f.Run.HardwareProfile)
		if f.Quality != nil && f.CostPer1M != nil && f.ScorerKey == key {
			qc.Points = append(qc.Points, charts.Point{X: *f.CostPer1M, Y: *f.Quality, Label: i18n.T(ctx, "compare.chart_quality_cost_point",
				"Name", name, "Quality", said.Fixed(ctx, *f.Quality, 3), "Cost", said.Fixed(ctx, *f.CostPer1M, 3))})
		}
		if f.HasSummary && f.TokensPerS != nil {
			tt.Points = append(tt.Points, charts.Point{X: *f.TokensPerS, Y: f.TTFT.P95, Label: i18n.T(ctx, "compare.chart_ttft_point",
				"Name", name, "TPS", said.Fixed(ctx, *f.TokensPerS, 1), "TTFT", said.Fixed(ctx, f.TTFT.P95, 1))})
		}
	}
	return []charts.Chart{
		{ID: "quality-cost", Title: i18n.T(ctx, "compare.chart_quality_cost"), XLabel: i18n.T(ctx, "compare.chart_usd_1m"), YLabel: i18n.T(ctx, "compare.chart_quality"), Series: []charts.Series{qc}},
		{ID: "ttft-throughput", Title: i18n.T(ctx, "compare.chart_ttft_throughput"), XLabel: i18n.T(ctx, "compare.chart_output_tps"), YLabel: "TTFT p95 ms", Series: []charts.Series{tt}},
	}
}

// SweepCharts overlays the curves of the compared runs that are sweeps of
// rates or concurrencies (a length sweep's steps differ in length, not
// load, and its curves are on its run page); none when no run is.
func SweepCharts(ctx context.Context, fs []Figures) []charts.Chart {
	var runs []charts.SweepRun
	for _, f := range fs {
		if len(f.Steps) > 0 && !jobs.IsLengthSweep(f.Steps) {
			runs = append(runs, charts.SweepRun{Name: i18n.T(ctx, "compare.run_n", "ID", fmt.Sprint(f.Run.ID)), Steps: f.Steps, Saturation: f.Saturation})
		}
	}
	if len(runs) == 0 {
		return nil
	}
	return charts.SweepCharts(ctx, runs)
}

func (d Data) base() Figures {
	for _, f := range d.Runs {
		if f.Run.ID == d.Baseline {
			return f
		}
	}
	return Figures{}
}

func cellFor(it store.CompareItem, run int64) (store.CompareCell, bool) {
	for _, c := range it.Cells {
		if c.Run == run {
			return c, true
		}
	}
	return store.CompareCell{}, false
}

// pairedText is a paired comparison in a line: the difference with its
// interval, p, the test and the items it rests on.
func pairedText(ctx context.Context, p conclude.QualityDiff) string {
	args := []any{"Mean", said.Signed(ctx, p.Mean, 3), "Lo", said.Signed(ctx, p.Lo, 3), "Hi", said.Signed(ctx, p.Hi, 3), "P", said.PValue(ctx, p.P),
		"Test", said.TestName(ctx, p), "N", fmt.Sprint(p.N)}
	if n := p.OnlyA + p.OnlyB; n > 0 {
		return i18n.T(ctx, "compare.paired_left_out", append(args, "Left", fmt.Sprint(n))...)
	}
	return i18n.T(ctx, "compare.paired", args...)
}

// qualityEstablished says whether run id's quality claim against the
// baseline is significant: comparable, tested and not a tie. Without a
// paired comparison a run's header says nothing of its own about
// significance; its quality claim (Margin.ClaimSaid) says it.
func qualityEstablished(d Data, id int64) bool {
	for _, m := range d.Claims[id] {
		if m.Criterion == conclude.Quality {
			return m.Measured && m.Comparable && !m.Tie && m.P != nil
		}
	}
	return false
}

// Footprint is a run's cost and energy line in the reader's language:
// cost per 1M output tokens, joules per token, kWh and the estimated CO₂e
// at gridCO2 g/kWh; empty parts are left out.
func (f Figures) Footprint(ctx context.Context, gridCO2 float64) string {
	var parts []string
	if f.CostPer1M != nil {
		parts = append(parts, i18n.T(ctx, "compare.fp_cost", "USD", said.Fixed(ctx, *f.CostPer1M, 3)))
	} else {
		parts = append(parts, i18n.T(ctx, "compare.fp_cost_unknown", "Hardware", f.Run.HardwareProfile))
	}
	if f.JPerToken != nil {
		parts = append(parts, i18n.T(ctx, "compare.fp_joules", "J", said.Fixed(ctx, *f.JPerToken, 3)))
	}
	if f.EnergyJ != nil {
		kwh := *f.EnergyJ / 3.6e6
		parts = append(parts, said.Fixed(ctx, kwh, 4)+" kWh", i18n.T(ctx, "compare.fp_co2", "G", said.Fixed(ctx, kwh*gridCO2, 1), "Grid", said.Fixed(ctx, gridCO2, 0)))
	} else {
		parts = append(parts, i18n.T(ctx, "compare.fp_energy_none"))
	}
	if f.GPUSimulated && (f.JPerToken != nil || f.EnergyJ != nil) {
		parts = append(parts, i18n.T(ctx, "compare.fp_simulated"))
	}
	return strings.Join(parts, " · ")
}

func runB(j store.JudgeRun) int64 {
	if j.RunB == nil {
		return 0
	}
	return *j.RunB
}

// pairVerdict names the better run of an item, or says why there is none.
func pairVerdict(ctx context.Context, j store.JudgeRun, v store.Judgment) string {
	switch v.Verdict {
	case "A":
		return i18n.T(ctx, "compare.run_better", "ID", fmt.Sprint(j.RunA))
	case "B":
		return i18n.T(ctx, "compare.run_better", "ID", fmt.Sprint(runB(j)))
	case "tie":
		return i18n.T(ctx, "compare.tie")
	}
	return i18n.T(ctx, "compare.no_verdict")
}

func pairState(ctx context.Context, j store.JudgeRun) string {
	switch {
	case j.State == "judging" && (j.Judge.State == "queued" || j.Judge.State == "running"):
		return i18n.T(ctx, "compare.judge_progress", "State", runState(ctx, j.Judge.State), "Done", fmt.Sprint(j.Judge.Completed), "Total", fmt.Sprint(j.Judge.Total))
	case j.State == "judging" && j.Judge.State != "completed":
		return i18n.T(ctx, "compare.judge_no_verdicts", "State", runState(ctx, j.Judge.State))
	case j.State == "judging":
		return i18n.T(ctx, "compare.judge_reading")
	case j.State == "failed":
		return i18n.T(ctx, "compare.judge_failed", "Error", j.Error)
	}
	return i18n.T(ctx, "state.judged")
}

// runState is a run's state in the reader's language.
func runState(ctx context.Context, state string) string {
	if key, ok := stateKeys[state]; ok {
		return i18n.T(ctx, key)
	}
	return state
}

var stateKeys = map[string]string{"queued": "state.queued", "running": "state.running", "completed": "state.completed",
	"failed": "state.failed", "cancelled": "state.cancelled"}

func pairCounts(ctx context.Context, j store.JudgeRun) string {
	if j.State == "judging" {
		return "–"
	}
	s := i18n.T(ctx, "compare.counts", "ID", fmt.Sprint(j.RunA), "Wins", fmt.Sprint(j.Wins), "Ties", fmt.Sprint(j.Ties), "Losses", fmt.Sprint(j.Losses))
	if j.Inconsistent > 0 {
		s += i18n.T(ctx, "compare.counts_inconsistent", "N", fmt.Sprint(j.Inconsistent))
	}
	if j.Unparsed > 0 {
		s += i18n.T(ctx, "compare.counts_unparsed", "N", fmt.Sprint(j.Unparsed))
	}
	return s
}

func pairWinRate(ctx context.Context, j store.JudgeRun) string {
	w, h := j.WinRate(), j.WinRateHalfTies()
	if j.State == "judging" || w == nil || h == nil {
		return "–"
	}
	return i18n.T(ctx, "compare.win_rate_text", "ID", fmt.Sprint(j.RunA), "Rate", said.Fixed(ctx, 100**w, 1), "Half", said.Fixed(ctx, 100**h, 1))
}

// comparableQuality says whether run id's quality may be set against the
// baseline's (the same scorer identity); the baseline's own always is.
func comparableQuality(d Data, id int64) bool {
	return conclude.QualityComparable(d.Claims[id])
}

// NodeLine is a run's node figures in a sentence in the reader's
// language: the machine's CPU and memory, and the runtime's process tree;
// what was not measured says so.
func (f Figures) NodeLine(ctx context.Context) string {
	n := f.Node
	if n == nil {
		return i18n.T(ctx, "compare.node_none")
	}
	gib := func(b int64) string { return said.Fixed(ctx, float64(b)/(1<<30), 1) + " GiB" }
	var parts []string
	if n.MeanCPUPercent != nil && n.PeakCPUPercent != nil {
		parts = append(parts, i18n.T(ctx, "compare.node_cpu", "Mean", said.Fixed(ctx, *n.MeanCPUPercent, 0), "Peak", said.Fixed(ctx, *n.PeakCPUPercent, 0)))
	} else {
		parts = append(parts, i18n.T(ctx, "compare.node_cpu_none"))
	}
	if n.PeakMemUsed != nil && n.MemTotalBytes != nil {
		parts = append(parts, i18n.T(ctx, "compare.node_memory", "Peak", gib(*n.PeakMemUsed), "Total", gib(*n.MemTotalBytes)))
	} else {
		parts = append(parts, i18n.T(ctx, "compare.node_memory_none"))
	}
	line := i18n.T(ctx, "compare.node_line", "N", fmt.Sprint(n.Samples), "Parts", strings.Join(parts, ", "))
	switch {
	case n.ProcessKind() == "":
		return line + " " + i18n.T(ctx, "compare.node_proc_none")
	case n.ProcMeanCPUPercent != nil && n.ProcPeakRSSBytes != nil:
		who := i18n.T(ctx, "compare.node_proc_runtime")
		if n.Process == "agentd" {
			who = i18n.T(ctx, "compare.node_proc_agentd")
		}
		return line + " " + i18n.T(ctx, "compare.node_proc", "Who", who, "CPU", said.Fixed(ctx, *n.ProcMeanCPUPercent, 0), "RSS", gib(*n.ProcPeakRSSBytes))
	}
	return line
}
