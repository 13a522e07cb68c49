// Package sim is the simulated OpenAI-compatible runtime built into
// agentd: it streams filler words with configurable time to first token,
// inter-token latency and output length, saturates like a real server past
// its batch size, and injects faults (5xx, 429, stalls, dropped streams,
// malformed events). It is for demos, tests and load-testing Ruckus
// itself; runs on it are labelled simulated.
package sim

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is the simulated runtime's behaviour. Distributions are written
// as ParseDist reads them.
type Config struct {
	TTFT         string `yaml:"ttft"`
	ITL          string `yaml:"itl"`
	OutputTokens string `yaml:"output_tokens"`
	// TokensPerEvent is how many tokens each streamed chunk carries.
	TokensPerEvent int `yaml:"tokens_per_event"`
	// Batch is how many requests the server serves at full speed; past it,
	// TTFT and ITL stretch by in-flight/Batch.
	Batch int    `yaml:"batch"`
	Seed  uint64 `yaml:"seed"`
	// Fault probabilities per request.
	Fault5xx        float64 `yaml:"fault_5xx"`
	Fault429        float64 `yaml:"fault_429"`
	FaultStall      float64 `yaml:"fault_stall"`
	FaultDisconnect float64 `yaml:"fault_disconnect"`
	FaultMalformed  float64 `yaml:"fault_malformed"`
	// StallFor is how long a stalled stream stays silent before it ends.
	StallFor time.Duration `yaml:"stall_for"`

	ttft, itl, out Dist
}

// DefaultConfig is a small, quick model on a busy GPU: TTFT around
// 120 ms, 15 ms per token, about 120 tokens per answer.
func DefaultConfig() Config {
	return Config{TTFT: "lognormal:120ms,0.4", ITL: "normal:15ms,3ms", OutputTokens: "normal:120,40",
		TokensPerEvent: 1, Batch: 8, Seed: 1, StallFor: 30 * time.Second}
}

// RegisterFlags binds every setting to a --sim-… flag.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.TTFT, "sim-ttft", c.TTFT, "sim: time to first token distribution (const:D, uniform:D,D, normal:D,D, lognormal:MEDIAN,SIGMA, exp:MEAN)")
	fs.StringVar(&c.ITL, "sim-itl", c.ITL, "sim: inter-token latency distribution")
	fs.StringVar(&c.OutputTokens, "sim-output-tokens", c.OutputTokens, "sim: output length distribution, in tokens (capped by max_tokens)")
	fs.IntVar(&c.TokensPerEvent, "sim-tokens-per-event", c.TokensPerEvent, "sim: tokens carried by each streamed chunk")
	fs.IntVar(&c.Batch, "sim-batch", c.Batch, "sim: requests served at full speed; more slow every one down")
	fs.Uint64Var(&c.Seed, "sim-seed", c.Seed, "sim: random seed")
	fs.Float64Var(&c.Fault5xx, "sim-fault-5xx", c.Fault5xx, "sim: share of requests answered HTTP 500")
	fs.Float64Var(&c.Fault429, "sim-fault-429", c.Fault429, "sim: share of requests answered HTTP 429")
	fs.Float64Var(&c.FaultStall, "sim-fault-stall", c.FaultStall, "sim: share of streams that go silent midway")
	fs.Float64Var(&c.FaultDisconnect, "sim-fault-disconnect", c.FaultDisconnect, "sim: share of streams dropped midway")
	fs.Float64Var(&c.FaultMalformed, "sim-fault-malformed", c.FaultMalformed, "sim: share of streams with an event that is not JSON")
	fs.DurationVar(&c.StallFor, "sim-stall-for", c.StallFor, "sim: how long a stalled stream stays silent")
}

