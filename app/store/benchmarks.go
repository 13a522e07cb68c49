package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
)

// ModelByName returns the registry entry with this name.
func (q *Queries) ModelByName(ctx context.Context, name string) (Model, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+modelColumns+modelFrom+`WHERE m.name = @name`, pgx.NamedArgs{"name": name})
	m, err := pgx.CollectExactlyOneRow(rows, scanModel)
	return m, mapErr(err, "model by name")
}

// HardwareProfileBySlug returns one profile (without agent counts).
func (q *Queries) HardwareProfileBySlug(ctx context.Context, slug string) (HardwareProfile, error) {
	var h HardwareProfile
	err := q.db.QueryRow(ctx, `SELECT slug, gpu_name, gpu_count, gpu_memory_bytes, cpu_cores, price_per_hour::float8
		FROM hardware_profiles WHERE slug = @slug`, pgx.NamedArgs{"slug": slug}).
		Scan(&h.Slug, &h.GPUName, &h.GPUCount, &h.GPUMemoryBytes, &h.CPUCores, &h.PricePerHour)
	return h, mapErr(err, "hardware profile")
}

// CountServingAgents counts agents that could take a run now: online,
// heartbeating within staleAfter, not drained or deactivated, with this
// hardware profile and runtime.
// Agents of another protocol version do not count.
func (q *Queries) CountServingAgents(ctx context.Context, profile, runtime string, protocol int, staleAfter time.Duration) (int, error) {
	var n int
	err := q.db.QueryRow(ctx, `SELECT count(*) FROM agents WHERE hardware_profile = @profile AND @runtime = ANY (runtimes)
		AND protocol_version = @protocol
		AND state = 'online' AND NOT drained AND deactivated_at IS NULL AND last_heartbeat_at > now() - @stale::interval`,
		pgx.NamedArgs{"profile": profile, "runtime": runtime, "protocol": protocol, "stale": staleAfter}).Scan(&n)
	return n, mapErr(err, "count serving agents")
}

// CreateBenchmark inserts the benchmark row.
func (q *Queries) CreateBenchmark(ctx context.Context, ownerID int64, name string, datasetID int64, manifest json.RawMessage) (int64, error) {
	var id int64
	err := q.db.QueryRow(ctx, `INSERT INTO benchmarks (owner_id, name, dataset_id, manifest)
		VALUES (@owner, @name, @dataset, @manifest) RETURNING id`,
		pgx.NamedArgs{"owner": ownerID, "name": name, "dataset": datasetID, "manifest": string(manifest)}).Scan(&id)
	return id, mapErr(err, "create benchmark")
}

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
}

