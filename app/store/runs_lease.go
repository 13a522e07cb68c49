package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/jobs"
)

// ErrFenced is returned to an agent whose hold on a run is gone: the run
// was reassigned to another agent (or handed back) and its writes are
// refused. The agent stops working the run.
var ErrFenced = errors.New("this agent no longer holds the run (it was reassigned): its writes are refused")

// ErrStaleJob is returned when a job no longer drives its run: the run was
// cancelled, finished, or re-queued on another job.
var ErrStaleJob = errors.New("the run is no longer worked by this job")

// ErrRunCancelled is returned to an agent whose run its user cancelled.
var ErrRunCancelled = errors.New("the run was cancelled")

// Lease is an agent's hold on a run. Every write an agent makes names it;
// a write under an older fence changes nothing and returns ErrFenced.
type Lease struct {
	RunID   int64
	AgentID int64
	Fence   int64
}

// ClaimedRun is what an agent learns when it takes a run.
type ClaimedRun struct {
	Lease
	DatasetID int64
	Total     int
	// Samples is the answers asked for each item (Total is items ×
	// Samples).
	Samples   int
	Completed int
	Errors    int
	// Measured is the measured load time of earlier segments.
	Measured time.Duration
	// Resumed is true when the run had been started before (by this or
	// another agent) and continues from its persisted results.
	Resumed bool
}

// ClaimRun takes a run for an agent working River job jobID: the fence is
// bumped (so whoever held it before can no longer write), the run is
// running under this agent, and the event is recorded in the same
// statement. A job that no longer drives the run (cancelled, finished,
// re-queued on another job) gets ErrStaleJob.
func (q *Queries) ClaimRun(ctx context.Context, runID, agentID, jobID int64, mode string) (ClaimedRun, error) {
	var c ClaimedRun
	var measured float64
	// The event's row is checked against the agent's policy with the
	// statement's snapshot, in which the run is still claimable.
	err := q.db.QueryRow(ctx, `WITH old AS (
			SELECT id, started_at IS NOT NULL AS was_started FROM runs
			WHERE id = @run AND river_job_id = @job AND state IN ('queued', 'running') FOR UPDATE
		), upd AS (
			UPDATE runs r SET fence = r.fence + 1, agent_id = @agent, state = 'running', mode = @mode,
				waiting_for_agent = false, started_at = coalesce(r.started_at, now()), segment_started_at = now(),
				resumed = r.resumed + CASE WHEN old.was_started THEN 1 ELSE 0 END
			FROM benchmarks b, old
			WHERE r.id = old.id AND b.id = r.benchmark_id
			RETURNING r.id, r.fence, b.dataset_id, r.total, r.samples, r.completed, r.errors, r.measured_seconds, old.was_started
		), ev AS (
			INSERT INTO run_events (run_id, agent_id, kind, message)
			SELECT id, @agent, CASE WHEN was_started THEN 'resumed' ELSE 'started' END,
				CASE WHEN was_started THEN format('resumed after %s of %s items', completed, total) ELSE 'started' END FROM upd
		)
		SELECT fence, dataset_id, total, samples, completed, errors, measured_seconds, was_started FROM upd`,
		pgx.NamedArgs{"run": runID, "agent": agentID, "job": jobID, "mode": mode}).
		Scan(&c.Fence, &c.DatasetID, &c.Total, &c.Samples, &c.Completed, &c.Errors, &measured, &c.Resumed)
	c.Measured = time.Duration(measured * float64(time.Second))
	if errors.Is(err, pgx.ErrNoRows) {
		return c, fmt.Errorf("run %d, job %d: %w", runID, jobID, ErrStaleJob)
	}
	if err != nil {
		return c, mapErr(err, "claim run")
	}
	c.RunID, c.AgentID = runID, agentID
	return c, nil
}

// PendingItem is a dataset item a run has yet to send (one of its
// samples, when the run asks for several answers per item).
type PendingItem struct {
	Idx      int
	Sample   int
	CustomID string
	Request  []byte
}

