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
// server computes them again from those rows when it signs them, and
// `ruckus verify` holds the stored figures to the rows as well, so that a
// figure changed afterwards shows (docs/gpu-nodes.md#the-figures-an-agent-reports).

// runSLO is the SLO of the run's benchmark (its manifest's "slo"), and
// whether the run was imported (its results made elsewhere, with no
// agent's figures to check).
func (q *Queries) runSLO(ctx context.Context, runID int64) (jobs.SLO, bool, error) {
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

// headline is a run's summary computed from its result rows, as JSON; an
// imported run's is empty (no requests).
func (q *Queries) headline(ctx context.Context, runID int64) (jobs.RunSummary, []byte, error) {
	slo, imported, err := q.runSLO(ctx, runID)
	if err != nil || imported {
		return jobs.RunSummary{}, nil, err
	}
	sum, err := q.RunAggregate(ctx, runID, slo, 0)
	if err != nil {
		return jobs.RunSummary{}, nil, fmt.Errorf("run %d's figures: %w", runID, err)
	}
	raw, err := json.Marshal(sum)
	return sum, raw, err
}

// RecomputeRunHeadline writes a finished run's throughput, requests per
// second and summary as its result rows give them, over what its agent
// wrote. A run without result rows (none was answered) keeps what it has.
func (q *Queries) RecomputeRunHeadline(ctx context.Context, runID int64) error {
	sum, raw, err := q.headline(ctx, runID)
	if err != nil || sum.Requests == 0 {
		return err
	}
	_, err = q.db.Exec(ctx, `UPDATE runs SET throughput = @tps, requests_per_s = @rps, summary = @summary::jsonb
		WHERE id = @id AND state NOT IN ('queued', 'running')`,
		pgx.NamedArgs{"id": runID, "tps": sum.OutputTokensPerS, "rps": sum.RequestsPerS, "summary": string(raw)})
	return mapErr(err, "recompute run figures")
}

// CheckRunHeadline says what of a finished run's stored headline figures
// differs from what its result rows give ("" when nothing does).
func (q *Queries) CheckRunHeadline(ctx context.Context, runID int64) (string, error) {
	sum, raw, err := q.headline(ctx, runID)
	if err != nil || sum.Requests == 0 {
		return "", err
	}
	var tps, rps float64
	var stored []byte
	if err := q.db.QueryRow(ctx, `SELECT throughput, requests_per_s, coalesce(summary, 'null') FROM runs WHERE id = @id`,
		pgx.NamedArgs{"id": runID}).Scan(&tps, &rps, &stored); err != nil {
		return "", mapErr(err, "run figures")
	}
	switch {
	case !nearly(tps, sum.OutputTokensPerS):
		return fmt.Sprintf("its throughput is %g tokens/s; its result rows give %g", tps, sum.OutputTokensPerS), nil
	case !nearly(rps, sum.RequestsPerS):
		return fmt.Sprintf("its requests per second are %g; its result rows give %g", rps, sum.RequestsPerS), nil
	}
	var was, is any
	if json.Unmarshal(stored, &was) != nil || json.Unmarshal(raw, &is) != nil {
		return "its summary is not a run summary", nil
	}
	if where := differs("summary", was, is); where != "" {
		return fmt.Sprintf("its %s is not what its result rows give", where), nil
	}
	return "", nil
}

// differs names the first place where two JSON values differ, numbers to
// within float rounding (sums over many rows may add in another order);
// "" when none does.
func differs(at string, a, b any) string {
	switch a := a.(type) {
	case float64:
		if b, ok := b.(float64); ok && nearly(a, b) {
			return ""
		}
		return at
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(bm) != len(a) {
			return at
		}
		for k, v := range a {
			if d := differs(at+"."+k, v, bm[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		bs, ok := b.([]any)
		if !ok || len(bs) != len(a) {
			return at
		}
		for i := range a {
			if d := differs(fmt.Sprintf("%s[%d]", at, i), a[i], bs[i]); d != "" {
				return d
			}
		}
		return ""
	default:
		if a != b {
			return at
		}
		return ""
	}
}

// nearly compares two figures to within float rounding: a part in 10⁹.
func nearly(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-9*max(1, a, -a, b, -b)
}
