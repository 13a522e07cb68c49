package handlers_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/handlers"
)

// relay forwards loopback connections to PostgreSQL until cut: the
// database going away under a running server, as a PostgreSQL restart
// does.
type relay struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
}

func newRelay(t *testing.T, addr, target string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln, target: target}
	go r.serve()
	t.Cleanup(r.cut)
	return r
}

func (r *relay) serve() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", r.target)
		if err != nil {
			c.Close()
			continue
		}
		r.mu.Lock()
		r.conns = append(r.conns, c, up)
		r.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); up.Close() }()
		go func() { _, _ = io.Copy(c, up); c.Close() }()
	}
}

// cut stops listening and breaks every relayed connection.
func (r *relay) cut() {
	r.ln.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

// While the database cannot be reached, the API and the pages answer 503
// with Retry-After, saying so in the reader's language, not 500; once it
// is back, the same requests work. `make bench-day` found every request
// during its PostgreSQL restart answered 500.
func TestDatabaseAwayIsServiceUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var r *relay
	e := newEnv(t, func(d *handlers.Deps) {
		cfg := d.Store.(*store.Store).Pool().Config()
		r = newRelay(t, "127.0.0.1:0", net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))))
		host, port, _ := net.SplitHostPort(r.ln.Addr().String())
		p, _ := strconv.Atoi(port)
		cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(p)
		cfg.ConnConfig.ConnectTimeout = 0
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		d.Store = store.New(pool)
	})
	u := e.createUser("away@example.com", "away-password-1", store.RoleUser)
	token, prefix, hash := auth.NewAPIToken()
	if _, err := e.store.CreateAPIToken(ctx, u.ID, "away", prefix, hash); err != nil {
		t.Fatal(err)
	}
	browser := e.client()
	if res := browser.signIn("away@example.com", "away-password-1"); res.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", res.status)
	}
	if status, _ := apiGet(e, "/api/v1/me", token); status != http.StatusOK {
		t.Fatalf("/api/v1/me with the database there: %d", status)
	}

	addr := r.ln.Addr().String()
	r.cut()
	status, body := apiGet(e, "/api/v1/me", token)
	if status != http.StatusServiceUnavailable || !strings.Contains(body["error"].(string), "database is unavailable") {
		t.Fatalf("/api/v1/me with the database away: %d %v, want 503 saying why", status, body)
	}
	res := browser.get("/datasets")
	if res.status != http.StatusServiceUnavailable || res.header.Get("Retry-After") != "5" || !strings.Contains(res.body, "Temporarily unavailable") {
		t.Fatalf("/datasets with the database away: %d, Retry-After %q", res.status, res.header.Get("Retry-After"))
	}
	de := e.client()
	req := httptest.NewRequest(http.MethodGet, "/signin", nil)
	req.Header.Set("Accept-Language", "de")
	de.do(req)
	form := url.Values{"email": {"away@example.com"}, "password": {"away-password-1"}, "_csrf": {de.csrf}}
	req = httptest.NewRequest(http.MethodPost, "/signin", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept-Language", "de")
	res = de.do(req)
	if res.status != http.StatusServiceUnavailable || !strings.Contains(res.body, "Vorübergehend nicht verfügbar") {
		t.Fatalf("German sign-in with the database away: %d", res.status)
	}

	newRelay(t, addr, r.target)
	if status, _ := apiGet(e, "/api/v1/me", token); status != http.StatusOK {
		t.Fatalf("/api/v1/me with the database back: %d", status)
	}
	if res := browser.get("/datasets"); res.status != http.StatusOK {
		t.Fatalf("/datasets with the database back: %d", res.status)
	}
}
