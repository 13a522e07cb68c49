package conclude

import (
	"encoding/json"
	"math"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Figures are one run's comparable numbers read from its stored
// summaries; nil where unknown. Every surface that shows a run's figures
// reads them here, so the figures table and the claims beside it are of
// the same numbers (docs/concepts.md#the-conclusions-engine).
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
	// Requests and GoodRequests are the measured window's requests and
	// those of them that met every SLO set.
	Requests, GoodRequests int
	Errors                 int
	PeakGPUGiB             *float64
	JPerToken              *float64
	EnergyJ                *float64
	CostPer1M              *float64
	// GPUSimulated: the GPU figures were simulated from the load of the
	// simulated runtime (--sim-gpu), not measured.
	GPUSimulated bool
	// Node is the node's CPU and memory over the run (nil when not
	// measured).
	Node       *jobs.NodeSummary
	HasSummary bool
	// TokenPriced: CostPer1M is a remote provider's token price, not an
	// hourly price over a speed.
	TokenPriced bool
	// Steady: TokensPerS is the steady window's kept mean (steadySpeed),
	// not the whole run's.
	Steady bool
	// QualityLo and QualityHi are Quality's 95 % interval and ScorerKey
	// its scorer identity once AsWeighed set them from the run's candidate.
	QualityLo, QualityHi *float64
	ScorerKey            string
}

