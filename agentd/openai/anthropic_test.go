package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// event is one Messages API server-sent event.
func event(kind, data string) string { return "event: " + kind + "\ndata: " + data + "\n\n" }

const (
	msgStart = `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-3-opus","stop_reason":null,"usage":{"input_tokens":12,"cache_read_input_tokens":3,"output_tokens":1}}}`
	blkStart = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	blkStop  = `{"type":"content_block_stop","index":0}`
	msgStop  = `{"type":"message_stop"}`
)

func textDelta(s string) string {
	b, _ := json.Marshal(s)
	return fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%s}}`, b)
}

func msgDelta(stop string, out int) string {
	return fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, out)
}

func serveMessages(t *testing.T, h http.Handler) jobs.Result {
	t.Helper()
	return serve(t, h, &Client{Dialect: jobs.DialectAnthropic, StallTimeout: 5 * time.Second})
}

func TestMessagesStreamTimings(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	r := serveMessages(t, sseHandler(
		step{0, event("message_start", msgStart)},
		step{0, event("content_block_start", blkStart)},
		step{0, event("ping", `{"type": "ping"}`)}, // carries nothing: TTFT does not start here
		step{100 * ms, event("content_block_delta", textDelta("Hello"))},
		step{60 * ms, event("content_block_delta", textDelta(" big world"))}, // two tokens
		step{40 * ms, event("content_block_delta", textDelta("!"))},
		step{0, event("content_block_stop", blkStop)},
		step{0, event("message_delta", msgDelta("end_turn", 4))},
		step{0, event("message_stop", msgStop)},
	))
	if r.Status != jobs.StatusOK || r.Output != "Hello big world!" || r.CompletionTokens != 4 || r.PromptTokens != 15 ||
		r.TokensEstimated || r.FinishReason != "end_turn" || r.ContentEvents != 3 || r.RequestID != "msg_01" {
		t.Fatalf("result %+v", r)
	}
	// The bounds below cannot fail by the machine being slow: an event is
	// never read before it is sent (100 ms, then 160 and 200 ms).
	if r.TTFT < 100*ms || r.E2E < 200*ms || r.TPOT != (r.E2E-r.TTFT)/3 {
		t.Errorf("TTFT %v (≥ 100ms), E2E %v (≥ 200ms), TPOT %v (want (E2E−TTFT)/3)", r.TTFT, r.E2E, r.TPOT)
	}
	// Token-level ITL: the gap before " big world" is shared by its two
	// tokens, the last gap is the last token's.
	if len(r.ITLGapsMicros) != 2 || len(r.ITLTokens) != 2 || r.ITLTokens[0] != 2 || r.ITLTokens[1] != 1 ||
		(time.Duration(r.ITLGapsMicros[0]+r.ITLGapsMicros[1])*time.Microsecond-(r.E2E-r.TTFT)).Abs() > 2*time.Microsecond {
		t.Errorf("ITL gaps %v µs over tokens %v", r.ITLGapsMicros, r.ITLTokens)
	}
}

// Thinking and tool-call JSON are generated tokens (TTFT starts at the
// first) but not the answer.
func TestMessagesThinkingTimesButIsNotOutput(t *testing.T) {
	t.Parallel()
	r := serveMessages(t, sseHandler(
		step{0, event("message_start", msgStart)},
		step{50 * time.Millisecond, event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`)},
		step{0, event("content_block_delta", textDelta("42"))},
		step{0, event("message_delta", msgDelta("max_tokens", 2))},
		step{0, event("message_stop", msgStop)},
	))
	if r.Status != jobs.StatusOK || r.Output != "42" || r.ContentEvents != 2 || r.FinishReason != "max_tokens" || r.CompletionTokens != 2 {
		t.Fatalf("result %+v", r)
	}
	within(t, "TTFT", r.TTFT, 50*time.Millisecond)
}

func TestMessagesErrors(t *testing.T) {
	t.Parallel()
	status := func(code int, retry, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if retry != "" {
				w.Header().Set("Retry-After", retry)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_, _ = io.WriteString(w, body)
		})
	}
	for _, c := range []struct {
		name, class, output string
		h                   http.Handler
		httpStatus          int
		errContains         string
	}{
		{"429 with retry-after", jobs.ErrHTTP429, "", status(429, "7", `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`),
			429, "HTTP 429 Too Many Requests: rate_limit_error: Number of request tokens has exceeded your per-minute rate limit (retry after 7s)"},
		{"529 overloaded", jobs.ErrHTTP5xx, "", status(529, "", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			529, "HTTP 529 Overloaded: overloaded_error: Overloaded"},
		{"400 invalid request", jobs.ErrHTTP4xx, "", status(400, "", `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: field required"}}`),
			400, "invalid_request_error: max_tokens: field required"},
		{"a retry-after that is not one is left out", jobs.ErrHTTP429, "", status(429, "soon; rm -rf", `{"type":"error","error":{"type":"rate_limit_error","message":"x"}}`),
			429, "rate_limit_error: x"},
		{"error event mid-stream", jobs.ErrRuntime, "par", sseHandler(step{0, event("message_start", msgStart)},
			step{0, event("content_block_delta", textDelta("par"))},
			step{0, event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}),
			200, "the runtime reported an error: overloaded_error: Overloaded"},
		{"malformed event", jobs.ErrMalformed, "ok", sseHandler(step{0, event("content_block_delta", textDelta("ok"))}, step{0, event("content_block_delta", "{not json")}),
			200, "not a JSON event"},
		{"cut before message_stop", jobs.ErrDisconnect, "partial", sseHandler(step{0, event("message_start", msgStart)},
			step{0, event("content_block_delta", textDelta("partial"))}),
			200, "no stop_reason and no message_stop"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := serveMessages(t, c.h)
			if r.Status != jobs.StatusError || r.ErrorClass != c.class || r.Output != c.output || r.HTTPStatus != c.httpStatus ||
				!strings.Contains(r.Error, c.errContains) {
				t.Fatalf("result %+v\nwant class %s output %q status %d error containing %q", r, c.class, c.output, c.httpStatus, c.errContains)
			}
			if strings.Contains(r.Error, "rm -rf") {
				t.Errorf("an unchecked header in the message: %s", r.Error)
			}
		})
	}
}

