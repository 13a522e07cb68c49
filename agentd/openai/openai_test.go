package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

func TestComputeFromScriptedTimes(t *testing.T) {
	send := time.Unix(1000, 0)
	at := func(ms int) time.Time { return send.Add(time.Duration(ms) * time.Millisecond) }
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

	// One token per event: TTFT 100, events 20 ms apart.
	ev := []contentEvent{{at(100), 3}, {at(120), 3}, {at(140), 3}, {at(160), 3}}
	m := compute(send, ev, at(170), 4)
	if m.TTFT != ms(100) || m.E2E != ms(160) || m.TPOT != ms(20) || m.ITLMean != ms(20) || m.ITLMax != ms(20) {
		t.Fatalf("single-token events: %+v", m)
	}

	// Multi-token events: usage says 7 tokens over 3 events with text of
	// 1, 4 and 2 bytes → 1 + 4·4/7 … shares 1+2, 1+3?: extra 4 tokens by
	// bytes 1:4:2 → exact 0.57, 2.29, 1.14 → 0,2,1 then the largest
	// remainder (0.57, event 0) gets the last → shares 2, 3, 2.
	ev = []contentEvent{{at(50), 1}, {at(110), 4}, {at(150), 2}}
	if got := shareTokens(ev, 7); fmt.Sprint(got) != "[2 3 2]" {
		t.Fatalf("shares %v", got)
	}
	m = compute(send, ev, at(150), 7)
	// Gaps: 60 ms over 3 tokens (20,20,20) and 40 ms over 2 (20,20).
	if m.TTFT != ms(50) || m.E2E != ms(150) || m.TPOT != ms(100.0/6) || m.ITLMean != ms(20) || m.ITLP99 != ms(20) {
		t.Fatalf("multi-token events: %+v", m)
	}

	// Uneven gaps, percentiles by linear interpolation: gaps 10, 30.
	ev = []contentEvent{{at(10), 1}, {at(20), 1}, {at(50), 1}}
	m = compute(send, ev, at(60), 3)
	if m.ITLP50 != ms(20) || m.ITLP99 != ms(29.8) || m.ITLMax != ms(30) {
		t.Fatalf("uneven gaps: %+v", m)
	}

	// No content at all: E2E to the end, no TTFT.
	m = compute(send, nil, at(30), 0)
	if m.TTFT != 0 || m.E2E != ms(30) || m.TPOT != 0 {
		t.Fatalf("no content: %+v", m)
	}
}

// step is one scripted write: wait, then write and flush.
type step struct {
	wait time.Duration
	data string
}

func sse(steps ...step) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, s := range steps {
			select {
			case <-time.After(s.wait):
			case <-r.Context().Done():
				return
			}
			_, _ = w.Write([]byte(s.data))
			w.(http.Flusher).Flush()
		}
	}
}

func data(v string) string { return "data: " + v + "\n\n" }

const (
	roleChunk  = `{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`
	usageChunk = `{"id":"c1","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":%d}}`
)

func content(s string) string {
	b, _ := json.Marshal(s)
	return `{"id":"c1","choices":[{"index":0,"delta":{"content":` + string(b) + `}}]}`
}

