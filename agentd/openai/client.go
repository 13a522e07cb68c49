package openai

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// Client sends requests to one OpenAI-compatible server.
type Client struct {
	// BaseURL is the server's root, such as http://127.0.0.1:8000 (a
	// trailing /v1 is accepted too).
	BaseURL string
	// APIKey is sent as a Bearer token when set.
	APIKey string
	HTTP   *http.Client
	// StallTimeout ends a request whose stream stays silent this long;
	// RequestTimeout ends any request that takes longer.
	StallTimeout   time.Duration
	RequestTimeout time.Duration
}

// maxLine bounds one SSE line; a longer one is not the protocol.
const maxLine = 16 << 20

// TLSConfig trusts caFile's certificates (PEM) besides the system's, or
// skips verification when insecure.
func TLSConfig(caFile string, insecure bool) (*tls.Config, error) {
	c := &tls.Config{InsecureSkipVerify: insecure} //nolint:gosec // an explicit, documented testing switch
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", caFile)
		}
		c.RootCAs = pool
	}
	return c, nil
}

// NewHTTPClient is an HTTP client for benchmarking: enough idle
// connections per host for high concurrency, no overall timeout (each
// request has its own).
func NewHTTPClient(tlsConf *tls.Config) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost, t.MaxConnsPerHost = 4096, 4096, 0
	t.TLSClientConfig = tlsConf
	return &http.Client{Transport: t}
}

func (c *Client) url(path string) string {
	base := strings.TrimRight(c.BaseURL, "/")
	base = strings.TrimSuffix(base, "/v1")
	return base + path
}

var (
	errStall   = errors.New("stream stalled")
	errTimeout = errors.New("request timed out")
)

// chunk is the part of a streamed (or whole) response Ruckus reads.
type chunk struct {
	ID      string `json:"id"`
	Choices []struct {
		Delta *struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"delta"`
		Message *struct {
			Content string `json:"content"`
		} `json:"message"`
		Text         string  `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// Do sends r and measures it. The result's Idx, CustomID, StartOffset and
// Phase are the caller's to fill.
func (c *Client) Do(ctx context.Context, r Request) jobs.Result {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if c.RequestTimeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, c.RequestTimeout, errTimeout)
		defer stop()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url(r.Path), bytes.NewReader(r.Body))
	if err != nil {
		return failed(jobs.ErrInvalidReq, err.Error())
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	var stall *time.Timer
	if c.StallTimeout > 0 {
		stall = time.AfterFunc(c.StallTimeout, func() { cancel(errStall) })
		defer stall.Stop()
	}
	m := measure{send: time.Now()}
	resp, err := hc.Do(req)
	if err != nil {
		return m.fail(ctx, classifyTransport(ctx, err), err.Error())
	}
	defer resp.Body.Close()
	m.status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		class := jobs.ErrHTTP4xx
		switch {
		case resp.StatusCode == http.StatusTooManyRequests:
			class = jobs.ErrHTTP429
		case resp.StatusCode >= 500:
			class = jobs.ErrHTTP5xx
		}
		return m.fail(ctx, class, fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body))))
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return m.whole(ctx, resp.Body)
	}
	return m.stream(ctx, resp.Body, stall, c.StallTimeout)
}

func classifyTransport(ctx context.Context, err error) string {
	if cause := context.Cause(ctx); cause != nil {
		return causeClass(cause)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return jobs.ErrConnect
	}
	return jobs.ErrDisconnect
}

func causeClass(cause error) string {
	switch {
	case errors.Is(cause, errStall):
		return jobs.ErrStall
	case errors.Is(cause, errTimeout):
		return jobs.ErrTimeout
	}
	return jobs.ErrCancelled
}

func failed(class, msg string) jobs.Result {
	return jobs.Result{Status: jobs.StatusError, ErrorClass: class, Error: msg}
}

// measure collects one request's timings as it is read.
type measure struct {
	send         time.Time
	status       int
	events       []contentEvent
	end          time.Time
	output       strings.Builder
	id           string
	finish       string
	prompt       int
	completion   int
	haveUsage    bool
	sawDone      bool
	runtimeError string
}

// fail returns the error result, keeping what had arrived.
func (m *measure) fail(ctx context.Context, class, msg string) jobs.Result {
	if m.end.IsZero() {
		m.end = time.Now()
	}
	r := m.result()
	r.Status, r.ErrorClass, r.Error = jobs.StatusError, class, msg
	_ = ctx
	return r
}

func (m *measure) result() jobs.Result {
	r := jobs.Result{Status: jobs.StatusOK, Output: m.output.String(), FinishReason: m.finish, HTTPStatus: m.status,
		RequestID: m.id, PromptTokens: m.prompt}
	tokens := m.completion
	if !m.haveUsage {
		tokens = estimateTokens(m.events)
		r.TokensEstimated = true
	}
	r.CompletionTokens = tokens
	met := compute(m.send, m.events, m.end, tokens)
	r.TTFT, r.E2E, r.TPOT = met.TTFT, met.E2E, met.TPOT
	r.ITLMean, r.ITLP50, r.ITLP99, r.ITLMax = met.ITLMean, met.ITLP50, met.ITLP99, met.ITLMax
	r.ContentEvents = len(m.events)
	return r
}

