package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// CreateBenchmark inserts the benchmark row.
func (q *Queries) CreateBenchmark(ctx context.Context, ownerID int64, name string, datasetID int64, manifest json.RawMessage) (int64, error) {
	var id int64
	err := q.db.QueryRow(ctx, `INSERT INTO benchmarks (owner_id, name, dataset_id, manifest)
		VALUES (@owner, @name, @dataset, @manifest) RETURNING id`,
		pgx.NamedArgs{"owner": ownerID, "name": name, "dataset": datasetID, "manifest": string(manifest)}).Scan(&id)
	return id, mapErr(err, "create benchmark")
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

// ErrBenchmarkActive refuses to delete a benchmark with queued or running
// runs: cancel them first.
var ErrBenchmarkActive = errors.New("the benchmark still has queued or running runs: cancel them first")

// UpdateBenchmark renames and/or shares a benchmark the viewer may change
// (its owner or an administrator; ErrNotFound otherwise).
func (q *Queries) UpdateBenchmark(ctx context.Context, v Viewer, id int64, ch BenchmarkChange) error {
	tag, err := q.db.Exec(ctx, `UPDATE benchmarks b SET name = coalesce(@name, b.name), visibility = coalesce(@visibility, b.visibility),
			verdict_scorer_key = CASE WHEN @verdict::text IS NULL THEN b.verdict_scorer_key ELSE nullif(@verdict, '') END
		WHERE b.id = @id AND b.judges_run_id IS NULL AND`+benchmarkWritable,
		pgx.NamedArgs{"id": id, "name": ch.Name, "visibility": ch.Visibility, "verdict": ch.VerdictScorer, "viewer": v.UserID, "admin": v.Admin})
	if err != nil {
		return mapErr(err, "update benchmark")
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("update benchmark %d: %w", id, ErrNotFound)
	}
	return nil
}

// DeleteBenchmark marks a benchmark the viewer may change deleted: it
// leaves every list and page, its runs and results are kept (and its runs
// no longer count as a target's previous run). Its queued or running runs
// must have been cancelled first (ErrBenchmarkActive).
func (q *Queries) DeleteBenchmark(ctx context.Context, v Viewer, id int64) error {
	var active bool
	err := q.db.QueryRow(ctx, `UPDATE benchmarks b SET deleted_at = now()
		WHERE b.id = @id AND b.judges_run_id IS NULL AND`+benchmarkWritable+`
			AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.benchmark_id = b.id AND r.state IN ('queued', 'running'))
		RETURNING false`, pgx.NamedArgs{"id": id, "viewer": v.UserID, "admin": v.Admin}).Scan(&active)
	if err == nil {
		return nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return mapErr(err, "delete benchmark")
	}
	// Nothing changed: either not the viewer's to delete, or still active.
	err = q.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs r WHERE r.benchmark_id = b.id AND r.state IN ('queued', 'running'))
		FROM benchmarks b WHERE b.id = @id AND b.judges_run_id IS NULL AND`+benchmarkWritable,
		pgx.NamedArgs{"id": id, "viewer": v.UserID, "admin": v.Admin}).Scan(&active)
	if err != nil {
		return mapErr(err, "delete benchmark")
	}
	return fmt.Errorf("delete benchmark %d: %w", id, ErrBenchmarkActive)
}

// BenchmarkOwnerOfRun returns the owner of a run's benchmark.
func (q *Queries) BenchmarkOwnerOfRun(ctx context.Context, runID int64) (int64, error) {
	var id int64
	err := q.db.QueryRow(ctx, `SELECT b.owner_id FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.id = @run`,
		pgx.NamedArgs{"run": runID}).Scan(&id)
	return id, mapErr(err, "owner of run")
}
