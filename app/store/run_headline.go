package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/jobs"
)

// The headline figures of a finished run (its throughput, requests per
// second and summary: percentiles, goodput, steps) are what pages show
// first. An agent writes them when it ends the run, but they follow from
// the run's result rows, which the server signs (app/attest): so the
// server computes them again from those rows when it signs them
// (app/summary's RecomputeHeadline), and `ruckus verify` holds the stored
// figures to the rows as well (CheckHeadline), so that a figure changed
// afterwards shows (docs/gpu-nodes.md#the-figures-an-agent-reports). The
// store reads and writes them here.

// RunSLO is the SLO of the run's benchmark (its manifest's "slo"), and
// whether the run was imported (its results made elsewhere, with no
// agent's figures to check).
func (q *Queries) RunSLO(ctx context.Context, runID int64) (jobs.SLO, bool, error) {
	var raw []byte
	var imported bool
	err := q.db.QueryRow(ctx, `SELECT coalesce(b.manifest -> 'slo', 'null'), r.mode = 'imported'
		FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.id = @id`,
		pgx.NamedArgs{"id": runID}).Scan(&raw, &imported)
	if err != nil {
		return jobs.SLO{}, false, mapErr(err, "run slo")
	}
	var slo jobs.SLO
	if err := json.Unmarshal(raw, &slo); err != nil {
		return jobs.SLO{}, false, fmt.Errorf("run %d's slo: %w", runID, err)
	}
	return slo, imported, nil
}

// WriteRunHeadline writes a finished run's throughput, requests per second
// and summary (JSON) over what its agent wrote; a run still queued or
// running keeps what it has.
func (q *Queries) WriteRunHeadline(ctx context.Context, runID int64, tps, rps float64, summary []byte) error {
	_, err := q.db.Exec(ctx, `UPDATE runs SET throughput = @tps, requests_per_s = @rps, summary = @summary::jsonb
		WHERE id = @id AND state NOT IN ('queued', 'running')`,
		pgx.NamedArgs{"id": runID, "tps": tps, "rps": rps, "summary": string(summary)})
	return mapErr(err, "write run figures")
}

// RunHeadline is a run's stored throughput, requests per second and
// summary (JSON; "null" when it has none).
func (q *Queries) RunHeadline(ctx context.Context, runID int64) (tps, rps float64, summary []byte, err error) {
	err = q.db.QueryRow(ctx, `SELECT throughput, requests_per_s, coalesce(summary, 'null') FROM runs WHERE id = @id`,
		pgx.NamedArgs{"id": runID}).Scan(&tps, &rps, &summary)
	return tps, rps, summary, mapErr(err, "run figures")
}
