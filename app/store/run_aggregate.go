package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ruckus/ruckus/jobs"
)

// RunAggregateRows is what a run's summary is computed from (app/summary,
// docs/metrics.md), beside its successful requests (AnswerRow): its
// requests counted and summed, its measured time, its failures by class,
// and its steps (StepRows). The store counts and sums; distributions,
// rates and the saturation point are app/summary's.
type RunAggregateRows struct {
	Requests, OK, Errors int
	PromptTokens         int64
	OutputTokens         int64
	// EstimatedTokens counts requests whose output tokens were counted
	// client-side; GoodRequests the successful ones within every SLO set.
	EstimatedTokens int
	GoodRequests    int
	// MeasuredSeconds is the run's measured time plus the open segment's.
	MeasuredSeconds float64
	ErrorsByClass   map[string]int
	Steps           StepRows
}

// StepRows are a sweep's steps counted (in the order they ran), their
// failures by class, and the distinct inter-token latencies by phase with
// how many tokens had each.
type StepRows struct {
	Steps         []StepRow
	ErrorsByClass map[string]map[string]int // phase → class → count
	ITL           map[string][]ITLCount     // phase ("" outside steps) → latencies
}

// StepRow is one step of a sweep, counted: its requests, output tokens,
// requests within the SLOs, and its window from the first send to the last
// completion.
type StepRow struct {
	Name                 string
	Requests, OK, Errors int
	OutputTokens         int64
	GoodRequests         int
	WindowSeconds        float64
}

// ITLCount is one distinct inter-token latency, in milliseconds, and how
// many tokens had it (docs/metrics.md#itl-inter-token-latency-token-level).
type ITLCount struct {
	MS    float64
	Count int
}

// AnswerRow is one successful request's phase, timings in milliseconds
// (not valid where not measured) and token counts, as stored. They are
// handed to the caller one by one as they are read, in the order the
// database returns them, and not kept: what a caller keeps of them is its
// own.
type AnswerRow struct {
	Phase                          string
	TTFT, TPOT, E2E                pgtype.Float8
	PromptTokens, CompletionTokens int64
}

// RunAggregateRows reads what a run's summary is computed from, and hands
// each successful request's row to answer; slo decides which successful
// requests count towards goodput, and open is the measured time of a
// segment not yet closed with FinishRun. Its statements go to the database
// as one batch: one round trip, one transaction.
func (q *Queries) RunAggregateRows(ctx context.Context, runID int64, slo jobs.SLO, open time.Duration, answer func(AnswerRow)) (RunAggregateRows, error) {
	r := RunAggregateRows{ErrorsByClass: map[string]int{}}
	args := sloBounds(slo)
	args["run"], args["open"] = runID, open.Seconds()
	b := &pgx.Batch{}
	// The run's measured time is 0 to a caller who no longer sees the run
	// (an agent it was taken from, whose finish is then refused).
	b.Queue(`SELECT count(*), count(*) FILTER (WHERE status = 'ok'), count(*) FILTER (WHERE status = 'error'),
			coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), count(*) FILTER (WHERE tokens_estimated),
			count(*) FILTER (WHERE `+sloFilter+`),
			coalesce((SELECT measured_seconds + @open FROM runs WHERE id = @run), 0)
		FROM results WHERE run_id = @run`, args).QueryRow(func(row pgx.Row) error {
		return mapErr(row.Scan(&r.Requests, &r.OK, &r.Errors, &r.PromptTokens, &r.OutputTokens, &r.EstimatedTokens, &r.GoodRequests,
			&r.MeasuredSeconds), "run aggregate")
	})
	b.Queue(`SELECT error_class, count(*) FROM results WHERE run_id = @run AND status = 'error' GROUP BY 1`,
		pgx.NamedArgs{"run": runID}).Query(func(rows pgx.Rows) error {
		var class string
		var n int
		_, err := pgx.ForEachRow(rows, []any{&class, &n}, func() error {
			r.ErrorsByClass[class] = n
			return nil
		})
		return mapErr(err, "run errors by class")
	})
	r.Steps.queue(b, runID, slo, true, answer)
	return r, q.db.SendBatch(ctx, b).Close()
}

