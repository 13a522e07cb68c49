package handlers_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/handlers"
)

func TestSettingsTokensCreateUseRevoke(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	if res := c.get("/settings"); res.doc.Find(`[data-testid="no-tokens"]`).Length() != 1 {
		t.Fatal("settings page does not say there are no tokens")
	}
	if res := c.post("/settings/tokens", url.Values{"name": {"  "}}); res.status != 422 || res.text(`[data-testid="token-error"]`) == "" {
		t.Fatalf("empty token name: %d, want 422 with a message", res.status)
	}
	res := c.post("/settings/tokens", url.Values{"name": {"ci"}})
	token := res.text(`[data-testid="new-token"]`)
	if !strings.HasPrefix(token, "rk_") {
		t.Fatalf("new token not shown: %.400s", res.body)
	}
	if status, body := apiGet(e, "/api/v1/me", token); status != 200 || body["email"] != "ada@example.com" {
		t.Fatalf("new token does not work: %d %v", status, body)
	}
	row := res.doc.Find(`table[data-testid="tokens"] tbody tr`)
	if row.Length() != 1 || !strings.Contains(row.Text(), "ci") || strings.Contains(row.Text(), token) {
		t.Fatalf("token list should show the name and only a prefix: %q", row.Text())
	}
	action, _ := row.Find("form").Attr("action")
	res = c.post(action, nil)
	if res.status != 200 || !strings.Contains(res.doc.Find(`table[data-testid="tokens"]`).Text(), "revoked") {
		t.Fatalf("revoke: %d %.300s", res.status, res.body)
	}
	if status, _ := apiGet(e, "/api/v1/me", token); status != 401 {
		t.Fatalf("revoked token still works: %d", status)
	}
	// Another user cannot revoke it (or learn it exists): 404.
	e.createUser("eve@example.com", "correct horse", store.RoleUser)
	eve := e.client()
	eve.signIn("eve@example.com", "correct horse")
	eve.get("/settings")
	if res := eve.post(action, nil); res.status != 404 {
		t.Fatalf("revoking someone else's token: %d, want 404", res.status)
	}
}

func TestChangePasswordRevokesOtherSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	laptop, phone := e.client(), e.client()
	laptop.signIn("ada@example.com", "correct horse")
	phone.signIn("ada@example.com", "correct horse")
	laptop.get("/settings")

	res := laptop.post("/settings/password", url.Values{"current": {"wrong"}, "new": {"short"}, "confirm": {"other"}})
	if res.status != 422 {
		t.Fatalf("bad change: %d, want 422", res.status)
	}
	for _, f := range []string{"current", "new", "confirm"} {
		if res.text(`[data-testid="error-`+f+`"]`) == "" {
			t.Errorf("no message beside field %q", f)
		}
	}
	res = laptop.post("/settings/password", url.Values{"current": {"correct horse"}, "new": {"battery staple"}, "confirm": {"battery staple"}})
	if res.status != 200 || res.doc.Find(`[data-testid="password-changed"]`).Length() != 1 {
		t.Fatalf("good change: %d %.300s", res.status, res.body)
	}
	if res := laptop.get("/settings"); res.status != 200 {
		t.Errorf("the session that changed the password was signed out: %d", res.status)
	}
	if res := phone.get("/settings"); res.status != 303 {
		t.Errorf("the other session survived the password change: %d", res.status)
	}
	if res := e.client().signIn("ada@example.com", "battery staple"); res.status != 303 {
		t.Errorf("new password does not sign in: %d", res.status)
	}
}

