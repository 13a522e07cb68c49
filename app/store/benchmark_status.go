package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// A benchmark's status, aggregated over its runs' states. One definition
// serves the API, the benchmarks list and the benchmark page:
//
//   - running: some run is running, or some runs have finished while
//     others are still queued (the benchmark is under way);
//   - queued: every run is queued (or there is no run yet);
//   - completed: every run has finished and at least one completed;
//   - failed: every run has finished, none completed, at least one failed;
//   - cancelled: every run was cancelled.
const (
	BenchmarkQueued    = "queued"
	BenchmarkRunning   = "running"
	BenchmarkCompleted = "completed"
	BenchmarkFailed    = "failed"
	BenchmarkCancelled = "cancelled"
)

// BenchmarkStatus aggregates run states as described above; benchmarkStatusSQL
// is the same rule as an aggregate over the runs r of a GROUP BY.
func BenchmarkStatus(states []string) string {
	n := map[string]int{}
	for _, s := range states {
		n[s]++
	}
	switch {
	case n["running"] > 0, n["queued"] > 0 && n["queued"] < len(states):
		return BenchmarkRunning
	case n["queued"] > 0 || len(states) == 0:
		return BenchmarkQueued
	case n["completed"] > 0:
		return BenchmarkCompleted
	case n["failed"] > 0:
		return BenchmarkFailed
	}
	return BenchmarkCancelled
}

const benchmarkStatusSQL = `CASE
		WHEN count(r.id) FILTER (WHERE r.state = 'running') > 0
			OR (count(r.id) FILTER (WHERE r.state = 'queued') > 0 AND count(r.id) FILTER (WHERE r.state <> 'queued') > 0) THEN 'running'
		WHEN count(r.id) FILTER (WHERE r.state = 'queued') > 0 OR count(r.id) = 0 THEN 'queued'
		WHEN count(r.id) FILTER (WHERE r.state = 'completed') > 0 THEN 'completed'
		WHEN count(r.id) FILTER (WHERE r.state = 'failed') > 0 THEN 'failed'
		ELSE 'cancelled' END`

// Status is the benchmark's status aggregated over its runs.
func (b Benchmark) Status() string {
	states := make([]string, len(b.Runs))
	for i, r := range b.Runs {
		states[i] = r.State
	}
	return BenchmarkStatus(states)
}

// BenchmarkStatusRow is a benchmark as the API lists it: its status and
// figures aggregated over its runs.
type BenchmarkStatusRow struct {
	ID          int64
	OwnerID     int64
	Name        string
	DatasetID   int64
	DatasetName string
	Status      string
	// Completed and Total are requests over all runs (Total counts each
	// item once per run and sample); Errors those that failed.
	Completed int64
	Total     int64
	Errors    int64
	// OutputTokens over all runs.
	OutputTokens int64
	// LiveThroughput is the sum of the running runs' output tokens/s;
	// BestThroughput the highest of the completed runs'.
	LiveThroughput float64
	BestThroughput float64
	// Estimate is the status, progress and ETA (EstimateBenchmark).
	Estimate BenchmarkEstimate
	// StartedAt is when the first run started; FinishedAt when the last
	// one finished (nil while any run is active).
	StartedAt  *time.Time
	FinishedAt *time.Time
	CreatedAt  time.Time
	// Visibility is private or shared.
	Visibility string
	// Runs are the benchmark's runs in order, each with its model.
	Runs []BenchmarkStatusRun
	// timings are the runs as the estimate reads them.
	timings []RunTiming
}

// BenchmarkStatusRun is one run of a listed benchmark.
type BenchmarkStatusRun struct {
	RunID       int64   `json:"run_id"`
	ModelID     int64   `json:"model_id"`
	Model       string  `json:"model"`
	DisplayName string  `json:"display_name"`
	Runtime     string  `json:"runtime"`
	Hardware    string  `json:"hardware"`
	State       string  `json:"state"`
	Completed   int64   `json:"completed"`
	Total       int64   `json:"total"`
	Throughput  float64 `json:"throughput"`
}