// PendingItems returns the run's requests (total of them: its dataset's
// first items, each as many times as the run's samples) that have no
// result yet, in item and sample order: all of them for a new run, the
// rest for a resumed one. A run with few-shot prompts sends those
// (run_prompts) instead of the dataset's requests.
func (q *Queries) PendingItems(ctx context.Context, runID, datasetID int64, total int) ([]PendingItem, error) {
	rows, _ := q.db.Query(ctx, `WITH ru AS (SELECT greatest(samples, 1) AS n FROM runs WHERE id = @run)
		SELECT i.idx, s.sample, i.custom_id, coalesce(p.request, i.request)::text FROM ru, dataset_items i
		LEFT JOIN run_prompts p ON p.run_id = @run AND p.idx = i.idx
		CROSS JOIN LATERAL generate_series(0, (SELECT n FROM ru) - 1) AS s(sample)
		WHERE i.dataset_id = @ds AND i.idx < @total / ru.n
		AND NOT EXISTS (SELECT 1 FROM results r WHERE r.run_id = @run AND r.idx = i.idx AND r.sample = s.sample)
		ORDER BY i.idx, s.sample`, pgx.NamedArgs{"ds": datasetID, "total": total, "run": runID})
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (PendingItem, error) {
		var it PendingItem
		var req string
		err := row.Scan(&it.Idx, &it.Sample, &it.CustomID, &req)
		it.Request = []byte(req)
		return it, err
	})
	return items, mapErr(err, "pending items")
}

// AnsweredItem is an item an earlier segment of a run sent, with what came
// back: what a resumed multi-turn conversation needs of its earlier turns.
type AnsweredItem struct {
	PendingItem
	OK     bool
	Output string
}

// AnsweredItems returns the run's items (the first total of its dataset)
// that have a result, in order, with the result's status and output.
func (q *Queries) AnsweredItems(ctx context.Context, runID, datasetID int64, total int) ([]AnsweredItem, error) {
	rows, _ := q.db.Query(ctx, `SELECT i.idx, i.custom_id, coalesce(p.request, i.request)::text, r.status = 'ok', coalesce(r.output, '') FROM dataset_items i
		JOIN results r ON r.run_id = @run AND r.idx = i.idx
		LEFT JOIN run_prompts p ON p.run_id = @run AND p.idx = i.idx
		WHERE i.dataset_id = @ds AND i.idx < @total
		ORDER BY i.idx`, pgx.NamedArgs{"ds": datasetID, "total": total, "run": runID})
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (AnsweredItem, error) {
		var it AnsweredItem
		var req string
		err := row.Scan(&it.Idx, &it.CustomID, &req, &it.OK, &it.Output)
		it.Request = []byte(req)
		return it, err
	})
	return items, mapErr(err, "answered items")
}

// ResultRecord is a result as the agent writes it: the protocol's record
// and the wall-clock time it was sent.
type ResultRecord struct {
	jobs.Result
	SentAt time.Time
}

func ms(d time.Duration) *float64 {
	v := float64(d) / float64(time.Millisecond)
	return &v
}

// int4 bounds a count from an agent or a runtime to what an integer
// column holds, rather than letting it wrap to a negative number.
func int4(v int) int32 { return int32(min(max(v, 0), math.MaxInt32)) }

// intArrayLiteral writes vs as a PostgreSQL array literal ({1,2,3}); nil
// when there are none.
func intArrayLiteral(vs []int32) *string {
	if len(vs) == 0 {
		return nil
	}
	b := make([]byte, 0, 2+len(vs)*6)
	b = append(b, '{')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	s := string(append(b, '}'))
	return &s
}

func msOrNull(d time.Duration) *float64 {
	if d <= 0 {
		return nil
	}
	return ms(d)
}

// resultBatch is a batch of results as WriteResults sends them: one
// array per column of results, element i of each from the batch's i-th
// result.
type resultBatch struct {
	Idx       []int32
	Sample    []int32
	CustomID  []string
	Status    []string
	Output    []string
	Finish    []string
	Prompt    []int32
	Compl     []int32
	Estimated []bool
	SentAt    []time.Time
	TTFT      []*float64
	E2E       []*float64
	TPOT      []*float64
	ITLMean   []*float64
	ITLP50    []*float64
	ITLP99    []*float64
	ITLMax    []*float64
	Events    []int32
	HTTP      []*int32
	ReqID     []string
	ErrClass  []string
	Err       []string
	Phase     []string
	// Arrays of arrays must be rectangular in PostgreSQL, so each
	// request's gaps travel as an array literal, cast on arrival.
	ITLGaps   []*string
	ITLTokens []*string
}