// take applies one decoded chunk received at t.
func (m *measure) take(c chunk, t time.Time) {
	if c.ID != "" && m.id == "" {
		m.id = c.ID
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		m.runtimeError = errorMessage(c.Error)
	}
	content, generated := "", false
	for _, ch := range c.Choices {
		if ch.Delta != nil {
			content += ch.Delta.Content
			generated = generated || ch.Delta.Content != "" || ch.Delta.ReasoningContent != ""
		}
		if ch.Message != nil {
			content += ch.Message.Content
			generated = generated || ch.Message.Content != ""
		}
		content += ch.Text
		generated = generated || ch.Text != ""
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			m.finish = *ch.FinishReason
		}
	}
	if generated {
		m.output.WriteString(content)
		m.events = append(m.events, contentEvent{at: t, chars: max(len(content), 1)})
	}
	if c.Usage != nil {
		m.haveUsage = true
		m.prompt, m.completion = c.Usage.PromptTokens, c.Usage.CompletionTokens
	}
}

func errorMessage(raw json.RawMessage) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		return e.Message
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// whole reads a non-streaming response: TTFT is the whole answer's time.
func (m *measure) whole(ctx context.Context, body io.Reader) jobs.Result {
	b, err := io.ReadAll(io.LimitReader(body, maxLine))
	t := time.Now()
	m.end = t
	if err != nil {
		return m.fail(ctx, readClass(ctx), err.Error())
	}
	var c chunk
	if err := json.Unmarshal(b, &c); err != nil {
		return m.fail(ctx, jobs.ErrMalformed, "response is not JSON: "+snippet(b))
	}
	m.take(c, t)
	if m.runtimeError != "" {
		return m.fail(ctx, jobs.ErrRuntime, m.runtimeError)
	}
	return m.result()
}

func readClass(ctx context.Context) string {
	if cause := context.Cause(ctx); cause != nil {
		return causeClass(cause)
	}
	return jobs.ErrDisconnect
}

func snippet(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// stream reads server-sent events until [DONE] or the end of the body.
func (m *measure) stream(ctx context.Context, body io.Reader, stall *time.Timer, stallAfter time.Duration) jobs.Result {
	rd := bufio.NewReaderSize(body, 64<<10)
	var data []byte
	for {
		line, err := readLine(rd)
		t := time.Now()
		if stall != nil && err == nil {
			stall.Reset(stallAfter)
		}
		if err != nil {
			m.end = t
			if errors.Is(err, errLineTooLong) {
				return m.fail(ctx, jobs.ErrMalformed, err.Error())
			}
			if errors.Is(err, io.EOF) && ctx.Err() == nil {
				if len(data) > 0 { // an event without its blank line
					if r, stop := m.event(ctx, data, t); stop {
						return r
					}
				}
				if m.sawDone || m.finish != "" {
					return m.result()
				}
				return m.fail(ctx, jobs.ErrDisconnect, "the stream ended before the response finished")
			}
			return m.fail(ctx, readClass(ctx), "reading the stream: "+err.Error())
		}
		if len(line) == 0 { // blank line: dispatch the event
			if len(data) > 0 {
				if r, stop := m.event(ctx, data, t); stop {
					return r
				}
				data = data[:0]
			}
			continue
		}
		if line[0] == ':' {
			continue // comment / keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if len(data) > 0 {
			data = append(data, '\n')
		}
		data = append(data, value...)
	}
}

// event handles one event's data; stop says the result is final.
func (m *measure) event(ctx context.Context, data []byte, t time.Time) (jobs.Result, bool) {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		m.sawDone = true
		m.end = t
		if m.runtimeError != "" {
			return m.fail(ctx, jobs.ErrRuntime, m.runtimeError), true
		}
		return m.result(), true
	}
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		m.end = t
		return m.fail(ctx, jobs.ErrMalformed, "an event is not JSON: "+snippet(data)), true
	}
	m.take(c, t)
	if m.runtimeError != "" {
		m.end = t
		return m.fail(ctx, jobs.ErrRuntime, m.runtimeError), true
	}
	if len(m.events) > 0 {
		m.end = m.events[len(m.events)-1].at
	}
	return jobs.Result{}, false
}

var errLineTooLong = errors.New("an event line is longer than 16 MiB")

// readLine returns one line without its "\n" or "\r\n".
func readLine(rd *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := rd.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > maxLine {
			return nil, errLineTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				return bytes.TrimRight(line, "\r\n"), nil
			}
			return nil, err
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
}
