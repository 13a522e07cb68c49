package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/app/stats"
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
// running under this agent, and the event is recorded. A job that no
// longer drives the run (cancelled, finished, re-queued on another job)
// gets ErrStaleJob.
func (q *Queries) ClaimRun(ctx context.Context, runID, agentID, jobID int64, mode string) (ClaimedRun, error) {
	var c ClaimedRun
	var measured float64
	err := q.db.QueryRow(ctx, `WITH old AS (
			SELECT id, started_at IS NOT NULL AS was_started FROM runs
			WHERE id = @run AND river_job_id = @job AND state IN ('queued', 'running') FOR UPDATE
		)
		UPDATE runs r SET fence = r.fence + 1, agent_id = @agent, state = 'running', mode = @mode,
			waiting_for_agent = false, started_at = coalesce(r.started_at, now()), segment_started_at = now(),
			resumed = r.resumed + CASE WHEN old.was_started THEN 1 ELSE 0 END
		FROM benchmarks b, old
		WHERE r.id = old.id AND b.id = r.benchmark_id
		RETURNING r.fence, b.dataset_id, r.total, r.samples, r.completed, r.errors, r.measured_seconds, old.was_started`,
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
	kind, msg := "started", "started"
	if c.Resumed {
		kind, msg = "resumed", fmt.Sprintf("resumed after %d of %d items", c.Completed, c.Total)
	}
	return c, q.AddRunEvent(ctx, runID, &agentID, kind, msg)
}

// AddRunEvent appends to a run's story.
func (q *Queries) AddRunEvent(ctx context.Context, runID int64, agentID *int64, kind, message string) error {
	_, err := q.db.Exec(ctx, `INSERT INTO run_events (run_id, agent_id, kind, message) VALUES (@run, @agent, @kind, @msg)`,
		pgx.NamedArgs{"run": runID, "agent": agentID, "kind": kind, "msg": message})
	return mapErr(err, "add run event")
}

// RunEvent is one line of a run's story.
type RunEvent struct {
	At        time.Time
	AgentName string
	Kind      string
	Message   string
}

// RunEvents returns a run's story, oldest first.
func (q *Queries) RunEvents(ctx context.Context, runID int64) ([]RunEvent, error) {
	rows, _ := q.db.Query(ctx, `SELECT e.at, coalesce(a.name, ''), e.kind, e.message
		FROM run_events e LEFT JOIN agents a ON a.id = e.agent_id WHERE e.run_id = @run ORDER BY e.id`, pgx.NamedArgs{"run": runID})
	es, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (RunEvent, error) {
		var e RunEvent
		err := row.Scan(&e.At, &e.AgentName, &e.Kind, &e.Message)
		return e, err
	})
	return es, mapErr(err, "run events")
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

// WriteResults stores a batch of results under the lease, in one
// statement: rows already stored for the same item are left as they are
// (a resumed run never counts an item twice) and the run's counters grow
// by what was new. Returns how many rows were new, or ErrFenced (nothing
// written) when the lease is gone.
func (q *Queries) WriteResults(ctx context.Context, l Lease, rs []ResultRecord) (int, error) {
	n := len(rs)
	var (
		idx, promptT, complT, events, httpStatus                         = make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n), make([]*int32, n)
		sample                                                           = make([]int32, n)
		customID, status, output, finish, reqID, errClass, errMsg, phase = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		estimated                                                        = make([]bool, n)
		sentAt                                                           = make([]time.Time, n)
		ttft, e2e, tpot, itlMean, itlP50, itlP99, itlMax                 = make([]*float64, n), make([]*float64, n), make([]*float64, n), make([]*float64, n), make([]*float64, n), make([]*float64, n), make([]*float64, n)
		// Arrays of arrays must be rectangular in PostgreSQL, so each
		// request's gaps travel as an array literal, cast on arrival.
		itlGaps, itlTokens = make([]*string, n), make([]*string, n)
	)
	for i, r := range rs {
		idx[i], promptT[i], complT[i], events[i] = int32(r.Idx), int4(r.PromptTokens), int4(r.CompletionTokens), int4(r.ContentEvents)
		sample[i] = int32(min(max(r.Sample, 0), jobs.MaxSamples-1))
		itlGaps[i], itlTokens[i] = intArrayLiteral(r.ITLGapsMicros), intArrayLiteral(r.ITLTokens)
		if itlGaps[i] == nil || len(r.ITLTokens) != len(r.ITLGapsMicros) {
			itlTokens[i] = nil
		}
		if r.HTTPStatus != 0 {
			s := int32(r.HTTPStatus)
			httpStatus[i] = &s
		}
		customID[i], status[i], output[i], finish[i] = r.CustomID, r.Status, r.Output, r.FinishReason
		reqID[i], errClass[i], errMsg[i], phase[i] = r.RequestID, r.ErrorClass, r.Error, r.Phase
		estimated[i], sentAt[i] = r.TokensEstimated, r.SentAt
		if r.ContentEvents > 0 {
			ttft[i] = ms(r.TTFT)
		}
		if r.E2E > 0 {
			e2e[i] = ms(r.E2E)
		}
		tpot[i], itlMean[i], itlP50[i], itlP99[i], itlMax[i] = msOrNull(r.TPOT), msOrNull(r.ITLMean), msOrNull(r.ITLP50), msOrNull(r.ITLP99), msOrNull(r.ITLMax)
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
		RETURNING (SELECT count(*) FROM ins)`,
		pgx.NamedArgs{"run": l.RunID, "fence": l.Fence, "agent": l.AgentID,
			"idx": idx, "custom_id": customID, "status": status, "output": output, "finish": finish,
			"prompt": promptT, "compl": complT, "estimated": estimated, "sent_at": sentAt, "ttft": ttft, "e2e": e2e,
			"tpot": tpot, "itl_mean": itlMean, "itl_p50": itlP50, "itl_p99": itlP99, "itl_max": itlMax,
			"events": events, "http": httpStatus, "req_id": reqID, "err_class": errClass, "err": errMsg, "phase": phase,
			"itl_gaps": itlGaps, "itl_tokens": itlTokens, "sample": sample,
		}).Scan(&inserted)
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
				proc_rss_bytes)
			SELECT id, @t, completed, errors, output_tokens, @tps, @util, @mem, @power, @energy, @running, @waiting, @kv, @gpu_sim,
				@cpu, @mem_used, @mem_total, @proc_cpu, @proc_rss FROM upd
			ON CONFLICT (run_id, t) DO NOTHING
		)
		SELECT EXISTS (SELECT 1 FROM upd)`,
		pgx.NamedArgs{"run": l.RunID, "fence": l.Fence, "tps": p.Throughput, "rps": p.RequestsPerS, "eta": eta,
			"t": s.At, "util": s.GPUUtil, "mem": s.GPUMemBytes, "power": s.GPUPowerW, "energy": s.EnergyJ,
			"running": s.Running, "waiting": s.Waiting, "kv": s.KVCache, "gpu_sim": s.GPUSimulated, "cpu": s.CPUUtil,
			"mem_used": s.MemUsedBytes, "mem_total": s.MemTotalBytes, "proc_cpu": s.ProcCPUUtil, "proc_rss": s.ProcRSSBytes}).Scan(&ok)
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
// from the persisted results.
func (q *Queries) HandBackRun(ctx context.Context, l Lease, segment time.Duration, why string) error {
	tag, err := q.db.Exec(ctx, `UPDATE runs SET fence = fence + 1, agent_id = NULL,
			state = CASE WHEN state = 'running' THEN 'queued' ELSE state END,
			measured_seconds = measured_seconds + @seg, segment_started_at = NULL, eta_seconds = NULL
		WHERE id = @run AND fence = @fence`,
		pgx.NamedArgs{"run": l.RunID, "fence": l.Fence, "seg": segment.Seconds()})
	if err != nil {
		return mapErr(err, "hand back run")
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("hand back run %d: %w", l.RunID, ErrFenced)
	}
	return q.AddRunEvent(ctx, l.RunID, &l.AgentID, "handed_back", why)
}

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
			`+distColumns("ttft_ms")+`, `+distColumns("tpot_ms")+`, `+distColumns("e2e_ms")+`
		FROM results WHERE run_id = @run AND phase <> '' GROUP BY phase ORDER BY min(sent_at)`, args).Query(func(rows pgx.Rows) error {
		var st jobs.StepSummary
		var ttftP, tpotP, e2eP []float64
		_, err := pgx.ForEachRow(rows, []any{&st.Name, &st.Requests, &st.OK, &st.Errors, &st.OutputTokens, &st.GoodRequests, &st.WindowSeconds,
			&st.TTFT.Mean, &st.TTFT.Min, &st.TTFT.Max, &ttftP, &st.TPOT.Mean, &st.TPOT.Min, &st.TPOT.Max, &tpotP,
			&st.E2E.Mean, &st.E2E.Min, &st.E2E.Max, &e2eP}, func() error {
			setPercentiles(&st.TTFT, ttftP)
			setPercentiles(&st.TPOT, tpotP)
			setPercentiles(&st.E2E, e2eP)
			p.steps = append(p.steps, st)
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
	}
	return p.steps
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
