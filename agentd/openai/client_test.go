package openai

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// slack is how much later than scripted a measured time may be: the
// machine is shared, so the upper bounds are generous; the lower bounds
// are exact (the monotonic clock cannot run short).
const slack = 300 * time.Millisecond

// step is one scripted write: wait, then write and flush.
type step struct {
	wait time.Duration
	data string
}

// sseHandler streams steps as an event stream, stopping when the client
// goes away.
func sseHandler(steps ...step) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		readBody(r)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for _, s := range steps {
			if s.wait > 0 {
				select {
				case <-time.After(s.wait):
				case <-r.Context().Done():
					return
				}
			}
			_, _ = io.WriteString(w, s.data)
			w.(http.Flusher).Flush()
		}
	}
}

// hang waits until the client goes away.
func hang(w http.ResponseWriter, r *http.Request) {
	readBody(r)
	<-r.Context().Done()
}

// readBody consumes the request body: until it has, Go's HTTP/1 server
// does not watch the connection, and would not notice the client leave.
func readBody(r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }

func chatRequest(t *testing.T) Request {
	t.Helper()
	req, err := BuildRequest(json.RawMessage(chatItem), "m", jobs.Sampling{MaxTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// serve starts h and sends one chat request to it with c (a fresh client
// when nil), with BaseURL ending in /v1 as OpenAI SDKs are configured.
func serve(t *testing.T, h http.Handler, c *Client) jobs.Result {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	if c == nil {
		c = &Client{}
	}
	c.BaseURL = srv.URL + "/v1"
	if c.HTTP == nil {
		c.HTTP = NewHTTPClient(nil)
	}
	return c.Do(context.Background(), chatRequest(t))
}

func within(t *testing.T, what string, got, lo time.Duration) {
	t.Helper()
	if got < lo || got > lo+slack {
		t.Errorf("%s = %v, want between %v and %v", what, got, lo, lo+slack)
	}
}

// arrivalJitter is how much sooner than the server's pause a chunk can
// arrive after the one before: a gap between arrivals is shortened when
// the earlier chunk was read late. A time from the request's start (TTFT)
// cannot be.
const arrivalJitter = 2 * time.Millisecond

// withinGap is within for a gap between two arrivals.
func withinGap(t *testing.T, what string, got, lo time.Duration) {
	t.Helper()
	if got < lo-arrivalJitter || got > lo+slack {
		t.Errorf("%s = %v, want between %v and %v", what, got, lo-arrivalJitter, lo+slack)
	}
}

func TestDoStreamTimings(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	r := serve(t, sseHandler(
		step{0, data(roleChunk)}, // role only: TTFT does not start here
		step{100 * ms, data(contentChunk("Hello"))},
		step{60 * ms, data(contentChunk(" big world"))}, // two tokens
		step{40 * ms, data(contentChunk("!"))},
		step{0, data(finishChunk("stop"))},
		step{0, data(usageChunk(5, 4))}, // usage-only last chunk
		step{0, done},
	), nil)
	if r.Status != jobs.StatusOK || r.Output != "Hello big world!" || r.CompletionTokens != 4 || r.PromptTokens != 5 ||
		r.TokensEstimated || r.FinishReason != "stop" || r.ContentEvents != 3 || r.RequestID != "c1" || r.HTTPStatus != 200 {
		t.Fatalf("result %+v", r)
	}
	within(t, "TTFT", r.TTFT, 100*ms)
	withinGap(t, "E2E−TTFT", r.E2E-r.TTFT, 100*ms)
	if r.TPOT != (r.E2E-r.TTFT)/3 {
		t.Errorf("TPOT %v, want (E2E−TTFT)/3 = %v", r.TPOT, (r.E2E-r.TTFT)/3)
	}
	// The 60 ms gap is shared by the 2 tokens of " big world" (30 ms
	// each) and the 40 ms gap is the last token's: samples ≈ [30 30 40].
	withinGap(t, "ITL p50", r.ITLP50, 30*ms)
	withinGap(t, "ITL max", r.ITLMax, 40*ms)
	if r.ITLMax < r.ITLP50 || r.ITLMean < 30*ms-arrivalJitter {
		t.Errorf("ITL mean %v p50 %v max %v", r.ITLMean, r.ITLP50, r.ITLMax)
	}
}

// TestDoStallShowsInITLNotTPOT streams 50 tokens 10 ms apart but for one
// 500 ms stall: token-level ITL keeps that gap (max, and p99 interpolates
// towards it), while TPOT, a per-request mean, smooths it to ≈ 20 ms.
func TestDoStallShowsInITLNotTPOT(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	steps := []step{{0, data(roleChunk)}}
	for i := range 50 {
		wait := 10 * ms
		if i == 25 {
			wait = 500 * ms
		}
		steps = append(steps, step{wait, data(contentChunk(" w"))})
	}
	steps = append(steps, step{0, data(finishChunk("stop"))}, step{0, data(usageChunk(5, 50))}, step{0, done})
	r := serve(t, sseHandler(steps...), nil)
	if r.Status != jobs.StatusOK || r.CompletionTokens != 50 || len(r.ITLGapsMicros) != 49 || r.ITLTokens != nil {
		t.Fatalf("result %+v", r)
	}
	// A read a little late shortens the gap it ends (see below): the
	// stall shows as at least 450 ms.
	withinGap(t, "ITL max", r.ITLMax, 450*ms)
	// 49 samples: p99 sits at h = 48·0.99 = 47.52, between the largest
	// ordinary gap and the stall: 10 + 0.52·(stall − 10) ms, ≥ 239 ms.
	withinGap(t, "ITL p99", r.ITLP99, 239*ms)
	if r.TPOT > 100*ms || r.ITLP50 > 100*ms {
		t.Errorf("TPOT %v, ITL p50 %v: the stall should move neither", r.TPOT, r.ITLP50)
	}
	var stall int32
	for _, g := range r.ITLGapsMicros {
		stall = max(stall, g)
	}
	// The client times an event when it reads it: one read a little late
	// shortens the gap after it, so the stall is seen as 500 ms less that
	// lateness.
	if d := time.Duration(stall) * time.Microsecond; d < 450*ms || d > r.ITLMax+time.Microsecond {
		t.Errorf("largest stored gap %v, want about 500ms and the ITL max %v", d, r.ITLMax)
	}
}

func TestDoWithoutUsageEstimates(t *testing.T) {
	t.Parallel()
	r := serve(t, sseHandler(step{0, data(contentChunk("a"))}, step{0, data(contentChunk(" b"))}, step{0, data(contentChunk(" c"))},
		step{0, data(finishChunk("length"))}, step{0, done}), nil)
	if r.Status != jobs.StatusOK || r.CompletionTokens != 3 || !r.TokensEstimated || r.FinishReason != "length" || r.Output != "a b c" {
		t.Fatalf("result %+v", r)
	}
}

func TestDoCompletions(t *testing.T) {
	t.Parallel()
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		sseHandler(step{0, data(`{"id":"cmpl-1","choices":[{"text":"Once"}]}`)},
			step{20 * time.Millisecond, data(`{"id":"cmpl-1","choices":[{"text":" upon","finish_reason":"length"}]}`)},
			step{0, data(usageChunk(3, 2))}, step{0, done})(w, r)
	}))
	defer srv.Close()
	req, err := BuildRequest(json.RawMessage(`{"method":"POST","url":"/v1/completions","body":{"prompt":"p"}}`), "m", jobs.Sampling{})
	if err != nil {
		t.Fatal(err)
	}
	r := (&Client{BaseURL: srv.URL + "/", HTTP: NewHTTPClient(nil)}).Do(context.Background(), req)
	if r.Status != jobs.StatusOK || r.Output != "Once upon" || r.ContentEvents != 2 || r.CompletionTokens != 2 || path != PathCompletion {
		t.Fatalf("result %+v (path %s)", r, path)
	}
	// The runtime waits 20 ms between the two events. The client stamps
	// an event when it reads it, so a late read of the first shortens the
	// gap the client sees: E2E holds the 20 ms whatever the reads, the
	// gap only comes after TTFT.
	within(t, "E2E", r.E2E, 20*time.Millisecond)
	if gap := r.E2E - r.TTFT; gap <= 0 || gap > 320*time.Millisecond {
		t.Errorf("E2E−TTFT = %v, want above 0 and at most 320ms", gap)
	}
}

