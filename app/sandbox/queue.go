package sandbox

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Queue queues runs' execution: the run's earlier outcomes cleared and
// the execute_run job inserted in one transaction. It is the score
// service's ExecutionQueue on the server.
type Queue struct {
	Store *store.Store
	River Inserter
}

// Inserter inserts River jobs in a transaction (a *river.Client).
type Inserter interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// QueueExecution queues runID's execution with scorer.
func (q *Queue) QueueExecution(ctx context.Context, runID int64, scorer string) error {
	if q.River == nil {
		return fmt.Errorf("run %d: %w", runID, jobs.ErrNoSandbox)
	}
	return q.Store.InTxWith(ctx, func(tx pgx.Tx, qs *store.Queries) error {
		if err := qs.QueueExecution(ctx, runID, scorer); err != nil {
			return err
		}
		if _, err := q.River.InsertTx(ctx, tx, jobs.ExecuteRunArgs{RunID: runID, Scorer: scorer}, nil); err != nil {
			return fmt.Errorf("queue execution of run %d: %w", runID, err)
		}
		return nil
	})
}

// QueueConclusion queues the server's conclusion of runID, whose
// execution is done (jobs.ConcludeRunArgs).
func (q *Queue) QueueConclusion(ctx context.Context, runID int64) error {
	if q.River == nil {
		return fmt.Errorf("run %d: %w", runID, jobs.ErrNoSandbox)
	}
	return q.Store.InTxWith(ctx, func(tx pgx.Tx, _ *store.Queries) error {
		if _, err := q.River.InsertTx(ctx, tx, jobs.ConcludeRunArgs{RunID: runID}, nil); err != nil {
			return fmt.Errorf("queue conclusion of run %d: %w", runID, err)
		}
		return nil
	})
}
