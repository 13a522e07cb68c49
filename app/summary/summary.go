package summary

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Source reads what a run's summary is computed from; the store satisfies
// it (store.Queries.RunAggregateRows).
type Source interface {
	RunAggregateRows(ctx context.Context, runID int64, slo jobs.SLO, open time.Duration, answer func(store.AnswerRow)) (store.RunAggregateRows, error)
}

// StepSource reads what a sweep's steps are summarised from
// (store.Queries.RunStepRows).
type StepSource interface {
	RunStepRows(ctx context.Context, runID int64, slo jobs.SLO, answer func(store.AnswerRow)) (store.StepRows, error)
}

// Run is a run's summary computed from its stored results; slo decides
// which successful requests count towards goodput, and open is the
// measured time of a segment not yet closed. One round trip to the store.
func Run(ctx context.Context, src Source, runID int64, slo jobs.SLO, open time.Duration) (jobs.RunSummary, error) {
	a := newAnswers(true)
	rows, err := src.RunAggregateRows(ctx, runID, slo, open, a.add)
	if err != nil {
		return jobs.RunSummary{ErrorsByClass: map[string]int{}}, fmt.Errorf("run %d's aggregate: %w", runID, err)
	}
	return of(rows, a, slo), nil
}

// Steps summarises each step of a sweep on its own, in the order the
// steps ran; none for other load profiles.
func Steps(ctx context.Context, src StepSource, runID int64, slo jobs.SLO) ([]jobs.StepSummary, error) {
	a := newAnswers(false)
	rows, err := src.RunStepRows(ctx, runID, slo, a.add)
	if err != nil {
		return nil, fmt.Errorf("run %d's steps: %w", runID, err)
	}
	return stepsOf(rows, a.byPhase, slo), nil
}

// of is the summary of a run's rows and successful requests: its
// distributions over those requests (docs/metrics.md), its rates over the
// measured time, its token-level inter-token latency, and its steps and
// saturation point.
func of(r store.RunAggregateRows, a *answers, slo jobs.SLO) jobs.RunSummary {
	s := jobs.RunSummary{Requests: r.Requests, OK: r.OK, Errors: r.Errors, ErrorsByClass: r.ErrorsByClass,
		PromptTokens: r.PromptTokens, OutputTokens: r.OutputTokens, EstimatedTokens: r.EstimatedTokens,
		GoodRequests: r.GoodRequests, MeasuredSeconds: r.MeasuredSeconds}
	if s.ErrorsByClass == nil {
		s.ErrorsByClass = map[string]int{}
	}
	s.TTFT, s.TPOT, s.E2E = distOf(a.all.ttft), distOf(a.all.tpot), distOf(a.all.e2e)
	if s.OK > 0 {
		out := distOf(a.all.output)
		s.OutputLength = &out
	}
	// Phase by phase in one order, so that the mean adds its terms alike
	// every time the summary is computed.
	var itl []store.ITLCount
	for _, phase := range slices.Sorted(maps.Keys(r.Steps.ITL)) {
		itl = append(itl, r.Steps.ITL[phase]...)
	}
	s.ITL, s.ITLTokens = tokenITL(itl)
	s.Steps = stepsOf(r.Steps, a.byPhase, slo)
	s.Saturation = jobs.FindSaturation(s.Steps, slo.GoodputShare())
	if s.MeasuredSeconds > 0 {
		s.OutputTokensPerS = float64(s.OutputTokens) / s.MeasuredSeconds
		s.RequestsPerS = float64(s.Requests) / s.MeasuredSeconds
		s.GoodputRPS = float64(s.GoodRequests) / s.MeasuredSeconds
	}
	return s
}