func TestDoSendsWhatTheRuntimeNeeds(t *testing.T) {
	t.Parallel()
	type seen struct {
		path, auth, ctype string
		body              map[string]any
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{path: r.URL.Path, auth: r.Header.Get("Authorization"), ctype: r.Header.Get("Content-Type")}
		_ = json.NewDecoder(r.Body).Decode(&s.body)
		got <- s
		sseHandler(step{0, data(contentChunk("a"))}, step{0, done})(w, r)
	}))
	defer srv.Close()
	c, err := New(srv.URL+"/v1/", "sk-test")
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Do(context.Background(), chatRequest(t)); r.Status != jobs.StatusOK {
		t.Fatalf("result %+v", r)
	}
	s := <-got
	if s.path != PathChat || s.auth != "Bearer sk-test" || s.ctype != "application/json" || s.body["stream"] != true || s.body["model"] != "m" {
		t.Fatalf("the server saw %+v", s)
	}
}

func TestDoNonStreaming(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, ctype, body string
		class, output     string
		tokens            int
		estimated         bool
	}{
		{"chat with usage", "application/json",
			`{"id":"x","object":"chat.completion","choices":[{"message":{"role":"assistant","content":"whole answer"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":2}}`,
			"", "whole answer", 2, false},
		{"completion without usage", "application/json; charset=utf-8",
			`{"choices":[{"text":"one two three","finish_reason":"stop"}]}`, "", "one two three", 3, true},
		{"no content type, sniffed", "", `  {"choices":[{"text":"x","finish_reason":"stop"}],"usage":{"completion_tokens":1}}`, "", "x", 1, false},
		{"no choices", "application/json", `{"id":"x"}`, jobs.ErrMalformed, "", 0, false},
		{"not JSON", "application/json", `<html>gateway</html>`, jobs.ErrMalformed, "", 0, false},
		{"an error with status 200", "application/json", `{"error":{"message":"model overloaded"}}`, jobs.ErrRuntime, "", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(60 * time.Millisecond) // the whole generation, before the headers
				if c.ctype != "" {
					w.Header().Set("Content-Type", c.ctype)
				}
				_, _ = io.WriteString(w, c.body)
			}), nil)
			if r.ErrorClass != c.class || r.Output != c.output || r.CompletionTokens != c.tokens || r.TokensEstimated != c.estimated {
				t.Fatalf("result %+v", r)
			}
			if c.class == "" {
				within(t, "E2E", r.E2E, 60*time.Millisecond)
				if r.TTFT != r.E2E || r.TPOT != 0 || r.ContentEvents != 1 {
					t.Errorf("TTFT %v E2E %v TPOT %v events %d: want TTFT = E2E, no TPOT, one event", r.TTFT, r.E2E, r.TPOT, r.ContentEvents)
				}
			}
		})
	}
}