func finish(reason string) string {
	return `{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

func do(t *testing.T, h http.Handler, c *Client) jobs.Result {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	if c == nil {
		c = &Client{}
	}
	c.BaseURL = srv.URL + "/v1"
	req, err := BuildRequest([]byte(`{"method":"POST","url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"hi"}]}}`), "m", jobs.Sampling{MaxTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(context.Background(), req)
}

func between(t *testing.T, what string, got, lo, hi time.Duration) {
	t.Helper()
	if got < lo || got > hi {
		t.Errorf("%s = %v, want between %v and %v", what, got, lo, hi)
	}
}

func TestStreamRoleChunkUsageChunkAndMultiTokenEvents(t *testing.T) {
	t.Parallel()
	r := do(t, sse(
		step{0, data(roleChunk)}, // role only: not the first token
		step{80 * time.Millisecond, data(content("Hello"))},
		step{40 * time.Millisecond, data(content(" big world"))}, // several tokens
		step{40 * time.Millisecond, data(finish("stop"))},
		step{0, data(fmt.Sprintf(usageChunk, 4))},
		step{0, data("[DONE]")},
	), nil)
	if r.Status != jobs.StatusOK || r.Output != "Hello big world" || r.CompletionTokens != 4 || r.PromptTokens != 5 ||
		r.TokensEstimated || r.FinishReason != "stop" || r.ContentEvents != 2 || r.RequestID != "c1" {
		t.Fatalf("result %+v", r)
	}
	between(t, "TTFT", r.TTFT, 80*time.Millisecond, 300*time.Millisecond)
	between(t, "E2E-TTFT", r.E2E-r.TTFT, 40*time.Millisecond, 200*time.Millisecond)
	// The 40 ms gap is split over the 3 tokens the second event carried.
	between(t, "ITL", r.ITLMean, 13*time.Millisecond, 70*time.Millisecond)
	if r.TPOT != (r.E2E-r.TTFT)/3 {
		t.Errorf("TPOT %v, want (E2E-TTFT)/3 = %v", r.TPOT, (r.E2E-r.TTFT)/3)
	}
}

func TestStreamWithoutUsageIsEstimated(t *testing.T) {
	t.Parallel()
	r := do(t, sse(step{0, data(content("a"))}, step{0, data(content("b"))}, step{0, data(content("c"))},
		step{0, data(finish("length"))}, step{0, data("[DONE]")}), nil)
	if r.Status != jobs.StatusOK || r.CompletionTokens != 3 || !r.TokensEstimated || r.FinishReason != "length" {
		t.Fatalf("result %+v", r)
	}
}

func TestStreamErrors(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		h      http.Handler
		class  string
		output string
	}{
		"malformed event": {sse(step{0, data(content("ok"))}, step{0, data("{not json")}), jobs.ErrMalformed, "ok"},
		"disconnect":      {sse(step{0, data(content("par"))}, step{0, data(content("tial"))}), jobs.ErrDisconnect, "partial"},
		"error event":     {sse(step{0, data(content("x"))}, step{0, data(`{"error":{"message":"out of memory"}}`)}), jobs.ErrRuntime, "x"},
		"429": {http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":{"message":"slow down"}}`, http.StatusTooManyRequests)
		}), jobs.ErrHTTP429, ""},
		"500": {http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) }), jobs.ErrHTTP5xx, ""},
		"400": {http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "bad model", http.StatusBadRequest) }), jobs.ErrHTTP4xx, ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := do(t, c.h, nil)
			if r.Status != jobs.StatusError || r.ErrorClass != c.class || r.Output != c.output || r.Error == "" {
				t.Fatalf("result %+v, want class %s output %q", r, c.class, c.output)
			}
		})
	}
}

func TestStallTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	hang := sse(step{0, data(content("a"))}, step{time.Hour, data(content("b"))})
	r := do(t, hang, &Client{StallTimeout: 100 * time.Millisecond})
	if r.ErrorClass != jobs.ErrStall || r.Output != "a" {
		t.Fatalf("stall: %+v", r)
	}
	r = do(t, hang, &Client{RequestTimeout: 100 * time.Millisecond})
	if r.ErrorClass != jobs.ErrTimeout {
		t.Fatalf("timeout: %+v", r)
	}
	srv := httptest.NewServer(hang)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	r = (&Client{BaseURL: srv.URL}).Do(ctx, Request{Path: "/v1/completions", Body: []byte(`{}`)})
	if r.ErrorClass != jobs.ErrCancelled {
		t.Fatalf("cancel: %+v", r)
	}
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	r := (&Client{BaseURL: url}).Do(context.Background(), Request{Path: "/v1/completions", Body: []byte(`{}`)})
	if r.ErrorClass != jobs.ErrConnect {
		t.Fatalf("refused: %+v", r)
	}
}

