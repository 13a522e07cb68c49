package openai

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// Client sends requests to one OpenAI-compatible server and measures
// them. It is safe for concurrent use by the load generator's workers;
// its fields must not change while requests are in flight.
type Client struct {
	// BaseURL is the server's root, such as http://127.0.0.1:8000. A
	// trailing "/" or "/v1" is accepted too (OpenAI SDKs are configured
	// with the /v1 form), so a request path that starts with /v1/ is
	// never doubled.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer …" when set.
	APIKey string
	// HTTP sends the requests; nil means http.DefaultClient. Share one
	// (from NewHTTPClient) between the clients of a run so connections
	// are reused and TTFT does not include a fresh handshake.
	HTTP *http.Client
	// StallTimeout ends a request after this long without a line from the
	// server (keep-alive comments count as life); the wait for the first
	// event counts too, and so does the whole wait for a non-streaming
	// answer. Zero means no limit.
	StallTimeout time.Duration
	// RequestTimeout ends a request that takes longer than this in all.
	// Zero means no limit.
	RequestTimeout time.Duration
	// DrainWait bounds the read of what follows [DONE] (see drainWait);
	// zero means drainWait.
	DrainWait time.Duration
	// Dialect is the API spoken: jobs.DialectOpenAI ("" too) or
	// jobs.DialectAnthropic, the Messages API (anthropic.go), to which
	// every request is translated and whose key goes in x-api-key.
	Dialect string
}

// Option configures a Client made by New.
type Option func(*Client) error

// New makes a Client for the server at baseURL, checking the URL so that
// a typo is reported when agentd starts rather than as a connect error on
// every request. Options apply in order; without WithHTTPClient or
// WithTLS the client uses NewHTTPClient(nil).
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	c := &Client{BaseURL: baseURL, APIKey: apiKey}
	if _, err := c.endpoint(PathChat); err != nil {
		return nil, err
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if c.HTTP == nil {
		c.HTTP = NewHTTPClient(nil)
	}
	return c, nil
}

// WithHTTPClient sends through hc, typically one shared by many Clients.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return errors.New("WithHTTPClient: nil *http.Client")
		}
		c.HTTP = hc
		return nil
	}
}

// WithTLS sends through a new NewHTTPClient that trusts caFile (PEM) and
// the system's CAs, or skips verification when insecure (see TLSConfig).
func WithTLS(caFile string, insecure bool) Option {
	return func(c *Client) error {
		conf, err := TLSConfig(caFile, insecure)
		if err != nil {
			return err
		}
		c.HTTP = NewHTTPClient(conf)
		return nil
	}
}

// WithStallTimeout sets Client.StallTimeout.
func WithStallTimeout(d time.Duration) Option {
	return func(c *Client) error {
		if d < 0 {
			return fmt.Errorf("stall timeout %v is negative", d)
		}
		c.StallTimeout = d
		return nil
	}
}

// WithRequestTimeout sets Client.RequestTimeout.
func WithRequestTimeout(d time.Duration) Option {
	return func(c *Client) error {
		if d < 0 {
			return fmt.Errorf("request timeout %v is negative", d)
		}
		c.RequestTimeout = d
		return nil
	}
}

// TLSConfig is the TLS setup for https endpoints: caFile's certificates
// (PEM) are trusted besides the system's, for runtimes behind a private
// CA; insecure skips verification altogether, for testing only. Both
// empty gives Go's default verification.
func TLSConfig(caFile string, insecure bool) (*tls.Config, error) {
	c := &tls.Config{InsecureSkipVerify: insecure} //nolint:gosec // an explicit, documented testing switch
	if caFile == "" {
		return c, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("TLS CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("TLS CA file %s: no PEM certificate in it", caFile)
	}
	c.RootCAs = pool
	return c, nil
}

// NewHTTPClient is an HTTP client fit for benchmarking: enough idle
// connections per host for high concurrency (so TTFT does not include
// connection setup), no overall timeout (each request has its own), and
// no transparent gzip (a compressing proxy would hold back stream events).
// tlsConf may be nil.
func NewHTTPClient(tlsConf *tls.Config) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost, t.MaxConnsPerHost = 4096, 4096, 0
	t.DisableCompression = true
	t.TLSClientConfig = tlsConf
	return &http.Client{Transport: t}
}