func TestDoEventStreamWithoutItsContentType(t *testing.T) {
	t.Parallel()
	r := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, data(contentChunk("a"))+data(finishChunk("stop"))+done)
	}), nil)
	if r.Status != jobs.StatusOK || r.Output != "a" || r.ContentEvents != 1 {
		t.Fatalf("result %+v", r)
	}
}

func TestDoRequestIDFromHeader(t *testing.T) {
	t.Parallel()
	r := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req-42")
		sseHandler(step{0, data(`{"choices":[{"delta":{"content":"a"},"finish_reason":"stop"}]}`)}, step{0, done})(w, r)
	}), nil)
	if r.RequestID != "req-42" {
		t.Fatalf("result %+v", r)
	}
}

func TestDoErrors(t *testing.T) {
	t.Parallel()
	status := func(code int, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_, _ = io.WriteString(w, body)
		})
	}
	long := strings.Repeat("very long validation detail ", 100)
	for _, c := range []struct {
		name        string
		h           http.Handler
		class       string
		output      string
		httpStatus  int
		errContains string
	}{
		{"malformed event mid-stream", sseHandler(step{0, data(contentChunk("ok"))}, step{0, data("{not json")}),
			jobs.ErrMalformed, "ok", 200, "not a JSON chunk"},
		{"disconnect without [DONE]", sseHandler(step{0, data(contentChunk("par"))}, step{0, data(contentChunk("tial"))}),
			jobs.ErrDisconnect, "partial", 200, "ended before the response finished"},
		{"connection dropped mid-stream", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sseHandler(step{0, data(contentChunk("par"))})(w, r)
			panic(http.ErrAbortHandler)
		}), jobs.ErrDisconnect, "par", 200, ""},
		{"error event mid-stream", sseHandler(step{0, data(contentChunk("x"))}, step{0, data(`{"error":{"message":"out of memory"}}`)}),
			jobs.ErrRuntime, "x", 200, "out of memory"},
		{"429", status(429, `{"error":{"message":"slow down","type":"rate_limit"}}`), jobs.ErrHTTP429, "", 429, "HTTP 429 Too Many Requests: slow down"},
		{"500", status(500, "boom"), jobs.ErrHTTP5xx, "", 500, "HTTP 500 Internal Server Error: boom"},
		{"503 without a body", status(503, ""), jobs.ErrHTTP5xx, "", 503, "HTTP 503 Service Unavailable"},
		{"400 with vLLM's error", status(400, `{"object":"error","message":"This model's maximum context length is 2048 tokens","code":400}`),
			jobs.ErrHTTP4xx, "", 400, "maximum context length is 2048"},
		{"404 with FastAPI's detail", status(404, `{"detail":"Not Found"}`), jobs.ErrHTTP4xx, "", 404, "HTTP 404 Not Found: Not Found"},
		{"422 with a long body: a snippet", status(422, long), jobs.ErrHTTP4xx, "", 422, "very long validation detail very long"},
		{"stall before the headers", http.HandlerFunc(hang), jobs.ErrStall, "", 0, "no data from the runtime for 100ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := serve(t, c.h, &Client{StallTimeout: 100 * time.Millisecond})
			if r.Status != jobs.StatusError || r.ErrorClass != c.class || r.Output != c.output || r.HTTPStatus != c.httpStatus ||
				!strings.Contains(r.Error, c.errContains) || r.Error == "" {
				t.Fatalf("result %+v\nwant class %s output %q status %d error containing %q", r, c.class, c.output, c.httpStatus, c.errContains)
			}
			if len(r.Error) > 400 {
				t.Errorf("error message of %d bytes: %s", len(r.Error), r.Error)
			}
		})
	}
}