// add appends r to the batch, each value bounded to its column.
func (c *resultBatch) add(r ResultRecord) {
	var ttft, e2e *float64
	if r.ContentEvents > 0 {
		ttft = ms(r.TTFT)
	}
	if r.E2E > 0 {
		e2e = ms(r.E2E)
	}
	var http *int32
	if r.HTTPStatus != 0 {
		s := int32(r.HTTPStatus)
		http = &s
	}
	gaps, tokens := intArrayLiteral(r.ITLGapsMicros), intArrayLiteral(r.ITLTokens)
	if gaps == nil || len(r.ITLTokens) != len(r.ITLGapsMicros) {
		tokens = nil
	}
	c.Idx = append(c.Idx, int32(r.Idx))
	c.Sample = append(c.Sample, int32(min(max(r.Sample, 0), jobs.MaxSamples-1)))
	c.CustomID = append(c.CustomID, r.CustomID)
	c.Status = append(c.Status, r.Status)
	c.Output = append(c.Output, r.Output)
	c.Finish = append(c.Finish, r.FinishReason)
	c.Prompt = append(c.Prompt, int4(r.PromptTokens))
	c.Compl = append(c.Compl, int4(r.CompletionTokens))
	c.Estimated = append(c.Estimated, r.TokensEstimated)
	c.SentAt = append(c.SentAt, r.SentAt)
	c.TTFT = append(c.TTFT, ttft)
	c.E2E = append(c.E2E, e2e)
	c.TPOT = append(c.TPOT, msOrNull(r.TPOT))
	c.ITLMean = append(c.ITLMean, msOrNull(r.ITLMean))
	c.ITLP50 = append(c.ITLP50, msOrNull(r.ITLP50))
	c.ITLP99 = append(c.ITLP99, msOrNull(r.ITLP99))
	c.ITLMax = append(c.ITLMax, msOrNull(r.ITLMax))
	c.Events = append(c.Events, int4(r.ContentEvents))
	c.HTTP = append(c.HTTP, http)
	c.ReqID = append(c.ReqID, r.RequestID)
	c.ErrClass = append(c.ErrClass, r.ErrorClass)
	c.Err = append(c.Err, r.Error)
	c.Phase = append(c.Phase, r.Phase)
	c.ITLGaps = append(c.ITLGaps, gaps)
	c.ITLTokens = append(c.ITLTokens, tokens)
}

// args names the columns for WriteResults' statement.
func (c *resultBatch) args(l Lease) pgx.NamedArgs {
	return pgx.NamedArgs{
		"run":        l.RunID,
		"fence":      l.Fence,
		"agent":      l.AgentID,
		"idx":        c.Idx,
		"sample":     c.Sample,
		"custom_id":  c.CustomID,
		"status":     c.Status,
		"output":     c.Output,
		"finish":     c.Finish,
		"prompt":     c.Prompt,
		"compl":      c.Compl,
		"estimated":  c.Estimated,
		"sent_at":    c.SentAt,
		"ttft":       c.TTFT,
		"e2e":        c.E2E,
		"tpot":       c.TPOT,
		"itl_mean":   c.ITLMean,
		"itl_p50":    c.ITLP50,
		"itl_p99":    c.ITLP99,
		"itl_max":    c.ITLMax,
		"events":     c.Events,
		"http":       c.HTTP,
		"req_id":     c.ReqID,
		"err_class":  c.ErrClass,
		"err":        c.Err,
		"phase":      c.Phase,
		"itl_gaps":   c.ITLGaps,
		"itl_tokens": c.ITLTokens,
	}
}