// BenchmarkPage asks for one page of benchmarks, newest first: those
// with an id below After (0: from the newest), at most Limit of them.
type BenchmarkPage struct {
	After int64
	Limit int
	// Only, when set, reads that one benchmark (if the viewer may).
	Only int64
	// StaleAfter is how old an agent's heartbeat may be for the agent to
	// count as serving its queues, in the ETA of queued runs.
	StaleAfter time.Duration
}

// statusRun is a run as the list's query gives it: its listed fields and
// those the estimate reads.
type statusRun struct {
	BenchmarkStatusRun
	ETASeconds *float64 `json:"eta_seconds"`
	Elapsed    float64  `json:"elapsed"`
	Duration   float64  `json:"duration"`
}

// ListBenchmarkStatuses returns a page of the benchmarks the viewer may
// read (own and shared ones, all for admins; deleted ones left out) with their statuses and figures, in one query whatever the
// page's size, and one more for the estimate's facts when any is active
// (EstimateBenchmark); judges' benchmarks are left out, as in
// ListBenchmarks.
func (q *Queries) ListBenchmarkStatuses(ctx context.Context, v Viewer, p BenchmarkPage) ([]BenchmarkStatusRow, error) {
	// The page's benchmarks first (by the primary key, newest first),
	// then each one's runs aggregated: the work is bounded by the page,
	// however many benchmarks there are.
	rows, _ := q.db.Query(ctx, `SELECT b.id, b.owner_id, b.name, b.dataset_id, d.name, agg.status, agg.completed, agg.total, agg.errors,
			agg.output_tokens, agg.live, agg.best, agg.started_at, agg.finished_at, b.created_at, agg.runs, b.visibility
		FROM (SELECT id, owner_id, name, dataset_id, created_at, visibility FROM benchmarks b
				WHERE`+benchmarkReadable+`AND b.judges_run_id IS NULL
					AND (@after = 0 OR b.id < @after) AND (@only = 0 OR b.id = @only)
				ORDER BY b.id DESC LIMIT @limit) b
			JOIN datasets d ON d.id = b.dataset_id
			CROSS JOIN LATERAL (SELECT `+benchmarkStatusSQL+` AS status,
				coalesce(sum(r.completed), 0)::bigint AS completed, coalesce(sum(r.total), 0)::bigint AS total,
				coalesce(sum(r.errors), 0)::bigint AS errors, coalesce(sum(r.output_tokens), 0)::bigint AS output_tokens,
				coalesce(sum(r.throughput) FILTER (WHERE r.state = 'running'), 0)::float8 AS live,
				coalesce(max(r.throughput) FILTER (WHERE r.state = 'completed'), 0)::float8 AS best,
				min(r.started_at) AS started_at,
				CASE WHEN count(r.id) FILTER (WHERE r.state IN ('queued', 'running')) > 0 THEN NULL ELSE max(r.finished_at) END AS finished_at,
				coalesce(json_agg(json_build_object('run_id', r.id, 'model_id', m.id, 'model', m.name, 'display_name', m.display_name,
					'runtime', r.runtime, 'hardware', r.hardware_profile, 'state', r.state, 'completed', r.completed, 'total', r.total,
					'throughput', r.throughput,
					'eta_seconds', CASE WHEN r.state = 'running' THEN r.eta_seconds END,
					'elapsed', CASE WHEN r.state = 'running' THEN extract(epoch FROM now() - r.started_at) END,
					'duration', CASE WHEN r.state = 'completed' THEN extract(epoch FROM r.finished_at - r.started_at) END) ORDER BY r.id), '[]') AS runs
				FROM runs r JOIN models m ON m.id = r.model_id WHERE r.benchmark_id = b.id) agg
		ORDER BY b.id DESC`,
		pgx.NamedArgs{"viewer": v.UserID, "admin": v.Admin, "after": p.After, "only": p.Only, "limit": max(p.Limit, 1)})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (BenchmarkStatusRow, error) {
		var b BenchmarkStatusRow
		var raw []byte
		err := row.Scan(&b.ID, &b.OwnerID, &b.Name, &b.DatasetID, &b.DatasetName, &b.Status, &b.Completed, &b.Total, &b.Errors, &b.OutputTokens,
			&b.LiveThroughput, &b.BestThroughput, &b.StartedAt, &b.FinishedAt, &b.CreatedAt, &raw, &b.Visibility)
		var runs []statusRun
		if err == nil {
			err = json.Unmarshal(raw, &runs)
		}
		b.Runs, b.timings = make([]BenchmarkStatusRun, len(runs)), make([]RunTiming, len(runs))
		for i, r := range runs {
			b.Runs[i] = r.BenchmarkStatusRun
			b.timings[i] = RunTiming{ID: r.RunID, State: r.State, ModelID: r.ModelID, Runtime: r.Runtime, Hardware: r.Hardware,
				Total: r.Total, Completed: r.Completed, ETASeconds: r.ETASeconds, Elapsed: r.Elapsed, Duration: r.Duration}
		}
		return b, err
	})
	if err != nil {
		return nil, mapErr(err, "list benchmark statuses")
	}
	agents, paces, err := q.estimateFacts(ctx, out, p.StaleAfter)
	if err != nil {
		return nil, err
	}
	for i, b := range out {
		f := EstimateFacts{Agents: agents, TargetPace: map[Target]float64{}}
		for t, pace := range paces {
			if t.owner == b.OwnerID {
				f.TargetPace[t.Target] = pace
			}
		}
		out[i].Estimate = EstimateBenchmark(b.timings, f)
	}
	return out, nil
}