func TestDoConnectionRefused(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	r := (&Client{BaseURL: "http://" + addr, HTTP: NewHTTPClient(nil)}).Do(context.Background(), chatRequest(t))
	if r.Status != jobs.StatusError || r.ErrorClass != jobs.ErrConnect || !strings.Contains(r.Error, "cannot connect") {
		t.Fatalf("result %+v", r)
	}
}

func TestDoStall(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	start := time.Now()
	r := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHandler(step{0, data(contentChunk("a"))})(w, r)
		hang(w, r)
	}), &Client{StallTimeout: 150 * ms, RequestTimeout: time.Minute})
	if r.ErrorClass != jobs.ErrStall || r.Output != "a" || !strings.Contains(r.Error, "150ms") {
		t.Fatalf("result %+v", r)
	}
	within(t, "time to give up", time.Since(start), 150*ms)
}

func TestDoKeepAlivesAreNotAStall(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	steps := []step{{0, data(roleChunk)}}
	for range 8 { // 8·50 ms = 400 ms of silence but for keep-alives
		steps = append(steps, step{50 * ms, ": keep-alive\n\n"})
	}
	steps = append(steps, step{0, data(contentChunk("a"))}, step{0, data(finishChunk("stop"))}, step{0, done})
	r := serve(t, sseHandler(steps...), &Client{StallTimeout: 250 * ms})
	if r.Status != jobs.StatusOK || r.Output != "a" {
		t.Fatalf("result %+v", r)
	}
	within(t, "TTFT", r.TTFT, 400*ms)
}

