package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrFleetRunIDTaken is returned when a fleet run id is already in use: the
// same fleet name submitted twice within one second.
var ErrFleetRunIDTaken = errors.New("a fleet run with this id already exists")

// CreateFleet inserts a fleet's row; submittedAt is to the second.
func (q *Queries) CreateFleet(ctx context.Context, ownerID int64, name string, submittedAt time.Time, manifest json.RawMessage) (int64, error) {
	var id int64
	err := q.db.QueryRow(ctx, `INSERT INTO fleets (owner_id, name, submitted_at, manifest)
		VALUES (@owner, @name, @at, @manifest) RETURNING id`,
		pgx.NamedArgs{"owner": ownerID, "name": name, "at": submittedAt, "manifest": string(manifest)}).Scan(&id)
	return id, mapErr(err, "create fleet")
}

// AddBenchmarkToFleet makes a benchmark the given scenario of a fleet,
// in the given repository ("" for none).
func (q *Queries) AddBenchmarkToFleet(ctx context.Context, benchmarkID, fleetID int64, scenario, repository string) error {
	_, err := q.db.Exec(ctx, `UPDATE benchmarks SET fleet_id = @fleet, fleet_scenario = @scenario, fleet_repository = nullif(@repo, '')
		WHERE id = @id`, pgx.NamedArgs{"id": benchmarkID, "fleet": fleetID, "scenario": scenario, "repo": repository})
	return mapErr(err, "add benchmark to fleet")
}

// SetFleetRunID gives a run its fleet run id; ErrFleetRunIDTaken when
// another run has it.
func (q *Queries) SetFleetRunID(ctx context.Context, runID int64, fleetRunID string) error {
	_, err := q.db.Exec(ctx, `UPDATE runs SET fleet_run_id = @fid WHERE id = @id`, pgx.NamedArgs{"id": runID, "fid": fleetRunID})
	return mapErr(err, "set fleet run id "+fleetRunID)
}

// FleetSummary is a fleet in a list.
type FleetSummary struct {
	ID          int64
	Name        string
	SubmittedAt time.Time
	Scenarios   int
	Runs        int
	// Active runs are queued or running; Completed, Failed and Cancelled
	// finished so.
	Active    int
	Completed int
	Failed    int
	Cancelled int
}

// ListFleets returns the viewer's fleets (everyone's, for admins), newest
// first, at most limit.
func (q *Queries) ListFleets(ctx context.Context, v Viewer, limit int) ([]FleetSummary, error) {
	rows, _ := q.db.Query(ctx, `SELECT f.id, f.name, f.submitted_at, count(DISTINCT b.id), count(r.id),
			count(r.id) FILTER (WHERE r.state IN ('queued', 'running')), count(r.id) FILTER (WHERE r.state = 'completed'),
			count(r.id) FILTER (WHERE r.state = 'failed'), count(r.id) FILTER (WHERE r.state = 'cancelled')
		FROM fleets f LEFT JOIN benchmarks b ON b.fleet_id = f.id AND b.deleted_at IS NULL LEFT JOIN runs r ON r.benchmark_id = b.id
		WHERE (f.owner_id = @viewer OR @admin) GROUP BY f.id ORDER BY f.id DESC LIMIT @limit`,
		pgx.NamedArgs{"viewer": v.UserID, "admin": v.Admin, "limit": limit})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (FleetSummary, error) {
		var f FleetSummary
		err := row.Scan(&f.ID, &f.Name, &f.SubmittedAt, &f.Scenarios, &f.Runs, &f.Active, &f.Completed, &f.Failed, &f.Cancelled)
		return f, err
	})
	return out, mapErr(err, "list fleets")
}

// Fleet is a fleet with its scenarios' benchmarks and every run.
type Fleet struct {
	ID          int64
	OwnerID     int64
	Name        string
	SubmittedAt time.Time
	Manifest    json.RawMessage
	Benchmarks  []FleetBenchmark
	// Runs are in scenario order, then target order, each with its
	// figures (a RunFigures) and its scenario.
	Runs []FleetRun
}

// FleetBenchmark is the benchmark of one scenario.
type FleetBenchmark struct {
	ID          int64
	Scenario    string
	Repository  string
	DatasetID   int64
	DatasetName string
}

