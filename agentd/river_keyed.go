package main

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/store"
)

// keyedDriver is River's pgx driver for an agent with a key: each of
// River's own statements on river_job and river_queue runs in a
// transaction that carries the key first, so row-level security confines
// River to the agent's queues whichever server connection PgBouncer lends
// it. (River takes a pool and sends its statements itself; this is where
// they pass.) Transactions begun through it carry the key too; River's
// work inside the agent's own transactions (InsertTx, JobCompleteTx) runs
// on a transaction the store already keyed. What is not wrapped (leader
// election, migrations, schema work, which an agent never does) runs
// without a key and is refused by PostgreSQL.
type keyedDriver struct {
	*riverpgxv5.Driver
	key string
}

// newKeyedDriver is River's driver over pool: plain without a key.
func newKeyedDriver(pool *pgxpool.Pool, key string) riverdriver.Driver[pgx.Tx] {
	d := riverpgxv5.New(pool)
	if key == "" {
		return d
	}
	return keyedDriver{Driver: d, key: key}
}

func (d keyedDriver) GetExecutor() riverdriver.Executor {
	return keyedExecutor{Executor: d.Driver.GetExecutor(), key: d.key}
}

type keyedExecutor struct {
	riverdriver.Executor
	key string
}

// Begin begins a transaction that carries the key.
func (e keyedExecutor) Begin(ctx context.Context) (riverdriver.ExecutorTx, error) {
	tx, err := e.Executor.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if err := tx.Exec(ctx, store.SetAgentKey, e.key); err != nil {
		_ = tx.Rollback(ctx)
		return nil, err
	}
	return tx, nil
}

// keyed runs fn in a transaction that carries the key.
func keyed[T any](ctx context.Context, e keyedExecutor, fn func(riverdriver.Executor) (T, error)) (T, error) {
	var zero T
	tx, err := e.Begin(ctx)
	if err != nil {
		return zero, err
	}
	v, err := fn(tx)
	if err != nil {
		_ = tx.Rollback(ctx)
		return zero, err
	}
	if err := tx.Commit(ctx); err != nil {
		return zero, err
	}
	return v, nil
}

func (e keyedExecutor) Exec(ctx context.Context, sql string, args ...any) error {
	_, err := keyed(ctx, e, func(x riverdriver.Executor) (struct{}, error) { return struct{}{}, x.Exec(ctx, sql, args...) })
	return err
}

func (e keyedExecutor) JobCancel(ctx context.Context, p *riverdriver.JobCancelParams) (*rivertype.JobRow, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (*rivertype.JobRow, error) { return x.JobCancel(ctx, p) })
}

func (e keyedExecutor) JobCountByAllStates(ctx context.Context, p *riverdriver.JobCountByAllStatesParams) (map[rivertype.JobState]int, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (map[rivertype.JobState]int, error) { return x.JobCountByAllStates(ctx, p) })
}

func (e keyedExecutor) JobCountByQueueAndState(ctx context.Context, p *riverdriver.JobCountByQueueAndStateParams) ([]*riverdriver.JobCountByQueueAndStateResult, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) ([]*riverdriver.JobCountByQueueAndStateResult, error) {
		return x.JobCountByQueueAndState(ctx, p)
	})
}

func (e keyedExecutor) JobCountByState(ctx context.Context, p *riverdriver.JobCountByStateParams) (int, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (int, error) { return x.JobCountByState(ctx, p) })
}

func (e keyedExecutor) JobDelete(ctx context.Context, p *riverdriver.JobDeleteParams) (*rivertype.JobRow, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (*rivertype.JobRow, error) { return x.JobDelete(ctx, p) })
}

func (e keyedExecutor) JobDeleteBefore(ctx context.Context, p *riverdriver.JobDeleteBeforeParams) (int, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (int, error) { return x.JobDeleteBefore(ctx, p) })
}

func (e keyedExecutor) JobDeleteMany(ctx context.Context, p *riverdriver.JobDeleteManyParams) ([]*rivertype.JobRow, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) ([]*rivertype.JobRow, error) { return x.JobDeleteMany(ctx, p) })
}

func (e keyedExecutor) JobGetAvailable(ctx context.Context, p *riverdriver.JobGetAvailableParams) (*riverdriver.JobGetAvailableResult, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (*riverdriver.JobGetAvailableResult, error) {
		return x.JobGetAvailable(ctx, p)
	})
}

func (e keyedExecutor) JobGetByID(ctx context.Context, p *riverdriver.JobGetByIDParams) (*rivertype.JobRow, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (*rivertype.JobRow, error) { return x.JobGetByID(ctx, p) })
}

func (e keyedExecutor) JobGetByIDMany(ctx context.Context, p *riverdriver.JobGetByIDManyParams) ([]*rivertype.JobRow, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) ([]*rivertype.JobRow, error) { return x.JobGetByIDMany(ctx, p) })
}

func (e keyedExecutor) JobGetByKindMany(ctx context.Context, p *riverdriver.JobGetByKindManyParams) ([]*rivertype.JobRow, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) ([]*rivertype.JobRow, error) { return x.JobGetByKindMany(ctx, p) })
}

func (e keyedExecutor) JobGetCancelRequested(ctx context.Context, p *riverdriver.JobGetCancelRequestedParams) ([]int64, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) ([]int64, error) { return x.JobGetCancelRequested(ctx, p) })
}