// stepsOf completes the steps read: their distributions, rates, SLO
// verdicts, error classes and each step's own inter-token latencies; a
// length sweep's step also its prompt lengths and prefill speed.
func stepsOf(r store.StepRows, answers map[string]*columns, slo jobs.SLO) []jobs.StepSummary {
	share := slo.GoodputShare()
	var out []jobs.StepSummary
	for _, row := range r.Steps {
		s := jobs.StepSummary{Name: row.Name, Requests: row.Requests, OK: row.OK, Errors: row.Errors, OutputTokens: row.OutputTokens,
			GoodRequests: row.GoodRequests, WindowSeconds: row.WindowSeconds}
		a := answers[row.Name]
		if a == nil {
			a = &columns{}
		}
		s.TTFT, s.TPOT, s.E2E = distOf(a.ttft), distOf(a.tpot), distOf(a.e2e)
		s.OfferedRPS = offeredRate(s.Name)
		s.ErrorsByClass = r.ErrorsByClass[s.Name]
		if s.ErrorsByClass == nil {
			s.ErrorsByClass = map[string]int{}
		}
		if s.WindowSeconds > 0 {
			s.AchievedRPS = float64(s.Requests) / s.WindowSeconds
			s.OutputTokensPerS = float64(s.OutputTokens) / s.WindowSeconds
			s.GoodputRPS = float64(s.GoodRequests) / s.WindowSeconds
		}
		if s.TPOT.P50 > 0 {
			s.TokensPerSPerUser = 1000 / s.TPOT.P50
		}
		s.SLOsHold = s.Requests > 0 && float64(s.GoodRequests) >= share*float64(s.Requests)
		s.ITL, s.ITLTokens = tokenITL(r.ITL[s.Name])
		fillLengths(&s, a)
		out = append(out, s)
	}
	return out
}

// tokenITL is the distribution, in milliseconds, of inter-token latencies
// (docs/metrics.md#itl-inter-token-latency-token-level), and how many
// latencies that is, from the distinct latencies the store counted: memory
// grows with the distinct values, not with the run's tokens.
func tokenITL(cs []store.ITLCount) (jobs.Dist, int) {
	rs := make([]stats.Repeated, len(cs))
	for i, c := range cs {
		rs[i] = stats.Repeated{Value: c.MS, Count: c.Count}
	}
	sum := stats.SummarizeRepeated(rs)
	return jobs.Dist{Mean: sum.Mean, Min: sum.Min, Max: sum.Max, P50: sum.P50, P90: sum.P90, P95: sum.P95, P99: sum.P99}, sum.N
}

// fillLengths sets a length sweep's step's lengths, the prompt lengths
// sent and their distance from the target, and the prefill speed's median
// with its 95 % interval (docs/metrics.md#length-sweeps); other steps are
// left as they are.
func fillLengths(s *jobs.StepSummary, a *columns) {
	step, ok := jobs.ParseLengthPhase(s.Name)
	if !ok {
		return
	}
	s.InputTarget, s.OutputTarget = step.Input, step.Output
	tokens := distOf(a.prompt)
	if s.OK == 0 || tokens.Max == 0 {
		return // no usage reported: the prompts' lengths are not known
	}
	off := math.Max(math.Abs(tokens.Min-float64(step.Input)), math.Abs(tokens.Max-float64(step.Input)))
	s.PromptTokens, s.PromptTokensOff = &tokens, &off
	if len(a.prefill) == 0 {
		return
	}
	slices.Sort(a.prefill)
	mi := &jobs.MedianInterval{Median: stats.Percentile(a.prefill, 0.5), N: len(a.prefill)}
	if ci, ok := stats.QuantileInterval(a.prefill, 0.5, 0.95); ok {
		mi.Lo, mi.Hi = &ci.Lo, &ci.Hi
	}
	s.PrefillTokensPerS = mi
}

// offeredRate reads the rate a constant-rate step aimed at from its label
// ("rate 2.50/s", as agentd's load generator names it); nil for the
// closed-loop steps, and for a label whose rate is not a positive finite
// number (a label comes from an agent; a NaN would make the summary's
// JSON unwritable).
func offeredRate(phase string) *float64 {
	v, ok := strings.CutPrefix(phase, "rate ")
	if !ok {
		return nil
	}
	r, err := strconv.ParseFloat(strings.TrimSuffix(v, "/s"), 64)
	if err != nil || !(r > 0) || math.IsInf(r, 0) {
		return nil
	}
	return &r
}
