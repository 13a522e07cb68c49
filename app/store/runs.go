package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/jobs"
)

// NewRun is a run to insert.
type NewRun struct {
	BenchmarkID     int64
	ModelID         int64
	Runtime         string
	HardwareProfile string
	WaitingForAgent bool
	// Total is the requests to send: items × Samples.
	Total int
	// Samples is the answers asked for each item (0 means 1).
	Samples int
	// Repeat is which run of its target this is (0 for the first).
	Repeat int
	// FewShotK and FewShotSeed are the run's few-shot setting: k solved
	// examples before each question (0: the dataset's own requests),
	// drawn with the seed.
	FewShotK    int
	FewShotSeed int64
	// FewShotExemplars names the fixed set of solved examples the run is
	// prompted with ("" for drawn examples or none; FewShotK is then the
	// set's size).
	FewShotExemplars string
	// Engine is the target's checked engine settings (nil: the runtime's
	// defaults).
	Engine jobs.Engine
	// SearchRung is the search's rung the run belongs to (nil outside a
	// budgeted search; docs/benchmarks.md#budgeted-search).
	SearchRung *int
}

// CreateRun inserts a run row.
func (q *Queries) CreateRun(ctx context.Context, r NewRun) (int64, error) {
	var id int64
	err := q.db.QueryRow(ctx, `INSERT INTO runs (benchmark_id, model_id, runtime, hardware_profile, waiting_for_agent, total, samples, repeat,
			fewshot_k, fewshot_seed, fewshot_exemplars, engine, search_rung)
		VALUES (@b, @m, @rt, @hw, @waiting, @total, @samples, @repeat, @k, @seed, @exemplars, @engine, @rung) RETURNING id`,
		pgx.NamedArgs{"b": r.BenchmarkID, "m": r.ModelID, "rt": r.Runtime, "hw": r.HardwareProfile, "waiting": r.WaitingForAgent,
			"total": r.Total, "samples": max(r.Samples, 1), "repeat": r.Repeat, "k": r.FewShotK, "seed": r.FewShotSeed,
			"exemplars": r.FewShotExemplars, "engine": engineJSON(r.Engine), "rung": r.SearchRung}).Scan(&id)
	return id, mapErr(err, "create run")
}

// SetRunJob records the River job that works a run.
func (q *Queries) SetRunJob(ctx context.Context, runID, jobID int64) error {
	_, err := q.db.Exec(ctx, `UPDATE runs SET river_job_id = @job WHERE id = @id`, pgx.NamedArgs{"id": runID, "job": jobID})
	return mapErr(err, "set run job")
}

// Run is one target of a benchmark.
type Run struct {
	ID              int64
	BenchmarkID     int64
	ModelName       string
	Runtime         string
	HardwareProfile string
	RiverJobID      *int64
	State           string
	WaitingForAgent bool
	Attempt         int
	Fence           int64
	AgentID         *int64
	AgentName       string
	Mode            string
	Total           int
	Completed       int
	Errors          int
	OutputTokens    int64
	// Throughput is output tokens/s and RequestsPerS requests/s, live
	// while running and over the whole measured window once finished.
	Throughput   float64
	RequestsPerS float64
	ETASeconds   *float64
	Resumed      int
	StoppedBy    string
	Error        string
	CreatedAt    time.Time
	StartedAt    *time.Time
	FinishedAt   *time.Time
	// Quality: the scorer, how many items it scored, the mean score and
	// its 95 % bootstrap interval (nil until scored).
	Scorer    string
	Scored    int
	Quality   *float64
	QualityLo *float64
	QualityHi *float64
	// Samples is the answers asked for each item; Exec the execution of
	// its code answers in the sandbox.
	Samples int
	Exec    Execution
	// ScorerOptions are the settings the scorer ran with (a regex
	// pattern, a JSON Schema; nil when none); CorpusBLEU is the bleu
	// scorer's corpus-level BLEU in [0, 1] (nil for other scorers).
	ScorerOptions json.RawMessage
	CorpusBLEU    *float64
	// FleetRunID is the run's id in its fleet, {fleet}-{submitted}-{hash};
	// "" for a run of a benchmark outside any fleet.
	FleetRunID string
	// FewShotK and FewShotSeed: the run's few-shot setting (k 0: none);
	// FewShotExemplars the fixed set it is prompted with ("" for drawn
	// examples).
	FewShotK         int
	FewShotSeed      int64
	FewShotExemplars string
	// Engine is the engine settings the run's target launched its runtime
	// with (empty: the runtime's defaults; docs/benchmarks.md#engine-settings).
	Engine jobs.Engine
	// SearchRung is the search's rung the run belongs to (nil outside a
	// search).
	SearchRung *int
	// Regressions are how the run is significantly worse than the
	// previous completed run of its target (none: not a regression, or
	// not checked yet), the most telling first.
	Regressions []Regression
}