// BenchmarkStatusByID is one benchmark as ListBenchmarkStatuses gives it,
// agents counting as live within staleAfter (ErrNotFound when the viewer
// may not read it).
func (q *Queries) BenchmarkStatusByID(ctx context.Context, v Viewer, id int64, staleAfter time.Duration) (BenchmarkStatusRow, error) {
	bs, err := q.ListBenchmarkStatuses(ctx, v, BenchmarkPage{Only: id, Limit: 1, StaleAfter: staleAfter})
	if err != nil {
		return BenchmarkStatusRow{}, err
	}
	if len(bs) == 0 {
		return BenchmarkStatusRow{}, ErrNotFound
	}
	return bs[0], nil
}

// EstimateOf is b's status, progress and ETA as BenchmarkStatusByID gives
// them, for a benchmark read with its runs (BenchmarkByID). While every
// active run is running with its agent's ETA, the estimate is those
// runs' latest end and needs nothing more from the database (no agents
// or paces: EstimateBenchmark reads them only for queued runs and runs
// without an ETA), so it costs no query; otherwise it is read as
// BenchmarkStatusByID reads it. The live runs table asks for it at every
// poll it renders (docs/self-benchmarks.md#live-pages).
func (q *Queries) EstimateOf(ctx context.Context, v Viewer, b Benchmark, staleAfter time.Duration) (BenchmarkEstimate, error) {
	timings := make([]RunTiming, len(b.Runs))
	for i, r := range b.Runs {
		active := r.State == "queued" || r.State == "running"
		if active && (r.State != "running" || !validSeconds(r.ETASeconds)) {
			st, err := q.BenchmarkStatusByID(ctx, v, b.ID, staleAfter)
			return st.Estimate, err
		}
		timings[i] = RunTiming{ID: r.ID, State: r.State, Runtime: r.Runtime, Hardware: r.HardwareProfile,
			Total: int64(r.Total), Completed: int64(r.Completed), ETASeconds: r.ETASeconds}
	}
	return EstimateBenchmark(timings, EstimateFacts{}), nil
}
