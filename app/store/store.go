// Package store holds all of Ruckus's SQL. It is the only package that talks
// to PostgreSQL; everything else asks it through small interfaces.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNotFound is returned when the row asked for does not exist (or is not
// visible to the caller).
var ErrNotFound = errors.New("not found")

// ErrEmailTaken is returned when a user with the same email already exists.
var ErrEmailTaken = errors.New("a user with this email already exists")

// DBTX is what both *pgxpool.Pool and pgx.Tx offer; queries run on either.
type DBTX interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Queries runs the store's statements on one querier: the pool, or a
// transaction when writes belong together.
type Queries struct {
	db DBTX
}

// Store is the database: Queries on the pool plus transactions.
type Store struct {
	*Queries
	pool *pgxpool.Pool
	// key is the agent key every transaction carries (NewAgent); empty
	// for the server.
	key string
	// lockSlots bounds the transactions that may wait for a row an agent
	// can hold (InLockingTx) to three quarters of the pool.
	lockSlots chan struct{}
}

// New returns a store over pool.
func New(pool *pgxpool.Pool) *Store {
	return &Store{Queries: &Queries{db: pool}, pool: pool, lockSlots: lockSlotsFor(pool)}
}

// lockSlotsFor is three quarters of pool's connections (at least one, and
// one fewer than the pool): as many transactions as may wait
// RowLockTimeout at once for a row an agent holds.
func lockSlotsFor(pool *pgxpool.Pool) chan struct{} {
	n := pool.Config().MaxConns
	return make(chan struct{}, max(1, min(n*3/4, n-1)))
}

// InLockingTx is InTxWith for a transaction that may wait for a row an
// agent can hold (RunForUpdate: up to RowLockTimeout for each lock). At
// most three quarters of the pool's connections wait so at once; the others queue here
// rather than for a connection, so a held row never keeps every other
// request from the database
// (docs/gpu-nodes.md#locks-an-agent-may-hold-and-its-time).
func (s *Store) InLockingTx(ctx context.Context, fn func(tx pgx.Tx, q *Queries) error) error {
	return s.inLockSlot(ctx, func() error { return s.InTxWith(ctx, fn) })
}

// inLockSlot runs fn, which may wait up to RowLockTimeout for a row an
// agent can hold, in one of the lock-waiting slots: when all are taken it
// queues here, holding no connection.
func (s *Store) inLockSlot(ctx context.Context, fn func() error) error {
	select {
	case s.lockSlots <- struct{}{}:
		defer func() { <-s.lockSlots }()
	case <-ctx.Done():
		return ctx.Err()
	}
	return fn()
}

// Pool is the underlying connection pool, for River and the migrator.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// InTx runs fn in one transaction, committed when fn returns nil.
func (s *Store) InTx(ctx context.Context, fn func(q *Queries) error) error {
	return s.InTxWith(ctx, func(_ pgx.Tx, q *Queries) error { return fn(q) })
}

// uniqueViolation is PostgreSQL's SQLSTATE for a unique constraint broken.
const uniqueViolation = "23505"

// lockNotAvailable is PostgreSQL's SQLSTATE for a lock not had within
// lock_timeout (or at once, under NOWAIT).
const lockNotAvailable = "55P03"

// ErrBusy is returned when a row a change needs is held by another
// transaction for longer than the server waits (RowLockTimeout): an
// agent's, or another request's. Nothing was changed; trying again later
// may succeed.
var ErrBusy = errors.New("what this changes is being changed by something else right now (an agent, or another request); nothing was changed: try again in a few seconds")

// RowLockTimeout is how long a user's action waits for a run's row (and
// its job's) that another transaction holds. An agent may hold the row of
// the run it works for as long as its transaction stays open (up to the
// agent roles' idle_in_transaction_session_timeout); a request that waited
// that long would hold one of the server's pooled connections with it, and
// many such requests would leave none for anyone else
// (docs/gpu-nodes.md#locks-an-agent-may-hold-and-its-time).
const RowLockTimeout = time.Second