// WriteResults stores a batch of results under the lease, in one
// statement: rows already stored for the same item are left as they are
// (a resumed run never counts an item twice) and the run's counters grow
// by what was new. Returns how many rows were new, or ErrFenced (nothing
// written) when the lease is gone.
func (q *Queries) WriteResults(ctx context.Context, l Lease, rs []ResultRecord) (int, error) {
	var cols resultBatch
	for _, r := range rs {
		cols.add(r)
	}
	var inserted int
	err := q.db.QueryRow(ctx, `WITH lease AS (
			SELECT id FROM runs WHERE id = @run AND fence = @fence FOR UPDATE
		), ins AS (
			INSERT INTO results (run_id, idx, sample, custom_id, status, output, finish_reason, prompt_tokens, completion_tokens,
				tokens_estimated, sent_at, ttft_ms, e2e_ms, tpot_ms, itl_mean_ms, itl_p50_ms, itl_p99_ms, itl_max_ms,
				content_events, http_status, request_id, error_class, error, phase, itl_gaps_us, itl_tokens, agent_id)
			SELECT @run, u.idx, u.sample, u.custom_id, u.status, u.output, u.finish, u.prompt, u.compl, u.estimated, u.sent_at, u.ttft, u.e2e,
				u.tpot, u.itl_mean, u.itl_p50, u.itl_p99, u.itl_max, u.events, u.http, u.req_id, u.err_class, u.err, u.phase,
				u.itl_gaps::int4[], u.itl_tokens::int4[], @agent FROM unnest(@idx::int4[], @custom_id::text[], @status::text[], @output::text[], @finish::text[],
				@prompt::int4[], @compl::int4[], @estimated::bool[], @sent_at::timestamptz[], @ttft::float8[], @e2e::float8[],
				@tpot::float8[], @itl_mean::float8[], @itl_p50::float8[], @itl_p99::float8[], @itl_max::float8[],
				@events::int4[], @http::int4[], @req_id::text[], @err_class::text[], @err::text[], @phase::text[],
				@itl_gaps::text[], @itl_tokens::text[], @sample::int4[])
				AS u(idx, custom_id, status, output, finish, prompt, compl, estimated, sent_at, ttft, e2e, tpot, itl_mean, itl_p50,
					itl_p99, itl_max, events, http, req_id, err_class, err, phase, itl_gaps, itl_tokens, sample)
			WHERE EXISTS (SELECT 1 FROM lease)
			ON CONFLICT (run_id, idx, sample) DO NOTHING
			RETURNING status, prompt_tokens, completion_tokens
		)
		UPDATE runs SET completed = completed + (SELECT count(*) FROM ins),
			errors = errors + (SELECT count(*) FROM ins WHERE status = 'error'),
			prompt_tokens = prompt_tokens + (SELECT coalesce(sum(prompt_tokens), 0) FROM ins),
			output_tokens = output_tokens + (SELECT coalesce(sum(completion_tokens), 0) FROM ins)
		WHERE id = (SELECT id FROM lease)
		RETURNING (SELECT count(*) FROM ins)`, cols.args(l)).Scan(&inserted)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("write results of run %d: %w", l.RunID, ErrFenced)
	}
	return inserted, mapErr(err, "write results")
}

// Progress is the live figures of a run in flight.
type Progress struct {
	// Throughput is output tokens/s and RequestsPerS requests/s over the
	// current segment's measured window.
	Throughput   float64
	RequestsPerS float64
	// ETA is the time left at the present pace; nil when unknown.
	ETA *time.Duration
}

// Sample is one point of a run's charts.
type Sample struct {
	At          time.Time
	GPUUtil     *float64
	GPUMemBytes *int64
	GPUPowerW   *float64
	EnergyJ     *float64
	Running     *float64
	Waiting     *float64
	KVCache     *float64
	// Preemptions is the runtime's count of preempted requests so far.
	Preemptions *float64
	// GPUSimulated marks GPU readings drawn from the simulated runtime's
	// load (--sim-gpu), not measured.
	GPUSimulated bool
	NodeReading
}

// NodeReading is a sample's node figures: its CPU utilisation (0–100 % of
// all CPUs), memory in use and in total, and the runtime's process tree's
// CPU share (on the node's scale) and resident memory; nil when not
// measured.
type NodeReading struct {
	CPUUtil       *float64
	MemUsedBytes  *int64
	MemTotalBytes *int64
	ProcCPUUtil   *float64
	ProcRSSBytes  *int64
}