// endpoint joins BaseURL and path, dropping BaseURL's trailing "/" and,
// when path starts with /v1/, a trailing "/v1".
func (c *Client) endpoint(path string) (string, error) {
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("base URL %q: want http://host:port or https://host[:port][/prefix]", c.BaseURL)
	}
	base := strings.TrimRight(c.BaseURL, "/")
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	if strings.HasPrefix(path, "/v1/") {
		base = strings.TrimSuffix(base, "/v1")
	}
	return base + path, nil
}

// Reasons a request's context is cancelled by the client itself.
var (
	errStall   = errors.New("stream stalled")
	errTimeout = errors.New("request timed out")
	errDrained = errors.New("done reading")
)

// After [DONE] the rest of the body (normally just the end of the chunked
// encoding) is read so the connection can be reused, but never for long:
// a server that keeps the stream open after [DONE] costs at most drainWait.
const (
	drainWait  = 100 * time.Millisecond
	drainLimit = 64 << 10
)

// Do sends r and measures it (docs/metrics.md#definitions; the rules
// are on computeTimings, tokensPerEvent, estimateTokens and measure.take).
// The clock starts just before the request is handed to the HTTP client,
// so TTFT and E2E include connection setup when there is no idle
// connection to reuse. A failed request comes back with Status
// jobs.StatusError, an ErrorClass and whatever had arrived; Do never
// returns without a Status. The caller fills Idx, CustomID, StartOffset
// and Phase.
func (c *Client) Do(ctx context.Context, r Request) jobs.Result {
	if r.Path == "" || len(r.Body) == 0 {
		return jobs.Result{Status: jobs.StatusError, ErrorClass: jobs.ErrInvalidReq, Error: "empty request: build it with BuildRequest"}
	}
	anthropic := c.Dialect == jobs.DialectAnthropic
	if anthropic {
		var err error
		if r, err = toMessages(r); err != nil {
			return jobs.Result{Status: jobs.StatusError, ErrorClass: jobs.ErrInvalidReq, Error: "translating to the Messages API: " + err.Error()}
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if c.RequestTimeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, c.RequestTimeout, errTimeout)
		defer stop()
	}
	req, err := c.newHTTPRequest(ctx, r, anthropic)
	if err != nil {
		return jobs.Result{Status: jobs.StatusError, ErrorClass: jobs.ErrConnect, Error: err.Error()}
	}
	var onLine func()
	if c.StallTimeout > 0 {
		stall := time.AfterFunc(c.StallTimeout, func() { cancel(errStall) })
		defer stall.Stop()
		onLine = func() { stall.Reset(c.StallTimeout) }
	}

	m := &measure{now: time.Now}
	m.send = time.Now()
	resp, err := c.httpClient().Do(req)
	if err != nil {
		m.end = time.Now()
		return m.result(c.transportFailure(ctx, err))
	}
	defer resp.Body.Close()
	m.status = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return m.result(m.httpFailure(resp, anthropic))
	}
	// A small buffer: events are short, the reader joins longer lines
	// across refills, and a buffer is allocated (and zeroed) per request.
	// isEventStream peeks at most 4 KiB.
	br := bufio.NewReaderSize(resp.Body, 4<<10)
	class, msg := m.readBody(br, resp.Header.Get("Content-Type"), anthropic, onLine)
	if class == "" && m.sawDone {
		drain(br, cancel, cmp.Or(c.DrainWait, drainWait))
	}
	if cause := context.Cause(ctx); cause != nil && class != "" && class != jobs.ErrMalformed && class != jobs.ErrRuntime {
		class, msg = c.cancelled(cause) // the read failed because the context ended
	}
	if m.id == "" {
		m.id = cmp.Or(resp.Header.Get("X-Request-Id"), resp.Header.Get("Request-Id"))
	}
	return m.result(class, msg)
}

// newHTTPRequest is r as a POST to the runtime, with the content
// negotiation and the key in the header the dialect reads.
func (c *Client) newHTTPRequest(ctx context.Context, r Request, anthropic bool) (*http.Request, error) {
	target, err := c.endpoint(r.Path)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(r.Body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream, application/json")
	switch {
	case anthropic:
		req.Header.Set("anthropic-version", AnthropicVersion)
		if c.APIKey != "" {
			req.Header.Set("x-api-key", c.APIKey)
		}
	case c.APIKey != "":
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	return req, nil
}

// httpClient is c.HTTP, or the default client when none is set.
func (c *Client) httpClient() *http.Client {
	if c.HTTP == nil {
		return http.DefaultClient
	}
	return c.HTTP
}

// httpFailure classifies a response outside 2xx and says why, with the
// start of its body and any Retry-After; the request ends when that
// start has been read.
func (m *measure) httpFailure(resp *http.Response, anthropic bool) (class, msg string) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	m.end = time.Now()
	class = jobs.ErrHTTP4xx
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		class = jobs.ErrHTTP429
	case resp.StatusCode >= 500:
		class = jobs.ErrHTTP5xx
	}
	msg = fmt.Sprintf("HTTP %d %s", resp.StatusCode, cmp.Or(http.StatusText(resp.StatusCode), statusText(resp.StatusCode)))
	if len(bytes.TrimSpace(body)) > 0 {
		msg += ": " + httpErrorMessage(body, anthropic)
	}
	if ra := retryAfter(resp.Header.Get("Retry-After")); ra != "" {
		msg += " (retry after " + ra + ")"
	}
	return class, msg
}

