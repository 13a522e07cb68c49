package sim_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ruckus/ruckus/agentd/sim"
	"github.com/ruckus/ruckus/app/testkit"
)

// newServer serves a quick simulated runtime: TTFT 2 ms, ITL 1 ms, 12
// tokens per answer, unless tweak says otherwise.
func newServer(t *testing.T, tweak func(*sim.Config)) (*sim.Server, *httptest.Server) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.TTFT, cfg.ITL, cfg.OutputTokens = sim.MustParseDist("const:2ms"), sim.MustParseDist("const:1ms"), sim.MustParseDist("const:12")
	if tweak != nil {
		tweak(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s := sim.NewServer(cfg, nil)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

const (
	chatPath = "/v1/chat/completions"
	textPath = "/v1/completions"
)

// body is a streaming request with usage, for path, plus extra fields.
func body(path string, extra string) string {
	b := `{"model":"sim/tiny","stream":true,"stream_options":{"include_usage":true}`
	if path == chatPath {
		b += `,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"What is two plus two?"}]`
	} else {
		b += `,"prompt":"Once upon a time"`
	}
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

func post(t *testing.T, ctx context.Context, ts *httptest.Server, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// event is one server-sent event's data and when it arrived.
type event struct {
	data string
	at   time.Time
}

// readSSE reads server-sent events, calling each with every event's data,
// until the body ends; it returns the read error (nil at a clean end).
func readSSE(r io.Reader, each func(event)) error {
	br := bufio.NewReader(r)
	var data []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if err == io.EOF && line == "" && len(data) == 0 {
				return nil
			}
			if err == io.EOF {
				return io.ErrUnexpectedEOF // an event cut short
			}
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if len(data) > 0 {
				each(event{strings.Join(data, "\n"), time.Now()})
				data = nil
			}
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case strings.HasPrefix(line, ":"):
		default:
			return fmt.Errorf("not an SSE line: %q", line)
		}
	}
}

// streamed is a whole streamed response as the client saw it.
type streamed struct {
	sent   time.Time
	events []event
	err    error
}

func stream(t *testing.T, ts *httptest.Server, path, body string) streamed {
	t.Helper()
	sent := time.Now()
	resp := post(t, context.Background(), ts, path, body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	s := streamed{sent: sent}
	s.err = readSSE(resp.Body, func(e event) { s.events = append(s.events, e) })
	return s
}

// wire is a chunk or a whole response as OpenAI defines it.
type wire struct {
	ID                string  `json:"id"`
	Object            string  `json:"object"`
	Created           int64   `json:"created"`
	Model             string  `json:"model"`
	SystemFingerprint *string `json:"system_fingerprint"`
	Choices           []struct {
		Index int `json:"index"`
		Delta *struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Message *struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		Text         *string         `json:"text"`
		Logprobs     json.RawMessage `json:"logprobs"`
		FinishReason *string         `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

func decodeWire(t *testing.T, data string) wire {
	t.Helper()
	var w wire
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields() // every field sent is one OpenAI sends
	if err := dec.Decode(&w); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return w
}

// keys lists a JSON object's keys, sorted.
func keys(t *testing.T, data string, path ...any) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatal(err)
	}
	for _, p := range path {
		switch p := p.(type) {
		case string:
			v = v.(map[string]any)[p]
		case int:
			v = v.([]any)[p]
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v in %s is not an object", path, data)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, ",")
}

// answer checks a whole stream's shape and returns its content chunks'
// texts and its usage chunk.
func checkStream(t *testing.T, s streamed, chat bool, finish string) (texts []string, usage wire) {
	t.Helper()
	if s.err != nil {
		t.Fatalf("the stream ended with %v", s.err)
	}
	ev := s.events
	if len(ev) < 4 || ev[len(ev)-1].data != "[DONE]" {
		t.Fatalf("want [DONE] last, got %d events: %v", len(ev), ev)
	}
	object := "text_completion"
	if chat {
		object = "chat.completion.chunk"
	}
	var id string
	for i, e := range ev[:len(ev)-1] {
		w := decodeWire(t, e.data)
		if i == 0 {
			id = w.ID
		}
		if !strings.HasPrefix(w.ID, "cmpl-sim-") || w.ID != id || w.Object != object || w.Model != "sim/tiny" ||
			w.Created == 0 || w.SystemFingerprint == nil {
			t.Fatalf("chunk %d: %s", i, e.data)
		}
		if !strings.Contains(e.data, `"usage":`) {
			t.Fatalf("chunk %d has no usage field although include_usage is set: %s", i, e.data)
		}
	}
	first := 0
	if chat {
		// The role chunk: role and empty content, no finish reason.
		w := decodeWire(t, ev[0].data)
		if keys(t, ev[0].data, "choices", 0, "delta") != "content,role" || *w.Choices[0].Delta.Role != "assistant" ||
			*w.Choices[0].Delta.Content != "" || w.Choices[0].FinishReason != nil || w.Usage != nil {
			t.Fatalf("role chunk %s", ev[0].data)
		}
		first = 1
	}
	for i, e := range ev[first : len(ev)-3] {
		w := decodeWire(t, e.data)
		if len(w.Choices) != 1 || w.Choices[0].FinishReason != nil || w.Usage != nil {
			t.Fatalf("content chunk %d: %s", i, e.data)
		}
		c := w.Choices[0]
		if chat {
			if keys(t, e.data, "choices", 0, "delta") != "content" || *c.Delta.Content == "" {
				t.Fatalf("content chunk %d: %s", i, e.data)
			}
			texts = append(texts, *c.Delta.Content)
		} else {
			if c.Text == nil || *c.Text == "" || c.Delta != nil {
				t.Fatalf("content chunk %d: %s", i, e.data)
			}
			texts = append(texts, *c.Text)
		}
		if keys(t, e.data, "choices", 0) != map[bool]string{true: "delta,finish_reason,index,logprobs", false: "finish_reason,index,logprobs,text"}[chat] {
			t.Fatalf("content chunk %d: %s", i, e.data)
		}
	}
	// The finish chunk: no content, the finish reason.
	fin := ev[len(ev)-3]
	w := decodeWire(t, fin.data)
	if len(w.Choices) != 1 || w.Choices[0].FinishReason == nil || *w.Choices[0].FinishReason != finish || w.Usage != nil {
		t.Fatalf("finish chunk %s, want finish_reason %q", fin.data, finish)
	}
	if chat && keys(t, fin.data, "choices", 0, "delta") != "" || !chat && *w.Choices[0].Text != "" {
		t.Fatalf("finish chunk carries content: %s", fin.data)
	}
	// The usage chunk: no choices.
	usage = decodeWire(t, ev[len(ev)-2].data)
	if usage.Choices == nil || len(usage.Choices) != 0 || usage.Usage == nil ||
		usage.Usage.TotalTokens != usage.Usage.PromptTokens+usage.Usage.CompletionTokens || usage.Usage.PromptTokens < 1 {
		t.Fatalf("usage chunk %s", ev[len(ev)-2].data)
	}
	return texts, usage
}

func words(texts []string) int { return len(strings.Fields(strings.Join(texts, ""))) }

func TestChatStream(t *testing.T) {
	t.Parallel()
	srv, ts := newServer(t, func(c *sim.Config) { c.TTFT = sim.MustParseDist("const:30ms"); c.ITL = sim.MustParseDist("const:2ms") })
	s := stream(t, ts, chatPath, body(chatPath, ""))
	texts, usage := checkStream(t, s, true, "stop")
	if len(texts) != 12 || words(texts) != 12 || usage.Usage.CompletionTokens != 12 {
		t.Fatalf("%d chunks, %d words, usage %+v: %q", len(texts), words(texts), usage.Usage, texts)
	}
	// One word per token, spaced so the chunks join into text.
	if strings.HasPrefix(texts[0], " ") || !strings.HasPrefix(texts[1], " ") {
		t.Fatalf("chunks %q", texts)
	}
	// "Be brief." and "What is two plus two?" are 30 characters: 8 tokens.
	if usage.Usage.PromptTokens != 8 {
		t.Fatalf("prompt tokens %d, want 8", usage.Usage.PromptTokens)
	}
	// Latencies are at least as drawn (only lower bounds: the machine may
	// be slow).
	ttft := s.events[1].at.Sub(s.sent)
	last := s.events[12].at.Sub(s.sent)
	if ttft < 30*time.Millisecond || last < 30*time.Millisecond+11*2*time.Millisecond {
		t.Fatalf("TTFT %v, last token at %v", ttft, last)
	}
	if st := srv.Stats(); st.Requests != 1 || st.Completed != 1 || st.TokensSent != 12 || st.InFlight != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCompletionsStream(t *testing.T) {
	t.Parallel()
	_, ts := newServer(t, nil)
	texts, usage := checkStream(t, stream(t, ts, textPath, body(textPath, "")), false, "stop")
	// "Once upon a time" is 16 characters: 4 tokens. A completion
	// continues the prompt, so even its first token is spaced.
	if len(texts) != 12 || words(texts) != 12 || usage.Usage.CompletionTokens != 12 || usage.Usage.PromptTokens != 4 ||
		!strings.HasPrefix(texts[0], " ") {
		t.Fatalf("%q, usage %+v", texts, usage.Usage)
	}
}

// Without stream_options.include_usage there is no usage chunk and no
// usage field.
func TestStreamWithoutUsage(t *testing.T) {
	t.Parallel()
	_, ts := newServer(t, nil)
	s := stream(t, ts, chatPath, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	ev := s.events
	if s.err != nil || len(ev) != 1+12+1+1 || ev[len(ev)-1].data != "[DONE]" {
		t.Fatalf("%v %v", s.err, ev)
	}
	for _, e := range ev[:len(ev)-1] {
		if strings.Contains(e.data, "usage") {
			t.Fatalf("usage without include_usage: %s", e.data)
		}
	}
	if w := decodeWire(t, ev[len(ev)-2].data); *w.Choices[0].FinishReason != "stop" {
		t.Fatalf("last chunk %s", ev[len(ev)-2].data)
	}
}

// Several tokens per event: every content chunk but the last carries
// TokensPerEvent words, and usage counts them all.
func TestTokensPerEvent(t *testing.T) {
	t.Parallel()
	_, ts := newServer(t, func(c *sim.Config) { c.TokensPerEvent = 3; c.OutputTokens = sim.MustParseDist("const:10") })
	for _, path := range []string{chatPath, textPath} {
		texts, usage := checkStream(t, stream(t, ts, path, body(path, "")), path == chatPath, "stop")
		var per []int
		for _, x := range texts {
			per = append(per, len(strings.Fields(x)))
		}
		if !slices.Equal(per, []int{3, 3, 3, 1}) || usage.Usage.CompletionTokens != 10 {
			t.Fatalf("%s: words per chunk %v, usage %+v", path, per, usage.Usage)
		}
	}
	// An answer that fills its chunks exactly.
	texts, usage := checkStream(t, stream(t, ts, chatPath, body(chatPath, `"max_tokens":9`)), true, "length")
	if len(texts) != 3 || words(texts) != 9 || usage.Usage.CompletionTokens != 9 {
		t.Fatalf("%q %+v", texts, usage.Usage)
	}
}

func TestMaxTokensCapsTheAnswer(t *testing.T) {
	t.Parallel()
	_, ts := newServer(t, nil) // answers are 12 tokens
	for extra, want := range map[string]struct {
		tokens int
		finish string
	}{
		`"max_tokens":5`:                                 {5, "length"},
		`"max_completion_tokens":7`:                      {7, "length"},
		`"max_tokens":9,"max_completion_tokens":6`:       {6, "length"},
		`"max_tokens":12`:                                {12, "length"},
		`"max_tokens":13`:                                {12, "stop"},
		`"max_tokens":4000,"max_completion_tokens":null`: {12, "stop"},
		`"max_tokens":40,"ignore_eos":true`:              {40, "length"},
		`"max_tokens":5,"ignore_eos":true`:               {5, "length"},
		`"ignore_eos":false,"max_tokens":30`:             {12, "stop"},
	} {
		for _, path := range []string{chatPath, textPath} {
			texts, usage := checkStream(t, stream(t, ts, path, body(path, extra)), path == chatPath, want.finish)
			if words(texts) != want.tokens || usage.Usage.CompletionTokens != want.tokens {
				t.Errorf("%s %s: %d words, usage %+v, want %d", path, extra, words(texts), usage.Usage, want.tokens)
			}
		}
	}
}

func TestNonStreaming(t *testing.T) {
	t.Parallel()
	_, ts := newServer(t, nil)
	for _, c := range []struct {
		path, extra, object, finish string
		tokens                      int
	}{
		{chatPath, `"stream":false`, "chat.completion", "stop", 12},
		{textPath, `"stream":false`, "text_completion", "stop", 12},
		{chatPath, `"stream":false,"max_tokens":3`, "chat.completion", "length", 3},
	} {
		b := strings.Replace(body(c.path, c.extra), `"stream":true,`, "", 1)
		resp := post(t, context.Background(), ts, c.path, b)
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%d %s", resp.StatusCode, raw)
		}
		w := decodeWire(t, string(raw))
		if w.Object != c.object || !strings.HasPrefix(w.ID, "cmpl-sim-") || len(w.Choices) != 1 || w.Usage == nil ||
			*w.Choices[0].FinishReason != c.finish || w.Usage.CompletionTokens != c.tokens {
			t.Fatalf("%s: %s", c.path, raw)
		}
		text := ""
		if c.path == chatPath {
			if w.Choices[0].Message == nil || w.Choices[0].Message.Role != "assistant" || w.Choices[0].Delta != nil {
				t.Fatalf("%s", raw)
			}
			text = w.Choices[0].Message.Content
		} else {
			text = *w.Choices[0].Text
		}
		if len(strings.Fields(text)) != c.tokens {
			t.Fatalf("%d words in %q, want %d", len(strings.Fields(text)), text, c.tokens)
		}
	}
}

// The answer depends on the seed and the request only: the same request
// gets the same words from every server with the same seed.
func TestSeedDeterminism(t *testing.T) {
	t.Parallel()
	varied := func(c *sim.Config) { c.OutputTokens = sim.MustParseDist("uniform:20,60") }
	_, a := newServer(t, varied)
	_, b := newServer(t, varied)
	_, other := newServer(t, func(c *sim.Config) { varied(c); c.Seed = 99 })
	answer := func(ts *httptest.Server, prompt string, extra string) string {
		t.Helper()
		extra = strings.TrimPrefix(extra+`,"prompt":`+prompt, ",")
		texts, _ := checkStream(t, stream(t, ts, textPath, `{"model":"sim/tiny","stream":true,"stream_options":{"include_usage":true},`+extra+`}`), false, "stop")
		return strings.Join(texts, "")
	}
	x := answer(a, `"Tell me a story"`, "")
	if y := answer(b, `"Tell me a story"`, ""); x != y {
		t.Fatalf("same seed, same request, different answers:\n%s\n%s", x, y)
	}
	if y := answer(a, `"Tell me a story"`, ""); x != y {
		t.Fatalf("the same request twice, different answers:\n%s\n%s", x, y)
	}
	if y := answer(other, `"Tell me a story"`, ""); x == y {
		t.Fatalf("seeds 0 and 99 gave the same answer: %s", x)
	}
	if y := answer(a, `"Tell me another"`, ""); x == y {
		t.Fatalf("different prompts gave the same answer: %s", x)
	}
	// A sampling temperature without a seed: a fresh answer each time; with
	// a seed: the same.
	hot := `"temperature":0.8`
	if first := answer(a, `"Tell me a story"`, hot); first == answer(a, `"Tell me a story"`, hot) {
		t.Fatal("temperature 0.8 gave the same answer twice")
	}
	seeded := hot + `,"seed":5`
	if answer(a, `"Tell me a story"`, seeded) != answer(b, `"Tell me a story"`, seeded) {
		t.Fatal("the same request seed gave different answers")
	}
}

// Answer lengths across different prompts follow OutputTokens.
func TestOutputTokensDistribution(t *testing.T) {
	t.Parallel()
	_, ts := newServer(t, func(c *sim.Config) {
		c.TTFT, c.ITL, c.OutputTokens = sim.MustParseDist("const:0s"), sim.MustParseDist("const:0s"), sim.MustParseDist("normal:50,10")
	})
	const n = 300
	sum, sumSq := 0.0, 0.0
	for i := range n {
		resp := post(t, context.Background(), ts, textPath, fmt.Sprintf(`{"model":"m","prompt":"question %d"}`, i))
		w := decodeWire(t, mustRead(t, resp.Body))
		k := float64(w.Usage.CompletionTokens)
		sum, sumSq = sum+k, sumSq+k*k
	}
	mean := sum / n
	sd := math.Sqrt(sumSq/n - mean*mean)
	if math.Abs(mean-50) > 2.5 || math.Abs(sd-10) > 2 {
		t.Fatalf("lengths: mean %.1f sd %.1f, want about 50 and 10", mean, sd)
	}
}

func mustRead(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTimeScale(t *testing.T) {
	t.Parallel()
	_, ts := newServer(t, func(c *sim.Config) {
		c.TTFT, c.ITL, c.TimeScale = sim.MustParseDist("const:20s"), sim.MustParseDist("const:1s"), 0.001
	})
	s := stream(t, ts, chatPath, body(chatPath, ""))
	checkStream(t, s, true, "stop")
	// 20 ms to the first token, 11 ms more to the last: not 31 s.
	if got := s.events[12].at.Sub(s.sent); got < 31*time.Millisecond || got > 20*time.Second {
		t.Fatalf("last token after %v", got)
	}
}

// The role chunk goes out at once, before the first token is ready.
func TestRoleChunkComesFirst(t *testing.T) {
	t.Parallel()
	srv, ts := newServer(t, func(c *sim.Config) { c.TTFT = sim.MustParseDist("const:1h") })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := post(t, ctx, ts, chatPath, body(chatPath, ""))
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, `"delta":{"role":"assistant","content":""}`) {
		t.Fatalf("%q %v", line, err)
	}
	// The client gives up; the server stops generating.
	cancel()
	testkit.WaitFor(t, "the server to notice", func() bool { st := srv.Stats(); return st.Cancelled == 1 && st.InFlight == 0 })
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	srv, ts := newServer(t, nil)
	for _, c := range []struct{ path, body, want string }{
		{chatPath, `{`, "not a JSON request"},
		{chatPath, `[1]`, "not a JSON request"},
		{chatPath, `{"messages":[{"role":"user","content":"x"}]}`, "model is required"},
		{chatPath, `{"model":"m"}`, "messages is required"},
		{chatPath, `{"model":"m","messages":[]}`, "messages must not be empty"},
		{chatPath, `{"model":"m","messages":"hi"}`, "messages must be an array"},
		{chatPath, `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":0}`, "max_tokens must be at least 1"},
		{chatPath, `{"model":"m","messages":[{"role":"user","content":"x"}],"max_completion_tokens":-3}`, "max_completion_tokens must be at least 1"},
		{chatPath, `{"model":"m","messages":[{"role":"user","content":"x"}],"n":2}`, "one choice per request"},
		{textPath, `{"model":"m"}`, "prompt is required"},
		{textPath, `{"model":"m","prompt":{"a":1}}`, "prompt must be a string"},
		{textPath, `{"model":"m","prompt":["a","b"]}`, "several prompts"},
	} {
		resp := post(t, context.Background(), ts, c.path, c.body)
		var e struct {
			Error struct{ Message, Type string }
		}
		raw := mustRead(t, resp.Body)
		if err := json.Unmarshal([]byte(raw), &e); err != nil || resp.StatusCode != 400 ||
			e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, c.want) {
			t.Errorf("%s: %d %s, want 400 saying %q", c.body, resp.StatusCode, raw, c.want)
		}
	}
	if st := srv.Stats(); st.BadRequests != 12 || st.Requests != 12 || st.Completed != 0 {
		t.Fatalf("stats %+v", st)
	}
	resp, err := ts.Client().Get(ts.URL + "/v1/embeddings")
	if err != nil || resp.StatusCode != 404 || !strings.Contains(mustRead(t, resp.Body), `"error"`) {
		t.Fatalf("unknown route: %v %v", resp, err)
	}
}

// Prompt lengths: about four characters per token; token ids count as
// they are.
func TestPromptTokens(t *testing.T) {
	t.Parallel()
	_, ts := newServer(t, nil)
	for _, c := range []struct {
		path, input string
		want        int
	}{
		{chatPath, `"messages":[{"role":"user","content":"12345678"}]`, 2},
		{chatPath, `"messages":[{"role":"user","content":"123456789"}]`, 3},
		{chatPath, `"messages":[{"role":"user","content":[{"type":"text","text":"1234"},{"type":"image_url","image_url":{"url":"x"}}]}]`, 1},
		{chatPath, `"messages":[{"role":"user","content":""}]`, 1},
		{chatPath, `"messages":[{"role":"user","content":"ééééé"}]`, 2},
		{textPath, `"prompt":"1234567890123456"`, 4},
		{textPath, `"prompt":["12345"]`, 2},
		{textPath, `"prompt":[1,2,3,4,5,6,7]`, 7},
		{textPath, `"prompt":[[1,2,3]]`, 3},
	} {
		resp := post(t, context.Background(), ts, c.path, `{"model":"m",`+c.input+`}`)
		raw := mustRead(t, resp.Body)
		if w := decodeWire(t, raw); resp.StatusCode != 200 || w.Usage.PromptTokens != c.want {
			t.Errorf("%s: %s, want %d prompt tokens", c.input, raw, c.want)
		}
	}
}

func TestModelsAndHealth(t *testing.T) {
	t.Parallel()
	_, ts := newServer(t, func(c *sim.Config) { c.Models = []string{"listed/b", "listed/a"} })
	for _, m := range []string{"asked/z", "listed/a", "asked/z"} {
		resp := post(t, context.Background(), ts, chatPath, `{"model":"`+m+`","messages":[{"role":"user","content":"hi"}]}`)
		if resp.StatusCode != 200 || decodeWire(t, mustRead(t, resp.Body)).Model != m {
			t.Fatalf("model %s: %d", m, resp.StatusCode)
		}
	}
	resp, err := ts.Client().Get(ts.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Object string
		Data   []struct {
			ID, Object string
			OwnedBy    string `json:"owned_by"`
		}
	}
	if err := json.Unmarshal([]byte(mustRead(t, resp.Body)), &list); err != nil || list.Object != "list" {
		t.Fatalf("%+v %v", list, err)
	}
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, " ") != "asked/z listed/a listed/b" {
		t.Fatalf("models %v", ids)
	}
	resp, err = ts.Client().Get(ts.URL + "/health")
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("X-Ruckus-Simulated") != "true" {
		t.Fatalf("health: %v %v", resp, err)
	}
}

// Each fault, as a client sees it.
func TestFaults(t *testing.T) {
	t.Parallel()
	t.Run("5xx", func(t *testing.T) {
		t.Parallel()
		srv, ts := newServer(t, func(c *sim.Config) { c.HTTP5xx = 1 })
		for _, path := range []string{chatPath, textPath} {
			resp := post(t, context.Background(), ts, path, body(path, ""))
			raw := mustRead(t, resp.Body)
			if resp.StatusCode != 500 || keys(t, raw, "error") != "code,message,param,type" || !strings.Contains(raw, `"type":"server_error"`) {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
		}
		if st := srv.Stats(); st.HTTP5xx != 2 || st.Completed != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
	t.Run("429", func(t *testing.T) {
		t.Parallel()
		srv, ts := newServer(t, func(c *sim.Config) { c.HTTP429 = 1 })
		resp := post(t, context.Background(), ts, chatPath, body(chatPath, ""))
		raw := mustRead(t, resp.Body)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || !strings.Contains(raw, `"type":"rate_limit_error"`) {
			t.Fatalf("%d %v %s", resp.StatusCode, resp.Header, raw)
		}
		if srv.Stats().HTTP429 != 1 {
			t.Fatalf("stats %+v", srv.Stats())
		}
	})
	t.Run("malformed", func(t *testing.T) {
		t.Parallel()
		srv, ts := newServer(t, func(c *sim.Config) { c.Malformed = 1 })
		for _, path := range []string{chatPath, textPath} {
			s := stream(t, ts, path, body(path, ""))
			bad, content := 0, 0
			for _, e := range s.events {
				switch {
				case e.data == "[DONE]":
				case !json.Valid([]byte(e.data)):
					bad++
					if content == 0 || content == 12 {
						t.Fatalf("the malformed event came after %d of 12 content events, want midway", content)
					}
				case strings.Contains(e.data, `"content":"`) && !strings.Contains(e.data, `"content":""`),
					strings.Contains(e.data, `"text":"`) && !strings.Contains(e.data, `"text":""`):
					content++
				}
			}
			if bad != 1 || s.err != nil || s.events[len(s.events)-1].data != "[DONE]" {
				t.Fatalf("%s: %d malformed events, end %v: %v", path, bad, s.err, s.events)
			}
		}
		// Not streaming: the body is cut JSON.
		resp := post(t, context.Background(), ts, chatPath, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
		if raw := mustRead(t, resp.Body); resp.StatusCode != 200 || json.Valid([]byte(raw)) || !strings.HasPrefix(raw, `{"id":"cmpl-sim-`) {
			t.Fatalf("%d %s", resp.StatusCode, raw)
		}
		if st := srv.Stats(); st.Malformed != 3 || st.Completed != 3 {
			t.Fatalf("stats %+v", st)
		}
	})
	t.Run("disconnect", func(t *testing.T) {
		t.Parallel()
		srv, ts := newServer(t, func(c *sim.Config) { c.Disconnect = 1 })
		for _, path := range []string{chatPath, textPath} {
			resp := post(t, context.Background(), ts, path, body(path, ""))
			var got []string
			err := readSSE(resp.Body, func(e event) { got = append(got, e.data) })
			if !errors.Is(err, io.ErrUnexpectedEOF) || len(got) < 1 || slices.Contains(got, "[DONE]") || strings.Contains(strings.Join(got, ""), "finish_reason\":\"") {
				t.Fatalf("%s: ended with %v after %q", path, err, got)
			}
		}
		// Not streaming: no response at all.
		req, _ := http.NewRequest(http.MethodPost, ts.URL+chatPath, strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if resp, err := ts.Client().Do(req); err == nil {
			resp.Body.Close()
			t.Fatalf("non-streaming disconnect answered %d", resp.StatusCode)
		}
		testkit.WaitFor(t, "the handlers to end", func() bool { return srv.InFlight() == 0 })
		if st := srv.Stats(); st.Disconnects != 3 || st.Completed != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
	t.Run("stall until the client gives up", func(t *testing.T) {
		t.Parallel()
		srv, ts := newServer(t, func(c *sim.Config) { c.Stall = 1 })
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		resp := post(t, ctx, ts, chatPath, body(chatPath, ""))
		var mu sync.Mutex
		var got []string
		ended := make(chan error, 1)
		go func() {
			ended <- readSSE(resp.Body, func(e event) { mu.Lock(); got = append(got, e.data); mu.Unlock() })
		}()
		// The server goes silent midway and keeps the connection open.
		testkit.WaitFor(t, "the stall", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return srv.Stats().Stalls == 1 && len(got) >= 2 // role chunk and some content
		})
		select {
		case err := <-ended:
			t.Fatalf("the stream ended (%v) while stalled", err)
		default:
		}
		if st := srv.Stats(); st.InFlight != 1 {
			t.Fatalf("stats while stalled %+v", st)
		}
		cancel() // the client gives up
		if err := <-ended; err == nil {
			t.Fatal("a stalled stream ended cleanly")
		}
		mu.Lock()
		if slices.Contains(got, "[DONE]") || len(got) > 12 {
			t.Fatalf("stalled stream sent %q", got)
		}
		mu.Unlock()
		testkit.WaitFor(t, "the server to give up too", func() bool { st := srv.Stats(); return st.InFlight == 0 && st.Cancelled == 1 })
	})
	t.Run("stall until stall_max", func(t *testing.T) {
		t.Parallel()
		srv, ts := newServer(t, func(c *sim.Config) { c.Stall = 1; c.StallMax = 50 * time.Millisecond })
		resp := post(t, context.Background(), ts, chatPath, body(chatPath, ""))
		var got []string
		err := readSSE(resp.Body, func(e event) { got = append(got, e.data) })
		if !errors.Is(err, io.ErrUnexpectedEOF) || slices.Contains(got, "[DONE]") || len(got) < 2 {
			t.Fatalf("ended with %v after %q", err, got)
		}
		if st := srv.Stats(); st.Stalls != 1 || st.Completed != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// With shares of faults, about that share of requests fail that way.
func TestFaultShares(t *testing.T) {
	t.Parallel()
	srv, ts := newServer(t, func(c *sim.Config) {
		c.TTFT, c.ITL, c.OutputTokens = sim.MustParseDist("const:0s"), sim.MustParseDist("const:0s"), sim.MustParseDist("const:2")
		c.HTTP5xx, c.HTTP429, c.Malformed = 0.2, 0.1, 0.3
	})
	codes := map[int]int{}
	const n = 1000
	for range n {
		resp := post(t, context.Background(), ts, chatPath, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
		_ = mustRead(t, resp.Body)
		codes[resp.StatusCode]++
	}
	st := srv.Stats()
	near := func(got int64, share float64) bool { return math.Abs(float64(got)-share*n) < 0.05*n }
	if !near(int64(codes[500]), 0.2) || !near(int64(codes[429]), 0.1) || !near(st.Malformed, 0.3) ||
		st.HTTP5xx != int64(codes[500]) || st.HTTP429 != int64(codes[429]) || int64(codes[200]) != st.Completed {
		t.Fatalf("codes %v, stats %+v", codes, st)
	}
}

// Past its batch size the server slows down: with a batch of one, four
// requests at once each take several times as long per token as one
// alone.
func TestBatchSlowsDownPastItsSize(t *testing.T) {
	t.Parallel()
	srv, ts := newServer(t, func(c *sim.Config) {
		c.Batch = 1
		c.TTFT, c.ITL, c.OutputTokens = sim.MustParseDist("const:0s"), sim.MustParseDist("const:5ms"), sim.MustParseDist("const:40")
	})
	perToken := func(s streamed) time.Duration {
		var content []time.Time
		for _, e := range s.events {
			if strings.Contains(e.data, `"content":"`) && !strings.Contains(e.data, `"content":""`) {
				content = append(content, e.at)
			}
		}
		if len(content) != 40 {
			t.Fatalf("%d content events", len(content))
		}
		return content[39].Sub(content[0]) / 39
	}
	alone := perToken(stream(t, ts, chatPath, body(chatPath, "")))
	var wg sync.WaitGroup
	together := make([]time.Duration, 4)
	for i := range together {
		wg.Go(func() { together[i] = perToken(stream(t, ts, chatPath, body(chatPath, ""))) })
	}
	wg.Wait()
	for _, d := range together {
		if d < 2*alone {
			t.Fatalf("four at once on a batch of one: %v per token; alone %v", together, alone)
		}
	}
	if st := srv.Stats(); st.Completed != 5 || st.InFlight != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// The request parser reads what clients send: whatever the body, the
// answer is a 200 or an OpenAI error, never a panic.
func FuzzCompletionRequest(f *testing.F) {
	for _, s := range []string{
		body(chatPath, ""), body(textPath, `"max_tokens":1`), `{"model":"m","prompt":[[1,2]],"n":1}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x"}]}],"seed":3,"temperature":1}`,
		`{"model":"m","messages":null}`, `{}`, `null`, `{"model":"m","prompt":"x","max_completion_tokens":2,"stream":true}`,
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	cfg := sim.DefaultConfig()
	cfg.TTFT, cfg.ITL, cfg.OutputTokens = sim.MustParseDist("const:0s"), sim.MustParseDist("const:0s"), sim.MustParseDist("const:3")
	srv := sim.NewServer(cfg, nil)
	f.Fuzz(func(t *testing.T, b string, chat bool) {
		path := textPath
		if chat {
			path = chatPath
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(b)))
		switch rec.Code {
		case 200:
			if rec.Header().Get("Content-Type") == "text/event-stream" {
				if !bytes.HasSuffix(rec.Body.Bytes(), []byte("data: [DONE]\n\n")) {
					t.Fatalf("%s: stream %s", b, rec.Body)
				}
			} else if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("%s: %s", b, rec.Body)
			}
		case 400:
			if !strings.Contains(rec.Body.String(), `"invalid_request_error"`) {
				t.Fatalf("%s: %s", b, rec.Body)
			}
		default:
			t.Fatalf("%s: %d %s", b, rec.Code, rec.Body)
		}
	})
}