// UpdateProgress sets the run's live figures and appends a sample for its
// charts, under the lease.
func (q *Queries) UpdateProgress(ctx context.Context, l Lease, p Progress, s Sample) error {
	var eta *float64
	if p.ETA != nil {
		v := p.ETA.Seconds()
		eta = &v
	}
	var ok bool
	err := q.db.QueryRow(ctx, `WITH upd AS (
			UPDATE runs SET throughput = @tps, requests_per_s = @rps, eta_seconds = @eta, progress_at = now()
			WHERE id = @run AND fence = @fence RETURNING id, completed, errors, output_tokens
		), smp AS (
			INSERT INTO run_samples (run_id, t, completed, errors, output_tokens, throughput, gpu_util, gpu_mem_bytes,
				gpu_power_w, energy_j, running, waiting, kv_cache, gpu_simulated, cpu_util, mem_used_bytes, mem_total_bytes, proc_cpu_util,
				proc_rss_bytes, preemptions)
			SELECT id, @t, completed, errors, output_tokens, @tps, @util, @mem, @power, @energy, @running, @waiting, @kv, @gpu_sim,
				@cpu, @mem_used, @mem_total, @proc_cpu, @proc_rss, @preempt FROM upd
			ON CONFLICT (run_id, t) DO NOTHING
		)
		SELECT EXISTS (SELECT 1 FROM upd)`,
		pgx.NamedArgs{"run": l.RunID, "fence": l.Fence, "tps": p.Throughput, "rps": p.RequestsPerS, "eta": eta,
			"t": s.At, "util": s.GPUUtil, "mem": s.GPUMemBytes, "power": s.GPUPowerW, "energy": s.EnergyJ,
			"running": s.Running, "waiting": s.Waiting, "kv": s.KVCache, "gpu_sim": s.GPUSimulated, "cpu": s.CPUUtil,
			"mem_used": s.MemUsedBytes, "mem_total": s.MemTotalBytes, "proc_cpu": s.ProcCPUUtil, "proc_rss": s.ProcRSSBytes,
			"preempt": s.Preemptions}).Scan(&ok)
	if err != nil {
		return mapErr(err, "update progress")
	}
	if !ok {
		return fmt.Errorf("progress of run %d: %w", l.RunID, ErrFenced)
	}
	return nil
}

// CheckLease tells an agent working a run whether to go on: nil, or
// ErrRunCancelled when the user cancelled it, or ErrFenced when it was
// reassigned (an agent's role no longer sees a run another agent holds).
// Agents read it a few times a second while a run is in progress: River's
// own cancellation travels by LISTEN/NOTIFY, which an agent behind
// PgBouncer in transaction mode does not have, and its poll-only fallback
// is slower than a user waiting for a cancel should wait.
func (q *Queries) CheckLease(ctx context.Context, l Lease) error {
	var state string
	var fence int64
	err := q.db.QueryRow(ctx, `SELECT state, fence FROM runs WHERE id = @run`, pgx.NamedArgs{"run": l.RunID}).Scan(&state, &fence)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("run %d: %w", l.RunID, ErrFenced)
	case err != nil:
		return mapErr(err, "run control")
	case fence != l.Fence:
		return fmt.Errorf("run %d: %w", l.RunID, ErrFenced)
	case state == "cancelled":
		return fmt.Errorf("run %d: %w", l.RunID, ErrRunCancelled)
	}
	return nil
}

// Finish is how an agent closes its work on a run.
type Finish struct {
	// State is completed, failed or cancelled; a run the user cancelled
	// stays cancelled whatever the agent says.
	State      string
	StoppedBy  string
	Error      string
	Segment    time.Duration // measured load time of this agent's segment
	Summary    []byte        // JSON: jobs.RunSummary
	GPUSummary []byte        // JSON, nil without GPUs
	// NodeSummary is the node's CPU and memory (JSON), nil when unread.
	NodeSummary []byte
	LoadTime    *time.Duration
	RuntimeLog  string
	// Final figures over the whole measured window.
	Throughput   float64
	RequestsPerS float64
}