// CreateRun inserts a run row.
func (q *Queries) CreateRun(ctx context.Context, r NewRun) (int64, error) {
	var id int64
	err := q.db.QueryRow(ctx, `INSERT INTO runs (benchmark_id, model_id, runtime, hardware_profile, waiting_for_agent, total, samples, repeat,
			fewshot_k, fewshot_seed)
		VALUES (@b, @m, @rt, @hw, @waiting, @total, @samples, @repeat, @k, @seed) RETURNING id`,
		pgx.NamedArgs{"b": r.BenchmarkID, "m": r.ModelID, "rt": r.Runtime, "hw": r.HardwareProfile, "waiting": r.WaitingForAgent,
			"total": r.Total, "samples": max(r.Samples, 1), "repeat": r.Repeat, "k": r.FewShotK, "seed": r.FewShotSeed}).Scan(&id)
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
	// FewShotK and FewShotSeed: the run's few-shot setting (k 0: none).
	FewShotK    int
	FewShotSeed int64
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
	coalesce(r.fleet_run_id, ''), r.fewshot_k, r.fewshot_seed, ` + regressionsJSON

// fields are the scan targets of runColumns, in order; queries that read
// more columns append theirs.
func (r *Run) fields() []any {
	return []any{&r.ID, &r.BenchmarkID, &r.ModelName, &r.Runtime, &r.HardwareProfile, &r.RiverJobID, &r.State,
		&r.WaitingForAgent, &r.Attempt, &r.Fence, &r.AgentID, &r.AgentName, &r.Mode, &r.Total, &r.Completed, &r.Errors,
		&r.OutputTokens, &r.Throughput, &r.RequestsPerS, &r.ETASeconds, &r.Resumed, &r.StoppedBy, &r.Error,
		&r.CreatedAt, &r.StartedAt, &r.FinishedAt, &r.Scorer, &r.Scored, &r.Quality, &r.QualityLo, &r.QualityHi,
		&r.Samples, &r.Exec.State, &r.Exec.Error, &r.Exec.PassAt, &r.Exec.Counts, &r.ScorerOptions, &r.CorpusBLEU,
		&r.FleetRunID, &r.FewShotK, &r.FewShotSeed, &r.Regressions}
}

func scanRun(row pgx.CollectableRow) (Run, error) {
	var r Run
	err := row.Scan(r.fields()...)
	return r, err
}

// Benchmark is a benchmark with its runs.
type Benchmark struct {
	ID          int64
	OwnerID     int64
	Name        string
	DatasetID   int64
	DatasetName string
	CreatedAt   time.Time
	// Visibility is private (owner and administrators) or shared (every
	// signed-in user may read it); OwnerEmail is the owner's address.
	Visibility string
	OwnerEmail string
	Runs       []Run
	// VerdictScorerKey is the scorer identity the owner chose for the
	// verdict's quality ("": the one most runs were scored under).
	VerdictScorerKey string
	// Estimate is the benchmark's status, progress and ETA as the API
	// gives them (EstimateBenchmark, through BenchmarkStatusByID); nil
	// unless the page that shows it read it.
	Estimate *BenchmarkEstimate
}

// Writable says whether v may change the benchmark (rename, share,
// delete, cancel, retry, rescore): its owner and administrators may;
// readers of a shared benchmark may not.
func (b Benchmark) Writable(v Viewer) bool { return v.Admin || b.OwnerID == v.UserID }

// benchmarkReadable and benchmarkWritable are the access conditions on a
// benchmark b (with @viewer and @admin): readable by its owner, by
// administrators and, when shared, by every user; writable by its owner
// and administrators. A deleted benchmark is neither.
const (
	benchmarkReadable = ` ((b.owner_id = @viewer OR b.visibility = 'shared' OR @admin) AND b.deleted_at IS NULL) `
	benchmarkWritable = ` ((b.owner_id = @viewer OR @admin) AND b.deleted_at IS NULL) `
)

// Active says whether any of the benchmark's runs may still change
// (queued or running): its live pages keep polling, and it has no verdict
// yet.
func (b Benchmark) Active() bool {
	for _, r := range b.Runs {
		if r.State == "queued" || r.State == "running" {
			return true
		}
	}
	return false
}

// BenchmarkByID returns a benchmark the viewer may read (see
// benchmarkReadable) with its runs.
func (q *Queries) BenchmarkByID(ctx context.Context, v Viewer, id int64) (Benchmark, error) {
	var b Benchmark
	// Both statements in one round trip: the live fragments read this
	// every 2 s per viewer.
	batch := &pgx.Batch{}
	batch.Queue(`SELECT b.id, b.owner_id, b.name, b.dataset_id, d.name, b.created_at, b.visibility, u.email, coalesce(b.verdict_scorer_key, '')
		FROM benchmarks b JOIN datasets d ON d.id = b.dataset_id JOIN users u ON u.id = b.owner_id
		WHERE b.id = @id AND`+benchmarkReadable, pgx.NamedArgs{"id": id, "viewer": v.UserID, "admin": v.Admin})
	batch.Queue(`SELECT `+runColumns+`
		FROM runs r JOIN models m ON m.id = r.model_id LEFT JOIN agents a ON a.id = r.agent_id
		JOIN benchmarks b ON b.id = r.benchmark_id
		WHERE r.benchmark_id = @id AND`+benchmarkReadable+`ORDER BY r.id`, pgx.NamedArgs{"id": id, "viewer": v.UserID, "admin": v.Admin})
	br := q.db.SendBatch(ctx, batch)
	defer br.Close()
	if err := br.QueryRow().Scan(&b.ID, &b.OwnerID, &b.Name, &b.DatasetID, &b.DatasetName, &b.CreatedAt, &b.Visibility, &b.OwnerEmail, &b.VerdictScorerKey); err != nil {
		return b, mapErr(err, "benchmark by id")
	}
	rows, err := br.Query()
	if err != nil {
		return b, mapErr(err, "benchmark runs")
	}
	b.Runs, err = pgx.CollectRows(rows, scanRun)
	return b, mapErr(err, "benchmark runs")
}

// BenchmarkSummary is a benchmark in a list.
type BenchmarkSummary struct {
	ID          int64
	Name        string
	DatasetName string
	Runs        int
	// Active runs are queued or running; Succeeded and Failed finished so.
	Active    int
	Succeeded int
	Failed    int
	// OutputTokens over all runs; Throughput is the best run's output
	// tokens/s.
	OutputTokens int64
	Throughput   float64
	CreatedAt    time.Time
	// Status is aggregated over the runs (see BenchmarkStatus).
	Status string
	// Visibility is private or shared; OwnerID and OwnerEmail whose it is.
	Visibility string
	OwnerID    int64
	OwnerEmail string
	// Regressions counts the runs flagged as regressions.
	Regressions int
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

// ListBenchmarks returns the benchmarks the viewer may read — their own,
// those shared with everyone (all, for admins), deleted ones left out —
// newest first; judges' benchmarks are shown with the runs they judge instead.
func (q *Queries) ListBenchmarks(ctx context.Context, v Viewer) ([]BenchmarkSummary, error) {
	rows, _ := q.db.Query(ctx, `SELECT b.id, b.name, d.name, count(r.id), count(r.id) FILTER (WHERE r.state IN ('queued', 'running')),
			count(r.id) FILTER (WHERE r.state = 'completed'), count(r.id) FILTER (WHERE r.state = 'failed'),
			coalesce(sum(r.output_tokens), 0)::bigint, coalesce(max(r.throughput) FILTER (WHERE r.state = 'completed'), 0), b.created_at,
			`+benchmarkStatusSQL+`, b.visibility, b.owner_id, u.email,
			(SELECT count(DISTINCT g.run_id) FROM run_regressions g JOIN runs x ON x.id = g.run_id WHERE x.benchmark_id = b.id AND `+regressionVisible+`)
		FROM benchmarks b JOIN datasets d ON d.id = b.dataset_id JOIN users u ON u.id = b.owner_id LEFT JOIN runs r ON r.benchmark_id = b.id
		WHERE`+benchmarkReadable+`AND b.judges_run_id IS NULL GROUP BY b.id, d.name, u.email ORDER BY b.id DESC`, pgx.NamedArgs{"viewer": v.UserID, "admin": v.Admin})
	bs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (BenchmarkSummary, error) {
		var b BenchmarkSummary
		err := row.Scan(&b.ID, &b.Name, &b.DatasetName, &b.Runs, &b.Active, &b.Succeeded, &b.Failed, &b.OutputTokens, &b.Throughput, &b.CreatedAt, &b.Status,
			&b.Visibility, &b.OwnerID, &b.OwnerEmail, &b.Regressions)
		return b, err
	})
	return bs, mapErr(err, "list benchmarks")
}

// RunForUpdate locks a run of a benchmark the viewer may change and returns
// it with the arguments needed to queue it again.
func (q *Queries) RunForUpdate(ctx context.Context, v Viewer, benchmarkID, runID int64) (Run, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+runColumns+`
		FROM runs r JOIN models m ON m.id = r.model_id LEFT JOIN agents a ON a.id = r.agent_id JOIN benchmarks b ON b.id = r.benchmark_id
		WHERE r.id = @run AND r.benchmark_id = @b AND`+benchmarkWritable+`
		FOR UPDATE OF r`, pgx.NamedArgs{"run": runID, "b": benchmarkID, "viewer": v.UserID, "admin": v.Admin})
	r, err := pgx.CollectExactlyOneRow(rows, scanRun)
	return r, mapErr(err, "run for update")
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
const staleRun = `r.state = 'running' AND (a.state = 'offline' OR a.deactivated_at IS NOT NULL
	OR (greatest(a.last_heartbeat_at, r.progress_at, r.segment_started_at) < now() - @stale::interval
		AND (pg_postmaster_start_time() < now() - @stale::interval
			OR greatest(a.last_heartbeat_at, r.progress_at, r.segment_started_at) < pg_postmaster_start_time() - @stale::interval)))`

// StaleRuns lists the running runs to reassign (staleRun) with staleAfter
// as the stale period.
func (q *Queries) StaleRuns(ctx context.Context, staleAfter time.Duration) ([]StaleRun, error) {
	rows, _ := q.db.Query(ctx, `SELECT r.id, r.benchmark_id, a.name FROM runs r JOIN agents a ON a.id = r.agent_id
		WHERE `+staleRun+` ORDER BY r.id`, pgx.NamedArgs{"stale": staleAfter})
	rs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (StaleRun, error) {
		var r StaleRun
		err := row.Scan(&r.RunID, &r.BenchmarkID, &r.AgentName)
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
			INSERT INTO run_events (run_id, kind, message) SELECT id, 'handed_on', @why FROM upd
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

// BenchmarkManifest returns the manifest a benchmark was created from.
func (q *Queries) BenchmarkManifest(ctx context.Context, id int64) (json.RawMessage, int64, error) {
	var m json.RawMessage
	var ds int64
	err := q.db.QueryRow(ctx, `SELECT manifest, dataset_id FROM benchmarks WHERE id = @id`, pgx.NamedArgs{"id": id}).Scan(&m, &ds)
	return m, ds, mapErr(err, "benchmark manifest")
}

// BenchmarkOfRun returns the benchmark a run belongs to.
func (q *Queries) BenchmarkOfRun(ctx context.Context, runID int64) (int64, error) {
	var id int64
	err := q.db.QueryRow(ctx, `SELECT benchmark_id FROM runs WHERE id = @id`, pgx.NamedArgs{"id": runID}).Scan(&id)
	return id, mapErr(err, "benchmark of run")
}