func TestDoRequestTimeout(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	steps := []step{}
	for range 100 { // a token every 20 ms for 2 s
		steps = append(steps, step{20 * ms, data(contentChunk("a"))})
	}
	start := time.Now()
	r := serve(t, sseHandler(steps...), &Client{StallTimeout: time.Second, RequestTimeout: 200 * ms})
	if r.ErrorClass != jobs.ErrTimeout || !strings.HasPrefix(r.Output, "a") || !strings.Contains(r.Error, "200ms") {
		t.Fatalf("result %+v", r)
	}
	within(t, "time to give up", time.Since(start), 200*ms)
}

func TestDoCancel(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sseHandler(step{0, data(contentChunk("a"))})(w, r)
		hang(w, r)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	// Cancel once the client has read the first event, as a cancelled run
	// would in the middle of a stream.
	hc := NewHTTPClient(nil)
	hc.Transport = onRead{hc.Transport, func(b []byte) {
		if strings.Contains(string(b), "\n\n") {
			cancel()
		}
	}}
	r := (&Client{BaseURL: srv.URL, HTTP: hc}).Do(ctx, chatRequest(t))
	if r.ErrorClass != jobs.ErrCancelled || r.Output != "a" || r.ContentEvents != 1 || !strings.Contains(r.Error, "cancelled") {
		t.Fatalf("result %+v", r)
	}

	// Cancelled before it was sent.
	done, stop := context.WithCancel(context.Background())
	stop()
	r = (&Client{BaseURL: srv.URL, HTTP: NewHTTPClient(nil)}).Do(done, chatRequest(t))
	if r.ErrorClass != jobs.ErrCancelled {
		t.Fatalf("result %+v", r)
	}
}

// onRead calls f with the bytes of each read of a response body.
type onRead struct {
	next http.RoundTripper
	f    func([]byte)
}

func (o onRead) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := o.next.RoundTrip(r)
	if err == nil {
		resp.Body = watchedBody{resp.Body, o.f}
	}
	return resp, err
}

type watchedBody struct {
	io.ReadCloser
	f func([]byte)
}

func (w watchedBody) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	w.f(p[:n])
	return n, err
}

