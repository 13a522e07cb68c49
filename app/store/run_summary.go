package store

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/jobs"
)

// RunAggregate computes a run's summary from its stored results; slo
// decides which successful requests count towards goodput, and open is the
// measured time of a segment not yet closed with FinishRun. Its statements
// go to the database as one batch: one round trip, one transaction.
func (q *Queries) RunAggregate(ctx context.Context, runID int64, slo jobs.SLO, open time.Duration) (jobs.RunSummary, error) {
	s := jobs.RunSummary{ErrorsByClass: map[string]int{}}
	var ttftP, tpotP, e2eP, outP []float64
	var out jobs.Dist
	args := sloBounds(slo)
	args["run"], args["open"] = runID, open.Seconds()
	b := &pgx.Batch{}
	// The run's measured time is 0 to a caller who no longer sees the run
	// (an agent it was taken from, whose finish is then refused).
	b.Queue(`SELECT count(*), count(*) FILTER (WHERE status = 'ok'), count(*) FILTER (WHERE status = 'error'),
			coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), count(*) FILTER (WHERE tokens_estimated),
			count(*) FILTER (WHERE `+sloFilter+`),
			coalesce((SELECT measured_seconds + @open FROM runs WHERE id = @run), 0),
			`+distColumns("ttft_ms")+`, `+distColumns("tpot_ms")+`, `+distColumns("e2e_ms")+`,
			`+distColumns("completion_tokens::float8")+`
		FROM results WHERE run_id = @run`, args).QueryRow(func(row pgx.Row) error {
		return mapErr(row.Scan(
			&s.Requests, &s.OK, &s.Errors, &s.PromptTokens, &s.OutputTokens, &s.EstimatedTokens, &s.GoodRequests, &s.MeasuredSeconds,
			&s.TTFT.Mean, &s.TTFT.Min, &s.TTFT.Max, &ttftP,
			&s.TPOT.Mean, &s.TPOT.Min, &s.TPOT.Max, &tpotP,
			&s.E2E.Mean, &s.E2E.Min, &s.E2E.Max, &e2eP,
			&out.Mean, &out.Min, &out.Max, &outP), "run aggregate")
	})
	b.Queue(`SELECT error_class, count(*) FROM results WHERE run_id = @run AND status = 'error' GROUP BY 1`,
		pgx.NamedArgs{"run": runID}).Query(func(rows pgx.Rows) error {
		var class string
		var n int
		_, err := pgx.ForEachRow(rows, []any{&class, &n}, func() error {
			s.ErrorsByClass[class] = n
			return nil
		})
		return mapErr(err, "run errors by class")
	})
	var parts stepParts
	parts.queue(b, runID, slo, true)
	if err := q.db.SendBatch(ctx, b).Close(); err != nil {
		return s, err
	}
	setPercentiles(&s.TTFT, ttftP)
	setPercentiles(&s.TPOT, tpotP)
	setPercentiles(&s.E2E, e2eP)
	if s.OK > 0 {
		setPercentiles(&out, outP)
		s.OutputLength = &out
	}
	var all []stats.Repeated
	for _, rs := range parts.itl {
		all = append(all, rs...)
	}
	s.ITL, s.ITLTokens = tokenITL(all)
	s.Steps = parts.summaries(slo)
	s.Saturation = jobs.FindSaturation(s.Steps, slo.GoodputShare())
	if s.MeasuredSeconds > 0 {
		s.OutputTokensPerS = float64(s.OutputTokens) / s.MeasuredSeconds
		s.RequestsPerS = float64(s.Requests) / s.MeasuredSeconds
		s.GoodputRPS = float64(s.GoodRequests) / s.MeasuredSeconds
	}
	return s, nil
}

// tokenITL is the distribution, in milliseconds, of inter-token latencies
// (docs/metrics.md#itl-inter-token-latency-token-level), and how many
// latencies that is. A gap an event's tokens share counts once per token;
// equal latencies are counted in SQL (tokenITLByPhase), so memory grows
// with the distinct values, not with the run's tokens.
func tokenITL(rs []stats.Repeated) (jobs.Dist, int) {
	sum := stats.SummarizeRepeated(rs)
	return jobs.Dist{Mean: sum.Mean, Min: sum.Min, Max: sum.Max, P50: sum.P50, P90: sum.P90, P95: sum.P95, P99: sum.P99}, sum.N
}

