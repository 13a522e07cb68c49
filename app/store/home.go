package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// HomeCounts are what the start page counts for a viewer.
type HomeCounts struct {
	// Datasets the viewer may use (live), of which Starter are the
	// starter datasets.
	Datasets int
	Starter  int
	// Models are the registry's models not retired.
	Models int
	// Benchmarks the viewer may see.
	Benchmarks int
}

// HomeCounts counts the viewer's datasets, the active models and the
// viewer's benchmarks.
func (q *Queries) HomeCounts(ctx context.Context, v Viewer) (HomeCounts, error) {
	var h HomeCounts
	err := q.db.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM datasets d WHERE d.deleted_at IS NULL AND `+visibleTo+`),
			(SELECT count(*) FROM datasets d WHERE d.deleted_at IS NULL AND d.starter AND `+visibleTo+`),
			(SELECT count(*) FROM models WHERE retired_at IS NULL),
			(SELECT count(*) FROM benchmarks b WHERE`+benchmarkWritable+`AND b.judges_run_id IS NULL)`,
		pgx.NamedArgs{"viewer": v.UserID, "admin": v.Admin}).Scan(&h.Datasets, &h.Starter, &h.Models, &h.Benchmarks)
	return h, mapErr(err, "home counts")
}

// RecentBenchmarks returns the viewer's newest finished benchmarks (at
// least one run, none queued or running), with their runs, at most limit.
func (q *Queries) RecentBenchmarks(ctx context.Context, v Viewer, limit int) ([]Benchmark, error) {
	rows, _ := q.db.Query(ctx, `SELECT b.id, b.owner_id, b.name, b.dataset_id, d.name, b.created_at
		FROM benchmarks b JOIN datasets d ON d.id = b.dataset_id
		WHERE`+benchmarkWritable+`AND b.judges_run_id IS NULL AND EXISTS (SELECT 1 FROM runs r WHERE r.benchmark_id = b.id)
			AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.benchmark_id = b.id AND r.state IN ('queued', 'running'))
		ORDER BY b.id DESC LIMIT @limit`, pgx.NamedArgs{"viewer": v.UserID, "admin": v.Admin, "limit": limit})
	bs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Benchmark, error) {
		var b Benchmark
		err := row.Scan(&b.ID, &b.OwnerID, &b.Name, &b.DatasetID, &b.DatasetName, &b.CreatedAt)
		return b, err
	})
	if err != nil || len(bs) == 0 {
		return bs, mapErr(err, "recent benchmarks")
	}
	ids := make([]int64, len(bs))
	at := map[int64]int{}
	for i, b := range bs {
		ids[i], at[b.ID] = b.ID, i
	}
	rows, _ = q.db.Query(ctx, `SELECT `+runColumns+`
		FROM runs r JOIN models m ON m.id = r.model_id LEFT JOIN agents a ON a.id = r.agent_id
		WHERE r.benchmark_id = ANY(@ids) ORDER BY r.id`, pgx.NamedArgs{"ids": ids})
	runs, err := pgx.CollectRows(rows, scanRun)
	if err != nil {
		return nil, mapErr(err, "recent benchmarks' runs")
	}
	for _, r := range runs {
		b := &bs[at[r.BenchmarkID]]
		b.Runs = append(b.Runs, r)
	}
	return bs, nil
}

// StarterDatasets returns the live starter datasets the viewer may use,
// those with a scorer (references to score against) first.
func (q *Queries) StarterDatasets(ctx context.Context, v Viewer) ([]Dataset, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+datasetColumns+datasetFrom+`WHERE d.starter AND d.deleted_at IS NULL AND `+visibleTo+`
		ORDER BY d.default_scorer = '', d.id`, pgx.NamedArgs{"viewer": v.UserID, "admin": v.Admin})
	ds, err := pgx.CollectRows(rows, scanDataset)
	return ds, mapErr(err, "starter datasets")
}

// SmallestModels returns up to n active models, base models before
// adapters, smallest first.
func (q *Queries) SmallestModels(ctx context.Context, n int) ([]Model, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+modelColumns+modelFrom+`WHERE m.retired_at IS NULL
		ORDER BY m.adapter, m.params_b, m.name LIMIT @n`, pgx.NamedArgs{"n": n})
	ms, err := pgx.CollectRows(rows, scanModel)
	return ms, mapErr(err, "smallest models")
}

// ServingAgent is an agent that could take a run now, with its profile.
type ServingAgent struct {
	Name    string
	Profile string
}

// AgentsServing lists the agents that could take a run on runtime now —
// online, heartbeating within staleAfter, not drained or deactivated, of
// this protocol, with a hardware profile — by name.
func (q *Queries) AgentsServing(ctx context.Context, runtime string, protocol int, staleAfter time.Duration) ([]ServingAgent, error) {
	rows, _ := q.db.Query(ctx, `SELECT name, hardware_profile FROM agents
		WHERE @runtime = ANY (runtimes) AND hardware_profile IS NOT NULL AND protocol_version = @protocol
			AND state = 'online' AND NOT drained AND deactivated_at IS NULL AND last_heartbeat_at > now() - @stale::interval
		ORDER BY name`, pgx.NamedArgs{"runtime": runtime, "protocol": protocol, "stale": staleAfter})
	as, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ServingAgent, error) {
		var a ServingAgent
		err := row.Scan(&a.Name, &a.Profile)
		return a, err
	})
	return as, mapErr(err, "agents serving")
}

// QueueDepth is one River queue's jobs waiting (available) and being
// worked (running).
type QueueDepth struct {
	Queue     string
	Available int
	Running   int
}

// QueueDepths lists the queues with jobs available or running, by name.
func (q *Queries) QueueDepths(ctx context.Context) ([]QueueDepth, error) {
	rows, _ := q.db.Query(ctx, `SELECT queue, count(*) FILTER (WHERE state = 'available'), count(*) FILTER (WHERE state = 'running')
		FROM river_job WHERE state IN ('available', 'running') GROUP BY queue ORDER BY queue`)
	qs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (QueueDepth, error) {
		var d QueueDepth
		err := row.Scan(&d.Queue, &d.Available, &d.Running)
		return d, err
	})
	return qs, mapErr(err, "queue depths")
}

// WaitingRun is a queued run and how long it has waited: since its
// current job was queued (a run reassigned or retried waits anew).
type WaitingRun struct {
	RunID           int64
	BenchmarkID     int64
	BenchmarkName   string
	ModelName       string
	Runtime         string
	HardwareProfile string
	WaitingForAgent bool
	Since           time.Time
	Age             time.Duration
}

// OldestWaitingRun returns the run queued longest, everyone's;
// ErrNotFound when none is queued.
func (q *Queries) OldestWaitingRun(ctx context.Context) (WaitingRun, error) {
	var w WaitingRun
	var secs float64
	err := q.db.QueryRow(ctx, `SELECT r.id, r.benchmark_id, b.name, m.name, r.runtime, r.hardware_profile, r.waiting_for_agent,
			coalesce(j.created_at, r.created_at), extract(epoch FROM now() - coalesce(j.created_at, r.created_at))::float8
		FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id JOIN models m ON m.id = r.model_id
			LEFT JOIN river_job j ON j.id = r.river_job_id
		WHERE r.state = 'queued' ORDER BY coalesce(j.created_at, r.created_at), r.id LIMIT 1`).
		Scan(&w.RunID, &w.BenchmarkID, &w.BenchmarkName, &w.ModelName, &w.Runtime, &w.HardwareProfile, &w.WaitingForAgent, &w.Since, &secs)
	w.Age = time.Duration(secs * float64(time.Second))
	return w, mapErr(err, "oldest waiting run")
}