func TestNonStreamingAndCompletions(t *testing.T) {
	t.Parallel()
	r := do(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"x","choices":[{"message":{"content":"whole answer"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":2}}`))
	}), nil)
	if r.Status != jobs.StatusOK || r.Output != "whole answer" || r.CompletionTokens != 2 || r.TTFT != r.E2E || r.TTFT <= 0 {
		t.Fatalf("non-streaming: %+v", r)
	}
	r = do(t, sse(step{0, data(`{"choices":[{"text":"Once"}]}`)}, step{0, data(`{"choices":[{"text":" upon","finish_reason":"length"}]}`)},
		step{0, data("[DONE]")}), nil)
	if r.Output != "Once upon" || r.ContentEvents != 2 {
		t.Fatalf("completions: %+v", r)
	}
}

func TestTLSWithCAFile(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(sse(step{0, data(content("s"))}, step{0, data("[DONE]")}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	untrusted := (&Client{BaseURL: srv.URL, HTTP: NewHTTPClient(nil)}).Do(context.Background(), Request{Path: "/v1/completions", Body: []byte(`{}`)})
	if untrusted.Status != jobs.StatusError {
		t.Fatalf("an unknown certificate was accepted: %+v", untrusted)
	}
	conf, err := TLSConfig(ca, false)
	if err != nil {
		t.Fatal(err)
	}
	r := (&Client{BaseURL: srv.URL, HTTP: NewHTTPClient(conf), APIKey: "k"}).Do(context.Background(), Request{Path: "/v1/completions", Body: []byte(`{}`)})
	if r.Status != jobs.StatusOK || r.Output != "s" {
		t.Fatalf("with the CA: %+v", r)
	}
}

func TestBuildRequest(t *testing.T) {
	temp, seed := 0.0, int64(7)
	req, err := BuildRequest([]byte(`{"method":"POST","url":"/v1/completions","body":{"model":"old","prompt":"p","max_tokens":99,"logprobs":1}}`),
		"new", jobs.Sampling{Temperature: &temp, Seed: &seed, MaxTokens: 16, Stop: []string{"\n"}})
	if err != nil || req.Path != "/v1/completions" {
		t.Fatal(req, err)
	}
	var b map[string]any
	_ = json.Unmarshal(req.Body, &b)
	if b["model"] != "new" || b["max_tokens"] != 16.0 || b["temperature"] != 0.0 || b["seed"] != 7.0 || b["stream"] != true ||
		b["logprobs"] != 1.0 || fmt.Sprint(b["stop"]) != "[\n]" || fmt.Sprint(b["stream_options"]) != "map[include_usage:true]" {
		t.Fatalf("body %v", b)
	}
	for _, bad := range []string{`{`, `{"url":"/v1/embeddings","body":{}}`, `{"url":"/v1/completions"}`} {
		if _, err := BuildRequest([]byte(bad), "m", jobs.Sampling{}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// The stream parser reads what runtimes send: it must never panic or hang,
// whatever the bytes.
func FuzzStream(f *testing.F) {
	f.Add([]byte(data(roleChunk) + data(content("x")) + data("[DONE]")))
	f.Add([]byte("data:{\"choices\":[{\"text\":\"a\"}]}\r\n\r\n: keep-alive\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"error\":\"x\"}\n\n"))
	f.Add([]byte("event: x\ndata: {\ndata: }\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := measure{send: time.Now()}
		r := m.stream(context.Background(), bytes.NewReader(b), nil, 0)
		if r.Status != jobs.StatusOK && r.Status != jobs.StatusError {
			t.Fatalf("status %q", r.Status)
		}
		if r.Status == jobs.StatusError && r.ErrorClass == "" {
			t.Fatalf("error without class: %+v", r)
		}
		if strings.Contains(r.Output, "\x00") && !bytes.Contains(b, []byte("\\u0000")) && !bytes.Contains(b, []byte{0}) {
			t.Fatalf("output invented a NUL")
		}
	})
}
