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

// prefixed qualifies each column of a column list with a table alias.
func prefixed(alias, columns string) string {
	parts := strings.Split(columns, ", ")
	for i, p := range parts {
		parts[i] = alias + p
	}
	return strings.Join(parts, ", ")
}

// AdvisoryXactLock takes a transaction-scoped advisory lock named by key;
// it is released at commit or rollback.
func (q *Queries) AdvisoryXactLock(ctx context.Context, key string) error {
	_, err := q.db.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(@key))`, pgx.NamedArgs{"key": key})
	return mapErr(err, "advisory lock")
}