// Validate parses the distributions and checks the ranges; errors name
// the flag.
func (c *Config) Validate() error {
	var errs []error
	var err error
	if c.ttft, err = ParseDist(c.TTFT, true); err != nil {
		errs = append(errs, fmt.Errorf("--sim-ttft %w", err))
	}
	if c.itl, err = ParseDist(c.ITL, true); err != nil {
		errs = append(errs, fmt.Errorf("--sim-itl %w", err))
	}
	if c.out, err = ParseDist(c.OutputTokens, false); err != nil {
		errs = append(errs, fmt.Errorf("--sim-output-tokens %w", err))
	}
	if c.TokensPerEvent < 1 || c.TokensPerEvent > 64 {
		errs = append(errs, fmt.Errorf("--sim-tokens-per-event must be 1 to 64 (got %d)", c.TokensPerEvent))
	}
	if c.Batch < 1 {
		errs = append(errs, fmt.Errorf("--sim-batch must be at least 1 (got %d)", c.Batch))
	}
	for name, p := range map[string]float64{"5xx": c.Fault5xx, "429": c.Fault429, "stall": c.FaultStall, "disconnect": c.FaultDisconnect, "malformed": c.FaultMalformed} {
		if p < 0 || p > 1 {
			errs = append(errs, fmt.Errorf("--sim-fault-%s must be between 0 and 1 (got %g)", name, p))
		}
	}
	if sum := c.Fault5xx + c.Fault429 + c.FaultStall + c.FaultDisconnect + c.FaultMalformed; sum > 1 {
		errs = append(errs, fmt.Errorf("the fault shares add up to %g, more than 1", sum))
	}
	if c.StallFor <= 0 {
		errs = append(errs, errors.New("--sim-stall-for must be positive"))
	}
	return errors.Join(errs...)
}

// Server is the simulated runtime, an http.Handler.
type Server struct {
	cfg      Config
	logger   *slog.Logger
	mux      *http.ServeMux
	seq      atomic.Uint64
	inFlight atomic.Int64
	served   atomic.Int64
	mu       sync.Mutex
	models   map[string]bool
}

// NewServer returns the simulated runtime; cfg must have passed Validate.
func NewServer(cfg Config, logger *slog.Logger) *Server {
	s := &Server{cfg: cfg, logger: logger, mux: http.NewServeMux(), models: map[string]bool{}}
	s.mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, true) })
	s.mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, false) })
	s.mux.HandleFunc("GET /v1/models", s.listModels)
	s.mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Served is how many requests were answered; InFlight how many are being.
func (s *Server) Served() int64   { return s.served.Load() }
func (s *Server) InFlight() int64 { return s.inFlight.Load() }

func (s *Server) listModels(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	data := []map[string]any{}
	for m := range s.models {
		data = append(data, map[string]any{"id": m, "object": "model", "owned_by": "ruckus-sim"})
	}
	s.mu.Unlock()
	writeJSON(w, 200, map[string]any{"object": "list", "data": data})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, kind, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": kind}})
}