// tokenITLByPhase counts each distinct inter-token latency of the run's
// successful requests, by phase (a sweep's step; ” outside sweeps).
const tokenITLByPhase = `SELECT r.phase, u.gap::float8 / u.n / 1000, sum(u.n)::int8
	FROM results r, unnest(r.itl_gaps_us, coalesce(r.itl_tokens, array_fill(1, ARRAY[cardinality(r.itl_gaps_us)]))) AS u(gap, n)
	WHERE r.run_id = @run AND r.status = 'ok' AND r.itl_gaps_us IS NOT NULL AND u.n > 0
		AND (@steps_only::bool IS FALSE OR r.phase <> '')
	GROUP BY 1, 2`

// setPercentiles sets d's p50/p90/p95/p99 from distColumns' array.
func setPercentiles(d *jobs.Dist, ps []float64) {
	d.P50, d.P90, d.P95, d.P99 = ps[0], ps[1], ps[2], ps[3]
}

// distColumns selects the mean, min, max and p50/p90/p95/p99 (numpy's
// linear interpolation) of col over successful requests.
func distColumns(col string) string {
	return `coalesce(avg(` + col + `) FILTER (WHERE status = 'ok'), 0), coalesce(min(` + col + `) FILTER (WHERE status = 'ok'), 0),
		coalesce(max(` + col + `) FILTER (WHERE status = 'ok'), 0),
		coalesce(percentile_cont(ARRAY[0.5, 0.9, 0.95, 0.99]) WITHIN GROUP (ORDER BY ` + col + `) FILTER (WHERE status = 'ok'), ARRAY[0, 0, 0, 0]::float8[])`
}

// sloBounds are the SLOs in milliseconds, nil where not set, as the
// @ttft, @tpot and @e2e arguments of sloFilter.
func sloBounds(slo jobs.SLO) pgx.NamedArgs {
	bound := func(d jobs.Duration) *float64 {
		if d <= 0 {
			return nil
		}
		return ms(time.Duration(d))
	}
	return pgx.NamedArgs{"ttft": bound(slo.TTFT), "tpot": bound(slo.TPOT), "e2e": bound(slo.E2E)}
}

// sloFilter keeps the successful requests that met every SLO set.
const sloFilter = `status = 'ok' AND (@ttft::float8 IS NULL OR ttft_ms <= @ttft)
	AND (@tpot::float8 IS NULL OR coalesce(tpot_ms, 0) <= @tpot) AND (@e2e::float8 IS NULL OR e2e_ms <= @e2e)`

// RunSteps summarises each step of a sweep on its own (results labelled
// with a phase), in the order the steps ran; none for other profiles. One
// round trip, as RunAggregate.
func (q *Queries) RunSteps(ctx context.Context, runID int64, slo jobs.SLO) ([]jobs.StepSummary, error) {
	b := &pgx.Batch{}
	var parts stepParts
	parts.queue(b, runID, slo, false)
	if err := q.db.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	return parts.summaries(slo), nil
}

// stepParts is what a batch reads of a sweep's steps: each step's
// figures, its failed requests by class, and inter-token latencies by
// phase.
type stepParts struct {
	steps   []jobs.StepSummary
	prompts []stepPrompts // beside steps, one each
	classes map[string]map[string]int
	itl     map[string][]stats.Repeated
}

// queue adds the statements that fill p to b; withUnphased also counts the
// latencies of requests outside any step (the whole run's ITL needs them).
func (p *stepParts) queue(b *pgx.Batch, runID int64, slo jobs.SLO, withUnphased bool) {
	args := sloBounds(slo)
	args["run"] = runID
	b.Queue(`SELECT phase, count(*), count(*) FILTER (WHERE status = 'ok'), count(*) FILTER (WHERE status = 'error'),
			coalesce(sum(completion_tokens), 0), count(*) FILTER (WHERE `+sloFilter+`),
			extract(epoch FROM max(sent_at + make_interval(secs => coalesce(e2e_ms, 0) / 1000)) - min(sent_at))::float8,
			`+distColumns("ttft_ms")+`, `+distColumns("tpot_ms")+`, `+distColumns("e2e_ms")+`,
			`+distColumns("prompt_tokens::float8")+`, `+prefillRates+`
		FROM results WHERE run_id = @run AND phase <> '' GROUP BY phase ORDER BY min(sent_at)`, args).Query(func(rows pgx.Rows) error {
		var st jobs.StepSummary
		var ttftP, tpotP, e2eP, promptP []float64
		var prompt jobs.Dist
		var prefill []float64
		_, err := pgx.ForEachRow(rows, []any{&st.Name, &st.Requests, &st.OK, &st.Errors, &st.OutputTokens, &st.GoodRequests, &st.WindowSeconds,
			&st.TTFT.Mean, &st.TTFT.Min, &st.TTFT.Max, &ttftP, &st.TPOT.Mean, &st.TPOT.Min, &st.TPOT.Max, &tpotP,
			&st.E2E.Mean, &st.E2E.Min, &st.E2E.Max, &e2eP, &prompt.Mean, &prompt.Min, &prompt.Max, &promptP, &prefill}, func() error {
			setPercentiles(&st.TTFT, ttftP)
			setPercentiles(&st.TPOT, tpotP)
			setPercentiles(&st.E2E, e2eP)
			setPercentiles(&prompt, promptP)
			p.steps = append(p.steps, st)
			p.prompts = append(p.prompts, stepPrompts{tokens: prompt, prefill: prefill})
			return nil
		})
		return mapErr(err, "run steps")
	})
	b.Queue(`SELECT phase, error_class, count(*) FROM results
		WHERE run_id = @run AND phase <> '' AND status = 'error' GROUP BY 1, 2`, pgx.NamedArgs{"run": runID}).Query(func(rows pgx.Rows) error {
		p.classes = map[string]map[string]int{}
		var phase, class string
		var n int
		_, err := pgx.ForEachRow(rows, []any{&phase, &class, &n}, func() error {
			if p.classes[phase] == nil {
				p.classes[phase] = map[string]int{}
			}
			p.classes[phase][class] = n
			return nil
		})
		return mapErr(err, "step errors by class")
	})
	b.Queue(tokenITLByPhase, pgx.NamedArgs{"run": runID, "steps_only": !withUnphased}).Query(func(rows pgx.Rows) error {
		p.itl = map[string][]stats.Repeated{}
		var phase string
		var r stats.Repeated
		var n int64
		_, err := pgx.ForEachRow(rows, []any{&phase, &r.Value, &n}, func() error {
			r.Count = int(n)
			p.itl[phase] = append(p.itl[phase], r)
			return nil
		})
		return mapErr(err, "token ITL")
	})
}