// Regression is the run's most telling regression, nil when it is none.
func (r Run) Regression() *Regression { return FirstRegression(r.Regressions) }

// FirstRegression is the first of a run's regressions, the one shown as
// its flag; nil when there is none.
func FirstRegression(rs []Regression) *Regression {
	if len(rs) == 0 {
		return nil
	}
	return &rs[0]
}

// Execution is where a run's code execution stands and what it found.
type Execution struct {
	// State is '' (none asked), queued, running, done or failed.
	State string
	Error string
	// PassAt is pass@k by k ("1", "10", "100"), Counts the answers by
	// class; nil until done.
	PassAt map[string]float64
	Counts map[string]int
}

// Progress is the per cent of the run's requests done (PercentDone).
func (r Run) Progress() int { return PercentDone(int64(r.Completed), int64(r.Total)) }

// ETA is a running run's own estimate of its time left rounded up to
// whole seconds, nil when it has none (or is not running).
func (r Run) ETA() *int64 {
	if r.State != "running" || !validSeconds(r.ETASeconds) || *r.ETASeconds >= math.MaxInt32 {
		return nil
	}
	eta := int64(math.Ceil(*r.ETASeconds))
	return &eta
}

const runColumns = `r.id, r.benchmark_id, m.name, r.runtime, r.hardware_profile, r.river_job_id, r.state,
	r.waiting_for_agent, r.attempt, r.fence, r.agent_id, coalesce(a.name, ''), r.mode, r.total, r.completed, r.errors,
	r.output_tokens, r.throughput, r.requests_per_s, r.eta_seconds, r.resumed, r.stopped_by, r.error,
	r.created_at, r.started_at, r.finished_at, r.scorer, r.scored, r.quality, r.quality_lo, r.quality_hi,
	r.samples, r.exec_state, r.exec_error, r.exec_pass, r.exec_counts, r.scorer_options, r.corpus_bleu,
	coalesce(r.fleet_run_id, ''), r.fewshot_k, r.fewshot_seed, r.fewshot_exemplars, r.engine, r.search_rung, ` + regressionsJSON

// fields are the scan targets of runColumns, in order; queries that read
// more columns append theirs.
func (r *Run) fields() []any {
	return []any{&r.ID, &r.BenchmarkID, &r.ModelName, &r.Runtime, &r.HardwareProfile, &r.RiverJobID, &r.State,
		&r.WaitingForAgent, &r.Attempt, &r.Fence, &r.AgentID, &r.AgentName, &r.Mode, &r.Total, &r.Completed, &r.Errors,
		&r.OutputTokens, &r.Throughput, &r.RequestsPerS, &r.ETASeconds, &r.Resumed, &r.StoppedBy, &r.Error,
		&r.CreatedAt, &r.StartedAt, &r.FinishedAt, &r.Scorer, &r.Scored, &r.Quality, &r.QualityLo, &r.QualityHi,
		&r.Samples, &r.Exec.State, &r.Exec.Error, &r.Exec.PassAt, &r.Exec.Counts, &r.ScorerOptions, &r.CorpusBLEU,
		&r.FleetRunID, &r.FewShotK, &r.FewShotSeed, &r.FewShotExemplars, &r.Engine, &r.SearchRung, &r.Regressions}
}

func scanRun(row pgx.CollectableRow) (Run, error) {
	var r Run
	err := row.Scan(r.fields()...)
	return r, err
}

// ActiveRun is a queued or running run with its benchmark's name.
type ActiveRun struct {
	Run
	BenchmarkName string
}

// ActiveRuns lists the viewer's queued and running runs (everyone's, for
// admins), oldest first.
func (q *Queries) ActiveRuns(ctx context.Context, v Viewer) ([]ActiveRun, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+runColumns+`, b.name
		FROM runs r JOIN models m ON m.id = r.model_id JOIN benchmarks b ON b.id = r.benchmark_id LEFT JOIN agents a ON a.id = r.agent_id
		WHERE r.state IN ('queued', 'running') AND`+benchmarkWritable+`ORDER BY r.id`,
		pgx.NamedArgs{"viewer": v.UserID, "admin": v.Admin})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ActiveRun, error) {
		var r ActiveRun
		err := row.Scan(append(r.fields(), &r.BenchmarkName)...)
		return r, err
	})
	return out, mapErr(err, "active runs")
}

