package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// simStream is a 16-token chat answer as agentd sim streams it: a role
// chunk, one chunk per token, the finish chunk, the usage chunk, [DONE].
func simStream(tokens int) []byte {
	var b bytes.Buffer
	head := `{"id":"cmpl-sim-7","object":"chat.completion.chunk","created":1764000000,"model":"ruckus/bench-agent","system_fingerprint":"ruckus-sim","choices":[`
	b.WriteString("data: " + head + `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n")
	for i := range tokens {
		fmt.Fprintf(&b, "data: %s{\"index\":0,\"delta\":{\"content\":\" word%d\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n", head, i)
	}
	b.WriteString("data: " + head + `{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}],"usage":null}` + "\n\n")
	fmt.Fprintf(&b, "data: %s],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", head, tokens, 9+tokens)
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// cannedStream answers every request with the same event stream, without
// a network, so a benchmark measures the client alone.
type cannedStream []byte

func (c cannedStream) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(c)), Request: r}, nil
}

// BenchmarkDo is the client's own cost per streamed request (16 tokens),
// from building the HTTP request to the result with its timings.
func BenchmarkDo(b *testing.B) {
	stream := simStream(16)
	c := &Client{BaseURL: "http://sim", HTTP: &http.Client{Transport: cannedStream(stream)},
		StallTimeout: 2 * time.Minute, RequestTimeout: 10 * time.Minute}
	req := Request{Path: PathChat, Body: []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`)}
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		r := c.Do(context.Background(), req)
		if r.Status != jobs.StatusOK || r.CompletionTokens != 16 || r.ContentEvents != 16 {
			b.Fatalf("%+v", r)
		}
	}
}
