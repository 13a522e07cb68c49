package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// AgentPoolRole is the role PgBouncer once logged in to PostgreSQL as for
// every agent (migration 0020). It may log in no more (migration 0040):
// PgBouncer now logs in as each agent's own role
// (docs/scaling.md#one-pool-login-per-agent).
const AgentPoolRole = "ruckus_agent_pool"

// SetAgentKey makes the transaction it runs in carry an agent's key; the
// policies of migrations 0010 and 0020 read it through ruckus_agent_id().
// The key goes as a parameter, never in the statement's text, which other
// sessions of the same role can read in pg_stat_activity.
const SetAgentKey = `SELECT set_config('ruckus.agent_key', $1, true)`

// NewAgentKey is a new agent key (256 random bits) and the hash the
// agents table keeps of it.
func NewAgentKey() (key string, hash []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	key = "rka_" + base64.RawURLEncoding.EncodeToString(b)
	return key, AgentKeyHash(key)
}

// AgentKeyHash is what agents.key_hash holds for key: the SHA-256 of its
// bytes, as ruckus_agent_id() computes it.
func AgentKeyHash(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// NewAgent returns the store agentd uses: with a key, every statement
// runs in a transaction that carries it (a statement on its own goes as a
// batch of two in one round trip, which PostgreSQL runs as one implicit
// transaction), so the agent is known to PostgreSQL whichever server
// connection PgBouncer lends it. Without a key it is New. The pool must
// not use the simple protocol, which would put the key into the text.
func NewAgent(pool *pgxpool.Pool, key string) (*Store, error) {
	if key == "" {
		return New(pool), nil
	}
	if pool.Config().ConnConfig.DefaultQueryExecMode == pgx.QueryExecModeSimpleProtocol {
		return nil, errors.New("an agent key is sent as a parameter: the pool must not use the simple protocol")
	}
	return &Store{Queries: &Queries{db: keyedDB{pool: pool, key: key}}, pool: pool, key: key, lockSlots: lockSlotsFor(pool)}, nil
}

// DB is what the store's statements run on: the pool or, for an agent
// with a key, the pool with the key carried. For tests that send their
// own statements as the store would.
func (s *Store) DB() DBTX { return s.Queries.db }

// Keyed says whether the store's statements carry an agent key.
func (s *Store) Keyed() bool { return s.key != "" }

// Begin starts a transaction on the pool that carries the store's key (a
// plain one without a key); the caller commits or rolls it back.
func (s *Store) Begin(ctx context.Context) (pgx.Tx, error) { return beginKeyed(ctx, s.pool, s.key) }

// beginKeyed begins a transaction on pool whose first statement sets key
// (none when key is empty).
func beginKeyed(ctx context.Context, pool *pgxpool.Pool, key string) (pgx.Tx, error) {
	tx, err := pool.Begin(ctx)
	if err != nil || key == "" {
		return tx, err
	}
	if _, err := tx.Exec(ctx, SetAgentKey, key); err != nil {
		_ = tx.Rollback(ctx)
		return nil, err
	}
	return tx, nil
}

// keyedDB is DBTX over a pool whose every statement carries an agent key.
type keyedDB struct {
	pool *pgxpool.Pool
	key  string
}

func (k keyedDB) send(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	b.Queue(SetAgentKey, k.key)
	b.Queue(sql, args...)
	br := k.pool.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return nil, fmt.Errorf("carry the agent key: %w", err)
	}
	return br, nil
}

func (k keyedDB) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	br, err := k.send(ctx, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// Query answers rows that carry the error when it fails, as pgx's pool
// does, so that a caller reading them without checking err first fails
// cleanly.
func (k keyedDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	br, err := k.send(ctx, sql, args)
	if err != nil {
		return errRows{err}, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return errRows{err}, err
	}
	return &keyedRows{Rows: rows, br: br}, nil
}

func (k keyedDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := k.Query(ctx, sql, args...)
	return keyedRow{rows: rows, err: err}
}

func (k keyedDB) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	tx, err := beginKeyed(ctx, k.pool, k.key)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	n, err := tx.CopyFrom(ctx, table, columns, src)
	if err != nil {
		return 0, err
	}
	return n, tx.Commit(ctx)
}

func (k keyedDB) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	keyed := &pgx.Batch{QueuedQueries: append([]*pgx.QueuedQuery{{SQL: SetAgentKey, Arguments: []any{k.key}}}, b.QueuedQueries...)}
	br := k.pool.SendBatch(ctx, keyed)
	// Should the key fail, the batch's implicit transaction is aborted and
	// every later result reports it.
	_, _ = br.Exec()
	return br
}

// keyedRows closes its batch with the rows.
type keyedRows struct {
	pgx.Rows
	br  pgx.BatchResults
	err error
}

func (r *keyedRows) Close() {
	r.Rows.Close()
	if r.br != nil {
		if err := r.br.Close(); err != nil && r.err == nil {
			r.err = err
		}
		r.br = nil
	}
}

func (r *keyedRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

func (r *keyedRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.Close()
	return false
}

// keyedRow is QueryRow's answer, scanned as pgx scans one.
type keyedRow struct {
	rows pgx.Rows
	err  error
}

func (r keyedRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

// errRows are the rows of a query that could not run.
type errRows struct{ err error }

func (r errRows) Close()                                       {}
func (r errRows) Err() error                                   { return r.err }
func (r errRows) CommandTag() pgconn.CommandTag                { return pgconn.CommandTag{} }
func (r errRows) FieldDescriptions() []pgconn.FieldDescription { return nil }
func (r errRows) Next() bool                                   { return false }
func (r errRows) Scan(...any) error                            { return r.err }
func (r errRows) Values() ([]any, error)                       { return nil, r.err }
func (r errRows) RawValues() [][]byte                          { return nil }
func (r errRows) Conn() *pgx.Conn                              { return nil }
func (r errRows) TypeMap() *pgtype.Map                         { return pgtype.NewMap() }

// The bounds of an agent's time in the database (migration 0032): a
// transaction left idle, and one statement. Agents' login roles start
// with them as session defaults, PgBouncer applies them to every pooled
// client, and SweepStalledAgents ends any agent session past them, since
// an agent may change its own settings
// (docs/gpu-nodes.md#locks-an-agent-may-hold-and-its-time).
const (
	AgentIdleInTransaction = 30 * time.Second
	AgentStatementTimeout  = 120 * time.Second
)

// SweepStalledAgents ends the agent sessions idle in a transaction for longer than AgentIdleInTransaction or
// in one statement for longer than AgentStatementTimeout, and returns how
// many: such a session may hold the row of a run (or a job) that users'
// actions and the reaper need. 0 where the schema was not migrated by a
// role allowed to signal other roles' sessions. The reaper calls it every
// period.
func (q *Queries) SweepStalledAgents(ctx context.Context) (int, error) {
	var n int
	if err := q.db.QueryRow(ctx, `SELECT ruckus_agent_sweep_stalled(@idle::interval, @statement::interval)`,
		pgx.NamedArgs{"idle": AgentIdleInTransaction, "statement": AgentStatementTimeout}).Scan(&n); err != nil {
		return 0, fmt.Errorf("sweep stalled agent sessions: %w", err)
	}
	return n, nil
}
