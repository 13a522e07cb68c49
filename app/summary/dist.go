package summary

import (
	"slices"

	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// columns are successful requests' figures, one slice per figure, each
// holding only the requests that measured it.
type columns struct {
	ttft, tpot, e2e []float64
	output, prompt  []float64 // tokens, every request
	// prefill is each request's prompt tokens ÷ its TTFT in seconds, of
	// requests that had both (docs/metrics.md#length-sweeps).
	prefill []float64
}

// add appends one request's figures.
func (c *columns) add(a store.AnswerRow) {
	if a.TTFT.Valid {
		c.ttft = append(c.ttft, a.TTFT.Float64)
	}
	if a.TPOT.Valid {
		c.tpot = append(c.tpot, a.TPOT.Float64)
	}
	if a.E2E.Valid {
		c.e2e = append(c.e2e, a.E2E.Float64)
	}
	c.output = append(c.output, float64(a.CompletionTokens))
	c.prompt = append(c.prompt, float64(a.PromptTokens))
	if a.PromptTokens > 0 && a.TTFT.Valid && a.TTFT.Float64 > 0 {
		c.prefill = append(c.prefill, float64(a.PromptTokens*1000)/a.TTFT.Float64)
	}
}

// answers are the successful requests' figures as the store hands them
// over: all of them (when whole is set), and a sweep's step by step
// (requests outside any step only in all).
type answers struct {
	whole   bool
	all     columns
	byPhase map[string]*columns
}

// newAnswers keeps the figures of each step, and with whole those of the
// whole run too.
func newAnswers(whole bool) *answers { return &answers{whole: whole, byPhase: map[string]*columns{}} }

// add keeps one request's figures.
func (as *answers) add(a store.AnswerRow) {
	if as.whole {
		as.all.add(a)
	}
	if a.Phase == "" {
		return
	}
	c := as.byPhase[a.Phase]
	if c == nil {
		c = &columns{}
		as.byPhase[a.Phase] = c
	}
	c.add(a)
}

// distOf is the mean, extremes and p50/p90/p95/p99 of xs by numpy's
// linear interpolation (stats.Percentile; PostgreSQL's percentile_cont
// computes the same), all zero without values. The mean adds the values
// in the order they were read; xs is sorted in place.
func distOf(xs []float64) jobs.Dist {
	if len(xs) == 0 {
		return jobs.Dist{}
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	slices.Sort(xs)
	return jobs.Dist{Mean: sum / float64(len(xs)), Min: xs[0], Max: xs[len(xs)-1],
		P50: stats.Percentile(xs, 0.5), P90: stats.Percentile(xs, 0.9), P95: stats.Percentile(xs, 0.95), P99: stats.Percentile(xs, 0.99)}
}