// readBody reads a 2xx body as an event stream or as one JSON document,
// in the dialect's shape, whichever the response turns out to be.
func (m *measure) readBody(br *bufio.Reader, contentType string, anthropic bool, onLine func()) (class, msg string) {
	switch stream := isEventStream(contentType, br); {
	case stream && anthropic:
		return m.messages(newSSEReader(br, time.Now, onLine))
	case stream:
		return m.stream(newSSEReader(br, time.Now, onLine))
	case anthropic:
		return m.wholeMessage(br)
	default:
		return m.whole(br)
	}
}

// statusText names the statuses net/http does not know: Anthropic's 529.
func statusText(code int) string {
	if code == 529 {
		return "Overloaded"
	}
	return "Error"
}

// httpErrorMessage is an error body's message; the Messages API's names
// its error type too ({"type":"error","error":{"type":…,"message":…}}).
func httpErrorMessage(body []byte, anthropic bool) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if anthropic && json.Unmarshal(body, &e) == nil && isSet(e.Error) {
		return messagesErrorText(e.Error)
	}
	return errorMessage(body)
}

// retryAfter is a Retry-After header fit for an error message: seconds
// or an HTTP date, as sent, when it is one; "" otherwise.
func retryAfter(v string) string {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 && n <= 86400*7 {
		return strconv.FormatFloat(n, 'f', -1, 64) + "s"
	}
	if _, err := http.ParseTime(v); err == nil {
		return v
	}
	return ""
}

// drain reads what follows [DONE], briefly (see drainWait).
func drain(r io.Reader, cancel context.CancelCauseFunc, wait time.Duration) {
	t := time.AfterFunc(wait, func() { cancel(errDrained) })
	defer t.Stop()
	_, _ = io.CopyN(io.Discard, r, drainLimit)
}

// transportFailure classes an error from sending the request or waiting
// for the response headers.
func (c *Client) transportFailure(ctx context.Context, err error) (class, msg string) {
	if cause := context.Cause(ctx); cause != nil {
		return c.cancelled(cause)
	}
	var (
		op      *net.OpError
		dns     *net.DNSError
		verify  *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		record  tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &verify), errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &invalid):
		return jobs.ErrConnect, "TLS: the server's certificate is not trusted (give its CA file, or skip verification for testing): " + err.Error()
	case errors.As(err, &record), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		// net/http reports the second case as a plain error, without a type.
		return jobs.ErrConnect, "TLS: the server does not speak TLS (is the base URL http rather than https?): " + err.Error()
	case errors.As(err, &dns), errors.As(err, &op) && op.Op == "dial":
		return jobs.ErrConnect, "cannot connect to the runtime: " + err.Error()
	}
	return jobs.ErrDisconnect, "the connection ended before a response: " + err.Error()
}

// readFailure classes an error reading the response body. When the
// request's context was cancelled, Do replaces the class with the reason
// (stall, timeout, cancelled).
func readFailure(err error) (class, msg string) {
	return jobs.ErrDisconnect, "the connection broke while reading the response: " + err.Error()
}

// cancelled classes a request ended by its context: the stall timer, the
// request timeout, or the caller (cancelled run, stopping agent).
func (c *Client) cancelled(cause error) (class, msg string) {
	switch {
	case errors.Is(cause, errStall):
		return jobs.ErrStall, fmt.Sprintf("no data from the runtime for %v (the stall timeout)", c.StallTimeout)
	case errors.Is(cause, errTimeout):
		return jobs.ErrTimeout, fmt.Sprintf("the request took longer than %v (the request timeout)", c.RequestTimeout)
	}
	return jobs.ErrCancelled, "cancelled while in flight: " + cause.Error()
}
