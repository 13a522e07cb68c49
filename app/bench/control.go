package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// ErrRunState is returned when a run cannot be cancelled or retried in its
// present state.
var ErrRunState = errors.New("not possible in the run's present state")

// CancelRun cancels a queued or running run: its River job is cancelled
// (an agent working it sees its context end, stops sending and keeps the
// partial results) and the run is marked cancelled, in one transaction.
func (p *Planner) CancelRun(ctx context.Context, v store.Viewer, benchmarkID, runID int64) error {
	return p.Store.InTxWith(ctx, func(tx pgx.Tx, q *store.Queries) error {
		return cancelRun(ctx, tx, q, p.River, v, benchmarkID, runID)
	})
}

func cancelRun(ctx context.Context, tx pgx.Tx, q *store.Queries, c Queue, v store.Viewer, benchmarkID, runID int64) error {
	r, err := q.RunForUpdate(ctx, v, benchmarkID, runID)
	if err != nil {
		return err
	}
	if r.State != "queued" && r.State != "running" {
		return fmt.Errorf("run %d is %s: %w", r.ID, r.State, ErrRunState)
	}
	if r.RiverJobID != nil {
		if _, err := c.JobCancelTx(ctx, tx, *r.RiverJobID); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
			return fmt.Errorf("cancel job of run %d: %w", r.ID, err)
		}
	}
	return q.SetRunCancelled(ctx, r.ID)
}

// CancelBenchmark cancels every run of the benchmark still queued or
// running.
func (p *Planner) CancelBenchmark(ctx context.Context, v store.Viewer, benchmarkID int64) (int, error) {
	b, err := p.Store.BenchmarkByID(ctx, v, benchmarkID)
	if err != nil {
		return 0, err
	}
	n := 0
	err = p.Store.InTxWith(ctx, func(tx pgx.Tx, q *store.Queries) error {
		for _, r := range b.Runs {
			err := cancelRun(ctx, tx, q, p.River, v, benchmarkID, r.ID)
			if errors.Is(err, ErrRunState) {
				continue
			}
			if err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// RetryRun queues a failed or cancelled run again as a new attempt. The new
// attempt starts from the first item and replaces the earlier attempt's
// results (result rows are keyed by run and item).
func (p *Planner) RetryRun(ctx context.Context, v store.Viewer, benchmarkID, runID int64) error {
	return p.Store.InTxWith(ctx, func(tx pgx.Tx, q *store.Queries) error {
		r, err := q.RunForUpdate(ctx, v, benchmarkID, runID)
		if err != nil {
			return err
		}
		if r.State != "failed" && r.State != "cancelled" {
			return fmt.Errorf("run %d is %s: %w", r.ID, r.State, ErrRunState)
		}
		raw, datasetID, err := q.BenchmarkManifest(ctx, benchmarkID)
		if err != nil {
			return err
		}
		var m Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("read benchmark %d's manifest: %w", benchmarkID, err)
		}
		n, err := q.CountServingAgents(ctx, r.HardwareProfile, r.Runtime, jobs.ProtocolVersion, p.StaleAfter)
		if err != nil {
			return err
		}
		res, err := p.River.InsertTx(ctx, tx, jobs.RunArgs{
			ProtocolVersion: jobs.ProtocolVersion, RunID: r.ID, BenchmarkID: benchmarkID, DatasetID: datasetID,
			Model: r.ModelName, Runtime: r.Runtime, HardwareProfile: r.HardwareProfile,
			Load: m.Load, Sampling: m.Sampling, SLO: m.SLO,
		}, nil)
		if err != nil {
			return err
		}
		return q.RequeueRun(ctx, r.ID, res.Job.ID, n == 0)
	})
}