// RunStepRows reads what a sweep's steps are summarised from, each on its
// own (results labelled with a phase), and hands each of their successful
// requests' rows to answer; no steps for other profiles. One round trip,
// as RunAggregateRows.
func (q *Queries) RunStepRows(ctx context.Context, runID int64, slo jobs.SLO, answer func(AnswerRow)) (StepRows, error) {
	b := &pgx.Batch{}
	var s StepRows
	s.queue(b, runID, slo, false, answer)
	return s, q.db.SendBatch(ctx, b).Close()
}

// tokenITLByPhase counts each distinct inter-token latency of the run's
// successful requests, by phase (a sweep's step; ” outside sweeps). A gap
// an event's tokens share counts once per token; equal latencies are
// counted here, so what is read grows with the distinct values, not with
// the run's tokens.
const tokenITLByPhase = `SELECT r.phase, u.gap::float8 / u.n / 1000, sum(u.n)::int8
	FROM results r, unnest(r.itl_gaps_us, coalesce(r.itl_tokens, array_fill(1, ARRAY[cardinality(r.itl_gaps_us)]))) AS u(gap, n)
	WHERE r.run_id = @run AND r.status = 'ok' AND r.itl_gaps_us IS NOT NULL AND u.n > 0
		AND (@steps_only::bool IS FALSE OR r.phase <> '')
	GROUP BY 1, 2`

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

// queue adds the statements that fill s, and hand answer the successful
// requests, to b; withUnphased also reads the requests outside any step
// (the whole run's distributions need them).
func (s *StepRows) queue(b *pgx.Batch, runID int64, slo jobs.SLO, withUnphased bool, answer func(AnswerRow)) {
	args := sloBounds(slo)
	args["run"] = runID
	b.Queue(`SELECT phase, count(*), count(*) FILTER (WHERE status = 'ok'), count(*) FILTER (WHERE status = 'error'),
			coalesce(sum(completion_tokens), 0), count(*) FILTER (WHERE `+sloFilter+`),
			extract(epoch FROM max(sent_at + make_interval(secs => coalesce(e2e_ms, 0) / 1000)) - min(sent_at))::float8
		FROM results WHERE run_id = @run AND phase <> '' GROUP BY phase ORDER BY min(sent_at)`, args).Query(func(rows pgx.Rows) error {
		var st StepRow
		_, err := pgx.ForEachRow(rows, []any{&st.Name, &st.Requests, &st.OK, &st.Errors, &st.OutputTokens, &st.GoodRequests, &st.WindowSeconds}, func() error {
			s.Steps = append(s.Steps, st)
			return nil
		})
		return mapErr(err, "run steps")
	})
	b.Queue(`SELECT phase, error_class, count(*) FROM results
		WHERE run_id = @run AND phase <> '' AND status = 'error' GROUP BY 1, 2`, pgx.NamedArgs{"run": runID}).Query(func(rows pgx.Rows) error {
		s.ErrorsByClass = map[string]map[string]int{}
		var phase, class string
		var n int
		_, err := pgx.ForEachRow(rows, []any{&phase, &class, &n}, func() error {
			if s.ErrorsByClass[phase] == nil {
				s.ErrorsByClass[phase] = map[string]int{}
			}
			s.ErrorsByClass[phase][class] = n
			return nil
		})
		return mapErr(err, "step errors by class")
	})
	only := pgx.NamedArgs{"run": runID, "steps_only": !withUnphased}
	b.Queue(tokenITLByPhase, only).Query(func(rows pgx.Rows) error {
		s.ITL = map[string][]ITLCount{}
		var phase string
		var c ITLCount
		var n int64
		_, err := pgx.ForEachRow(rows, []any{&phase, &c.MS, &n}, func() error {
			c.Count = int(n)
			s.ITL[phase] = append(s.ITL[phase], c)
			return nil
		})
		return mapErr(err, "token ITL")
	})
	b.Queue(`SELECT phase, ttft_ms, tpot_ms, e2e_ms, prompt_tokens, completion_tokens FROM results
		WHERE run_id = @run AND status = 'ok' AND (@steps_only::bool IS FALSE OR phase <> '')`, only).Query(func(rows pgx.Rows) error {
		var a AnswerRow
		_, err := pgx.ForEachRow(rows, []any{&a.Phase, &a.TTFT, &a.TPOT, &a.E2E, &a.PromptTokens, &a.CompletionTokens}, func() error {
			answer(a)
			return nil
		})
		return mapErr(err, "run answers")
	})
}
