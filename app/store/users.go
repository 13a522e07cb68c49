package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Roles a user can have.
const (
	RoleAdmin = "admin"
	RoleUser  = "user"
)

// User is an account.
type User struct {
	ID                int64
	Email             string
	Name              string
	PasswordHash      string
	Role              string
	DisabledAt        *time.Time
	PasswordChangedAt time.Time
	CreatedAt         time.Time
	// Language is the interface language the user chose ("en", "de"), or
	// "" to follow the browser's Accept-Language.
	Language string
}

// IsAdmin reports whether the user has the admin role.
func (u User) IsAdmin() bool { return u.Role == RoleAdmin }

// Disabled reports whether the account was disabled by an admin.
func (u User) Disabled() bool { return u.DisabledAt != nil }

const userColumns = `id, email, name, password_hash, role, disabled_at, password_changed_at, created_at, language`

func scanUser(row pgx.CollectableRow) (User, error) {
	var u User
	err := row.Scan(&u.ID, &u.Email, &u.Name, &u.PasswordHash, &u.Role, &u.DisabledAt, &u.PasswordChangedAt, &u.CreatedAt, &u.Language)
	return u, err
}

// NewUser is what CreateUser needs. Email must already be lower-case.
type NewUser struct {
	Email        string
	Name         string
	PasswordHash string
	Role         string
}

// CreateUser inserts a user; ErrEmailTaken when the email is in use.
func (q *Queries) CreateUser(ctx context.Context, nu NewUser) (User, error) {
	rows, _ := q.db.Query(ctx, `INSERT INTO users (email, name, password_hash, role)
		VALUES (@email, @name, @hash, @role) RETURNING `+userColumns,
		pgx.NamedArgs{"email": nu.Email, "name": nu.Name, "hash": nu.PasswordHash, "role": nu.Role})
	u, err := pgx.CollectExactlyOneRow(rows, scanUser)
	return u, mapErr(err, "create user")
}

// UserByID returns one user.
func (q *Queries) UserByID(ctx context.Context, id int64) (User, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+userColumns+` FROM users WHERE id = @id`, pgx.NamedArgs{"id": id})
	u, err := pgx.CollectExactlyOneRow(rows, scanUser)
	return u, mapErr(err, "user by id")
}

// UserByEmail returns the user with this (lower-case) email.
func (q *Queries) UserByEmail(ctx context.Context, email string) (User, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+userColumns+` FROM users WHERE email = @email`, pgx.NamedArgs{"email": email})
	u, err := pgx.CollectExactlyOneRow(rows, scanUser)
	return u, mapErr(err, "user by email")
}

// ListUsers returns every user, oldest first.
func (q *Queries) ListUsers(ctx context.Context) ([]User, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+userColumns+` FROM users ORDER BY id`)
	us, err := pgx.CollectRows(rows, scanUser)
	return us, mapErr(err, "list users")
}

// CountActiveAdmins counts admins that are not disabled.
func (q *Queries) CountActiveAdmins(ctx context.Context) (int, error) {
	var n int
	err := q.db.QueryRow(ctx, `SELECT count(*) FROM users WHERE role = 'admin' AND disabled_at IS NULL`).Scan(&n)
	return n, mapErr(err, "count admins")
}

// SetUserDisabled disables or re-enables an account. Disabling also ends
// every session of that user.
func (q *Queries) SetUserDisabled(ctx context.Context, id int64, disabled bool) error {
	// One statement, so the account never ends up disabled with its
	// sessions still alive.
	var found bool
	err := q.db.QueryRow(ctx, `WITH u AS (
			UPDATE users SET disabled_at = CASE WHEN @disabled THEN coalesce(disabled_at, now()) END, updated_at = now()
			WHERE id = @id RETURNING id),
		s AS (DELETE FROM sessions WHERE @disabled AND user_id IN (SELECT id FROM u))
		SELECT EXISTS (SELECT 1 FROM u)`, pgx.NamedArgs{"id": id, "disabled": disabled}).Scan(&found)
	if err == nil && !found {
		err = pgx.ErrNoRows
	}
	return mapErr(err, "set user disabled")
}

// ResetUserPassword is an administrator's reset of a password that may be
// known to someone else: the new hash, the end of every session of the
// user, and the revocation of every API token of theirs, in one statement
// (all or nothing). It returns how many tokens were revoked.
func (q *Queries) ResetUserPassword(ctx context.Context, id int64, hash string) (revokedTokens int, err error) {
	var found bool
	err = q.db.QueryRow(ctx, `WITH u AS (
			UPDATE users SET password_hash = @hash, password_changed_at = now(), updated_at = now()
			WHERE id = @id RETURNING id),
		s AS (DELETE FROM sessions WHERE user_id IN (SELECT id FROM u)),
		t AS (UPDATE api_tokens SET revoked_at = now() WHERE user_id IN (SELECT id FROM u) AND revoked_at IS NULL RETURNING id)
		SELECT EXISTS (SELECT 1 FROM u), (SELECT count(*) FROM t)`, pgx.NamedArgs{"id": id, "hash": hash}).Scan(&found, &revokedTokens)
	if err == nil && !found {
		err = pgx.ErrNoRows
	}
	return revokedTokens, mapErr(err, "reset user password")
}

// SetUserLanguage stores the user's interface language: a supported
// language's code, or "" to follow the browser (the column's check
// constraint refuses anything else).
func (q *Queries) SetUserLanguage(ctx context.Context, id int64, lang string) error {
	tag, err := q.db.Exec(ctx, `UPDATE users SET language = @lang, updated_at = now() WHERE id = @id`,
		pgx.NamedArgs{"id": id, "lang": lang})
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapErr(err, "set user language")
}

// SetUserPassword stores a new password hash and ends every session of the
// user except keepSession (the one that made the change, if any).
func (q *Queries) SetUserPassword(ctx context.Context, id int64, hash string, keepSession []byte) error {
	// One statement: the new password and the end of the other sessions
	// take effect together or not at all.
	var found bool
	err := q.db.QueryRow(ctx, `WITH u AS (
			UPDATE users SET password_hash = @hash, password_changed_at = now(), updated_at = now()
			WHERE id = @id RETURNING id),
		s AS (DELETE FROM sessions WHERE user_id IN (SELECT id FROM u) AND (@keep::bytea IS NULL OR id <> @keep))
		SELECT EXISTS (SELECT 1 FROM u)`, pgx.NamedArgs{"id": id, "hash": hash, "keep": keepSession}).Scan(&found)
	if err == nil && !found {
		err = pgx.ErrNoRows
	}
	return mapErr(err, "set user password")
}

// FirstAdmin returns the oldest active administrator.
func (q *Queries) FirstAdmin(ctx context.Context) (User, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+userColumns+` FROM users WHERE role = 'admin' AND disabled_at IS NULL ORDER BY id LIMIT 1`)
	u, err := pgx.CollectExactlyOneRow(rows, scanUser)
	return u, mapErr(err, "first admin")
}
