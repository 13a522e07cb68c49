package handlers_test

import (
	"bytes"
	"context"
	"encoding/gob"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

func TestSignIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	disabled := e.createUser("bob@example.com", "correct horse", store.RoleUser)
	if err := e.store.SetUserDisabled(context.Background(), disabled.ID, true); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, email, password string
		wantStatus            int
	}{
		{"ok", "ada@example.com", "correct horse", 303},
		{"email case and spaces ignored", "  ADA@example.com ", "correct horse", 303},
		{"wrong password", "ada@example.com", "wrong horse", 401},
		{"unknown email", "nobody@example.com", "correct horse", 401},
		{"disabled user", "bob@example.com", "correct horse", 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e.client()
			res := c.signIn(tc.email, tc.password)
			if res.status != tc.wantStatus {
				t.Fatalf("status = %d, want %d; body: %.300s", res.status, tc.wantStatus, res.body)
			}
			if tc.wantStatus == 401 {
				if got := res.text(`[data-testid="signin-error"]`); got != "Wrong email or password, or the account is disabled." {
					t.Errorf("error message = %q, want the one generic message", got)
				}
				if _, ok := c.cookies["ruckus_session"]; ok {
					t.Error("a failed sign-in set a session cookie")
				}
				return
			}
			home := c.get("/")
			if home.status != 200 {
				t.Fatalf("GET / after sign-in = %d", home.status)
			}
			if got := home.text(`[data-testid="nav-settings"]`); got != "ada@example.com" {
				t.Errorf("navigation shows %q, want the signed-in email", got)
			}
		})
	}
}

func TestSignInRedirectsToNextOnSiteOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	for next, want := range map[string]string{
		"/settings": "/settings", "//evil.example": "/", "https://evil.example/": "/",
		"/\t/evil.example": "/", "/\\evil.example": "/", "/\r\nSet-Cookie: x=1": "/",
	} {
		c := e.client()
		c.get("/signin")
		res := c.post("/signin", url.Values{"email": {"ada@example.com"}, "password": {"correct horse"}, "next": {next}})
		if loc := res.header.Get("Location"); loc != want {
			t.Errorf("next=%q: redirected to %q, want %q", next, loc, want)
		}
	}
}

func TestSignOutRevokesTheSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	stolen := c.cookies["ruckus_session"]
	if stolen == "" {
		t.Fatal("no session cookie after sign-in")
	}
	c.get("/")
	res := c.post("/signout", nil)
	if res.status != 303 || res.header.Get("Location") != "/signin" {
		t.Fatalf("sign out = %d to %q", res.status, res.header.Get("Location"))
	}
	page := c.get("/signin")
	if got := page.text(`[data-testid="flash"]`); got != "You have been signed out." {
		t.Errorf("flash after sign-out = %q", got)
	}

	// The old cookie, replayed, is worth nothing: the row is gone.
	thief := e.client()
	thief.cookies["ruckus_session"] = stolen
	res = thief.get("/settings")
	if res.status != 303 || !strings.HasPrefix(res.header.Get("Location"), "/signin") {
		t.Fatalf("replayed session after sign-out: %d to %q, want redirect to sign-in", res.status, res.header.Get("Location"))
	}
}

func TestBadOrExpiredSessionGoesToSignIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")

	// Expire every session of the user in the database.
	if _, err := e.store.Pool().Exec(context.Background(), `UPDATE sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, u.ID); err != nil {
		t.Fatal(err)
	}
	for name, cookie := range map[string]string{"expired": c.cookies["ruckus_session"], "forged": "garbage-value", "empty": ""} {
		b := e.client()
		b.cookies["ruckus_session"] = cookie
		res := b.get("/settings")
		if res.status != 303 || res.header.Get("Location") != "/signin?next=%2Fsettings" {
			t.Errorf("%s session: %d to %q, want 303 to sign-in", name, res.status, res.header.Get("Location"))
		}
	}
}

func TestDisablingAUserEndsTheirSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	if res := c.get("/settings"); res.status != 200 {
		t.Fatalf("settings = %d", res.status)
	}
	if err := e.store.SetUserDisabled(context.Background(), u.ID, true); err != nil {
		t.Fatal(err)
	}
	if res := c.get("/settings"); res.status != 303 {
		t.Fatalf("settings after disable = %d, want 303 to sign-in", res.status)
	}
}

func TestPostWithoutCSRFTokenIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	c := e.client()
	c.signIn("root@example.com", "correct horse")
	c.get("/admin/users")

	for name, token := range map[string]string{"missing": "", "wrong": "not-the-token"} {
		form := url.Values{"email": {"eve@example.com"}, "password": {"correct horse"}}
		if token != "" {
			form.Set("_csrf", token)
		}
		res := c.postRaw("/admin/users", form)
		if res.status != 403 {
			t.Errorf("%s token: status %d, want 403", name, res.status)
		}
		if !strings.Contains(res.text(`[data-testid="error-page"]`), "did not come from this site") {
			t.Errorf("%s token: page does not explain the refusal: %.200s", name, res.body)
		}
	}
	if _, err := e.store.UserByEmail(context.Background(), "eve@example.com"); err == nil {
		t.Fatal("a POST without a valid CSRF token created a user")
	}
	// Sign-in itself is protected too.
	anon := e.client()
	if res := anon.postRaw("/signin", url.Values{"email": {"root@example.com"}, "password": {"correct horse"}}); res.status != 403 {
		t.Errorf("sign-in without CSRF token: %d, want 403", res.status)
	}
}

func TestSignInIsRateLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // 5 failures per minute
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.get("/signin")
	for i := 0; i < 5; i++ {
		if res := c.post("/signin", url.Values{"email": {"ada@example.com"}, "password": {"wrong"}}); res.status != 401 {
			t.Fatalf("attempt %d: %d, want 401", i+1, res.status)
		}
	}
	res := c.post("/signin", url.Values{"email": {"ada@example.com"}, "password": {"correct horse"}})
	if res.status != 429 {
		t.Fatalf("attempt 6 (right password): %d, want 429", res.status)
	}
	if !strings.Contains(res.text(`[data-testid="signin-error"]`), "Too many failed sign-in attempts") {
		t.Errorf("429 page does not say why: %.300s", res.body)
	}
}

func TestNonAdminIsKeptOutOfAdminPagesAndAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	if res := c.get("/admin/users"); res.status != 403 {
		t.Errorf("GET /admin/users as user: %d, want 403", res.status)
	}
	if res := c.post("/admin/users", url.Values{"email": {"x@example.com"}, "password": {"correct horse"}}); res.status != 403 {
		t.Errorf("POST /admin/users as user: %d, want 403", res.status)
	}
	if res := c.get("/"); res.doc.Find(`[data-testid="nav-admin-users"]`).Length() != 0 {
		t.Error("a non-admin sees the admin navigation")
	}
	token := e.token(u)
	if status, body := apiGet(e, "/api/v1/users", token); status != 403 || body["error"] == nil {
		t.Errorf("GET /api/v1/users as user: %d %v, want 403 with an error", status, body)
	}
	// Anonymous visitors are sent to sign in.
	if res := e.client().get("/admin/users"); res.status != 303 {
		t.Errorf("GET /admin/users anonymous: %d, want 303", res.status)
	}
}

// The CSRF token is taken only from the header or the form body, never
// from the query string (a link or an image could carry it there): a POST
// with the token in its URL and an empty body is refused, and so is an
// upload whose token is not its first multipart part.
func TestCSRFTokenIsNeverTakenFromTheQueryString(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	c.get("/settings")
	if c.csrf == "" {
		t.Fatal("no CSRF token on the settings page")
	}
	req := httptest.NewRequest(http.MethodPost, "/settings/tokens?_csrf="+url.QueryEscape(c.csrf)+"&name=evil", nil)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if res := c.do(req); res.status != 403 {
		t.Errorf("a token in the query string: %d, want 403", res.status)
	}
	var n int
	if err := e.store.Pool().QueryRow(t.Context(), `SELECT count(*) FROM api_tokens`).Scan(&n); err != nil || n != 0 {
		t.Errorf("api tokens after the refused request: %d (%v)", n, err)
	}
	upload := func(target string, fields map[string]string, tokenLast bool) int {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for k, v := range fields {
			_ = mw.WriteField(k, v)
		}
		fw, _ := mw.CreateFormFile("file", "q.jsonl")
		_, _ = fw.Write([]byte(`{"prompt":"p"}` + "\n"))
		if tokenLast {
			_ = mw.WriteField("_csrf", c.csrf)
		}
		_ = mw.Close()
		req := httptest.NewRequest(http.MethodPost, target, &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		return c.do(req).status
	}
	if st := upload("/datasets?_csrf="+url.QueryEscape(c.csrf), map[string]string{"name": "q"}, false); st != 403 {
		t.Errorf("an upload with its token in the URL: %d, want 403", st)
	}
	if st := upload("/datasets", map[string]string{"name": "q"}, true); st != 403 {
		t.Errorf("an upload with its token after the file: %d, want 403", st)
	}
	if st := upload("/datasets", map[string]string{"_csrf": c.csrf}, false); st != 303 && st != 201 && st != 200 {
		t.Errorf("an upload with its token first: %d", st)
	}
	if err := e.store.Pool().QueryRow(t.Context(), `SELECT count(*) FROM datasets`).Scan(&n); err != nil || n != 1 {
		t.Errorf("datasets stored: %d (%v), want only the upload with its token first", n, err)
	}
}

// A session whose only value is its user keeps no data (the row's user_id
// is the user), so loading it at every request decodes nothing; a session
// stored with its user id in its data still loads.
func TestSessionOfAUserAloneKeepsNoData(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	ctx := context.Background()
	var stored int
	if err := e.store.Pool().QueryRow(ctx, `SELECT count(*) FROM sessions WHERE user_id = $1 AND data IS NOT NULL`, u.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != 0 {
		t.Errorf("%d sessions keep data beside their user", stored)
	}
	if res := c.get("/settings"); res.status != 200 {
		t.Fatalf("signed in without data: %d", res.status)
	}
	var older bytes.Buffer
	if err := gob.NewEncoder(&older).Encode(map[any]any{"user_id": u.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE sessions SET data = $2 WHERE user_id = $1`, u.ID, older.Bytes()); err != nil {
		t.Fatal(err)
	}
	if res := c.get("/settings"); res.status != 200 {
		t.Fatalf("a session stored with its user id in its data: %d", res.status)
	}
}
