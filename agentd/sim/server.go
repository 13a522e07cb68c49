// Package sim is the simulated OpenAI-compatible runtime built into
// agentd. It streams filler words with configurable time to first token,
// inter-token latency and answer length, slows down past its batch size
// as a real server saturates, and injects faults (HTTP 500 and 429,
// stalls, cut connections, events that are not JSON). It serves demos,
// tests and load tests of Ruckus itself; runs on it are labelled
// simulated.
//
// Answers are repeatable: the words and the length depend only on the
// seed, the model and the request's messages or prompt (and its seed
// field), so the same item gets the same answer in every run with the
// same seed. A request with a temperature above 0 and no seed gets a fresh
// answer each time. Latencies and faults are drawn per request, in the
// order requests arrive.
package sim

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is the simulated runtime, an http.Handler serving
// POST /v1/chat/completions, POST /v1/completions, GET /v1/models and
// GET /health.
type Server struct {
	cfg      Config
	logger   *slog.Logger
	mux      *http.ServeMux
	started  int64
	t0       time.Time // when it was made: the drift's periods count from here
	seq      atomic.Uint64
	inFlight atomic.Int64
	c        struct {
		requests, completed, cancelled, badRequests    atomic.Int64
		http5xx, http429, stalls, disconnects, malform atomic.Int64
		tokens                                         atomic.Int64
	}
	mu     sync.Mutex
	models map[string]struct{}
	// sched is the serving model's scheduler, nil without one.
	sched *scheduler
}

// Stats are a server's counters since it was made.
type Stats struct {
	// Requests is every completion request received, whatever became of it.
	Requests int64
	// InFlight is how many are being generated now (a stalled one
	// included); these are what Batch is compared with.
	InFlight int64
	// Completed answers were sent whole (one with a malformed event
	// included); Cancelled ones stopped because the client went away.
	Completed, Cancelled int64
	// BadRequests were answered 400.
	BadRequests int64
	// Faults injected, by kind.
	HTTP5xx, HTTP429, Stalls, Disconnects, Malformed int64
	// TokensSent counts the completion tokens sent.
	TokensSent int64
	// Waiting is how many requests wait for the batch or the KV cache,
	// Preemptions how often a running one was preempted (the serving
	// model's; 0 without it). PeakWaiting is the most that ever waited.
	Waiting, PeakWaiting, Preemptions int64
}

// maxModels bounds the names GET /v1/models remembers from requests.
const maxModels = 1000

// maxBody bounds a request body.
const maxBody = 32 << 20

// NewServer returns the simulated runtime. cfg should have passed
// Validate; its unset fields take DefaultConfig's values. A nil logger
// discards.
func NewServer(cfg Config, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg.withDefaults(), logger: logger, mux: http.NewServeMux(), started: time.Now().Unix(), t0: time.Now(),
		models: map[string]struct{}{}}
	if s.cfg.Serving != nil {
		s.sched = newScheduler(*s.cfg.Serving)
	}
	if s.cfg.Dialect == DialectAnthropic {
		s.mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, messagesAPI(s)) })
	} else {
		s.mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, openAIAPI(s, true)) })
		s.mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, openAIAPI(s, false)) })
	}
	s.mux.HandleFunc("GET /v1/models", s.listModels)
	s.mux.HandleFunc("GET /metrics", s.metrics)
	s.mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		msg := fmt.Sprintf("no route %s %s on the simulated runtime", r.Method, r.URL.Path)
		if s.cfg.Dialect == DialectAnthropic {
			messagesError(w, http.StatusNotFound, "not_found_error", msg)
			return
		}
		apiError(w, http.StatusNotFound, "invalid_request_error", msg)
	})
	return s
}

// ServeHTTP serves the OpenAI-compatible API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Ruckus-Simulated", "true")
	s.mux.ServeHTTP(w, r)
}

// Stats reads the counters.
func (s *Server) Stats() Stats {
	st := Stats{
		Requests: s.c.requests.Load(), InFlight: s.inFlight.Load(),
		Completed: s.c.completed.Load(), Cancelled: s.c.cancelled.Load(), BadRequests: s.c.badRequests.Load(),
		HTTP5xx: s.c.http5xx.Load(), HTTP429: s.c.http429.Load(), Stalls: s.c.stalls.Load(),
		Disconnects: s.c.disconnects.Load(), Malformed: s.c.malform.Load(), TokensSent: s.c.tokens.Load(),
	}
	if s.sched != nil {
		_, waiting, _, preempts := s.sched.state()
		st.Waiting, st.Preemptions = int64(waiting), preempts
		s.sched.mu.Lock()
		st.PeakWaiting = int64(s.sched.peakWaiting)
		s.sched.mu.Unlock()
	}
	return st
}

