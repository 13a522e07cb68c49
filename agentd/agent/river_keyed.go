package agent

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/ruckus/ruckus/app/store"
)

// keyedDriver is River's pgx driver for an agent with a key: River's own
// statements carry the key, so row-level security confines River to the
// agent's queues whichever server connection PgBouncer lends it. River
// takes a pool and sends its statements itself; here its executor runs
// instead on keyedStatements, where each statement goes with the key in
// one round trip (store.NewAgent), and a transaction River begins carries
// the key from its start. River's work inside the agent's own
// transactions (InsertTx, JobCompleteTx) runs on a transaction the store
// already keyed.
type keyedDriver struct {
	*riverpgxv5.Driver
	st *store.Store
}

// newKeyedDriver is River's driver over pool for an agent whose store is
// st: keyed as the store is, plain when it carries no key.
func newKeyedDriver(pool *pgxpool.Pool, st *store.Store) riverdriver.Driver[pgx.Tx] {
	d := riverpgxv5.New(pool)
	if !st.Keyed() {
		return d
	}
	return keyedDriver{Driver: d, st: st}
}

func (d keyedDriver) GetExecutor() riverdriver.Executor {
	return d.Driver.UnwrapExecutor(keyedStatements{d.st})
}

// keyedStatements is a pgx.Tx in form only: each statement is a
// transaction of its own (as on a pool), carrying the key; Begin begins a
// real, keyed one.
type keyedStatements struct{ st *store.Store }

var errNotATransaction = errors.New("an agent's keyed statements are not a transaction")

func (k keyedStatements) Begin(ctx context.Context) (pgx.Tx, error) { return k.st.Begin(ctx) }
func (k keyedStatements) Commit(context.Context) error              { return errNotATransaction }
func (k keyedStatements) Rollback(context.Context) error            { return errNotATransaction }
func (k keyedStatements) CopyFrom(ctx context.Context, t pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	return k.st.DB().CopyFrom(ctx, t, cols, src)
}
func (k keyedStatements) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return k.st.DB().SendBatch(ctx, b)
}
func (k keyedStatements) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }
func (k keyedStatements) Prepare(context.Context, string, string) (*pgconn.StatementDescription, error) {
	return nil, errNotATransaction
}
func (k keyedStatements) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return k.st.DB().Exec(ctx, sql, args...)
}
func (k keyedStatements) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return k.st.DB().Query(ctx, sql, args...)
}
func (k keyedStatements) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return k.st.DB().QueryRow(ctx, sql, args...)
}
func (k keyedStatements) Conn() *pgx.Conn { return nil }