// ReadFigures reads a run's stored summaries. Cost per 1M output tokens
// is the hardware profile's price per hour / (output tokens/s × 3600) ×
// 10⁶, or for a remote provider's run its token prices
// (store.RunFigures.CostPer1M).
func ReadFigures(r store.RunFigures) Figures {
	f := Figures{Run: r, Quality: r.Quality, Errors: r.Errors}
	var s jobs.RunSummary
	if r.Summary != nil && json.Unmarshal(r.Summary, &s) == nil {
		f.HasSummary = true
		f.TTFT, f.TPOT, f.E2E, f.ITL, f.ITLMeasured = s.TTFT, s.TPOT, s.E2E, s.ITL, s.ITLTokens > 0
		f.Steps, f.Saturation = s.Steps, s.Saturation
		f.TokensPerS, f.RequestsPerS, f.Goodput = &s.OutputTokensPerS, &s.RequestsPerS, &s.GoodputRPS
		f.Requests, f.GoodRequests = s.Requests, min(s.GoodRequests, s.Requests)
		if c, tokenPriced, ok := CostPer1M(r, s); ok {
			f.CostPer1M, f.TokenPriced = &c, tokenPriced
		}
		f.steadySpeed(r.Stat)
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

// steadySpeed puts the speed the conclusions test in place of the whole
// run's: the mean output tokens/s over the kept steady window (run_stats'
// batch means, docs/metrics.md#throughput-output-tokenss-and-requestss) where one was kept with an
// interval, and the cost per 1M output tokens of an hourly price over it.
// A figures table, a footprint, the leaderboard and the exports then show
// the figure its claim and its test are of (docs/verdict.md).
func (f *Figures) steadySpeed(st *store.RunStat) {
	if st == nil || f.TokensPerS == nil || !(*f.TokensPerS > 0) {
		return
	}
	e := KeptEstimate(st.TPS, st.Batches)
	if !e.OK() || !(e.Mean > 0) || !finite(e.Mean) {
		return
	}
	whole, kept := *f.TokensPerS, e.Mean
	f.TokensPerS, f.Steady = &kept, true
	if f.CostPer1M != nil && !f.TokenPriced {
		c := *f.CostPer1M * whole / kept
		f.CostPer1M = &c
	}
}

// Candidates are runs as every conclusion weighs them (the verdict, the
// comparison, both recommendations, the report): their figures from the
// stored summaries, the intervals and load identity kept in run_stats and
// the scorer identity of their latest quality (Weigh puts them under one
// shared identity). A figure the run did not measure — no summary, no
// successful request, no output — is nil ("not measured"), never 0.
func Candidates(runs []store.RunFigures) []Candidate {
	var cands []Candidate
	for _, r := range runs {
		f := ReadFigures(r)
		cand := Candidate{RunID: r.ID, Model: r.ModelName, Runtime: r.Runtime, Hardware: r.HardwareProfile, Engine: r.Engine.Key(),
			Quality: r.Quality, QualityLo: r.QualityLo, QualityHi: r.QualityHi, CostPer1M: f.CostPer1M, TokenPriced: f.TokenPriced, GPUMemGiB: f.PeakGPUGiB}
		if f.TokensPerS != nil && *f.TokensPerS > 0 && finite(*f.TokensPerS) {
			cand.TokensPS = f.TokensPerS
		}
		// A successful request always takes time: a p95 of 0 means none.
		if f.HasSummary && f.E2E.P95 > 0 && finite(f.E2E.P95) && finite(f.TTFT.P95) {
			ttft, e2e := f.TTFT.P95, f.E2E.P95
			cand.TTFTp95, cand.E2Ep95 = &ttft, &e2e
		}
		cand.ScorerKey, cand.DatasetID = r.ScorerKey(), r.DatasetID
		cand.Requests, cand.GoodRequests, cand.SLOSet = f.Requests, f.GoodRequests, r.SLO.Set()
		cand.Settings, cand.SLO, cand.PricePerHour = r.Engine, r.SLO, PricePerHour(r)
		if f.RequestsPerS != nil && *f.RequestsPerS > 0 && finite(*f.RequestsPerS) {
			cand.RequestsPS = f.RequestsPerS
		}
		if st := r.Stat; st != nil {
			load := st.Load
			cand.Load, cand.TPS, cand.RPS = &load, KeptEstimate(st.TPS, st.Batches), KeptEstimate(st.RPS, st.Batches)
			if cand.E2Ep95 != nil {
				cand.E2EN = st.OK
			}
			if q := st.E2EP95; q != nil && cand.E2Ep95 != nil {
				lo, hi := q.Lo, q.Hi
				cand.E2Ep95Lo, cand.E2Ep95Hi, cand.E2ECoverage = &lo, &hi, q.Coverage
			}
		}
		cands = append(cands, cand)
	}
	return cands
}

// Shade is how a figures table colours a delta.
type Shade int

// A delta is plain unless a test establishes it.
const (
	Untested Shade = iota
	Better
	Worse
)

// Delta is one figure of a run set against the baseline's in a figures
// table: whether a delta may be shown at all, its relative size, and
// whether a test establishes it.
type Delta struct {
	// Shown is false where no delta may be shown: the baseline itself, a
	// missing or zero baseline figure, or runs the claims call not
	// comparable for this figure.
	Shown bool
	Pct   float64
	// Flat: the figures are equal to within 0.05 %.
	Flat  bool
	Shade Shade
}

// FigureDelta is a figures-table cell's delta: v against the baseline's
// base, for a figure tested by criterion tested ("" for a figure no
// conclusion tests) that is a quality (same scorer identity needed) or
// not (same load needed), given the run's claims against the baseline
// (docs/concepts.md#comparability-and-noise). A delta is coloured only
// where the claim of its own criterion is comparable and significant, and
// none is shown where that claim is not comparable (speed under an open
// loop: the offered load; docs/verdict.md#not-comparable).
func FigureDelta(tested Criterion, quality bool, v, base *float64, claims []Margin) Delta {
	if v == nil || base == nil || *base == 0 || math.IsNaN(*v) || math.IsInf(*v, 0) || !figureComparable(quality, claims) {
		return Delta{}
	}
	for _, c := range claims {
		if tested != "" && c.Criterion == tested && c.Measured && !c.Comparable {
			return Delta{}
		}
	}
	d := Delta{Shown: true, Pct: (*v - *base) / math.Abs(*base) * 100}
	if math.IsInf(d.Pct, 0) || math.IsNaN(d.Pct) {
		return Delta{}
	}
	if math.Abs(d.Pct) < 0.05 {
		d.Flat = true
		return d
	}
	for _, c := range claims {
		if tested != "" && c.Criterion == tested && c.Comparable && !c.Tie && c.P != nil && sameWay(tested, d.Pct, c.Better) {
			d.Shade = Worse
			if c.Better > 0 {
				d.Shade = Better
			}
		}
	}
	return d
}

// sameWay says whether a figures-table delta of pct per cent points the
// way the claim's lead does (better > 0: the run is better). A paired
// quality claim rests on the items both runs scored while the table shows
// each run's mean over all it scored, so the two can point apart; such a
// delta is shown uncoloured, as no test establishes it.
func sameWay(c Criterion, pct float64, better int) bool {
	up := pct > 0
	if !c.HigherBetter() {
		up = !up
	}
	return up == (better > 0)
}

// figureComparable says whether the run's claims let a figure be set
// against the baseline's: a quality under the same scorer identity, any
// other figure under the same load (the latency claim's verdict, else
// speed's). Without claims (no baseline) nothing is known to differ.
func figureComparable(quality bool, claims []Margin) bool {
	want := []Criterion{Latency, Speed, Cost}
	if quality {
		want = []Criterion{Quality}
	}
	for _, w := range want {
		for _, c := range claims {
			if c.Criterion == w && c.Measured {
				// Speed under an open loop is not ranked though the
				// loads are one: only a load difference hides a delta.
				return c.Comparable || w != Quality && c.ReasonSaid.Code == "compare.said.not_ranked_open_loop"
			}
		}
	}
	return true
}

// QualityComparable says whether a run's quality may be set against the
// baseline's (the same scorer identity), from its claims against it; the
// baseline's own (no claims) always is.
func QualityComparable(claims []Margin) bool {
	return figureComparable(true, claims)
}

// finite says whether v is a number a claim can rest on (not ±Inf, not
// NaN): a figure that is not stays "not measured".
func finite(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }

// RunCostPer1M is one run's cost per 1M output tokens as its conclusions
// price it (Cost.Value of the run as a candidate): a remote provider's
// run from its token prices, any other its hardware's price per hour over
// its output tokens/s — the speed its test uses where one is kept
// (docs/concepts.md#comparability-and-noise). The fleet report costs a
// run with it, so a run costs the same there as in the verdict. Nil when
// there is no price or nothing was generated.
func RunCostPer1M(r store.RunFigures) *float64 {
	return Cost.Value(Candidates([]store.RunFigures{r})[0])
}