func TestAdminManagesUsers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	c := e.client()
	c.signIn("root@example.com", "correct horse")
	c.get("/admin/users")

	res := c.post("/admin/users", url.Values{"email": {"not-an-email"}, "password": {"short"}})
	if res.status != 422 || res.text(`[data-testid="error-email"]`) == "" || res.text(`[data-testid="error-password"]`) == "" {
		t.Fatalf("invalid new user: %d, want 422 with messages beside email and password: %.400s", res.status, res.body)
	}
	// 40 characters but 80 bytes: too long for bcrypt, said beside the field.
	if res := c.post("/admin/users", url.Values{"email": {"e@example.com"}, "password": {strings.Repeat("é", 40)}}); res.status != 422 || res.text(`[data-testid="error-password"]`) == "" {
		t.Fatalf("over-long multibyte password: %d", res.status)
	}
	res = c.post("/admin/users", url.Values{"email": {"Bob@Example.com"}, "name": {"Bob"}, "password": {"correct horse"}})
	if res.status != 200 || res.text(`[data-testid="user-created"]`) != "User bob@example.com created." {
		t.Fatalf("create user: %d %.300s", res.status, res.body)
	}
	if res := c.post("/admin/users", url.Values{"email": {"bob@example.com"}, "password": {"correct horse"}}); res.status != 422 ||
		!strings.Contains(res.text(`[data-testid="error-email"]`), "already exists") {
		t.Fatalf("duplicate email: %d", res.status)
	}
	bob, err := e.store.UserByEmail(context.Background(), "bob@example.com")
	if err != nil {
		t.Fatal(err)
	}
	bobBrowser := e.client()
	if res := bobBrowser.signIn("bob@example.com", "correct horse"); res.status != 303 {
		t.Fatalf("new user cannot sign in: %d", res.status)
	}

	// Bob's API tokens, made with the password the reset replaces, stop
	// working with it.
	bobTok, bobTok2 := e.token(bob), e.token(bob)
	if st, _ := apiGet(e, "/api/v1/me", bobTok); st != 200 {
		t.Fatalf("bob's token before the reset: %d", st)
	}
	res = c.post("/admin/users/"+itoa(bob.ID)+"/reset-password", nil)
	pw := res.text(`[data-testid="reset-password"]`)
	if len(pw) < 16 {
		t.Fatalf("reset password not shown: %.300s", res.body)
	}
	if got := res.text(`[data-testid="reset-tokens-revoked"]`); got != "2" {
		t.Errorf("tokens revoked by the reset: %q, want 2", got)
	}
	for _, tok := range []string{bobTok, bobTok2} {
		if st, _ := apiGet(e, "/api/v1/me", tok); st != 401 {
			t.Errorf("bob's token after the reset: %d, want 401", st)
		}
	}
	if res := bobBrowser.get("/settings"); res.status != 303 {
		t.Errorf("reset did not sign the user out: %d", res.status)
	}
	if res := e.client().signIn("bob@example.com", pw); res.status != 303 {
		t.Errorf("reset password does not work: %d", res.status)
	}

	res = c.post("/admin/users/"+itoa(bob.ID)+"/disable", nil)
	if res.status != 200 || !strings.Contains(res.doc.Find(`[data-testid="user-`+itoa(bob.ID)+`"]`).Text(), "disabled") {
		t.Fatalf("disable: %d", res.status)
	}
	if res := e.client().signIn("bob@example.com", pw); res.status != 401 {
		t.Errorf("disabled user signed in: %d", res.status)
	}
	c.post("/admin/users/"+itoa(bob.ID)+"/enable", nil)
	if res := e.client().signIn("bob@example.com", pw); res.status != 303 {
		t.Errorf("re-enabled user cannot sign in: %d", res.status)
	}
	self, _ := e.store.UserByEmail(context.Background(), "root@example.com")
	if res := c.post("/admin/users/"+itoa(self.ID)+"/disable", nil); res.status != 422 {
		t.Errorf("admin disabling themselves: %d, want 422", res.status)
	}
}

func TestUnknownRouteIs404InLayout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, path := range []string{"/no/such/page", "/assets/htmx.min.js"} {
		res := e.client().get(path)
		if res.status != 404 {
			t.Errorf("%s: %d, want 404", path, res.status)
		}
		if res.doc.Find(`[data-testid="error-page"] h1`).Text() != "Page not found" || res.text(`[data-testid="version"]`) != "Ruckus test-1.2.3" {
			t.Errorf("%s: 404 page is not inside the layout: %.300s", path, res.body)
		}
	}
}

func TestOversizedBodyIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // 64 KiB limit
	// fasthttp refuses the body before Fiber sees it, so this needs a real
	// listener rather than app.Test.
	ln, lerr := net.Listen("tcp", "127.0.0.1:0")
	if lerr != nil {
		t.Fatal(lerr)
	}
	go e.app.Listener(ln) //nolint:errcheck // ends with Shutdown below
	t.Cleanup(func() { _ = e.app.Shutdown() })
	// The server answers 413 and closes while the client may still be
	// writing the body; the client then sometimes sees the reset before
	// the answer. Such an attempt proves nothing either way: try again.
	var res *http.Response
	var err error
	for range 5 {
		res, err = http.Post("http://"+ln.Addr().String()+"/signin", "application/x-www-form-urlencoded",
			strings.NewReader("email="+strings.Repeat("a", 100<<10)))
		if err == nil || !strings.Contains(err.Error(), "connection reset") {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("100 KiB body: %d, want 413", res.StatusCode)
	}
}