// execWithLockTimeout runs one statement that may wait for a row an agent
// can hold (its agent row, the run it works), waiting at most
// RowLockTimeout for it, in one of the lock-waiting slots (inLockSlot):
// many such statements at once, an administrator's clicks on a held
// agent, never hold every pooled connection. The setting and the
// statement go as one batch, which PostgreSQL runs as one implicit
// transaction: the setting is that transaction's alone.
func (s *Store) execWithLockTimeout(ctx context.Context, sql string, args pgx.NamedArgs) (pgconn.CommandTag, error) {
	var tag pgconn.CommandTag
	err := s.inLockSlot(ctx, func() error {
		var err error
		tag, err = s.Queries.execWithLockTimeout(ctx, sql, args)
		return err
	})
	return tag, err
}

// execWithLockTimeout is Store.execWithLockTimeout without a slot: for
// the Store's own use alone.
func (q *Queries) execWithLockTimeout(ctx context.Context, sql string, args pgx.NamedArgs) (pgconn.CommandTag, error) {
	b := &pgx.Batch{}
	b.Queue(`SELECT set_config('lock_timeout', @ms, true)`, pgx.NamedArgs{"ms": strconv.FormatInt(RowLockTimeout.Milliseconds(), 10)})
	var tag pgconn.CommandTag
	b.Queue(sql, args).Exec(func(ct pgconn.CommandTag) error {
		tag = ct
		return nil
	})
	err := q.db.SendBatch(ctx, b).Close()
	return tag, err
}

// IsUnavailable reports whether err is the database being away rather
// than anything about the request: it could not be reached, the session
// broke off, or PostgreSQL ended the session because it is shutting down
// or starting (SQLSTATE class 08, 57P01 to 57P03). Trying again in a few
// seconds is the remedy, so the server answers 503, not 500, while
// PostgreSQL restarts (seen in `make bench-day`,
// docs/self-benchmarks.md#bench-day-a-day-in-production).
func IsUnavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	var connectErr *pgconn.ConnectError
	var netErr *net.OpError
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF)
}

// IsBusy reports whether err is a lock the server would not wait for:
// ErrBusy, or PostgreSQL's lock_not_available from a statement outside the
// store (River's JobCancelTx in the same transaction).
func IsBusy(err error) bool {
	var pgErr *pgconn.PgError
	return errors.Is(err, ErrBusy) || errors.As(err, &pgErr) && pgErr.Code == lockNotAvailable
}

// taken names, for each unique constraint a caller may run into, the
// sentinel its violation becomes.
var taken = map[string]error{
	"users_email_key":         ErrEmailTaken,
	"models_name_key":         ErrModelNameTaken,
	"judge_runs_manifest_key": ErrJudgeExists,
	"runs_fleet_run_id_key":   ErrFleetRunIDTaken,
}

// mapErr turns driver errors into the store's sentinels, in one place:
// no row is ErrNotFound, a unique violation the sentinel of its
// constraint (taken), a length check ErrTooLarge.
func mapErr(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return fmt.Errorf("%s: %w", what, err)
	}
	if tl := tooLargeErr(pgErr); tl != nil {
		return fmt.Errorf("%s: %w", what, tl)
	}
	if sentinel, ok := taken[pgErr.ConstraintName]; ok && pgErr.Code == uniqueViolation {
		return fmt.Errorf("%s: %w", what, sentinel)
	}
	if pgErr.Code == lockNotAvailable {
		return fmt.Errorf("%s: %w", what, ErrBusy)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// InTxWith runs fn in one transaction and hands it the pgx.Tx too, for
// writes outside the store that must commit with the rows (River's
// InsertTx).
func (s *Store) InTxWith(ctx context.Context, fn func(tx pgx.Tx, q *Queries) error) error {
	tx, err := s.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := fn(tx, &Queries{db: tx}); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