// After [DONE] the body is read to its end, so the next request reuses the
// connection and its TTFT includes no new handshake.
func TestDoReusesConnections(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	// The body ends 20 ms after [DONE], as when a server does some work
	// after its last event: the client must wait for that end to keep the
	// connection.
	srv := httptest.NewUnstartedServer(sseHandler(step{0, data(contentChunk("a"))}, step{0, done}, step{20 * time.Millisecond, ""}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	// A generous wait for the end: what is tested is that the client waits
	// for it, not how fast a loaded machine gets there.
	c := &Client{BaseURL: srv.URL, HTTP: NewHTTPClient(nil), DrainWait: 5 * time.Second}
	for range 3 {
		if r := c.Do(context.Background(), chatRequest(t)); r.Status != jobs.StatusOK {
			t.Fatalf("result %+v", r)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for 3 sequential requests, want 1", n)
	}
}

func TestDoRefusesBadRequests(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		c     *Client
		r     Request
		class string
	}{
		{"empty request", &Client{BaseURL: "http://127.0.0.1:1"}, Request{}, jobs.ErrInvalidReq},
		{"no scheme in the base URL", &Client{BaseURL: "127.0.0.1:8000"}, Request{Path: PathChat, Body: []byte(`{}`)}, jobs.ErrConnect},
	} {
		if r := c.c.Do(context.Background(), c.r); r.Status != jobs.StatusError || r.ErrorClass != c.class || r.Error == "" {
			t.Errorf("%s: result %+v, want class %s", c.name, r, c.class)
		}
	}
}

func TestEndpoint(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		base, path, want string
	}{
		{"http://127.0.0.1:8000", PathChat, "http://127.0.0.1:8000/v1/chat/completions"},
		{"http://127.0.0.1:8000/", PathChat, "http://127.0.0.1:8000/v1/chat/completions"},
		{"http://127.0.0.1:8000/v1", PathChat, "http://127.0.0.1:8000/v1/chat/completions"},
		{"http://127.0.0.1:8000/v1/", PathCompletion, "http://127.0.0.1:8000/v1/completions"},
		{"https://gw.example/openai/v1", PathChat, "https://gw.example/openai/v1/chat/completions"},
		{"https://gw.example/openai", PathChat, "https://gw.example/openai/v1/chat/completions"},
		{"http://h:1", "v1/completions", "http://h:1/v1/completions"},
		{"http://h:1/v1", "/health", "http://h:1/v1/health"},
	} {
		got, err := (&Client{BaseURL: c.base}).endpoint(c.path)
		if err != nil || got != c.want {
			t.Errorf("endpoint(%q, %q) = %q, %v; want %q", c.base, c.path, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:8000", "localhost:8000", "ftp://h/", "http://", "http://h:1/%zz"} {
		if _, err := (&Client{BaseURL: bad}).endpoint(PathChat); err == nil {
			t.Errorf("base URL %q accepted", bad)
		}
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	hc := &http.Client{}
	c, err := New("http://h:1/v1", "k", WithHTTPClient(hc), WithStallTimeout(time.Second), WithRequestTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != "http://h:1/v1" || c.APIKey != "k" || c.HTTP != hc || c.StallTimeout != time.Second || c.RequestTimeout != time.Minute {
		t.Fatalf("client %+v", c)
	}
	if c, err := New("http://h:1", ""); err != nil || c.HTTP == nil {
		t.Fatalf("default HTTP client: %+v, %v", c, err)
	}
	for name, f := range map[string]func() (*Client, error){
		"bad URL":                  func() (*Client, error) { return New("h:1", "") },
		"negative stall timeout":   func() (*Client, error) { return New("http://h:1", "", WithStallTimeout(-1)) },
		"negative request timeout": func() (*Client, error) { return New("http://h:1", "", WithRequestTimeout(-1)) },
		"nil HTTP client":          func() (*Client, error) { return New("http://h:1", "", WithHTTPClient(nil)) },
		"missing CA file":          func() (*Client, error) { return New("https://h:1", "", WithTLS("/nonexistent/ca.pem", false)) },
	} {
		if _, err := f(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(sseHandler(step{0, data(contentChunk("s"))}, step{0, done}))
	defer srv.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	send := func(hc *http.Client, base string) jobs.Result {
		return (&Client{BaseURL: base, HTTP: hc, APIKey: "k"}).Do(context.Background(), chatRequest(t))
	}

	if r := send(NewHTTPClient(nil), srv.URL); r.ErrorClass != jobs.ErrConnect || !strings.Contains(r.Error, "not trusted") {
		t.Errorf("an unknown certificate: %+v", r)
	}
	conf, err := TLSConfig(ca, false)
	if err != nil {
		t.Fatal(err)
	}
	if r := send(NewHTTPClient(conf), srv.URL); r.Status != jobs.StatusOK || r.Output != "s" {
		t.Errorf("with the CA file: %+v", r)
	}
	insecure, err := TLSConfig("", true)
	if err != nil {
		t.Fatal(err)
	}
	if r := send(NewHTTPClient(insecure), srv.URL); r.Status != jobs.StatusOK {
		t.Errorf("insecure: %+v", r)
	}
	c, err := New(srv.URL, "k", WithTLS(ca, false))
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Do(context.Background(), chatRequest(t)); r.Status != jobs.StatusOK {
		t.Errorf("New with WithTLS: %+v", r)
	}
	// https to a plain-HTTP server.
	plain := httptest.NewServer(sseHandler(step{0, done}))
	defer plain.Close()
	if r := send(NewHTTPClient(conf), strings.Replace(plain.URL, "http://", "https://", 1)); r.ErrorClass != jobs.ErrConnect {
		t.Errorf("https to plain HTTP: %+v", r)
	}
	for _, f := range []string{filepath.Join(dir, "missing.pem"), notPEM} {
		if _, err := TLSConfig(f, false); err == nil {
			t.Errorf("TLSConfig(%s) accepted", f)
		}
	}
}
