package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Session is a signed-in browser. ID is the SHA-256 of the cookie token.
type Session struct {
	ID         []byte
	UserID     int64
	Data       []byte
	IP         string
	UserAgent  string
	CreatedAt  time.Time
	LastSeenAt time.Time
	ExpiresAt  time.Time
	// User is the session's user, read with it by LiveSession.
	User User
}

// SaveSession inserts the session or replaces its data.
func (q *Queries) SaveSession(ctx context.Context, s Session) error {
	_, err := q.db.Exec(ctx, `INSERT INTO sessions (id, user_id, data, ip, user_agent, expires_at)
		VALUES (@id, @user_id, @data, @ip, @ua, @expires_at)
		ON CONFLICT (id) DO UPDATE SET data = excluded.data, last_seen_at = now()`,
		pgx.NamedArgs{"id": s.ID, "user_id": s.UserID, "data": s.Data, "ip": s.IP, "ua": s.UserAgent, "expires_at": s.ExpiresAt})
	return mapErr(err, "save session")
}

// LiveSession returns a session that has not expired and whose user is not
// disabled, with that user (one query for every signed-in request), and
// marks it seen (at most once a minute, to spare writes).
func (q *Queries) LiveSession(ctx context.Context, id []byte) (Session, error) {
	rows, _ := q.db.Query(ctx, `SELECT s.id, s.user_id, s.data, s.ip, s.user_agent, s.created_at, s.last_seen_at, s.expires_at,
			u.id, u.email, u.name, u.password_hash, u.role, u.disabled_at, u.password_changed_at, u.created_at, u.language
		FROM sessions s JOIN users u ON u.id = s.user_id
		WHERE s.id = @id AND s.expires_at > now() AND u.disabled_at IS NULL`,
		pgx.NamedArgs{"id": id})
	s, err := pgx.CollectExactlyOneRow(rows, func(row pgx.CollectableRow) (Session, error) {
		var s Session
		u := &s.User
		err := row.Scan(&s.ID, &s.UserID, &s.Data, &s.IP, &s.UserAgent, &s.CreatedAt, &s.LastSeenAt, &s.ExpiresAt,
			&u.ID, &u.Email, &u.Name, &u.PasswordHash, &u.Role, &u.DisabledAt, &u.PasswordChangedAt, &u.CreatedAt, &u.Language)
		return s, err
	})
	if err != nil {
		return s, mapErr(err, "live session")
	}
	if time.Since(s.LastSeenAt) > time.Minute {
		if _, err := q.db.Exec(ctx, `UPDATE sessions SET last_seen_at = now() WHERE id = @id`, pgx.NamedArgs{"id": id}); err != nil {
			return s, mapErr(err, "touch session")
		}
	}
	return s, nil
}

// DeleteSession ends one session.
func (q *Queries) DeleteSession(ctx context.Context, id []byte) error {
	_, err := q.db.Exec(ctx, `DELETE FROM sessions WHERE id = @id`, pgx.NamedArgs{"id": id})
	return mapErr(err, "delete session")
}

// CountUserSessions counts a user's live sessions.
func (q *Queries) CountUserSessions(ctx context.Context, userID int64) (int, error) {
	var n int
	err := q.db.QueryRow(ctx, `SELECT count(*) FROM sessions WHERE user_id = @user_id AND expires_at > now()`,
		pgx.NamedArgs{"user_id": userID}).Scan(&n)
	return n, mapErr(err, "count sessions")
}

// DeleteExpiredSessions removes sessions past their expiry and returns how
// many it removed.
func (q *Queries) DeleteExpiredSessions(ctx context.Context) (int64, error) {
	tag, err := q.db.Exec(ctx, `DELETE FROM sessions WHERE expires_at <= now()`)
	return tag.RowsAffected(), mapErr(err, "delete expired sessions")
}
