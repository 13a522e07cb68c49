package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// ConclusionFacts are the rows that say how far a benchmark's
// conclusions have come; the engine decides from them whether they are
// complete (conclude.StatusOf; docs/verdict.md#when-a-verdict-is-final).
type ConclusionFacts struct {
	Runs []ConclusionRun
	// UndecidedRungs are the budgeted search's rungs that have runs and
	// no cut yet, in order.
	UndecidedRungs []int
	// Scorer is the scorer the benchmark names, else its dataset's
	// default ('' for none: its runs get no quality).
	Scorer string
}

// ConclusionRun is one run of a benchmark as its conclusions stand.
type ConclusionRun struct {
	RunID int64
	State string
	// Concluded: its conclusions are drawn for its current attempt and
	// no rescoring was queued since (MarkRunConcluded).
	Concluded bool
	// StatsKept: run_stats holds its figures for its current attempt.
	StatsKept bool
	// Scored: it has a quality (scored_at).
	Scored bool
	// LiveJobs are the kinds of its score_run, conclude_run and
	// execute_run jobs that are still to run or running.
	LiveJobs []string
	// Judging: a judging its benchmark's scorer started is under way
	// (its judge run is active, or that run's score job is to run).
	Judging bool
	// LastJobFailed: the newest of those jobs was discarded or
	// cancelled; ExecState and JudgeState are where its execution and
	// its benchmark's judging stand ('' for none).
	LastJobFailed bool
	ExecState     string
	JudgeState    string
}

// liveJob is a River job still to run or running.
const liveJob = `k.state IN ('available', 'pending', 'retryable', 'running', 'scheduled')`

// concludingJobOf is a job of a kind that concludes the run r.id.
const concludingJobOf = `k.kind IN ('score_run', 'conclude_run', 'execute_run') AND k.args @> jsonb_build_object('run_id', r.id)`

// ConclusionFacts reads benchmarkID's facts (ConclusionFacts).
func (q *Queries) ConclusionFacts(ctx context.Context, benchmarkID int64) (ConclusionFacts, error) {
	var f ConclusionFacts
	rows, _ := q.db.Query(ctx, `SELECT r.id, r.state, coalesce((SELECT e.kind = 'concluded' AND e.message = 'attempt ' || r.attempt
				FROM run_events e WHERE e.run_id = r.id AND e.agent_id IS NULL AND e.kind IN ('concluded', 'rescoring')
				ORDER BY e.id DESC LIMIT 1), false),
			EXISTS (SELECT 1 FROM run_stats s WHERE s.run_id = r.id AND s.attempt = r.attempt), r.scored_at IS NOT NULL,
			ARRAY(SELECT DISTINCT k.kind FROM river_job k WHERE `+concludingJobOf+` AND `+liveJob+` ORDER BY 1),
			EXISTS (SELECT 1 FROM judge_runs j JOIN runs jr ON jr.id = j.run_id
				WHERE j.run_a = r.id AND j.origin = 'manifest' AND j.state = 'judging' AND (jr.state IN ('queued', 'running')
					OR EXISTS (SELECT 1 FROM river_job k WHERE k.kind = 'score_run' AND k.args @> jsonb_build_object('run_id', jr.id) AND `+liveJob+`))),
			coalesce((SELECT k.state IN ('discarded', 'cancelled') FROM river_job k WHERE `+concludingJobOf+` ORDER BY k.id DESC LIMIT 1), false),
			r.exec_state, coalesce((SELECT j.state FROM judge_runs j WHERE j.run_a = r.id AND j.origin = 'manifest'), '')
		FROM runs r WHERE r.benchmark_id = @b ORDER BY r.id`, pgx.NamedArgs{"b": benchmarkID})
	var err error
	f.Runs, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (ConclusionRun, error) {
		var r ConclusionRun
		err := row.Scan(&r.RunID, &r.State, &r.Concluded, &r.StatsKept, &r.Scored, &r.LiveJobs, &r.Judging, &r.LastJobFailed,
			&r.ExecState, &r.JudgeState)
		return r, err
	})
	if err != nil {
		return f, mapErr(err, "conclusion facts")
	}
	rows, _ = q.db.Query(ctx, `SELECT DISTINCT r.search_rung FROM runs r WHERE r.benchmark_id = @b AND r.search_rung IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM search_cuts c WHERE c.benchmark_id = r.benchmark_id AND c.rung = r.search_rung)
		ORDER BY 1`, pgx.NamedArgs{"b": benchmarkID})
	f.UndecidedRungs, err = pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return f, mapErr(err, "undecided search rungs")
	}
	err = q.db.QueryRow(ctx, `SELECT coalesce(nullif(b.manifest->>'scorer', ''), d.default_scorer, '')
		FROM benchmarks b JOIN datasets d ON d.id = b.dataset_id WHERE b.id = @b`, pgx.NamedArgs{"b": benchmarkID}).Scan(&f.Scorer)
	if errors.Is(err, pgx.ErrNoRows) {
		return f, nil
	}
	return f, mapErr(err, "benchmark scorer")
}

