package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/ruckus/ruckus/app/advise"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/charts"
)

// Figures are one run's comparable numbers; nil where unknown.
type Figures struct {
	Run     store.RunFigures
	Quality *float64
	TTFT    jobs.Dist
	TPOT    jobs.Dist
	E2E     jobs.Dist
	// ITL is over every token; ITLMeasured is false when the run stored no
	// inter-token gaps (imported results, one-token answers).
	ITL         jobs.Dist
	ITLMeasured bool
	// Steps and Saturation are a sweep's (none for other profiles).
	Steps        []jobs.StepSummary
	Saturation   *jobs.Saturation
	TokensPerS   *float64
	RequestsPerS *float64
	Goodput      *float64
	Errors       int
	PeakGPUGiB   *float64
	JPerToken    *float64
	EnergyJ      *float64
	CostPer1M    *float64
	// GPUSimulated: the GPU figures were simulated from the load of the
	// simulated runtime (--sim-gpu), not measured.
	GPUSimulated bool
	// Node is the node's CPU and memory over the run (nil when not
	// measured).
	Node       *jobs.NodeSummary
	HasSummary bool
	// GridCO2 is g CO₂e per kWh for the estimated emissions.
	GridCO2 float64
}

// NewFigures reads a run's stored summaries. Cost per 1M output tokens is
// the hardware profile's price per hour / (output tokens/s × 3600) × 10⁶.
func NewFigures(r store.RunFigures) Figures {
	f := Figures{Run: r, Quality: r.Quality, Errors: r.Errors}
	var s jobs.RunSummary
	if r.Summary != nil && json.Unmarshal(r.Summary, &s) == nil {
		f.HasSummary = true
		f.TTFT, f.TPOT, f.E2E, f.ITL, f.ITLMeasured = s.TTFT, s.TPOT, s.E2E, s.ITL, s.ITLTokens > 0
		f.Steps, f.Saturation = s.Steps, s.Saturation
		f.TokensPerS, f.RequestsPerS, f.Goodput = &s.OutputTokensPerS, &s.RequestsPerS, &s.GoodputRPS
		if r.PricePerHour != nil {
			if c, ok := s.CostPer1M(*r.PricePerHour); ok {
				f.CostPer1M = &c
			}
		}
	}
	var g struct {
		PeakMemBytes   uint64  `json:"peak_mem_bytes"`
		JoulesPerToken float64 `json:"joules_per_token"`
		EnergyJ        float64 `json:"energy_j"`
		Simulated      bool    `json:"simulated"`
	}
	var n jobs.NodeSummary
	if r.NodeSummary != nil && json.Unmarshal(r.NodeSummary, &n) == nil && n.Samples > 0 {
		f.Node = &n
	}
	if r.GPUSummary != nil && json.Unmarshal(r.GPUSummary, &g) == nil {
		f.GPUSimulated = g.Simulated
		gib := float64(g.PeakMemBytes) / (1 << 30)
		f.PeakGPUGiB = &gib
		if g.JoulesPerToken > 0 {
			f.JPerToken = &g.JoulesPerToken
		}
		if g.EnergyJ > 0 {
			f.EnergyJ = &g.EnergyJ
		}
	}
	return f
}

// Metric is one row of the comparison table.
type Metric struct {
	Name string
	// LowerBetter says which way a delta is an improvement.
	LowerBetter bool
	Format      string
	Value       func(Figures) *float64
}

func ptr(v float64) *float64 { return &v }