func (e keyedExecutor) JobGetStuck(ctx context.Context, p *riverdriver.JobGetStuckParams) ([]*rivertype.JobRow, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) ([]*rivertype.JobRow, error) { return x.JobGetStuck(ctx, p) })
}

func (e keyedExecutor) JobInsertFastMany(ctx context.Context, p *riverdriver.JobInsertFastManyParams) ([]*riverdriver.JobInsertFastResult, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) ([]*riverdriver.JobInsertFastResult, error) {
		return x.JobInsertFastMany(ctx, p)
	})
}

func (e keyedExecutor) JobInsertFastManyNoReturning(ctx context.Context, p *riverdriver.JobInsertFastManyParams) (int, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (int, error) { return x.JobInsertFastManyNoReturning(ctx, p) })
}

func (e keyedExecutor) JobInsertFull(ctx context.Context, p *riverdriver.JobInsertFullParams) (*rivertype.JobRow, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (*rivertype.JobRow, error) { return x.JobInsertFull(ctx, p) })
}

func (e keyedExecutor) JobInsertFullMany(ctx context.Context, p *riverdriver.JobInsertFullManyParams) ([]*rivertype.JobRow, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) ([]*rivertype.JobRow, error) { return x.JobInsertFullMany(ctx, p) })
}

func (e keyedExecutor) JobKindList(ctx context.Context, p *riverdriver.JobKindListParams) ([]string, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) ([]string, error) { return x.JobKindList(ctx, p) })
}

func (e keyedExecutor) JobList(ctx context.Context, p *riverdriver.JobListParams) ([]*rivertype.JobRow, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) ([]*rivertype.JobRow, error) { return x.JobList(ctx, p) })
}

func (e keyedExecutor) JobRescueMany(ctx context.Context, p *riverdriver.JobRescueManyParams) (*struct{}, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (*struct{}, error) { return x.JobRescueMany(ctx, p) })
}

func (e keyedExecutor) JobRetry(ctx context.Context, p *riverdriver.JobRetryParams) (*rivertype.JobRow, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (*rivertype.JobRow, error) { return x.JobRetry(ctx, p) })
}

func (e keyedExecutor) JobSchedule(ctx context.Context, p *riverdriver.JobScheduleParams) ([]*riverdriver.JobScheduleResult, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) ([]*riverdriver.JobScheduleResult, error) { return x.JobSchedule(ctx, p) })
}

func (e keyedExecutor) JobSetStateIfRunningMany(ctx context.Context, p *riverdriver.JobSetStateIfRunningManyParams) ([]*rivertype.JobRow, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) ([]*rivertype.JobRow, error) { return x.JobSetStateIfRunningMany(ctx, p) })
}

func (e keyedExecutor) JobUpdate(ctx context.Context, p *riverdriver.JobUpdateParams) (*rivertype.JobRow, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (*rivertype.JobRow, error) { return x.JobUpdate(ctx, p) })
}

func (e keyedExecutor) JobUpdateFull(ctx context.Context, p *riverdriver.JobUpdateFullParams) (*rivertype.JobRow, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (*rivertype.JobRow, error) { return x.JobUpdateFull(ctx, p) })
}

func (e keyedExecutor) QueueCreateOrSetUpdatedAt(ctx context.Context, p *riverdriver.QueueCreateOrSetUpdatedAtParams) (*rivertype.Queue, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (*rivertype.Queue, error) { return x.QueueCreateOrSetUpdatedAt(ctx, p) })
}

func (e keyedExecutor) QueueDeleteExpired(ctx context.Context, p *riverdriver.QueueDeleteExpiredParams) ([]string, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) ([]string, error) { return x.QueueDeleteExpired(ctx, p) })
}

func (e keyedExecutor) QueueGet(ctx context.Context, p *riverdriver.QueueGetParams) (*rivertype.Queue, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (*rivertype.Queue, error) { return x.QueueGet(ctx, p) })
}

func (e keyedExecutor) QueueList(ctx context.Context, p *riverdriver.QueueListParams) ([]*rivertype.Queue, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) ([]*rivertype.Queue, error) { return x.QueueList(ctx, p) })
}

func (e keyedExecutor) QueueNameList(ctx context.Context, p *riverdriver.QueueNameListParams) ([]string, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) ([]string, error) { return x.QueueNameList(ctx, p) })
}

func (e keyedExecutor) QueuePause(ctx context.Context, p *riverdriver.QueuePauseParams) error {
	_, err := keyed(ctx, e, func(x riverdriver.Executor) (struct{}, error) { return struct{}{}, x.QueuePause(ctx, p) })
	return err
}

func (e keyedExecutor) QueueResume(ctx context.Context, p *riverdriver.QueueResumeParams) error {
	_, err := keyed(ctx, e, func(x riverdriver.Executor) (struct{}, error) { return struct{}{}, x.QueueResume(ctx, p) })
	return err
}

func (e keyedExecutor) QueueUpdate(ctx context.Context, p *riverdriver.QueueUpdateParams) (*rivertype.Queue, error) {
	return keyed(ctx, e, func(x riverdriver.Executor) (*rivertype.Queue, error) { return x.QueueUpdate(ctx, p) })
}