// RunForUpdate locks a run of a benchmark the viewer may change and returns
// it with the arguments needed to queue it again. It must run in a
// transaction: every lock the rest of that transaction waits for (the
// run's row here, its River job's row after) is given up after
// RowLockTimeout with ErrBusy, since an agent may hold them
// (docs/gpu-nodes.md#locks-an-agent-may-hold-and-its-time).
func (q *Queries) RunForUpdate(ctx context.Context, v Viewer, benchmarkID, runID int64) (Run, error) {
	if _, err := q.db.Exec(ctx, fmt.Sprintf(`SET LOCAL lock_timeout = %d`, RowLockTimeout.Milliseconds())); err != nil {
		return Run{}, mapErr(err, "run for update")
	}
	rows, _ := q.db.Query(ctx, `SELECT `+runColumns+`
		FROM runs r JOIN models m ON m.id = r.model_id LEFT JOIN agents a ON a.id = r.agent_id JOIN benchmarks b ON b.id = r.benchmark_id
		WHERE r.id = @run AND r.benchmark_id = @b AND`+benchmarkWritable+`
		FOR UPDATE OF r`, pgx.NamedArgs{"run": runID, "b": benchmarkID, "viewer": v.UserID, "admin": v.Admin})
	r, err := pgx.CollectExactlyOneRow(rows, scanRun)
	return r, mapErr(err, "run for update")
}

// StaleRunForUpdate locks a run for the reaper, skipping it (ErrBusy) when
// another transaction holds its row: an agent holding the run it works
// must not keep every other dead agent's run from being reassigned. The
// rest of the transaction waits at most RowLockTimeout for a lock.
func (q *Queries) StaleRunForUpdate(ctx context.Context, benchmarkID, runID int64) (Run, error) {
	if _, err := q.db.Exec(ctx, fmt.Sprintf(`SET LOCAL lock_timeout = %d`, RowLockTimeout.Milliseconds())); err != nil {
		return Run{}, mapErr(err, "stale run for update")
	}
	rows, _ := q.db.Query(ctx, `SELECT `+runColumns+`
		FROM runs r JOIN models m ON m.id = r.model_id LEFT JOIN agents a ON a.id = r.agent_id
		WHERE r.id = @run AND r.benchmark_id = @b
		FOR UPDATE OF r SKIP LOCKED`, pgx.NamedArgs{"run": runID, "b": benchmarkID})
	r, err := pgx.CollectExactlyOneRow(rows, scanRun)
	if errors.Is(err, pgx.ErrNoRows) {
		return Run{}, fmt.Errorf("stale run %d: %w", runID, ErrBusy)
	}
	return r, mapErr(err, "stale run for update")
}

// SetRunCancelled marks a run cancelled.
func (q *Queries) SetRunCancelled(ctx context.Context, runID int64) error {
	_, err := q.db.Exec(ctx, `UPDATE runs SET state = 'cancelled', finished_at = now() WHERE id = @id`, pgx.NamedArgs{"id": runID})
	return mapErr(err, "cancel run")
}

// RequeueRun starts a new attempt of a run: counters reset, the earlier
// attempt's results, samples and figures removed, queued on a new job.
func (q *Queries) RequeueRun(ctx context.Context, runID, jobID int64, waiting bool) error {
	_, err := q.db.Exec(ctx, `DELETE FROM results WHERE run_id = @id`, pgx.NamedArgs{"id": runID})
	if err != nil {
		return mapErr(err, "requeue run: drop results")
	}
	_, err = q.db.Exec(ctx, `DELETE FROM run_samples WHERE run_id = @id`, pgx.NamedArgs{"id": runID})
	if err != nil {
		return mapErr(err, "requeue run: drop samples")
	}
	_, err = q.db.Exec(ctx, `WITH upd AS (
			UPDATE runs SET state = 'queued', attempt = attempt + 1, fence = fence + 1, river_job_id = @job,
				waiting_for_agent = @waiting, completed = 0, errors = 0, error = '', agent_id = NULL, started_at = NULL, finished_at = NULL,
				resumed = 0, prompt_tokens = 0, output_tokens = 0, measured_seconds = 0, segment_started_at = NULL, throughput = 0,
				requests_per_s = 0, eta_seconds = NULL, progress_at = NULL, stopped_by = '', summary = NULL, gpu_summary = NULL,
				node_summary = NULL, load_time_ms = NULL, runtime_log = ''
			WHERE id = @id
			RETURNING id
		)
		INSERT INTO run_events (run_id, kind, message) SELECT id, 'retried', 'a new attempt starts from the first item' FROM upd`,
		pgx.NamedArgs{"id": runID, "job": jobID, "waiting": waiting})
	return mapErr(err, "requeue run")
}

