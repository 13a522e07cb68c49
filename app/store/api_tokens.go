package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// APIToken is a bearer token for the JSON API. Only its hash is stored;
// Prefix is the start of the token, shown so a user can tell tokens apart.
type APIToken struct {
	ID         int64
	UserID     int64
	Name       string
	Prefix     string
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

const apiTokenColumns = `id, user_id, name, prefix, created_at, last_used_at, revoked_at`

func scanAPIToken(row pgx.CollectableRow) (APIToken, error) {
	var t APIToken
	err := row.Scan(&t.ID, &t.UserID, &t.Name, &t.Prefix, &t.CreatedAt, &t.LastUsedAt, &t.RevokedAt)
	return t, err
}

// CreateAPIToken stores a new token's hash.
func (q *Queries) CreateAPIToken(ctx context.Context, userID int64, name, prefix string, hash []byte) (APIToken, error) {
	rows, _ := q.db.Query(ctx, `INSERT INTO api_tokens (user_id, name, prefix, token_hash)
		VALUES (@user_id, @name, @prefix, @hash) RETURNING `+apiTokenColumns,
		pgx.NamedArgs{"user_id": userID, "name": name, "prefix": prefix, "hash": hash})
	t, err := pgx.CollectExactlyOneRow(rows, scanAPIToken)
	return t, mapErr(err, "create api token")
}

// ListAPITokens returns a user's tokens, newest first, revoked ones included.
func (q *Queries) ListAPITokens(ctx context.Context, userID int64) ([]APIToken, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+apiTokenColumns+` FROM api_tokens WHERE user_id = @user_id ORDER BY id DESC`,
		pgx.NamedArgs{"user_id": userID})
	ts, err := pgx.CollectRows(rows, scanAPIToken)
	return ts, mapErr(err, "list api tokens")
}

// RevokeAPIToken revokes one of the user's own tokens; ErrNotFound when the
// token is not theirs or already revoked.
func (q *Queries) RevokeAPIToken(ctx context.Context, userID, id int64) error {
	tag, err := q.db.Exec(ctx, `UPDATE api_tokens SET revoked_at = now()
		WHERE id = @id AND user_id = @user_id AND revoked_at IS NULL`,
		pgx.NamedArgs{"id": id, "user_id": userID})
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapErr(err, "revoke api token")
}

// UserByAPIToken returns the enabled user owning a live token with this
// hash, and records the use.
func (q *Queries) UserByAPIToken(ctx context.Context, hash []byte) (User, error) {
	rows, _ := q.db.Query(ctx, `WITH t AS (
			UPDATE api_tokens SET last_used_at = now()
			WHERE token_hash = @hash AND revoked_at IS NULL
			RETURNING user_id)
		SELECT `+prefixed("u.", userColumns)+` FROM users u JOIN t ON t.user_id = u.id
		WHERE u.disabled_at IS NULL`, pgx.NamedArgs{"hash": hash})
	u, err := pgx.CollectExactlyOneRow(rows, scanUser)
	return u, mapErr(err, "user by api token")
}
