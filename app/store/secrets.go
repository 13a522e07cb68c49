package store

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ServerSecret returns the secret stored under name, storing generate()'s
// value first when there is none. Concurrent callers all get the same value.
func (q *Queries) ServerSecret(ctx context.Context, name string, generate func() []byte) ([]byte, error) {
	if _, err := q.db.Exec(ctx, `INSERT INTO server_secrets (name, value) VALUES (@name, @value)
		ON CONFLICT (name) DO NOTHING`, pgx.NamedArgs{"name": name, "value": generate()}); err != nil {
		return nil, mapErr(err, "store server secret")
	}
	var v []byte
	err := q.db.QueryRow(ctx, `SELECT value FROM server_secrets WHERE name = @name`, pgx.NamedArgs{"name": name}).Scan(&v)
	return v, mapErr(err, "read server secret")
}

// StoredServerSecret returns the secret stored under name (ErrNotFound:
// none), never making one.
func (q *Queries) StoredServerSecret(ctx context.Context, name string) ([]byte, error) {
	var v []byte
	err := q.db.QueryRow(ctx, `SELECT value FROM server_secrets WHERE name = @name`, pgx.NamedArgs{"name": name}).Scan(&v)
	return v, mapErr(err, "read server secret")
}

// prefixed qualifies each column of a column list with a table alias.
func prefixed(alias, columns string) string {
	parts := strings.Split(columns, ", ")
	for i, p := range parts {
		parts[i] = alias + p
	}
	return strings.Join(parts, ", ")
}

// LockAccounts makes the transaction the only one adding users until it
// ends (servers starting together bootstrap one administrator). It locks
// the users table, which agents may not even read, so no agent can hold
// the lock a starting server waits on, as it could an advisory lock (any
// role may take any advisory lock where migration 0023 could not revoke
// them); the timeout bounds the wait for the server's own writers.
func (q *Queries) LockAccounts(ctx context.Context) error {
	if _, err := q.db.Exec(ctx, `SET LOCAL lock_timeout = '30s'`); err != nil {
		return mapErr(err, "lock accounts")
	}
	_, err := q.db.Exec(ctx, `LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE`)
	return mapErr(err, "lock accounts")
}