// request is what the simulation reads of a request.
type request struct {
	Model               string          `json:"model"`
	Messages            json.RawMessage `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Seed *int64 `json:"seed"`
}

var words = strings.Fields("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua simulated tokens flow here")

func (s *Server) complete(w http.ResponseWriter, r *http.Request, chat bool) {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	defer s.served.Add(1)
	var req request
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil {
		apiError(w, 400, "invalid_request_error", "the body is not JSON: "+err.Error())
		return
	}
	if chat && len(req.Messages) == 0 || !chat && len(req.Prompt) == 0 {
		apiError(w, 400, "invalid_request_error", "messages (chat) or prompt (completions) is required")
		return
	}
	s.mu.Lock()
	s.models[req.Model] = true
	s.mu.Unlock()

	n := s.seq.Add(1)
	h := fnv.New64a()
	_, _ = h.Write(req.Messages)
	_, _ = h.Write(req.Prompt)
	rng := rand.New(rand.NewPCG(s.cfg.Seed, h.Sum64()^n))
	promptTokens := max((len(req.Messages)+len(req.Prompt))/4, 1)
	want := max(int(s.cfg.out.Sample(rng)+0.5), 1)
	finish := "stop"
	limit := req.MaxTokens
	if limit == nil {
		limit = req.MaxCompletionTokens
	}
	if limit != nil && *limit > 0 && want >= *limit {
		want, finish = *limit, "length"
	}

	// One draw decides the fault, if any.
	fault, u := "", rng.Float64()
	for _, f := range []struct {
		name string
		p    float64
	}{{"5xx", s.cfg.Fault5xx}, {"429", s.cfg.Fault429}, {"stall", s.cfg.FaultStall}, {"disconnect", s.cfg.FaultDisconnect}, {"malformed", s.cfg.FaultMalformed}} {
		if u < f.p {
			fault = f.name
			break
		}
		u -= f.p
	}
	switch fault {
	case "5xx":
		apiError(w, 500, "server_error", "simulated server error")
		return
	case "429":
		w.Header().Set("Retry-After", "1")
		apiError(w, 429, "rate_limit_error", "simulated overload")
		return
	}
	id := fmt.Sprintf("cmpl-sim-%d", n)
	slow := func() float64 { return max(1, float64(s.inFlight.Load())/float64(s.cfg.Batch)) }
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
			return false
		}
	}
	text := func(from, count int) string {
		var b strings.Builder
		for i := from; i < from+count; i++ {
			b.WriteString(" ")
			b.WriteString(words[(i+int(n))%len(words)])
		}
		return b.String()
	}
	if !wait(time.Duration(float64(s.cfg.ttft.Duration(rng)) * slow())) {
		return
	}
	if !req.Stream {
		var choice map[string]any
		if chat {
			choice = map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": strings.TrimSpace(text(0, want))}, "finish_reason": finish}
		} else {
			choice = map[string]any{"index": 0, "text": text(0, want), "finish_reason": finish}
		}
		// A whole answer takes as long as its tokens would have streamed.
		if !wait(time.Duration(float64(s.cfg.itl.Duration(rng)) * float64(want-1) * slow())) {
			return
		}
		writeJSON(w, 200, map[string]any{"id": id, "object": "chat.completion", "model": req.Model, "choices": []any{choice},
			"usage": map[string]int{"prompt_tokens": promptTokens, "completion_tokens": want, "total_tokens": promptTokens + want}})
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	fl, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	object := "text_completion"
	if chat {
		object = "chat.completion.chunk"
		send(map[string]any{"id": id, "object": object, "model": req.Model, "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": ""}}}})
	}
	faultAt := want / 2
	for sent := 0; sent < want; {
		k := min(s.cfg.TokensPerEvent, want-sent)
		if sent > 0 {
			if !wait(time.Duration(float64(s.cfg.itl.Duration(rng)) * float64(k) * slow())) {
				return
			}
		}
		if sent >= faultAt && fault != "" {
			switch fault {
			case "stall":
				wait(s.cfg.StallFor)
				return
			case "disconnect":
				if hj, ok := w.(http.Hijacker); ok {
					if conn, _, err := hj.Hijack(); err == nil {
						_ = conn.Close()
					}
				}
				return
			case "malformed":
				_, _ = fmt.Fprint(w, "data: {\"choices\": [ this is not json\n\n")
				if fl != nil {
					fl.Flush()
				}
				return
			}
		}
		t := text(sent, k)
		if sent == 0 && chat {
			t = strings.TrimPrefix(t, " ")
		}
		var choice map[string]any
		if chat {
			choice = map[string]any{"index": 0, "delta": map[string]any{"content": t}}
		} else {
			choice = map[string]any{"index": 0, "text": t}
		}
		sent += k
		if sent == want {
			choice["finish_reason"] = finish
		}
		send(map[string]any{"id": id, "object": object, "model": req.Model, "choices": []any{choice}})
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		send(map[string]any{"id": id, "object": object, "model": req.Model, "choices": []any{},
			"usage": map[string]int{"prompt_tokens": promptTokens, "completion_tokens": want, "total_tokens": promptTokens + want}})
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

// Listen starts the simulated runtime on addr (such as 127.0.0.1:0) and
// serves until ctx ends; it returns the address it listens on at once.
func Listen(ctx context.Context, addr string, cfg Config, logger *slog.Logger) (string, <-chan error, error) {
	if err := cfg.Validate(); err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("sim: listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: NewServer(cfg, logger), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return ln.Addr().String(), done, nil
}