// stepPrompts is what a step's successful requests were sent: their
// prompt tokens, and each one's prompt tokens ÷ TTFT, sorted.
type stepPrompts struct {
	tokens  jobs.Dist
	prefill []float64
}

// prefillRates is, sorted, each successful request's prompt tokens ÷ its
// TTFT in seconds (docs/metrics.md#length-sweeps), of requests that had
// both.
const prefillRates = `coalesce(array_agg(prompt_tokens * 1000.0 / ttft_ms ORDER BY prompt_tokens * 1000.0 / ttft_ms)
		FILTER (WHERE status = 'ok' AND prompt_tokens > 0 AND ttft_ms > 0), ARRAY[]::float8[])`

// summaries completes the steps read: rates, SLO verdicts, error classes
// and each step's own inter-token latencies.
func (p *stepParts) summaries(slo jobs.SLO) []jobs.StepSummary {
	share := slo.GoodputShare()
	for i := range p.steps {
		s := &p.steps[i]
		s.OfferedRPS = offeredRate(s.Name)
		s.ErrorsByClass = p.classes[s.Name]
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
		s.ITL, s.ITLTokens = tokenITL(p.itl[s.Name])
		if i < len(p.prompts) {
			p.prompts[i].fill(s)
		}
	}
	return p.steps
}

// fill sets a length sweep's step's lengths, the prompt lengths sent and
// their distance from the target, and the prefill speed's median with its
// 95 % interval; other steps are left as they are.
func (sp stepPrompts) fill(s *jobs.StepSummary) {
	step, ok := jobs.ParseLengthPhase(s.Name)
	if !ok {
		return
	}
	s.InputTarget, s.OutputTarget = step.Input, step.Output
	if s.OK == 0 || sp.tokens.Max == 0 {
		return // no usage reported: the prompts' lengths are not known
	}
	tokens := sp.tokens
	off := math.Max(math.Abs(tokens.Min-float64(step.Input)), math.Abs(tokens.Max-float64(step.Input)))
	s.PromptTokens, s.PromptTokensOff = &tokens, &off
	if len(sp.prefill) == 0 {
		return
	}
	mi := &jobs.MedianInterval{Median: stats.Percentile(sp.prefill, 0.5), N: len(sp.prefill)}
	if ci, ok := stats.QuantileInterval(sp.prefill, 0.5, 0.95); ok {
		mi.Lo, mi.Hi = &ci.Lo, &ci.Hi
	}
	s.PrefillTokensPerS = mi
}

// offeredRate reads the rate a constant-rate step aimed at from its label
// ("rate 2.50/s", as agentd's load generator names it); nil for the
// closed-loop steps.
func offeredRate(phase string) *float64 {
	v, ok := strings.CutPrefix(phase, "rate ")
	if !ok {
		return nil
	}
	r, err := strconv.ParseFloat(strings.TrimSuffix(v, "/s"), 64)
	if err != nil || r <= 0 || math.IsInf(r, 0) {
		return nil
	}
	return &r
}
