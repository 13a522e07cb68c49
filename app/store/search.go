package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// SearchRun is one run of a budgeted search's rung with what the cut
// weighs besides its results: its configuration and its hardware's price
// (docs/benchmarks.md#budgeted-search).
type SearchRun struct {
	Run
	GPUCount     int
	PricePerHour *float64
}

// SearchRungRuns are benchmarkID's runs of the search's rung, by id.
func (q *Queries) SearchRungRuns(ctx context.Context, benchmarkID int64, rung int) ([]SearchRun, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+runColumns+`, h.gpu_count, h.price_per_hour::float8
		FROM runs r JOIN models m ON m.id = r.model_id LEFT JOIN agents a ON a.id = r.agent_id
			LEFT JOIN hardware_profiles h ON h.slug = r.hardware_profile
		WHERE r.benchmark_id = @b AND r.search_rung = @rung ORDER BY r.id`,
		pgx.NamedArgs{"b": benchmarkID, "rung": rung})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (SearchRun, error) {
		var r SearchRun
		var gpus *int
		err := row.Scan(append(r.fields(), &gpus, &r.PricePerHour)...)
		if gpus != nil {
			r.GPUCount = *gpus
		}
		return r, err
	})
	return out, mapErr(err, "search rung runs")
}

// LockBenchmark holds benchmarkID's row until the transaction ends, so
// that two deciders of one benchmark's search take turns.
func (q *Queries) LockBenchmark(ctx context.Context, benchmarkID int64) error {
	var id int64
	err := q.db.QueryRow(ctx, `SELECT id FROM benchmarks WHERE id = @b FOR UPDATE`, pgx.NamedArgs{"b": benchmarkID}).Scan(&id)
	return mapErr(err, "lock benchmark")
}

// AddSearchCut keeps a rung's decision; false when the rung was decided
// already (the decision stands and this one is dropped).
func (q *Queries) AddSearchCut(ctx context.Context, benchmarkID int64, rung int, cut json.RawMessage) (bool, error) {
	tag, err := q.db.Exec(ctx, `INSERT INTO search_cuts (benchmark_id, rung, cut) VALUES (@b, @rung, @cut)
		ON CONFLICT (benchmark_id, rung) DO NOTHING`, pgx.NamedArgs{"b": benchmarkID, "rung": rung, "cut": cut})
	if err != nil {
		return false, mapErr(err, "add search cut")
	}
	return tag.RowsAffected() == 1, nil
}

// SearchCut is a rung's kept decision.
type SearchCut struct {
	Rung      int
	DecidedAt time.Time
	Cut       json.RawMessage
}

// SearchCuts are benchmarkID's decided rungs, in order.
func (q *Queries) SearchCuts(ctx context.Context, benchmarkID int64) ([]SearchCut, error) {
	rows, _ := q.db.Query(ctx, `SELECT rung, decided_at, cut FROM search_cuts WHERE benchmark_id = @b ORDER BY rung`,
		pgx.NamedArgs{"b": benchmarkID})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (SearchCut, error) {
		var c SearchCut
		err := row.Scan(&c.Rung, &c.DecidedAt, &c.Cut)
		return c, err
	})
	return out, mapErr(err, "search cuts")
}

// SearchRung is a benchmark's search rung whose runs have all ended.
type SearchRung struct {
	BenchmarkID int64
	Rung        int
}

// UndecidedSearchRungs are the rungs whose runs have all ended (completed,
// failed or cancelled) and whose cut is not kept yet: the work the
// search's decider has left, found again after a restart.
func (q *Queries) UndecidedSearchRungs(ctx context.Context) ([]SearchRung, error) {
	rows, _ := q.db.Query(ctx, `SELECT r.benchmark_id, r.search_rung FROM runs r
		WHERE r.search_rung IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM search_cuts c WHERE c.benchmark_id = r.benchmark_id AND c.rung = r.search_rung)
		GROUP BY 1, 2 HAVING bool_and(r.state IN ('completed', 'failed', 'cancelled'))
		ORDER BY 1, 2`)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (SearchRung, error) {
		var s SearchRung
		err := row.Scan(&s.BenchmarkID, &s.Rung)
		return s, err
	})
	return out, mapErr(err, "undecided search rungs")
}

// BenchmarkOwner is the user who created benchmarkID, as a viewer: what
// the server does on the owner's behalf sees what the owner sees.
func (q *Queries) BenchmarkOwner(ctx context.Context, benchmarkID int64) (Viewer, error) {
	var v Viewer
	err := q.db.QueryRow(ctx, `SELECT u.id, u.role = 'admin' FROM benchmarks b JOIN users u ON u.id = b.owner_id WHERE b.id = @b`,
		pgx.NamedArgs{"b": benchmarkID}).Scan(&v.UserID, &v.Admin)
	return v, mapErr(err, "benchmark owner")
}