func TestLayoutAssetsAreHashedAndCached(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res := e.client().get("/signin")
	for _, sel := range []string{`script[src*="htmx.min."]`, `link[href*="pico.min."]`, `link[href*="app."]`} {
		node := res.doc.Find(sel)
		if node.Length() != 1 {
			t.Fatalf("layout lacks %s", sel)
		}
		u, ok := node.Attr("src")
		if !ok {
			u, _ = node.Attr("href")
		}
		req := httptest.NewRequest(http.MethodGet, u, nil)
		a, err := e.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		if a.StatusCode != 200 || !strings.Contains(a.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("%s: %d cache %q", u, a.StatusCode, a.Header.Get("Cache-Control"))
		}
	}
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	var fail error
	e := newEnv(t, func(d *handlers.Deps) {
		d.Ready = func(context.Context) error { return fail }
	})
	if status, body := apiGetPlain(e, "/healthz"); status != 200 || body["status"] != "ok" {
		t.Errorf("healthz: %d %v", status, body)
	}
	if status, _ := apiGetPlain(e, "/readyz"); status != 200 {
		t.Errorf("readyz when ready: %d", status)
	}
	fail = &handlers.NotReady{Reason: "2 Ruckus and 0 River migrations pending"}
	if status, body := apiGetPlain(e, "/readyz"); status != 503 || !strings.Contains(body["error"].(string), "migrations pending") {
		t.Errorf("readyz when not ready: %d %v", status, body)
	}
	// The driver's message names the database's user, name and address:
	// the log gets it, an anonymous caller does not.
	fail = &handlers.NotReady{Reason: "database unreachable",
		Err: errors.New(`failed to connect to "user=ruckus database=ruckus host=10.1.2.3": dial error`)}
	if status, body := apiGetPlain(e, "/readyz"); status != 503 || body["error"] != "database unreachable" {
		t.Errorf("readyz with the database away: %d %v", status, body)
	}
	fail = errors.New("pq: password authentication failed for user ruckus")
	if status, body := apiGetPlain(e, "/readyz"); status != 503 || body["error"] != "not ready" {
		t.Errorf("readyz with an unclassified error: %d %v", status, body)
	}
}

func TestHomeShowsAgents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	if res := c.get("/"); res.doc.Find(`[data-testid="no-agents"]`).Length() != 1 {
		t.Fatal("home does not say there are no agents")
	}
	testkit.Agent(context.Background(), t, e.store, &testkit.AgentOpts{Name: "gpu-1", Host: "node1", Version: "v1", NoProfile: true})
	res := c.get("/fragments/agents")
	if got := res.text(`[data-testid="agent-gpu-1"] [data-testid="agent-state"]`); got != "online" {
		t.Fatalf("agent state in fragment = %q, want online: %.300s", got, res.body)
	}
	if strings.Contains(res.body, "<html") {
		t.Error("the fragment is a whole page")
	}
}

func apiGetPlain(e *env, path string) (int, map[string]any) { return apiGet(e, path, "") }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Every request's context carries its deadline, so a query outlives
// neither the request's allowance nor a client that has gone.
func TestRequestsCarryADeadline(t *testing.T) {
	t.Parallel()
	var left time.Duration
	e := newEnv(t, func(d *handlers.Deps) {
		d.RequestTimeout = 7 * time.Second
		d.Ready = func(ctx context.Context) error {
			dl, ok := ctx.Deadline()
			if !ok {
				return errors.New("no deadline")
			}
			left = time.Until(dl)
			return nil
		}
	})
	if status, body := apiGetPlain(e, "/readyz"); status != 200 {
		t.Fatalf("readyz: %d %v", status, body)
	}
	if left <= 0 || left > 7*time.Second {
		t.Fatalf("time left at the handler = %v, want within the 7 s allowance", left)
	}
}