func TestMessagesWhole(t *testing.T) {
	t.Parallel()
	r := serveMessages(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		readBody(r)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"msg_9","type":"message","role":"assistant","content":[{"type":"text","text":"Paris"}],"stop_reason":"end_turn","usage":{"input_tokens":9,"output_tokens":1}}`)
	}))
	if r.Status != jobs.StatusOK || r.Output != "Paris" || r.PromptTokens != 9 || r.CompletionTokens != 1 || r.TTFT != r.E2E || r.RequestID != "msg_9" {
		t.Fatalf("result %+v", r)
	}
}

// What goes on the wire: the Messages API's path, headers and body.
func TestMessagesRequest(t *testing.T) {
	t.Parallel()
	var got struct {
		path, key, version, auth string
		body                     map[string]any
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.path, got.key, got.version, got.auth = r.URL.Path, r.Header.Get("x-api-key"), r.Header.Get("anthropic-version"), r.Header.Get("Authorization")
		_ = json.NewDecoder(r.Body).Decode(&got.body)
		sseHandler(step{0, event("message_delta", msgDelta("end_turn", 1))}, step{0, event("message_stop", msgStop)})(w, r)
	}))
	t.Cleanup(srv.Close)
	item := `{"url":"/v1/chat/completions","body":{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"Capital of France?"}]}],"seed":3,"stop":"\n\n"}}`
	temp := 0.0
	req, err := BuildRequest(json.RawMessage(item), "claude-3-opus", jobs.Sampling{MaxTokens: 64, Temperature: &temp})
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{BaseURL: srv.URL, APIKey: "sk-ant-test", Dialect: jobs.DialectAnthropic, HTTP: NewHTTPClient(nil)}
	if r := c.Do(context.Background(), req); r.Status != jobs.StatusOK {
		t.Fatalf("result %+v", r)
	}
	b, _ := json.Marshal(got.body)
	want := `{"max_tokens":64,"messages":[{"content":[{"text":"Capital of France?","type":"text"}],"role":"user"}],"model":"claude-3-opus","stop_sequences":["\n\n"],"stream":true,"system":"Be brief.","temperature":0}`
	if got.path != "/v1/messages" || got.key != "sk-ant-test" || got.version != AnthropicVersion || got.auth != "" || string(b) != want {
		t.Fatalf("sent %s %q %q %q\n%s\nwant %s", got.path, got.key, got.version, got.auth, b, want)
	}
}

func TestToMessagesRefuses(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"model":"m","messages":[{"role":"tool","content":"x"}]}`:                                            `role "tool"`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`: `a "image_url" part`,
		`{"model":"m","messages":[{"role":"system","content":"only a system prompt"}]}`:                       "at least one user or assistant message",
		`{"model":"m","messages":[{"role":"user","content":"x"}],"stop":[1]}`:                                 "stop: a string or a list",
	} {
		if _, err := toMessages(Request{Path: PathChat, Body: []byte(body)}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want …%s…, got %v", body, want, err)
		}
	}
	r, err := toMessages(Request{Path: PathCompletion, Body: []byte(`{"model":"m","prompt":"Once upon","max_tokens":5}`)})
	if err != nil || !strings.Contains(string(r.Body), `"messages":[{"role":"user","content":"Once upon"}]`) || !strings.Contains(string(r.Body), `"max_tokens":5`) {
		t.Fatalf("completion: %s %v", r.Body, err)
	}
}

// FuzzMessagesStream: any bytes as a Messages API stream give a result
// with a status and never panic.
func FuzzMessagesStream(f *testing.F) {
	f.Add([]byte(event("message_start", msgStart) + event("content_block_delta", textDelta("a")) + event("message_delta", msgDelta("end_turn", 1)) + event("message_stop", msgStop)))
	f.Add([]byte(event("error", `{"type":"error","error":{"type":"x","message":"y"}}`)))
	f.Add([]byte("data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":-5e300}}\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := &measure{now: time.Now, send: time.Now()}
		class, _ := m.messages(newSSEReader(bytes.NewReader(b), time.Now, nil))
		r := m.result(class, "x")
		if r.Status == "" || r.CompletionTokens < 0 || r.PromptTokens < 0 {
			t.Fatalf("result %+v", r)
		}
	})
}