// Metrics are the table's rows, in order.
var Metrics = []Metric{
	{"Quality (mean score)", false, "%.3f", func(f Figures) *float64 { return f.Quality }},
	{"TTFT p50 ms", true, "%.1f", func(f Figures) *float64 { return sumv(f, f.TTFT.P50) }},
	{"TTFT p95 ms", true, "%.1f", func(f Figures) *float64 { return sumv(f, f.TTFT.P95) }},
	{"TTFT p99 ms", true, "%.1f", func(f Figures) *float64 { return sumv(f, f.TTFT.P99) }},
	{"TPOT p50 ms", true, "%.2f", func(f Figures) *float64 { return sumv(f, f.TPOT.P50) }},
	{"TPOT p95 ms", true, "%.2f", func(f Figures) *float64 { return sumv(f, f.TPOT.P95) }},
	{"TPOT p99 ms", true, "%.2f", func(f Figures) *float64 { return sumv(f, f.TPOT.P99) }},
	{"ITL p50 ms", true, "%.2f", func(f Figures) *float64 { return itlv(f, f.ITL.P50) }},
	{"ITL p95 ms", true, "%.2f", func(f Figures) *float64 { return itlv(f, f.ITL.P95) }},
	{"ITL p99 ms", true, "%.2f", func(f Figures) *float64 { return itlv(f, f.ITL.P99) }},
	{"ITL max ms", true, "%.1f", func(f Figures) *float64 { return itlv(f, f.ITL.Max) }},
	{"E2E p50 ms", true, "%.1f", func(f Figures) *float64 { return sumv(f, f.E2E.P50) }},
	{"E2E p95 ms", true, "%.1f", func(f Figures) *float64 { return sumv(f, f.E2E.P95) }},
	{"E2E p99 ms", true, "%.1f", func(f Figures) *float64 { return sumv(f, f.E2E.P99) }},
	{"Output tokens/s", false, "%.1f", func(f Figures) *float64 { return f.TokensPerS }},
	{"Requests/s", false, "%.2f", func(f Figures) *float64 { return f.RequestsPerS }},
	{"Goodput req/s", false, "%.2f", func(f Figures) *float64 { return f.Goodput }},
	{"Errors", true, "%.0f", func(f Figures) *float64 { return ptr(float64(f.Errors)) }},
	{"Peak GPU memory GiB", true, "%.1f", func(f Figures) *float64 { return f.PeakGPUGiB }},
	{"Energy J/token", true, "%.3f", func(f Figures) *float64 { return f.JPerToken }},
	{"Energy kWh", true, "%.4f", func(f Figures) *float64 {
		if f.EnergyJ == nil {
			return nil
		}
		return ptr(*f.EnergyJ / 3.6e6)
	}},
	{"CO₂e g (estimated)", true, "%.1f", func(f Figures) *float64 {
		if f.EnergyJ == nil {
			return nil
		}
		return ptr(*f.EnergyJ / 3.6e6 * f.GridCO2)
	}},
	{"Cost per 1M output tokens (USD)", true, "%.3f", func(f Figures) *float64 { return f.CostPer1M }},
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

// Cell is a value and its change against the baseline.
func (m Metric) Cell(f, base Figures, isBase bool) (string, string, string) {
	v := m.Value(f)
	if v == nil {
		return "not measured", "", ""
	}
	text := fmt.Sprintf(m.Format, *v)
	b := m.Value(base)
	if isBase || b == nil || *b == 0 || math.IsNaN(*v) {
		return text, "", ""
	}
	d := (*v - *b) / math.Abs(*b) * 100
	if math.Abs(d) < 0.05 {
		return text, "±0%", ""
	}
	better := (d < 0) == m.LowerBetter
	class := "delta-worse"
	if better {
		class = "delta-better"
	}
	return text, fmt.Sprintf("%+.1f%%", d), class
}

// Charts places the runs on quality vs cost and TTFT p95 vs throughput.
func Charts(fs []Figures) []charts.Chart {
	qc := charts.Series{Name: "runs", Dots: true}
	tt := charts.Series{Name: "runs", Dots: true}
	for _, f := range fs {
		name := fmt.Sprintf("run %d %s on %s/%s", f.Run.ID, f.Run.ModelName, f.Run.Runtime, f.Run.HardwareProfile)
		if f.Quality != nil && f.CostPer1M != nil {
			qc.Points = append(qc.Points, charts.Point{X: *f.CostPer1M, Y: *f.Quality, Label: fmt.Sprintf("%s: quality %.3f at $%.3f per 1M tokens", name, *f.Quality, *f.CostPer1M)})
		}
		if f.HasSummary && f.TokensPerS != nil {
			tt.Points = append(tt.Points, charts.Point{X: *f.TokensPerS, Y: f.TTFT.P95, Label: fmt.Sprintf("%s: %.1f tokens/s, TTFT p95 %.1f ms", name, *f.TokensPerS, f.TTFT.P95)})
		}
	}
	return []charts.Chart{
		{ID: "quality-cost", Title: "Quality vs cost", XLabel: "USD per 1M output tokens", YLabel: "quality", Series: []charts.Series{qc}},
		{ID: "ttft-throughput", Title: "TTFT p95 vs throughput", XLabel: "output tokens/s", YLabel: "TTFT p95 ms", Series: []charts.Series{tt}},
	}
}

// SweepCharts overlays the curves of the compared runs that are sweeps;
// none when no run is.
func SweepCharts(fs []Figures) []charts.Chart {
	var runs []charts.SweepRun
	for _, f := range fs {
		if len(f.Steps) > 0 {
			runs = append(runs, charts.SweepRun{Name: fmt.Sprintf("run %d", f.Run.ID), Steps: f.Steps, Saturation: f.Saturation})
		}
	}
	if len(runs) == 0 {
		return nil
	}
	return charts.SweepCharts(runs)
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
func pairedText(p advise.QualityDiff) string {
	s := fmt.Sprintf("Δ %+.3f [%+.3f, %+.3f], p = %.3g (%s, %d items", p.Mean, p.Lo, p.Hi, p.P, p.TestName(), p.N)
	if n := p.OnlyA + p.OnlyB; n > 0 {
		s += fmt.Sprintf("; %d scored in one run only, left out", n)
	}
	return s + ")"
}

// overlaps says whether two runs' quality intervals overlap: their
// qualities are then not significantly different (used only for runs
// that share no scored item to pair).
func overlaps(a, b Figures) bool {
	if a.Run.QualityLo == nil || a.Run.QualityHi == nil || b.Run.QualityLo == nil || b.Run.QualityHi == nil {
		return false
	}
	return *a.Run.QualityLo <= *b.Run.QualityHi && *b.Run.QualityLo <= *a.Run.QualityHi
}

// Footprint is a run's cost and energy line: cost per 1M output tokens,
// joules per token, kWh and the estimated CO₂e at gridCO2 g/kWh; empty
// parts are left out.
func (f Figures) Footprint(gridCO2 float64) string {
	var parts []string
	if f.CostPer1M != nil {
		parts = append(parts, fmt.Sprintf("$%.3f per 1M output tokens", *f.CostPer1M))
	} else {
		parts = append(parts, "cost unknown (no price for "+f.Run.HardwareProfile+")")
	}
	if f.JPerToken != nil {
		parts = append(parts, fmt.Sprintf("%.3f J per output token", *f.JPerToken))
	}
	if f.EnergyJ != nil {
		kwh := *f.EnergyJ / 3.6e6
		parts = append(parts, fmt.Sprintf("%.4f kWh", kwh), fmt.Sprintf("≈ %.1f g CO₂e at %.0f g/kWh", kwh*gridCO2, gridCO2))
	} else {
		parts = append(parts, "energy not measured (no GPU readings)")
	}
	if f.GPUSimulated && (f.JPerToken != nil || f.EnergyJ != nil) {
		parts = append(parts, "energy simulated from the load (--sim-gpu), not measured")
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
func pairVerdict(j store.JudgeRun, v store.Judgment) string {
	switch v.Verdict {
	case "A":
		return fmt.Sprintf("run %d better", j.RunA)
	case "B":
		return fmt.Sprintf("run %d better", runB(j))
	case "tie":
		return "tie"
	}
	return "no verdict (unparseable)"
}

func pairState(j store.JudgeRun) string {
	switch {
	case j.State == "judging" && (j.Judge.State == "queued" || j.Judge.State == "running"):
		return fmt.Sprintf("judge run %s, %d / %d prompts", j.Judge.State, j.Judge.Completed, j.Judge.Total)
	case j.State == "judging" && j.Judge.State != "completed":
		return "no verdicts: the judge run " + j.Judge.State
	case j.State == "judging":
		return "reading the verdicts"
	case j.State == "failed":
		return "failed: " + j.Error
	}
	return "judged"
}

func pairCounts(j store.JudgeRun) string {
	if j.State == "judging" {
		return "–"
	}
	s := fmt.Sprintf("run %d: %d wins · %d ties · %d losses", j.RunA, j.Wins, j.Ties, j.Losses)
	if j.Inconsistent > 0 {
		s += fmt.Sprintf(" (%d ties from orders that disagreed)", j.Inconsistent)
	}
	if j.Unparsed > 0 {
		s += fmt.Sprintf("; %d items without a readable verdict", j.Unparsed)
	}
	return s
}

func pairWinRate(j store.JudgeRun) string {
	w, h := j.WinRate(), j.WinRateHalfTies()
	if j.State == "judging" || w == nil || h == nil {
		return "–"
	}
	return fmt.Sprintf("run %d: %.1f %% (ties as half: %.1f %%)", j.RunA, 100**w, 100**h)
}

// ClaimText is one criterion's comparison with the baseline in words:
// what differs when the runs are not comparable, else the difference, the
// test and whether it is significant.
func ClaimText(m advise.Margin) string {
	name := map[advise.Criterion]string{advise.Quality: "quality", advise.Speed: "output tokens/s",
		advise.Latency: "p95 E2E", advise.Cost: "cost per 1M"}[m.Criterion]
	switch {
	case !m.Measured:
		return name + ": not measured"
	case !m.Comparable:
		return name + ": " + m.Reason
	case m.P == nil:
		return fmt.Sprintf("%s: %+.1f %%, %s", name, m.Pct, m.Basis)
	case m.Tie:
		return fmt.Sprintf("%s: %+.1f %%, not significant (%s, p = %.3g)", name, m.Pct, m.Test, *m.P)
	}
	return fmt.Sprintf("%s: %+.1f %%, significant (%s, p = %.3g)", name, m.Pct, m.Test, *m.P)
}

// comparableQuality says whether run id's quality may be set against the
// baseline's (the same scorer identity); the baseline's own always is.
func comparableQuality(d Data, id int64) bool {
	for _, m := range d.Claims[id] {
		if m.Criterion == advise.Quality && m.Measured {
			return m.Comparable
		}
	}
	return true
}

// NodeLine is a run's node figures in a sentence: the machine's CPU and
// memory, and the runtime's process tree; what was not measured says so.
func (f Figures) NodeLine() string {
	n := f.Node
	if n == nil {
		return "Node CPU and memory: not measured (the run's agent did not sample its node)."
	}
	gib := func(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
	var parts []string
	if n.MeanCPUPercent != nil && n.PeakCPUPercent != nil {
		parts = append(parts, fmt.Sprintf("CPU %.0f %% mean, %.0f %% peak (of all CPUs)", *n.MeanCPUPercent, *n.PeakCPUPercent))
	} else {
		parts = append(parts, "CPU not measured")
	}
	if n.PeakMemUsed != nil && n.MemTotalBytes != nil {
		parts = append(parts, fmt.Sprintf("memory %s peak of %s", gib(*n.PeakMemUsed), gib(*n.MemTotalBytes)))
	} else {
		parts = append(parts, "memory not measured")
	}
	line := fmt.Sprintf("Node over %d samples: %s.", n.Samples, strings.Join(parts, ", "))
	switch {
	case n.ProcessKind() == "":
		return line + " Runtime processes: not measured (agentd did not launch the runtime)."
	case n.ProcMeanCPUPercent != nil && n.ProcPeakRSSBytes != nil:
		who := "Runtime processes"
		if n.Process == "agentd" {
			who = "agentd (the simulated runtime runs inside it)"
		}
		return line + fmt.Sprintf(" %s: CPU %.0f %% mean of all CPUs, %s resident at peak.", who, *n.ProcMeanCPUPercent, gib(*n.ProcPeakRSSBytes))
	}
	return line
}