// FinishRun closes the run under the lease.
func (q *Queries) FinishRun(ctx context.Context, l Lease, f Finish) error {
	var load *float64
	if f.LoadTime != nil {
		load = ms(*f.LoadTime)
	}
	var summary, gpu *string
	if f.Summary != nil {
		s := string(f.Summary)
		summary = &s
	}
	if f.GPUSummary != nil {
		s := string(f.GPUSummary)
		gpu = &s
	}
	var node *string
	if f.NodeSummary != nil {
		s := string(f.NodeSummary)
		node = &s
	}
	// The end and its event in one statement: the end closes the run to
	// its agent (migration 0024), whose event then could not go in after it.
	var n int
	err := q.db.QueryRow(ctx, `WITH upd AS (
			UPDATE runs SET state = CASE WHEN state = 'cancelled' THEN 'cancelled' ELSE @state END,
				stopped_by = @stopped, error = @error, throughput = @tps, requests_per_s = @rps, finished_at = coalesce(finished_at, now()),
				measured_seconds = measured_seconds + @seg, segment_started_at = NULL, eta_seconds = NULL,
				summary = coalesce(@summary::jsonb, summary), gpu_summary = coalesce(@gpu::jsonb, gpu_summary),
				node_summary = coalesce(@node::jsonb, node_summary),
				load_time_ms = coalesce(@load, load_time_ms), runtime_log = CASE WHEN @log = '' THEN runtime_log ELSE @log END
			WHERE id = @run AND fence = @fence
			RETURNING id
		), ev AS (
			INSERT INTO run_events (run_id, agent_id, kind, message) SELECT id, @agent, @kind, @stopped FROM upd
		)
		SELECT count(*) FROM upd`,
		pgx.NamedArgs{"run": l.RunID, "fence": l.Fence, "agent": l.AgentID, "kind": f.State, "state": f.State, "stopped": f.StoppedBy,
			"error": f.Error, "seg": f.Segment.Seconds(), "tps": f.Throughput, "rps": f.RequestsPerS, "summary": summary, "gpu": gpu, "node": node,
			"load": load, "log": f.RuntimeLog}).Scan(&n)
	if err != nil {
		return mapErr(err, "finish run")
	}
	if n == 0 {
		return fmt.Errorf("finish run %d: %w", l.RunID, ErrFenced)
	}
	return nil
}

// HandBackRun gives a run back to the queue (agentd stopping with the run
// unfinished): the fence moves on, so the next agent to take it resumes
// from the persisted results. The event goes in the same statement.
func (q *Queries) HandBackRun(ctx context.Context, l Lease, segment time.Duration, why string) error {
	var n int
	err := q.db.QueryRow(ctx, `WITH upd AS (
			UPDATE runs SET fence = fence + 1, agent_id = NULL,
				state = CASE WHEN state = 'running' THEN 'queued' ELSE state END,
				measured_seconds = measured_seconds + @seg, segment_started_at = NULL, eta_seconds = NULL
			WHERE id = @run AND fence = @fence
			RETURNING id
		), ev AS (
			INSERT INTO run_events (run_id, agent_id, kind, message) SELECT id, @agent, 'handed_back', @why FROM upd
		)
		SELECT count(*) FROM upd`,
		pgx.NamedArgs{"run": l.RunID, "fence": l.Fence, "seg": segment.Seconds(), "agent": l.AgentID, "why": why}).Scan(&n)
	if err != nil {
		return mapErr(err, "hand back run")
	}
	if n == 0 {
		return fmt.Errorf("hand back run %d: %w", l.RunID, ErrFenced)
	}
	return nil
}

// SetRunRefused fails a queued run whose job an agent refused (another
// protocol version), so the page says why instead of waiting forever.
func (q *Queries) SetRunRefused(ctx context.Context, runID, jobID int64, why string) error {
	_, err := q.db.Exec(ctx, `UPDATE runs SET state = 'failed', error = @why, finished_at = now()
		WHERE id = @run AND river_job_id = @job AND state = 'queued'`, pgx.NamedArgs{"run": runID, "job": jobID, "why": why})
	return mapErr(err, "refuse run")
}

// FinishAbandonedJob closes the River job of a run that was reassigned
// because its agent stopped heartbeating: River's JobCancel only asks a
// running job's worker to stop, and a dead worker never hears it, so the
// job would show "running" until River's rescuer came for it a day later.
// Marked cancelled here, it says what happened; should the agent come back,
// River's completion of it changes nothing (it is no longer running) and
// the run's fence refuses its writes. It reports whether the job was
// still running.
func (q *Queries) FinishAbandonedJob(ctx context.Context, jobID int64, why string) (bool, error) {
	tag, err := q.db.Exec(ctx, `UPDATE river_job SET state = 'cancelled', finalized_at = now(),
			errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt, 'error', @why::text, 'trace', ''))
		WHERE id = @id AND state = 'running'`, pgx.NamedArgs{"id": jobID, "why": why})
	if err != nil {
		return false, mapErr(err, "finish abandoned job")
	}
	return tag.RowsAffected() == 1, nil
}