// FleetRun is a run of a fleet with what the report needs.
type FleetRun struct {
	RunFigures
	Scenario   string
	Repository string
	// PromptTokens is the run's input tokens, warm-up included.
	PromptTokens int64
	// Provider is the remote provider of a "provider:model" target's run
	// ("" for others); Price its price the run was created under (nil
	// when none was set).
	Provider string
	Price    *ProviderPrice
}

// FleetByID returns a fleet the viewer owns (or any, for admins) with its
// benchmarks and runs.
func (q *Queries) FleetByID(ctx context.Context, v Viewer, id int64) (Fleet, error) {
	var f Fleet
	args := pgx.NamedArgs{"id": id, "viewer": v.UserID, "admin": v.Admin}
	err := q.db.QueryRow(ctx, `SELECT id, owner_id, name, submitted_at, manifest FROM fleets
		WHERE id = @id AND (owner_id = @viewer OR @admin)`, args).Scan(&f.ID, &f.OwnerID, &f.Name, &f.SubmittedAt, &f.Manifest)
	if err != nil {
		return f, mapErr(err, "fleet by id")
	}
	rows, _ := q.db.Query(ctx, `SELECT b.id, b.fleet_scenario, coalesce(b.fleet_repository, ''), b.dataset_id, d.name
		FROM benchmarks b JOIN datasets d ON d.id = b.dataset_id WHERE b.fleet_id = @id AND b.deleted_at IS NULL ORDER BY b.id`, args)
	f.Benchmarks, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (FleetBenchmark, error) {
		var b FleetBenchmark
		err := row.Scan(&b.ID, &b.Scenario, &b.Repository, &b.DatasetID, &b.DatasetName)
		return b, err
	})
	if err != nil {
		return f, mapErr(err, "fleet benchmarks")
	}
	rows, _ = q.db.Query(ctx, `SELECT `+runFiguresColumns+`, b.fleet_scenario, coalesce(b.fleet_repository, ''), r.prompt_tokens,
			pp.provider, pp.input_per_1m::float8, pp.output_per_1m::float8`+runFiguresFrom+`
		LEFT JOIN run_providers pp ON pp.run_id = r.id
		WHERE b.fleet_id = @id AND b.deleted_at IS NULL ORDER BY b.id, r.id`, args)
	f.Runs, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (FleetRun, error) {
		var r FleetRun
		var provider *string
		var in, out *float64
		err := row.Scan(append(r.compareFields(), &r.Scenario, &r.Repository, &r.PromptTokens, &provider, &in, &out)...)
		if provider != nil {
			r.Provider = *provider
		}
		if provider != nil && in != nil && out != nil {
			r.Price = &ProviderPrice{Provider: *provider, Model: r.ModelName, InputPer1M: *in, OutputPer1M: *out}
		}
		return r, err
	})
	if err != nil {
		return f, mapErr(err, "fleet runs")
	}
	// Each run's kept figures and token price, as every conclusion reads
	// them: the report costs a run as the verdict does.
	figs := make([]RunFigures, len(f.Runs))
	for i, r := range f.Runs {
		figs[i] = r.RunFigures
	}
	if figs, err = q.withConclusions(ctx, figs); err != nil {
		return f, err
	}
	for i := range f.Runs {
		f.Runs[i].RunFigures = figs[i]
	}
	return f, nil
}

// FleetCategory is the fleet's results in one category of its datasets'
// items, over every run.
type FleetCategory struct {
	// Category is "" for items without one.
	Category string
	Requests int
	OK       int
	Scored   int
	// MeanScore is over the scored answers; nil when none is scored.
	MeanScore *float64
	// MeanE2EMs is over the successful requests; nil when none.
	MeanE2EMs *float64
}

