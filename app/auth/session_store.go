package auth

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/securecookie"
	"github.com/gorilla/sessions"

	"github.com/ruckus/ruckus/app/store"
)

// UserIDKey is the session value holding the signed-in user's id.
const UserIDKey = "user_id"

// SessionRows is the part of the store the session store uses.
type SessionRows interface {
	SaveSession(ctx context.Context, s store.Session) error
	LiveSession(ctx context.Context, id []byte) (store.Session, error)
	DeleteSession(ctx context.Context, id []byte) error
}

// SessionStore is a gorilla/sessions Store whose sessions live in
// PostgreSQL. The cookie carries only a signed random token; the row is
// keyed by the token's hash. Deleting the row revokes the session at once,
// which a cookie-only store cannot do.
type SessionStore struct {
	rows    SessionRows
	codecs  []securecookie.Codec
	Options *sessions.Options
}

// NewSessionStore signs cookies with hashKey (at least 32 bytes).
func NewSessionStore(rows SessionRows, hashKey []byte, ttl time.Duration) *SessionStore {
	codecs := securecookie.CodecsFromPairs(hashKey)
	for _, c := range codecs {
		if sc, ok := c.(*securecookie.SecureCookie); ok {
			sc.MaxAge(int(ttl.Seconds()))
		}
	}
	return &SessionStore{
		rows:   rows,
		codecs: codecs,
		Options: &sessions.Options{
			Path:     "/",
			MaxAge:   int(ttl.Seconds()),
			HttpOnly: true,
			SameSite: http.SameSiteLaxMode,
		},
	}
}

// Get is New: sessions are loaded once per request by the middleware.
func (s *SessionStore) Get(r *http.Request, name string) (*sessions.Session, error) {
	return s.New(r, name)
}

// New loads the session named by the request's cookie. A missing, forged,
// expired or revoked session yields a new empty one and no error: the
// visitor is simply not signed in. Only database failures are errors.
func (s *SessionStore) New(r *http.Request, name string) (*sessions.Session, error) {
	sess := sessions.NewSession(s, name)
	opts := *s.Options
	sess.Options = &opts
	sess.IsNew = true
	c, err := r.Cookie(name)
	if err != nil {
		return sess, nil
	}
	var token string
	if err := securecookie.DecodeMulti(name, c.Value, &token, s.codecs...); err != nil {
		return sess, nil
	}
	row, err := s.rows.LiveSession(r.Context(), HashToken(token))
	if errors.Is(err, store.ErrNotFound) {
		return sess, nil
	}
	if err != nil {
		return sess, err
	}
	if len(row.Data) > 0 {
		if err := gob.NewDecoder(bytes.NewReader(row.Data)).Decode(&sess.Values); err != nil {
			return sess, nil // unreadable data: treat as signed out
		}
	}
	sess.Values[UserIDKey] = row.UserID
	sess.Values[loadedUserKey{}] = row.User
	sess.ID = token
	sess.IsNew = false
	return sess, nil
}

// Save writes the session row and its cookie, or deletes both when the
// session's MaxAge is negative. Only signed-in sessions are stored.
func (s *SessionStore) Save(r *http.Request, w http.ResponseWriter, sess *sessions.Session) error {
	if sess.Options.MaxAge < 0 {
		if sess.ID != "" {
			if err := s.rows.DeleteSession(r.Context(), HashToken(sess.ID)); err != nil {
				return err
			}
		}
		http.SetCookie(w, sessions.NewCookie(sess.Name(), "", sess.Options))
		return nil
	}
	uid, ok := sess.Values[UserIDKey].(int64)
	if !ok {
		return fmt.Errorf("session store: refusing to store a session without a user")
	}
	if sess.ID == "" {
		sess.ID = RandomString(32)
	}
	data, err := encodeValues(sess.Values)
	if err != nil {
		return err
	}
	err = s.rows.SaveSession(r.Context(), store.Session{
		ID:        HashToken(sess.ID),
		UserID:    uid,
		Data:      data,
		IP:        clientIP(r),
		UserAgent: truncate(r.UserAgent(), 300),
		ExpiresAt: time.Now().Add(time.Duration(sess.Options.MaxAge) * time.Second),
	})
	if err != nil {
		return err
	}
	encoded, err := securecookie.EncodeMulti(sess.Name(), sess.ID, s.codecs...)
	if err != nil {
		return err
	}
	http.SetCookie(w, sessions.NewCookie(sess.Name(), encoded, sess.Options))
	return nil
}

// encodeValues is what a session row keeps in its data: the values but
// the user, whose id is the row's user_id column and who is read with it.
// A session that holds nothing else keeps no data, so loading it (every
// request, every poll of a live page) decodes nothing: a gob decoder
// compiles its types anew for each stream, which cost more than the rest
// of a live fragment's poll (docs/self-benchmarks.md#live-pages).
func encodeValues(all map[any]any) ([]byte, error) {
	values := make(map[any]any, len(all))
	for k, v := range all {
		if _, loaded := k.(loadedUserKey); !loaded && k != UserIDKey {
			values[k] = v
		}
	}
	if len(values) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(values); err != nil {
		return nil, fmt.Errorf("encode session: %w", err)
	}
	return buf.Bytes(), nil
}

// loadedUserKey holds, among a loaded session's values, the user read with
// it. It lives only for the request: Save leaves it out.
type loadedUserKey struct{}

// SessionUser is the user a loaded session belongs to, as read with the
// session (so a request needs no second query for it).
func SessionUser(sess *sessions.Session) (store.User, bool) {
	if sess == nil || sess.IsNew {
		return store.User{}, false
	}
	u, ok := sess.Values[loadedUserKey{}].(store.User)
	return u, ok
}

// TokenHash is the stored id of a loaded session (nil for a new one).
func TokenHash(sess *sessions.Session) []byte {
	if sess == nil || sess.ID == "" {
		return nil
	}
	return HashToken(sess.ID)
}

func clientIP(r *http.Request) string {
	return truncate(r.RemoteAddr, 100)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