// InFlight is how many requests are being generated now.
func (s *Server) InFlight() int64 { return s.inFlight.Load() }

func (s *Server) listModels(w http.ResponseWriter, _ *http.Request) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	names := slices.Clone(s.cfg.Models)
	s.mu.Lock()
	for m := range s.models {
		names = append(names, m)
	}
	s.mu.Unlock()
	slices.Sort(names)
	data := []model{}
	for _, n := range slices.Compact(names) {
		data = append(data, model{ID: n, Object: "model", Created: s.started, OwnedBy: "ruckus-sim"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) noteModel(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.models) < maxModels {
		s.models[name] = struct{}{}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// apiError answers with an OpenAI-style error body.
func apiError(w http.ResponseWriter, status int, kind, msg string) {
	type body struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	writeJSON(w, status, map[string]body{"error": {Message: msg, Type: kind}})
}

// Fault kinds, as drawn.
const (
	fault5xx        = "5xx"
	fault429        = "429"
	faultStall      = "stall"
	faultDisconnect = "disconnect"
	faultMalformed  = "malformed"
)

// pickFault maps one uniform draw u in [0,1) to at most one fault.
func (s *Server) pickFault(u float64) string {
	f := s.cfg.Faults
	for _, k := range []struct {
		name string
		p    float64
	}{{fault5xx, f.HTTP5xx}, {fault429, f.HTTP429}, {faultStall, f.Stall}, {faultDisconnect, f.Disconnect}, {faultMalformed, f.Malformed}} {
		if u < k.p {
			return k.name
		}
		u -= k.p
	}
	return ""
}

// answer is one request's planned response.
type answer struct {
	chat         bool
	id, model    string
	created      int64
	promptTokens int
	tokens       int    // completion tokens to send
	finish       string // "stop" or "length"
	includeUsage bool
	words        filler
	draws        *rand.Rand // latencies
	fault        string     // stall, disconnect or malformed, or ""
	faultEvent   int        // the content event the fault replaces or precedes
}

// decode reads and checks a completion request; it returns the prompt's
// estimated token count.
func decode(w http.ResponseWriter, r *http.Request, chat bool) (request, int, error) {
	var req request
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&req); err != nil {
		return req, 0, fmt.Errorf("the body is not a JSON request: %v", err)
	}
	if req.Model == "" {
		return req, 0, errors.New("model is required")
	}
	if req.N != nil && *req.N != 1 {
		return req, 0, fmt.Errorf("n is %d: the simulated runtime serves one choice per request", *req.N)
	}
	for _, l := range []struct {
		name string
		v    *int
	}{{"max_tokens", req.MaxTokens}, {"max_completion_tokens", req.MaxCompletionTokens}} {
		if l.v != nil && *l.v < 1 {
			return req, 0, fmt.Errorf("%s must be at least 1 (got %d)", l.name, *l.v)
		}
	}
	if chat {
		if len(req.Messages) == 0 || string(req.Messages) == "null" {
			return req, 0, errors.New("messages is required")
		}
		chars, err := chatPromptChars(req.Messages)
		return req, promptTokens(chars, 0), err
	}
	if len(req.Prompt) == 0 || string(req.Prompt) == "null" {
		return req, 0, errors.New("prompt is required")
	}
	chars, ids, err := completionPromptSize(req.Prompt)
	return req, promptTokens(chars, ids), err
}

// api is one of the protocols the simulated runtime speaks: how it reads
// a request, answers an error, and sends an answer streamed or whole.
type api struct {
	chat   bool
	decode func(w http.ResponseWriter, r *http.Request) (request, int, error)
	fail   func(w http.ResponseWriter, status int, kind, msg string)
	// status5xx and kind5xx are the server error fault's answer.
	status5xx     int
	kind5xx       string
	stream, whole func(ctx context.Context, w http.ResponseWriter, a *answer) bool
}

// openAIAPI is OpenAI's chat completions (chat) or completions API.
func openAIAPI(s *Server, chat bool) api {
	return api{chat: chat, decode: func(w http.ResponseWriter, r *http.Request) (request, int, error) { return decode(w, r, chat) },
		fail: apiError, status5xx: http.StatusInternalServerError, kind5xx: "server_error", stream: s.stream, whole: s.whole}
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request, p api) {
	s.c.requests.Add(1)
	req, prompt, err := p.decode(w, r)
	if err != nil {
		s.c.badRequests.Add(1)
		p.fail(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	s.noteModel(req.Model)
	n := s.seq.Add(1)
	// Latencies and faults vary per request; the answer depends on what
	// was asked.
	draws := rand.New(rand.NewPCG(s.cfg.Seed, 0x5eed_0000_0000_0000^n))
	fault := s.pickFault(draws.Float64())
	log := s.logger.With("id", n, "model", req.Model)
	switch fault {
	case fault5xx:
		s.c.http5xx.Add(1)
		log.Debug("sim: fault", "fault", fault)
		p.fail(w, p.status5xx, p.kind5xx, "simulated server error (fault injected by the simulated runtime)")
		return
	case fault429:
		s.c.http429.Add(1)
		log.Debug("sim: fault", "fault", fault)
		w.Header().Set("Retry-After", "1")
		p.fail(w, http.StatusTooManyRequests, "rate_limit_error", "simulated rate limit (fault injected by the simulated runtime)")
		return
	}

	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	a := s.plan(req, p.chat, n, prompt, draws, fault)
	var done bool
	if req.Stream {
		done = p.stream(r.Context(), w, a)
	} else {
		done = p.whole(r.Context(), w, a)
	}
	if !done {
		// The client went away, or the server is shutting down: cut the
		// connection rather than end the response as if it were whole.
		s.c.cancelled.Add(1)
		log.Debug("sim: generation stopped: the client went away or the server is stopping")
		panic(http.ErrAbortHandler)
	}
	s.c.completed.Add(1)
}

// plan draws the answer's length and fault point.
func (s *Server) plan(req request, chat bool, n uint64, prompt int, draws *rand.Rand, fault string) *answer {
	h := fnv.New64a()
	_, _ = h.Write([]byte(req.Model))
	if chat {
		_, _ = h.Write([]byte{0, 'c'})
	} else {
		_, _ = h.Write([]byte{0, 't'})
	}
	_, _ = h.Write(req.Messages)
	_, _ = h.Write([]byte{0})
	_, _ = h.Write(req.Prompt)
	if req.Seed != nil {
		_, _ = h.Write(binary.LittleEndian.AppendUint64([]byte{0, 's'}, uint64(*req.Seed)))
	} else if req.Temperature != nil && *req.Temperature > 0 {
		_, _ = h.Write(binary.LittleEndian.AppendUint64([]byte{0, 'n'}, n))
	}
	words := rand.New(rand.NewPCG(s.cfg.Seed, h.Sum64()))
	tokens := int(math.Round(s.cfg.OutputTokens.Sample(words)))
	tokens = min(max(tokens, 1), MaxOutputTokens)
	var script []string
	if req.Answer != "" { // the server's answer: its length is the answer's
		script = scriptTokens(req.Answer)
		tokens = max(len(script), 1)
	}
	finish := "stop"
	limit := 0
	for _, v := range []*int{req.MaxTokens, req.MaxCompletionTokens} {
		if v != nil && (limit == 0 || *v < limit) {
			limit = *v
		}
	}
	if limit > 0 && (tokens >= limit || req.IgnoreEOS && req.Answer == "") {
		tokens, finish = limit, "length"
	}
	if v := s.cfg.Serving; v != nil && v.MaxModelLen > 0 && prompt+tokens > v.MaxModelLen {
		// The context is full: the answer ends there, as vLLM's does.
		tokens, finish = max(v.MaxModelLen-prompt, 1), "length"
	}
	a := &answer{
		chat: chat, id: "cmpl-sim-" + strconv.FormatUint(n, 10), model: req.Model, created: time.Now().Unix(),
		promptTokens: prompt, tokens: tokens, finish: finish,
		includeUsage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage,
		words:        filler{r: words, spaceIn1: !chat, script: script},
		draws:        draws, fault: fault,
	}
	// Midway: after at least one content event, before the last.
	if events := (tokens + s.cfg.TokensPerEvent - 1) / s.cfg.TokensPerEvent; events > 1 {
		a.faultEvent = 1 + draws.IntN(events-1)
	}
	return a
}

// generate produces the answer event by event: it waits the event's
// latency, then calls emit with its text and token count. At the fault's
// event it calls onFault first, which may end the answer (false). It
// returns false when the client went away.
func (s *Server) generate(ctx context.Context, a *answer, emit func(text string, k int), onFault func() bool) bool {
	seat := s.take(ctx, a.promptTokens)
	if seat == nil {
		return false
	}
	defer seat.leave()
	var b strings.Builder
	for ev, sent := 0, 0; sent < a.tokens; ev++ {
		k := min(s.cfg.TokensPerEvent, a.tokens-sent)
		var wait float64
		if ev == 0 {
			wait = float64(s.cfg.TTFT.Duration(a.draws)) + s.prefill(a.promptTokens)
		} else {
			for range k { // the event carries k tokens, each an ITL apart
				wait += float64(s.cfg.ITL.Duration(a.draws))
			}
			wait /= s.speedup()
			if !seat.grow(ctx, k) { // preempted: back in the queue, then recompute
				if ctx.Err() != nil {
					return false
				}
				wait += s.prefill(seat.held)
			}
		}
		if !s.sleep(ctx, wait) {
			return false
		}
		if a.fault != "" && ev == a.faultEvent && !onFault() {
			return ctx.Err() == nil
		}
		b.Reset()
		a.words.next(&b, k)
		emit(b.String(), k)
		sent += k
	}
	return true
}

// sleep waits ns nanoseconds of simulated time: scaled by TimeScale, and
// stretched by running/Batch when more requests run than the
// batch holds. It returns false when ctx ends first.
func (s *Server) sleep(ctx context.Context, ns float64) bool {
	running := s.inFlight.Load()
	if s.sched != nil {
		running = s.sched.runningNow()
	}
	slow := max(1, float64(running)/float64(s.cfg.Batch))
	d := time.Duration(min(ns*s.cfg.TimeScale*slow*s.driftAt(time.Now()), float64(maxDurationParam)))
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// driftAt is the latency level at t: exp(Drift·z) with z a standard
// normal drawn from the seed and the number of the DriftPeriod t falls in,
// so each period has its own level and the same seed repeats them
// (docs/simulated-runtime.md#drift).
func (s *Server) driftAt(t time.Time) float64 {
	if s.cfg.Drift == 0 {
		return 1
	}
	k := uint64(t.Sub(s.t0) / s.cfg.DriftPeriod)
	return math.Exp(s.cfg.Drift * rand.New(rand.NewPCG(s.cfg.Seed^0xd21f7, k)).NormFloat64())
}

// stall keeps silent until the client gives up (false) or StallMax
// passes, when the connection is cut.
func (s *Server) stall(ctx context.Context) bool {
	s.c.stalls.Add(1)
	t := time.NewTimer(s.cfg.StallMax)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		panic(http.ErrAbortHandler)
	}
}

// disconnect cuts the connection: net/http closes it without ending the
// response, so the client sees the body end early (or, before the
// headers, no response at all).
func (s *Server) disconnect() {
	s.c.disconnects.Add(1)
	panic(http.ErrAbortHandler)
}

// The wire shapes, field for field as OpenAI sends them.
type (
	usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
	delta struct {
		Role    string  `json:"role,omitempty"`
		Content *string `json:"content,omitempty"`
	}
	chunkChoice struct {
		Index        int       `json:"index"`
		Delta        *delta    `json:"delta,omitempty"`
		Text         *string   `json:"text,omitempty"`
		Logprobs     *struct{} `json:"logprobs"`
		FinishReason *string   `json:"finish_reason"`
	}
	chunk struct {
		ID                string          `json:"id"`
		Object            string          `json:"object"`
		Created           int64           `json:"created"`
		Model             string          `json:"model"`
		SystemFingerprint string          `json:"system_fingerprint"`
		Choices           []chunkChoice   `json:"choices"`
		Usage             json.RawMessage `json:"usage,omitempty"`
	}
	message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	wholeChoice struct {
		Index        int       `json:"index"`
		Message      *message  `json:"message,omitempty"`
		Text         *string   `json:"text,omitempty"`
		Logprobs     *struct{} `json:"logprobs"`
		FinishReason string    `json:"finish_reason"`
	}
	completion struct {
		ID                string        `json:"id"`
		Object            string        `json:"object"`
		Created           int64         `json:"created"`
		Model             string        `json:"model"`
		SystemFingerprint string        `json:"system_fingerprint"`
		Choices           []wholeChoice `json:"choices"`
		Usage             usage         `json:"usage"`
	}
)

// fingerprint marks every response as the simulated runtime's.
const fingerprint = "ruckus-sim"

func (a *answer) usage() usage {
	return usage{PromptTokens: a.promptTokens, CompletionTokens: a.tokens, TotalTokens: a.promptTokens + a.tokens}
}

func (a *answer) chunk(choices ...chunkChoice) chunk {
	c := chunk{ID: a.id, Object: "text_completion", Created: a.created, Model: a.model, SystemFingerprint: fingerprint, Choices: choices}
	if a.chat {
		c.Object = "chat.completion.chunk"
	}
	if choices == nil {
		c.Choices = []chunkChoice{}
	}
	if a.includeUsage {
		c.Usage = json.RawMessage("null")
	}
	return c
}

// stream sends the answer as server-sent events: for chat a role chunk
// at once, then content chunks, a chunk with the finish reason, the usage
// chunk when asked for, and [DONE].
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, a *answer) bool {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	var line []byte // one buffer per answer, not one per event
	writeLine := func(data []byte) {
		line = append(append(append(line[:0], "data: "...), data...), '\n', '\n')
		_, _ = w.Write(line)
		_ = rc.Flush()
	}
	send := func(c chunk) {
		b, _ := json.Marshal(c)
		writeLine(b)
	}
	if a.chat {
		empty := ""
		send(a.chunk(chunkChoice{Delta: &delta{Role: "assistant", Content: &empty}}))
	} else {
		_ = rc.Flush()
	}
	content := func(text string) chunkChoice {
		if a.chat {
			return chunkChoice{Delta: &delta{Content: &text}}
		}
		return chunkChoice{Text: &text}
	}
	// Content chunks differ only in their text: encoded once with a
	// marker, each is the bytes around it with the text encoded between.
	// (A content chunk per token makes encoding them most of the sim's
	// work per token.) The marker is the last string of the chunk, after
	// id, object, model and fingerprint, so the last match is it.
	const marker = "\x00"
	tmpl, _ := json.Marshal(a.chunk(content(marker)))
	cut := bytes.LastIndex(tmpl, []byte(`"\u0000"`))
	head, tail := tmpl[:cut], tmpl[cut+len(`"\u0000"`):]
	var ev []byte
	ok := s.generate(ctx, a, func(text string, k int) {
		t, _ := json.Marshal(text)
		ev = append(append(append(ev[:0], head...), t...), tail...)
		writeLine(ev)
		s.c.tokens.Add(int64(k))
	}, s.onStreamFault(ctx, a, func() {
		writeLine(fmt.Appendf(nil, `{"id":%q,"object":%q,"choices":[{"index":0, this is not JSON`, a.id, a.chunk().Object))
	}))
	if !ok {
		return false
	}
	last := content("")
	if a.chat {
		last = chunkChoice{Delta: &delta{}}
	}
	last.FinishReason = &a.finish
	send(a.chunk(last))
	if a.includeUsage {
		c := a.chunk()
		c.Usage, _ = json.Marshal(a.usage())
		send(c)
	}
	writeLine([]byte("[DONE]"))
	return true
}

// onStreamFault is a streamed answer's fault: a stall, a cut connection,
// or a malformed event, which malformed writes.
func (s *Server) onStreamFault(ctx context.Context, a *answer, malformed func()) func() bool {
	return func() bool {
		switch a.fault {
		case faultStall:
			return s.stall(ctx)
		case faultDisconnect:
			s.disconnect()
		case faultMalformed:
			s.c.malform.Add(1)
			malformed()
		}
		return true
	}
}

// generateWhole generates the whole answer for a non-streaming response:
// its text, and whether the malformed fault struck (the body is then to
// be cut). ok is false when the client went away.
func (s *Server) generateWhole(ctx context.Context, a *answer) (text string, malformed, ok bool) {
	var b strings.Builder
	ok = s.generate(ctx, a, func(t string, _ int) { b.WriteString(t) }, func() bool {
		switch a.fault {
		case faultStall:
			return s.stall(ctx)
		case faultDisconnect:
			s.disconnect()
		case faultMalformed:
			malformed = true
		}
		return true
	})
	return b.String(), malformed, ok
}

// writeWhole sends a whole response's JSON body, cut in half when
// malformed.
func (s *Server) writeWhole(w http.ResponseWriter, a *answer, b []byte, malformed bool) {
	if malformed {
		s.c.malform.Add(1)
		b = b[:len(b)/2] // cut JSON
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n'))
	s.c.tokens.Add(int64(a.tokens))
}

// whole sends the answer as one JSON object once all of it is generated.
func (s *Server) whole(ctx context.Context, w http.ResponseWriter, a *answer) bool {
	text, malformed, ok := s.generateWhole(ctx, a)
	if !ok {
		return false
	}
	c := completion{ID: a.id, Object: "text_completion", Created: a.created, Model: a.model, SystemFingerprint: fingerprint, Usage: a.usage()}
	choice := wholeChoice{FinishReason: a.finish}
	if a.chat {
		c.Object = "chat.completion"
		choice.Message = &message{Role: "assistant", Content: text}
	} else {
		choice.Text = &text
	}
	c.Choices = []wholeChoice{choice}
	b, _ := json.Marshal(c)
	s.writeWhole(w, a, b, malformed)
	return true
}