// MarkRunConcluded records that runID's conclusions are drawn for its
// current attempt (jobs.RunStatsComputer.RunConcluded), as a server's
// event in the run's story: an agent may write events only under its
// own id (migrations/0024_agent_writes_bounded.up.sql), so none can
// say a run is concluded.
func (q *Queries) MarkRunConcluded(ctx context.Context, runID int64) error {
	_, err := q.db.Exec(ctx, `INSERT INTO run_events (run_id, kind, message) SELECT id, 'concluded', 'attempt ' || attempt FROM runs WHERE id = @run`,
		pgx.NamedArgs{"run": runID})
	return mapErr(err, "mark run concluded")
}

// UnconcludeRun makes runID's conclusions due again, in the transaction
// that queues its rescoring.
func (q *Queries) UnconcludeRun(ctx context.Context, runID int64) error {
	return q.AddRunEvent(ctx, runID, nil, "rescoring", "conclusions are drawn again once it is rescored")
}

// GivenUpUnconcluded returns the completed runs whose newest job that
// would conclude them (a score_run, execute_run or conclude_run, or for a
// run judged by its benchmark's scorer the judge run's score_run) was
// discarded or cancelled within the last `within`, newest first, at most
// 100. River runs nothing when it gives a job up, so no step would check
// such a run's target for regressions or tell its owner; the caller
// queues a conclude_run tagged tag for each, and that job, newer than the
// one given up, takes the run out of this list: it is returned once. A
// conclude_run tagged tag that is itself given up is not returned again,
// so a conclusion that fails for good is not queued for ever
// (docs/verdict.md#when-a-verdict-is-final).
//
// The run id is read only from a job of a concluding kind whose run_id
// is a number: another kind's args may hold anything under that name.
func (q *Queries) GivenUpUnconcluded(ctx context.Context, within time.Duration, tag string) ([]int64, error) {
	rows, _ := q.db.Query(ctx, `WITH given AS MATERIALIZED (
			SELECT DISTINCT ON (a.id) k.id AS job, k.finalized_at, a.id AS run
			FROM river_job k
			JOIN LATERAL (SELECT CASE WHEN k.kind IN ('score_run', 'conclude_run', 'execute_run') AND k.args->>'run_id' ~ '^[0-9]{1,18}$'
				THEN (k.args->>'run_id')::bigint END AS id) a ON a.id IS NOT NULL
			WHERE k.state IN ('discarded', 'cancelled') AND k.finalized_at > now() - make_interval(secs => @within)
				AND k.kind IN ('score_run', 'conclude_run', 'execute_run')
				AND NOT (k.kind = 'conclude_run' AND @tag = ANY(k.tags))
			ORDER BY a.id, k.id DESC),
		newer AS (
			SELECT g.job, g.finalized_at, g.run AS job_run, coalesce(j.run_a, g.run) AS run
			FROM given g LEFT JOIN judge_runs j ON j.run_id = g.run AND j.origin = 'manifest')
		SELECT r.id
		FROM newer g
		JOIN runs r ON r.id = g.run
		JOIN benchmarks b ON b.id = r.benchmark_id
		WHERE r.state = 'completed' AND b.deleted_at IS NULL AND b.judges_run_id IS NULL
			AND NOT EXISTS (SELECT 1 FROM river_job n WHERE n.kind = 'score_run' AND n.args->>'run_id' IN (g.job_run::text, g.run::text) AND n.id > g.job)
			AND NOT EXISTS (SELECT 1 FROM river_job n WHERE n.kind IN ('conclude_run', 'execute_run')
				AND n.args->>'run_id' IN (g.job_run::text, g.run::text) AND n.id > g.job)
		ORDER BY g.finalized_at DESC, g.job DESC
		LIMIT 100`, pgx.NamedArgs{"within": within.Seconds(), "tag": tag})
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return out, mapErr(err, "runs given up and not concluded")
}