// StaleRun is a running run whose agent stopped heartbeating.
type StaleRun struct {
	RunID       int64
	BenchmarkID int64
	AgentName   string
	// JobEnded: the run's job ended while the agent still held the run
	// (runJobEnded), rather than the agent going silent.
	JobEnded bool
}

// staleRun is when a running run r, held by agent a, is to be reassigned:
// its agent went offline or was deactivated without handing it back, or
// has shown no sign of life within @stale: no heartbeat, and no progress
// written for the run (a live agent whose heartbeats wait behind a busy
// connection pool still writes the run's progress every second). Those
// times are the database's own (an agent cannot date them, migration
// 0024), and silence while PostgreSQL itself was down is no sign of death:
// within the stale period after PostgreSQL starts, an agent is stale only
// if it was silent for a stale period before then already, so that a
// short restart does not reassign every run while agents reconnect.
//
// A live agent may also hold a run it no longer works: its job's attempt
// failed after the claim (a database error: the session ended under it),
// River gave the next attempt to another agent, whose claim is refused
// while the first holds the run, and that agent cancelled the job. The
// first agent heartbeats on, so the run would stay "running" for as long
// as it lives (seen in `make bench-day`). A running run whose job ended a
// stale period ago (runJobEnded) is reassigned too.
const staleRun = `r.state = 'running' AND (a.state = 'offline' OR a.deactivated_at IS NOT NULL
	OR (greatest(a.last_heartbeat_at, r.progress_at, r.segment_started_at) < now() - @stale::interval
		AND (pg_postmaster_start_time() < now() - @stale::interval
			OR greatest(a.last_heartbeat_at, r.progress_at, r.segment_started_at) < pg_postmaster_start_time() - @stale::interval))
	OR ` + runJobEnded + `)`

// runJobEnded is when run r's River job was finalized (completed,
// cancelled, discarded) more than @stale ago: nothing works the run any
// more.
const runJobEnded = `EXISTS (SELECT 1 FROM river_job j WHERE j.id = r.river_job_id AND j.finalized_at < now() - @stale::interval)`

// StaleRuns lists the running runs to reassign (staleRun) with staleAfter
// as the stale period.
func (q *Queries) StaleRuns(ctx context.Context, staleAfter time.Duration) ([]StaleRun, error) {
	rows, _ := q.db.Query(ctx, `SELECT r.id, r.benchmark_id, a.name, `+runJobEnded+` FROM runs r JOIN agents a ON a.id = r.agent_id
		WHERE `+staleRun+` ORDER BY r.id`, pgx.NamedArgs{"stale": staleAfter})
	rs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (StaleRun, error) {
		var r StaleRun
		err := row.Scan(&r.RunID, &r.BenchmarkID, &r.AgentName, &r.JobEnded)
		return r, err
	})
	return rs, mapErr(err, "stale runs")
}

// RunIsStale says whether the run is still to be reassigned (staleRun), read
// inside the reaper's transaction.
func (q *Queries) RunIsStale(ctx context.Context, runID int64, staleAfter time.Duration) (bool, error) {
	var stale bool
	err := q.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs r JOIN agents a ON a.id = r.agent_id WHERE r.id = @run AND `+staleRun+`)`,
		pgx.NamedArgs{"run": runID, "stale": staleAfter}).Scan(&stale)
	return stale, mapErr(err, "run is stale")
}

// orphanedRun is when a queued run r waits on a job j that no worker will
// finish: the job is gone or final (discarded after its attempts,
// cancelled, completed), or a worker took it more than @stale ago and
// never claimed the run. An agent claims the run first thing in a job
// (agentd/agent/worker.go), so a job running that long with its run still
// queued belongs to a worker that died in between, or one whose claim
// failed and whose job's end was never written (both seen when an agent
// was killed while PgBouncer's logins failed). River's own rescuer waits
// for the longest allowed run (a day) before it acts. As with staleRun, a
// PostgreSQL that started within the stale period gives workers that
// period to come back first.
const orphanedRun = `r.state = 'queued' AND r.river_job_id IS NOT NULL AND (j.id IS NULL OR j.state IN ('discarded', 'cancelled', 'completed')
	OR (j.state = 'running' AND j.attempted_at < now() - @stale::interval AND pg_postmaster_start_time() < now() - @stale::interval))`

// OrphanedRuns lists the queued runs whose job no worker will finish
// (orphanedRun); AgentName is empty.
func (q *Queries) OrphanedRuns(ctx context.Context, staleAfter time.Duration) ([]StaleRun, error) {
	rows, _ := q.db.Query(ctx, `SELECT r.id, r.benchmark_id FROM runs r LEFT JOIN river_job j ON j.id = r.river_job_id
		WHERE `+orphanedRun+` ORDER BY r.id`, pgx.NamedArgs{"stale": staleAfter})
	rs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (StaleRun, error) {
		var r StaleRun
		err := row.Scan(&r.RunID, &r.BenchmarkID)
		return r, err
	})
	return rs, mapErr(err, "orphaned runs")
}

// RunIsOrphaned says whether the run is still to be queued again
// (orphanedRun), read inside the reaper's transaction.
func (q *Queries) RunIsOrphaned(ctx context.Context, runID int64, staleAfter time.Duration) (bool, error) {
	var orphaned bool
	err := q.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs r LEFT JOIN river_job j ON j.id = r.river_job_id WHERE r.id = @run AND `+orphanedRun+`)`,
		pgx.NamedArgs{"run": runID, "stale": staleAfter}).Scan(&orphaned)
	return orphaned, mapErr(err, "run is orphaned")
}

