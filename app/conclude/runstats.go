package conclude

import (
	"context"
	"encoding/json"
	"math"
	"sort"

	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// RunStatsStore reads a finished run's results and keeps the figures
// computed from them (*store.Store).
type RunStatsStore interface {
	RunStatsInput(ctx context.Context, runID int64) (store.StatsInput, error)
	SaveRunStats(ctx context.Context, row store.RunStatsRow) error
}

// ComputeRunStats reads a finished run's results once and keeps its
// figures with their intervals (run_stats) for its current attempt:
// output tokens/s, requests/s and goodput by batch means over the steady
// window (stats.BatchMeansRate), p95 E2E and TTFT with their exact
// binomial order-statistic intervals, answer lengths, and its load
// identity (docs/concepts.md#comparability-and-noise). Warm-up requests
// are left out; so is a sweep's rate interval, whose window spans several
// loads (its steps are compared one by one). A run not completed keeps
// nothing.
func ComputeRunStats(ctx context.Context, st RunStatsStore, runID int64) error {
	in, err := st.RunStatsInput(ctx, runID)
	if err != nil || !in.Completed {
		return err
	}
	return st.SaveRunStats(ctx, RunStatsRow(runID, in))
}

// RunStatsRow is the run_stats row of run runID computed from in.
func RunStatsRow(runID int64, in store.StatsInput) store.RunStatsRow {
	var m struct {
		Load jobs.LoadProfile `json:"load"`
	}
	_ = json.Unmarshal(in.Manifest, &m)
	f := collectStatsFigures(in.Results)
	load := jobs.NewLoadIdentity(in.Manifest, in.DatasetID, f.meanIn, f.meanOut)
	load.FewShot = in.FewShot
	row := store.RunStatsRow{RunID: runID, Attempt: in.Attempt, Load: load, OK: len(f.outs)}
	if m.Load.Profile != "sweep" {
		f.fillRates(&row)
	}
	row.E2E, row.TTFT = p95Of(f.e2es), p95Of(f.ttfts)
	if outs := f.outs; len(outs) > 0 {
		sort.Float64s(outs)
		p50, p90, mx := stats.Percentile(outs, 0.5), stats.Percentile(outs, 0.9), outs[len(outs)-1]
		row.OutP50, row.OutP90, row.OutMax = &p50, &p90, &mx
	}
	return row
}

// statsFigures are a run's results as its statistics take them: events
// (completions, tokens and requests meeting the SLOs, at the time each
// finished) over the window start–end (the first send to the last send),
// and the successful requests' latencies and lengths.
type statsFigures struct {
	tokens, reqs, good []stats.Event
	start, end         float64
	e2es, ttfts, outs  []float64
	meanIn, meanOut    float64
}

// collectStatsFigures gathers the figures of a run's results.
func collectStatsFigures(rs []store.StatsResult) statsFigures {
	f := statsFigures{start: math.Inf(1), end: math.Inf(-1)}
	var sumIn, sumOut float64
	lastDone := math.Inf(-1)
	for _, r := range rs {
		done := r.Sent + r.E2E/1000
		f.start, f.end, lastDone = min(f.start, r.Sent), max(f.end, r.Sent), max(lastDone, done)
		f.reqs = append(f.reqs, stats.Event{T: done, Amount: 1})
		if !r.OK {
			continue
		}
		f.tokens = append(f.tokens, stats.Event{T: done, Amount: float64(r.Tokens)})
		if r.Good {
			f.good = append(f.good, stats.Event{T: done, Amount: 1})
		}
		f.e2es = append(f.e2es, r.E2E)
		if r.TTFT != nil {
			f.ttfts = append(f.ttfts, *r.TTFT)
		}
		f.outs = append(f.outs, float64(r.Tokens))
		sumIn += float64(r.Prompts)
		sumOut += float64(r.Tokens)
	}
	if n := float64(len(f.outs)); n > 0 {
		f.meanIn, f.meanOut = sumIn/n, sumOut/n
	}
	// The window ends at the last request sent: from there on fewer and
	// fewer requests are in flight (a closed loop drains, an open one has
	// stopped offering), and a straggler finishing last would stretch the
	// window over near-empty batches. When most requests were in flight
	// at once (fewer than half the answers came before the last send)
	// there is no steady stretch to cut; the window is the whole run.
	before := 0
	for _, e := range f.reqs {
		if e.T <= f.end {
			before++
		}
	}
	if !(f.end > f.start) || 2*before < len(f.reqs) {
		f.end = lastDone
	}
	return f
}

// fillRates sets the rates of row by batch means over the window, and
// its batches as the most any rate had.
func (f statsFigures) fillRates(row *store.RunStatsRow) {
	for _, r := range []struct {
		evs []stats.Event
		to  **store.Rate
	}{{f.tokens, &row.TPS}, {f.reqs, &row.RPS}, {f.good, &row.Goodput}} {
		e, ok := stats.BatchMeansRate(r.evs, f.start, f.end)
		if !ok {
			continue
		}
		row.Batches = max(row.Batches, e.N)
		*r.to = &store.Rate{Mean: e.Mean, SE: e.SE, DF: e.DF}
	}
}

// p95Of is the p95 of xs with the exact binomial order-statistic interval
// (stats.QuantileInterval at 95 %); a p95 over too few values for one
// (fewer than stats.MinQuantileN) has no bounds and is not tested. Nil
// without values.
func p95Of(xs []float64) *store.P95 {
	if len(xs) == 0 {
		return nil
	}
	sort.Float64s(xs)
	p := &store.P95{P95: stats.Percentile(xs, 0.95)}
	if ci, ok := stats.QuantileInterval(xs, 0.95, 0.95); ok {
		p.Lo, p.Hi, p.Cov = &ci.Lo, &ci.Hi, &ci.Coverage
	}
	return p
}

// Keeper keeps what the conclusions about a finished run read, for the
// score job (jobs.RunStatsComputer): the run's figures, computed here and
// written by the store, and its paired comparisons of quality.
type Keeper struct {
	Store *store.Store
}

var _ jobs.RunStatsComputer = Keeper{}

// ComputeRunStats computes and keeps the run's figures (ComputeRunStats).
func (k Keeper) ComputeRunStats(ctx context.Context, runID int64) error {
	return ComputeRunStats(ctx, k.Store, runID)
}

// PairRunQualities computes and keeps the run's paired comparisons of
// quality with the other runs of its benchmark.
func (k Keeper) PairRunQualities(ctx context.Context, runID int64) error {
	return PairRunQualities(ctx, k.Store, runID)
}

// KeptEstimate is a rate run_stats keeps (store.RunStat), read back with
// the Student t interval it was computed with (stats.TInterval) over the
// run's batches: the store returns the kept columns, the interval is
// worked out here. The zero Estimate for no figure.
func KeptEstimate(r *store.KeptRate, batches int) stats.Estimate {
	switch {
	case r == nil:
		return stats.Estimate{}
	case r.SE == nil || r.DF == nil:
		return stats.TInterval(r.Mean, 0, 0, batches)
	}
	return stats.TInterval(r.Mean, *r.SE, *r.DF, batches)
}

// RunConcluded records that the run's conclusions are drawn
// (store.MarkRunConcluded).
func (k Keeper) RunConcluded(ctx context.Context, runID int64) error {
	return k.Store.MarkRunConcluded(ctx, runID)
}
