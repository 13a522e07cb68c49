package sim_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/agentd/openai"
	"github.com/ruckus/ruckus/agentd/sim"
	"github.com/ruckus/ruckus/jobs"
)

func anthropicServer(t *testing.T, tweak func(*sim.Config)) (*sim.Server, *openai.Client) {
	t.Helper()
	s, ts := newServer(t, func(c *sim.Config) {
		c.Dialect = sim.DialectAnthropic
		if tweak != nil {
			tweak(c)
		}
	})
	return s, &openai.Client{BaseURL: ts.URL, Dialect: jobs.DialectAnthropic, HTTP: ts.Client()}
}

func claudeRequest(t *testing.T, maxTokens int) openai.Request {
	t.Helper()
	req, err := openai.BuildRequest(json.RawMessage(`{"url":"/v1/chat/completions","body":{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"What is two plus two?"}]}}`),
		"claude-3-opus", jobs.Sampling{MaxTokens: maxTokens})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// The Messages API, streamed, measured by the client in its dialect.
func TestMessagesStreamMeasured(t *testing.T) {
	t.Parallel()
	s, c := anthropicServer(t, nil)
	r := c.Do(context.Background(), claudeRequest(t, 100))
	if r.Status != jobs.StatusOK || r.CompletionTokens != 12 || r.TokensEstimated || r.ContentEvents != 12 || r.FinishReason != "end_turn" ||
		r.PromptTokens < 1 || !strings.HasPrefix(r.RequestID, "msg_sim_") || r.Output == "" || r.TTFT <= 0 || r.ITLP50 <= 0 {
		t.Fatalf("result %+v", r)
	}
	if st := s.Stats(); st.Completed != 1 || st.TokensSent != 12 {
		t.Fatalf("stats %+v", st)
	}
	r = c.Do(context.Background(), claudeRequest(t, 5))
	if r.Status != jobs.StatusOK || r.CompletionTokens != 5 || r.FinishReason != "max_tokens" {
		t.Fatalf("capped: %+v", r)
	}
}

func TestMessagesFaults(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		fault func(*sim.Config)
		class string
		msg   string
	}{
		{"429", func(c *sim.Config) { c.HTTP429 = 1 }, jobs.ErrHTTP429, "rate_limit_error: simulated rate limit (fault injected by the simulated runtime) (retry after 1s)"},
		{"529", func(c *sim.Config) { c.HTTP5xx = 1 }, jobs.ErrHTTP5xx, "HTTP 529 Overloaded: overloaded_error"},
		{"malformed", func(c *sim.Config) { c.Malformed = 1 }, jobs.ErrMalformed, "not a JSON event"},
		{"disconnect", func(c *sim.Config) { c.Disconnect = 1 }, jobs.ErrDisconnect, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, cl := anthropicServer(t, c.fault)
			r := cl.Do(context.Background(), claudeRequest(t, 100))
			if r.Status != jobs.StatusError || r.ErrorClass != c.class || !strings.Contains(r.Error, c.msg) {
				t.Fatalf("result %+v", r)
			}
		})
	}
}

// The Messages API's own refusals, in its error shape; the OpenAI routes
// are not served in this dialect.
func TestMessagesRefusals(t *testing.T) {
	t.Parallel()
	_, ts := newServer(t, func(c *sim.Config) { c.Dialect = sim.DialectAnthropic })
	for _, c := range []struct{ path, body, want string }{
		{"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: field required"}}`},
		{"/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"hi"}]}`, `messages.0.role: user or assistant`},
		{"/v1/chat/completions", body(chatPath, ""), `"not_found_error"`},
	} {
		resp := post(t, context.Background(), ts, c.path, c.body)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 4 || !strings.Contains(string(b), c.want) {
			t.Errorf("%s %s: %d %s", c.path, c.body, resp.StatusCode, b)
		}
	}
	whole := post(t, context.Background(), ts, "/v1/messages", `{"model":"m","max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`)
	var msg struct {
		Type       string `json:"type"`
		StopReason string `json:"stop_reason"`
		Usage      struct {
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(whole.Body).Decode(&msg); err != nil || whole.StatusCode != http.StatusOK || msg.Type != "message" ||
		msg.StopReason != "max_tokens" || msg.Usage.OutputTokens != 3 {
		t.Fatalf("whole message: %d %+v %v", whole.StatusCode, msg, err)
	}
}