// RequeueOrphanedRun puts a queued run on a new job in place of oldJob;
// the old job's worker, should it come back, can no longer claim it
// (ClaimRun wants the run's job).
func (q *Queries) RequeueOrphanedRun(ctx context.Context, runID, oldJob, jobID int64, waiting bool, why string) error {
	var n int
	err := q.db.QueryRow(ctx, `WITH upd AS (
			UPDATE runs SET river_job_id = @job, waiting_for_agent = @waiting
			WHERE id = @id AND state = 'queued' AND river_job_id = @old
			RETURNING id
		), ev AS (
			INSERT INTO run_events (run_id, kind, message) SELECT id, 'reassigned', @why FROM upd
		)
		SELECT count(*) FROM upd`,
		pgx.NamedArgs{"id": runID, "old": oldJob, "job": jobID, "waiting": waiting, "why": why}).Scan(&n)
	if err != nil {
		return mapErr(err, "requeue orphaned run")
	}
	if n != 1 {
		return fmt.Errorf("requeue orphaned run %d: %w", runID, ErrBusy)
	}
	return nil
}

// ReassignStaleRun takes a run away from the agent holding it under fence (the
// fence moves on, so that agent's writes are refused from now on) and
// queues it on a new job ahead of the runs queued after it; the next agent
// resumes from the persisted results. The dead segment's measured time is
// counted up to its last progress report.
func (q *Queries) ReassignStaleRun(ctx context.Context, runID, fence, jobID int64, waiting bool, why string) error {
	var n int
	err := q.db.QueryRow(ctx, `WITH upd AS (
			UPDATE runs SET fence = fence + 1, agent_id = NULL, state = 'queued', river_job_id = @job,
				waiting_for_agent = @waiting, eta_seconds = NULL,
				measured_seconds = measured_seconds + coalesce(extract(epoch FROM progress_at - segment_started_at)::float8, 0),
				segment_started_at = NULL
			WHERE id = @id AND fence = @fence AND state = 'running'
			RETURNING id
		), ev AS (
			INSERT INTO run_events (run_id, kind, message) SELECT id, 'reassigned', @why FROM upd
		)
		SELECT count(*) FROM upd`,
		pgx.NamedArgs{"id": runID, "fence": fence, "job": jobID, "waiting": waiting, "why": why}).Scan(&n)
	if err != nil {
		return mapErr(err, "reassign run")
	}
	if n == 0 {
		return fmt.Errorf("reassign run %d: %w", runID, ErrFenced)
	}
	// The run keeps its place in line: its new job is fetched before the
	// runs queued after it (River takes a queue's available jobs by
	// priority, then scheduled_at).
	_, err = q.db.Exec(ctx, `UPDATE river_job SET scheduled_at = least(scheduled_at, (SELECT created_at FROM runs WHERE id = @id))
		WHERE id = @job AND state = 'available'`, pgx.NamedArgs{"id": runID, "job": jobID})
	return mapErr(err, "reassign run: keep its place")
}

// engineJSON is settings as the engine column's object ({} for none).
func engineJSON(e jobs.Engine) []byte {
	if len(e) == 0 {
		return []byte("{}")
	}
	b, _ := json.Marshal(e)
	return b
}
