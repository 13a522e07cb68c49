package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/ruckus/ruckus/app/attest"
	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/assets"
	"github.com/ruckus/ruckus/handlers"
)

// env is one test's server over its own database.
type env struct {
	t *testing.T
	// app is the server; every /api/v1 exchange through its Test is held
	// to the OpenAPI description (see contractApp).
	app   *contractApp
	store *store.Store
	pw    *auth.Passwords
	ready func(context.Context) error
	// routes is the app's route table with each route's access.
	routes []handlers.Route
	// attest signs and verifies runs' results with a test key.
	attest *attest.Service
}

func newEnv(t *testing.T, tweak ...func(*handlers.Deps)) *env {
	t.Helper()
	st := testkit.Store(t)
	pw, err := auth.NewPasswords(4)
	if err != nil {
		t.Fatal(err)
	}
	m, err := assets.New()
	if err != nil {
		t.Fatal(err)
	}
	signer, err := attest.NewSigner([]byte("a test seed of thirty-two bytes!"))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, store: st, pw: pw, attest: &attest.Service{Store: st, Signer: signer}}
	d := handlers.Deps{
		Store:           st,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		Version:         "test-1.2.3",
		Assets:          m,
		Passwords:       pw,
		SessionKey:      []byte("0123456789abcdef0123456789abcdef"),
		SessionTTL:      time.Hour,
		SignInAttempts:  5,
		SignInWindow:    time.Minute,
		MaxRequestBytes: 64 << 10,
		AgentStaleAfter: 15 * time.Second,
		GridCO2:         400,
		Uploader:        &ingest.Uploader{Store: st, Limits: dataset.DefaultLimits()},
		Benchmarks:      testkit.Service(t.Context(), t, st, &testkit.ServiceOpts{StaleAfter: 15 * time.Second}),
		DatasetLimits:   dataset.DefaultLimits(),
		Ready:           func(ctx context.Context) error { return e.ready(ctx) },
		Attestations:    e.attest,
	}
	e.ready = st.Ping
	for _, f := range tweak {
		f(&d)
	}
	app, routes := handlers.NewWithRoutes(d)
	e.app, e.routes = &contractApp{App: app, t: t}, routes
	return e
}

// createUser makes an account with the given role.
func (e *env) createUser(email, password, role string) store.User {
	e.t.Helper()
	h, err := e.pw.Hash(password)
	if err != nil {
		e.t.Fatal(err)
	}
	return testkit.User(context.Background(), e.t, e.store, &testkit.UserOpts{Email: email, PasswordHash: h, Role: role})
}

// client is a browser: it keeps cookies and reads CSRF tokens from pages.
type client struct {
	e       *env
	cookies map[string]string
	csrf    string
}

func (e *env) client() *client { return &client{e: e, cookies: map[string]string{}} }

type response struct {
	status int
	header http.Header
	body   string
	doc    *goquery.Document
}

func (r response) text(sel string) string { return strings.TrimSpace(r.doc.Find(sel).Text()) }

func (c *client) do(req *http.Request) response {
	c.e.t.Helper()
	for k, v := range c.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	res, err := c.e.app.Test(req, -1)
	if err != nil {
		c.e.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	for _, ck := range res.Cookies() {
		if ck.MaxAge < 0 || ck.Value == "" {
			delete(c.cookies, ck.Name)
		} else {
			c.cookies[ck.Name] = ck.Value
		}
	}
	b, _ := io.ReadAll(res.Body)
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(string(b)))
	if tok, ok := doc.Find(`input[name="_csrf"]`).First().Attr("value"); ok {
		c.csrf = tok
	}
	return response{status: res.StatusCode, header: res.Header, body: string(b), doc: doc}
}

func (c *client) get(path string) response {
	return c.do(httptest.NewRequest(http.MethodGet, path, nil))
}

// post sends a form with the CSRF token the client last saw.
func (c *client) post(path string, form url.Values) response {
	if form == nil {
		form = url.Values{}
	}
	if form.Get("_csrf") == "" && c.csrf != "" {
		form.Set("_csrf", c.csrf)
	}
	return c.postRaw(path, form)
}

func (c *client) postRaw(path string, form url.Values) response {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

func (c *client) signIn(email, password string) response {
	c.e.t.Helper()
	c.get("/signin")
	return c.post("/signin", url.Values{"email": {email}, "password": {password}})
}

func apiGet(e *env, path, token string) (int, map[string]any) {
	e.t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := e.app.Test(req, -1)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		e.t.Fatalf("GET %s: response is not JSON: %v", path, err)
	}
	return res.StatusCode, body
}

// concludeRun does for a run a test finished and scored by hand what the
// score job does for a real one: keeps its quality under its scorer
// identity (with its scored items) and its figures with their intervals
// and load identity, which every conclusion reads.
func concludeRun(t *testing.T, e *env, runID int64) {
	t.Helper()
	ctx := context.Background()
	var q store.RunQuality
	if err := e.store.Pool().QueryRow(ctx, `SELECT scorer, scored, quality, quality_lo, quality_hi, scorer_options FROM runs WHERE id = $1`,
		runID).Scan(&q.Scorer, &q.Scored, &q.Mean, &q.Low, &q.High, &q.Options); err != nil {
		t.Fatal(err)
	}
	if q.Scorer != "" {
		var idx []int32
		var scores []*float64
		if err := e.store.Pool().QueryRow(ctx, `SELECT coalesce(array_agg(idx ORDER BY idx), '{}'), coalesce(array_agg(score ORDER BY idx), '{}')
			FROM results WHERE run_id = $1 AND sample = 0`, runID).Scan(&idx, &scores); err != nil {
			t.Fatal(err)
		}
		if err := e.store.SaveScores(ctx, runID, idx, nil, scores, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := conclude.ComputeRunStats(ctx, e.store, runID); err != nil {
		t.Fatal(err)
	}
}