// FleetCategories sums a fleet's results by their dataset item's category,
// in category order.
func (q *Queries) FleetCategories(ctx context.Context, fleetID int64) ([]FleetCategory, error) {
	rows, _ := q.db.Query(ctx, `SELECT coalesce(di.category, ''), count(*), count(*) FILTER (WHERE res.status = 'ok'),
			count(res.score), avg(res.score), avg(res.e2e_ms) FILTER (WHERE res.status = 'ok')
		FROM benchmarks b
		JOIN runs r ON r.benchmark_id = b.id
		JOIN results res ON res.run_id = r.id
		JOIN dataset_items di ON di.dataset_id = b.dataset_id AND di.idx = res.idx
		WHERE b.fleet_id = @id AND b.deleted_at IS NULL
		GROUP BY 1 ORDER BY 1`, pgx.NamedArgs{"id": fleetID})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (FleetCategory, error) {
		var c FleetCategory
		err := row.Scan(&c.Category, &c.Requests, &c.OK, &c.Scored, &c.MeanScore, &c.MeanE2EMs)
		return c, err
	})
	return out, mapErr(err, "fleet categories")
}

// FleetRunResults are one fleet run's results by outcome, warm-up
// included (a provider bills it).
type FleetRunResults struct {
	RunID     int64
	Succeeded int
	// Timeout counts requests that failed on the request or stall
	// timeout; Failed every other failure.
	Timeout      int
	Failed       int
	PromptTokens int64
	OutputTokens int64
}

// FleetDurations are end-to-end latencies of successful requests, in ms:
// of the whole fleet (Repository "" and All set) or of one repository.
type FleetDurations struct {
	All        bool
	Repository string
	N          int
	Mean       *float64
	P50        *float64
	P95        *float64
	P99        *float64
	Min        *float64
	Max        *float64
}

// FleetResults reads a fleet's results per run and its latency
// distributions, whole and per repository. Percentiles interpolate
// linearly between closest ranks (percentile_cont, numpy's default).
func (q *Queries) FleetResults(ctx context.Context, fleetID int64) ([]FleetRunResults, []FleetDurations, error) {
	args := pgx.NamedArgs{"id": fleetID, "timeouts": []string{"timeout", "stall"}}
	rows, _ := q.db.Query(ctx, `SELECT r.id, count(res.run_id) FILTER (WHERE res.status = 'ok'),
			count(res.run_id) FILTER (WHERE res.status <> 'ok' AND res.error_class = ANY(@timeouts)),
			count(res.run_id) FILTER (WHERE res.status <> 'ok' AND NOT res.error_class = ANY(@timeouts)),
			coalesce(sum(res.prompt_tokens), 0), coalesce(sum(res.completion_tokens), 0)
		FROM benchmarks b JOIN runs r ON r.benchmark_id = b.id LEFT JOIN results res ON res.run_id = r.id
		WHERE b.fleet_id = @id AND b.deleted_at IS NULL GROUP BY r.id ORDER BY r.id`, args)
	perRun, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (FleetRunResults, error) {
		var s FleetRunResults
		err := row.Scan(&s.RunID, &s.Succeeded, &s.Timeout, &s.Failed, &s.PromptTokens, &s.OutputTokens)
		return s, err
	})
	if err != nil {
		return nil, nil, mapErr(err, "fleet results")
	}
	rows, _ = q.db.Query(ctx, `SELECT GROUPING(b.fleet_repository) = 1, coalesce(b.fleet_repository, ''), count(res.e2e_ms), avg(res.e2e_ms),
			percentile_cont(0.5) WITHIN GROUP (ORDER BY res.e2e_ms), percentile_cont(0.95) WITHIN GROUP (ORDER BY res.e2e_ms),
			percentile_cont(0.99) WITHIN GROUP (ORDER BY res.e2e_ms), min(res.e2e_ms), max(res.e2e_ms)
		FROM benchmarks b JOIN runs r ON r.benchmark_id = b.id JOIN results res ON res.run_id = r.id
		WHERE b.fleet_id = @id AND b.deleted_at IS NULL AND res.status = 'ok' AND res.e2e_ms IS NOT NULL
		GROUP BY GROUPING SETS ((), (b.fleet_repository)) ORDER BY 1 DESC, 2`, args)
	durations, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (FleetDurations, error) {
		var d FleetDurations
		err := row.Scan(&d.All, &d.Repository, &d.N, &d.Mean, &d.P50, &d.P95, &d.P99, &d.Min, &d.Max)
		return d, err
	})
	return perRun, durations, mapErr(err, "fleet durations")
}
