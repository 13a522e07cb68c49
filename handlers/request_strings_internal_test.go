package handlers

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/metrics"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/assets"
)

// stringsWorld is a server on a loopback port, as in production (keep-alive
// connections whose buffers fasthttp reuses), with its metrics registry and
// a record of every (route, method) pair handed to ObserveRequest as it was
// handed, uncloned.
type stringsWorld struct {
	s       *server
	app     *fiber.App
	base    string
	metrics *metrics.Server
	mu      sync.Mutex
	seen    [][2]string
	tokens  map[string]store.User
}

func newStringsWorld(t testing.TB, mutable bool) *stringsWorld {
	t.Helper()
	ctx := context.Background()
	st := testkit.Store(t)
	m, err := metrics.NewServer(ctx, st, nil, 15*time.Second, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := assets.New()
	if err != nil {
		t.Fatal(err)
	}
	w := &stringsWorld{metrics: m, tokens: map[string]store.User{}}
	s := newServer(Deps{
		Store: st, Logger: slog.New(slog.DiscardHandler), Version: "test", Assets: manifest,
		SessionKey: []byte("0123456789abcdef0123456789abcdef"), SessionTTL: time.Hour,
		SignInAttempts: 5, SignInWindow: time.Minute, MaxRequestBytes: 64 << 10,
		AgentStaleAfter: 15 * time.Second, Ready: st.Ping,
		APIRatePerToken: 1 << 20, APIRatePerUser: 1 << 20,
		ObserveRequest: func(route, method string, code int, d time.Duration) {
			w.mu.Lock()
			w.seen = append(w.seen, [2]string{route, method})
			w.mu.Unlock()
			m.ObserveRequest(route, method, code, d)
		},
	})
	s.mutableStrings = mutable
	w.s, w.app = s, s.build()
	for i := range 3 {
		u := testkit.User(ctx, t, st, nil)
		token, prefix, hash := auth.NewAPIToken()
		if _, err := st.CreateAPIToken(ctx, u.ID, fmt.Sprint("t", i), prefix, hash); err != nil {
			t.Fatal(err)
		}
		w.tokens[token] = u
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = w.app.Listener(ln) }()
	t.Cleanup(func() { _ = w.app.Shutdown() })
	w.base = "http://" + ln.Addr().String()
	return w
}

// requestMix is what the clients send: every method, routes of each kind
// (probes, API with a token, pages, parameters, nothing at all), paths of
// different lengths so a later request's bytes land over an earlier one's.
func (w *stringsWorld) requestMix() []*http.Request {
	var tokens []string
	for tok := range w.tokens {
		tokens = append(tokens, tok)
	}
	var out []*http.Request
	add := func(method, path, token string) {
		req, _ := http.NewRequest(method, w.base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		out = append(out, req)
	}
	for i, tok := range tokens {
		add(http.MethodGet, "/api/v1/me", tok)
		add(http.MethodDelete, fmt.Sprintf("/api/v1/webhooks/%d", 900000+i), tok)
		add(http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/cancel", 800000+i), tok)
		add(http.MethodPatch, "/api/v1/models/12345678", tok)
		add(http.MethodGet, "/api/v1/benchmarks?limit=3&state=running", tok)
	}
	add(http.MethodGet, "/healthz", "")
	add(http.MethodHead, "/readyz", "")
	add(http.MethodOptions, "/healthz", "")
	add(http.MethodPut, "/no/such/page/at/all/anywhere", "")
	add(http.MethodGet, "/runs/77", "")
	add(http.MethodTrace, "/benchmarks", "")
	add(http.MethodGet, "/api/v1/me", "rk_not-a-real-token")
	return out
}

// load sends the mix from several keep-alive clients at once while a
// scraper reads the registry, as Prometheus does.
func (w *stringsWorld) load(t *testing.T, rounds int) int {
	t.Helper()
	mix := w.requestMix()
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent := 0
	for c := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			for r := range rounds {
				req := mix[(c*7+r)%len(mix)].Clone(context.Background())
				res, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				mu.Lock()
				sent++
				mu.Unlock()
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			default:
				_, _ = w.metrics.Registry.Gather()
			}
		}
	}()
	wg.Wait()
	close(done)
	return sent
}

// A string of a request that a server keeps past the request (a metric's
// label, a rate-limit key) must not change when fasthttp reuses its buffer
// for the next request: with Fiber's Immutable setting every label is a
// real method and a route of the table, every scrape answers 200 and
// parses, every request is counted once, and every rate-limit key is one
// a token or user makes. Run under -race the concurrent scrape also
// catches a label read while fasthttp writes over it.
func TestRequestStringsDoNotOutliveTheirRequest(t *testing.T) {
	t.Parallel()
	w := newStringsWorld(t, false)
	sent := w.load(t, 60)
	if bad := w.badLabels(); len(bad) > 0 {
		t.Fatalf("labels handed to the metrics changed after their request: %q", bad[:min(len(bad), 10)])
	}
	w.checkScrape(t, sent)
	w.checkRateKeys(t)
}

// The test above can fail: with Fiber's strings left as views of its
// buffers the labels it records change after their requests.
func TestRequestStringsMutableWouldChange(t *testing.T) {
	t.Parallel()
	w := newStringsWorld(t, true)
	w.load(t, 60)
	if bad := w.badLabels(); len(bad) == 0 {
		t.Fatal("with Immutable off no recorded label changed: the test above could not fail")
	}
}

// badLabels are the recorded (route, method) pairs that are not a route of
// the table (or "unmatched") and a method clients sent.
func (w *stringsWorld) badLabels() [][2]string {
	routes := map[string]bool{"unmatched": true}
	for _, r := range w.s.routes {
		routes[r.Path] = true
	}
	methods := map[string]bool{}
	for _, req := range w.requestMix() {
		methods[req.Method] = true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var bad [][2]string
	for _, p := range w.seen {
		if !routes[p[0]] || !methods[p[1]] {
			bad = append(bad, p)
		}
	}
	return bad
}

func (w *stringsWorld) checkScrape(t *testing.T, sent int) {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(w.metrics.Registry, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body.String())
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("scrape does not parse: %v", err)
	}
	f := families["ruckus_http_request_duration_seconds"]
	if f == nil {
		t.Fatal("no request durations in the scrape")
	}
	var counted uint64
	for _, m := range f.GetMetric() {
		counted += m.GetHistogram().GetSampleCount()
	}
	// A client may send an idempotent request again on a new connection
	// when the server closed the old one: the server saw at least what
	// the clients counted, and the histogram holds each time it answered.
	w.mu.Lock()
	observed := len(w.seen)
	w.mu.Unlock()
	if counted != uint64(observed) || observed < sent {
		t.Fatalf("the histogram counts %d requests; the server answered %d, the clients got %d answers", counted, observed, sent)
	}
}

// checkRateKeys holds the API limiter's keys to those the tokens and users
// of the world make.
func (w *stringsWorld) checkRateKeys(t *testing.T) {
	t.Helper()
	want := map[string]bool{"badtoken:127.0.0.1": true}
	for tok, u := range w.tokens {
		want["token:"+string(auth.HashToken(tok))] = true
		want[fmt.Sprint("user:", u.ID)] = true
	}
	w.s.rates.mu.Lock()
	defer w.s.rates.mu.Unlock()
	if len(w.s.rates.counts) != len(want) {
		t.Errorf("%d rate-limit keys, want %d", len(w.s.rates.counts), len(want))
	}
	for k := range w.s.rates.counts {
		if !want[k] {
			t.Errorf("rate-limit key %q is no token's or user's", hex.EncodeToString([]byte(k)))
		}
	}
}

// BenchmarkImmutableStrings measures what Fiber's Immutable setting costs
// a request over loopback, against the same server with it off, in one
// run: a probe (no database), the API's /me (a token lookup) and the
// benchmarks list page's API (a query and JSON). The figures are in
// docs/development.md#request-strings.
func BenchmarkImmutableStrings(b *testing.B) {
	for _, path := range []string{"/healthz", "/api/v1/me", "/api/v1/benchmarks?limit=20"} {
		for _, mode := range []struct {
			name    string
			mutable bool
		}{{"immutable", false}, {"mutable", true}} {
			b.Run(strings.TrimPrefix(path, "/")+"/"+mode.name, func(b *testing.B) {
				w := newStringsWorld(b, mode.mutable)
				var token string
				for tok := range w.tokens {
					token = tok
				}
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
				// Idle keep-alive connections would hold the server's
				// shutdown until its idle timeout.
				defer client.CloseIdleConnections()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						req, _ := http.NewRequest(http.MethodGet, w.base+path, nil)
						req.Header.Set("Authorization", "Bearer "+token)
						res, err := client.Do(req)
						if err != nil {
							b.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, res.Body)
						res.Body.Close()
						if res.StatusCode != http.StatusOK {
							b.Errorf("%s: %d", path, res.StatusCode)
							return
						}
					}
				})
			})
		}
	}
}
