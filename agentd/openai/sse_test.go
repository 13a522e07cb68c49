package openai

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// tick is a clock that moves 1 ms on every reading, so timings come out
// the same however the bytes are split into reads.
type tick struct{ n int }

func (c *tick) now() time.Time { c.n++; return at(float64(c.n)) }

// readAllEvents reads every event from b with the given read sizes.
func readAllEvents(t *testing.T, r io.Reader) ([]sseEvent, error) {
	t.Helper()
	clock := &tick{}
	s := newSSEReader(r, clock.now, nil)
	var out []sseEvent
	for {
		e, err := s.next()
		if err != nil {
			return out, err
		}
		e.at = time.Time{}
		e.data = bytes.Clone(e.data) // the reader's buffer, reused by the next call
		out = append(out, e)
	}
}

func TestSSEReader(t *testing.T) {
	t.Parallel()
	type event = sseEvent
	long := strings.Repeat("x", 1<<20) // a 1 MiB line: past bufio.Scanner's 64 KiB
	for _, c := range []struct {
		name string
		in   string
		want []event
	}{
		{"LF", "data: a\n\ndata: b\n\n", []event{{data: []byte("a")}, {data: []byte("b")}}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []event{{data: []byte("a")}, {data: []byte("b")}}},
		{"CR only", "data: a\r\rdata: b\r\r", []event{{data: []byte("a")}, {data: []byte("b")}}},
		{"no space after the colon", "data:a\n\ndata:  b\n\n", []event{{data: []byte("a")}, {data: []byte(" b")}}},
		{"comments and keep-alives", ": ping\n\n:\ndata: a\n: inside\n\n", []event{{data: []byte("a")}}},
		{"multi-line event", "data: {\ndata: \"k\": 1\ndata: }\n\n", []event{{data: []byte("{\n\"k\": 1\n}")}}},
		{"event type", "event: error\ndata: x\n\ndata: y\n\n", []event{{kind: "error", data: []byte("x")}, {data: []byte("y")}}},
		{"event type without data is dropped", "event: ping\n\ndata: y\n\n", []event{{data: []byte("y")}}},
		{"other fields ignored", "id: 7\nretry: 100\nfoo: bar\ndata: a\n\n", []event{{data: []byte("a")}}},
		{"field without a colon", "data\n\n", []event{{data: []byte("")}}},
		{"no data: not dispatched", "\n\n\nid: 1\n\n", nil},
		{"byte order mark", "\uFEFFdata: a\n\n", []event{{data: []byte("a")}}},
		{"unterminated last event", "data: a\n\ndata: [DONE]\n", []event{{data: []byte("a")}, {data: []byte("[DONE]"), unterminated: true}}},
		{"unterminated last line", "data: [DONE]", []event{{data: []byte("[DONE]"), unterminated: true}}},
		{"very long line", "data: " + long + "\n\n", []event{{data: []byte(long)}}},
		{"empty", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, rd := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", strings.NewReader(c.in)},
				{"byte by byte", iotest.OneByteReader(strings.NewReader(c.in))},
				{"halves", iotest.HalfReader(strings.NewReader(c.in))},
			} {
				got, err := readAllEvents(t, rd.r)
				if err != io.EOF {
					t.Fatalf("%s: error %v, want io.EOF", rd.name, err)
				}
				if len(got) != len(c.want) {
					t.Fatalf("%s: %d events, want %d: %+v", rd.name, len(got), len(c.want), got)
				}
				for i := range got {
					if got[i].kind != c.want[i].kind || !bytes.Equal(got[i].data, c.want[i].data) || got[i].unterminated != c.want[i].unterminated {
						t.Errorf("%s: event %d = %+v, want %+v", rd.name, i, got[i], c.want[i])
					}
				}
			}
		})
	}
}

func TestSSEReaderRefusesEndlessLines(t *testing.T) {
	t.Parallel()
	r := io.MultiReader(strings.NewReader("data: "), &repeat{b: 'x', n: maxLine + 10})
	_, err := readAllEvents(t, r)
	if !errors.Is(err, errLineTooLong) {
		t.Fatalf("error %v, want errLineTooLong", err)
	}
}

// repeat yields n copies of b.
type repeat struct {
	b byte
	n int
}

func (r *repeat) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = r.b
	}
	r.n -= k
	return k, nil
}

// seg is one scripted arrival: data that the body yields at ms.
type seg struct {
	ms   float64
	data string
}

// scripted is a response body whose clock reads the arrival time of the
// data being read, so tests can assert exact timings without sleeping.
type scripted struct {
	segs []seg
	i    int
	t    time.Time
}

func (s *scripted) Read(p []byte) (int, error) {
	if s.i >= len(s.segs) {
		return 0, io.EOF
	}
	sg := &s.segs[s.i]
	s.t = at(sg.ms)
	n := copy(p, sg.data)
	if sg.data = sg.data[n:]; sg.data == "" {
		s.i++
	}
	return n, nil
}

func (s *scripted) now() time.Time { return s.t }

// parse reads a scripted stream sent at t0 into its result.
func parse(segs ...seg) jobs.Result {
	sc := &scripted{segs: segs, t: t0}
	m := &measure{now: sc.now, send: t0}
	class, msg := m.stream(newSSEReader(sc, sc.now, nil))
	return m.result(class, msg)
}

// Chunks as OpenAI-compatible runtimes send them.
func data(v string) string { return "data: " + v + "\n\n" }

func contentChunk(s string) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}],"usage":null}`, s)
}

func usageChunk(prompt, completion int) string {
	return fmt.Sprintf(`{"id":"c1","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, prompt, completion, prompt+completion)
}

func finishChunk(reason string) string {
	return `{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

const (
	roleChunk = `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`
	done      = "data: [DONE]\n\n"
)

// want is what a parsed stream must give; times in ms from the send.
type want struct {
	class, output, finish string
	tokens, events        int
	estimated             bool
	ttft, e2e, tpot       float64
	itlMean, p50, p99, mx float64
	errContains           string
}

func check(t *testing.T, r jobs.Result, w want) {
	t.Helper()
	status := jobs.StatusOK
	if w.class != "" {
		status = jobs.StatusError
	}
	if r.Status != status || r.ErrorClass != w.class || r.Output != w.output || r.FinishReason != w.finish ||
		r.CompletionTokens != w.tokens || r.ContentEvents != w.events || r.TokensEstimated != w.estimated {
		t.Errorf("result %+v\nwant %+v", r, w)
	}
	if !strings.Contains(r.Error, w.errContains) || (w.class != "" && r.Error == "") {
		t.Errorf("error %q, want one containing %q", r.Error, w.errContains)
	}
	got := []time.Duration{r.TTFT, r.E2E, r.TPOT, r.ITLMean, r.ITLP50, r.ITLP99, r.ITLMax}
	exp := []time.Duration{dur(w.ttft), dur(w.e2e), dur(w.tpot), dur(w.itlMean), dur(w.p50), dur(w.p99), dur(w.mx)}
	for i, name := range []string{"TTFT", "E2E", "TPOT", "ITL mean", "ITL p50", "ITL p99", "ITL max"} {
		if !closeTo(got[i], exp[i]) {
			t.Errorf("%s = %v, want %v", name, got[i], exp[i])
		}
	}
}

func TestStreamMetrics(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		segs []seg
		want want
	}{
		{
			// The role chunk at 0 does not start TTFT. Samples [20 30]:
			// p99 (h=0.99) = 20 + 0.99·10. TPOT = 50/2.
			name: "role chunk, single tokens, finish, usage-only last chunk",
			segs: []seg{{0, data(roleChunk)}, {100, data(contentChunk("Hello"))}, {120, data(contentChunk(" big"))},
				{150, data(contentChunk(" world"))}, {150, data(finishChunk("stop"))}, {155, data(usageChunk(5, 3))}, {160, done}},
			want: want{output: "Hello big world", finish: "stop", tokens: 3, events: 3,
				ttft: 100, e2e: 150, tpot: 25, itlMean: 25, p50: 25, p99: 29.9, mx: 30},
		},
		{
			// Usage 7 over 3 events estimated at 1, 2 and 3 tokens: extras
			// 4 by 0:1:2 → shares 1, 2, 4. Samples 40/2 (×2), 60/4 = 15
			// (×4); sorted [15 15 15 15 20 20]: mean 100/6, p50 (h=2.5)
			// 15, p99 (h=4.95) 20. TPOT = 100/6.
			name: "multi-token chunks with a usage total",
			segs: []seg{{0, data(roleChunk)}, {100, data(contentChunk("Hello"))}, {140, data(contentChunk(" big world"))},
				{200, data(contentChunk(" and more text"))}, {200, data(finishChunk("length"))}, {200, data(usageChunk(5, 7))}, {200, done}},
			want: want{output: "Hello big world and more text", finish: "length", tokens: 7, events: 3,
				ttft: 100, e2e: 200, tpot: 100.0 / 6, itlMean: 100.0 / 6, p50: 15, p99: 20, mx: 20},
		},
		{
			// Cumulative usage in every chunk (vLLM continuous_usage_stats):
			// the events carried 1, 2 and 1 tokens. Samples 15, 15, 20:
			// p99 (h=1.98) = 15 + 0.98·5. TPOT = 50/3.
			name: "per-chunk usage",
			segs: []seg{
				{0, data(`{"id":"c1","choices":[{"delta":{"role":"assistant","content":""}}],"usage":{"prompt_tokens":5,"completion_tokens":0}}`)},
				{100, data(`{"id":"c1","choices":[{"delta":{"content":"Hello"}}],"usage":{"prompt_tokens":5,"completion_tokens":1}}`)},
				{130, data(`{"id":"c1","choices":[{"delta":{"content":" big world"}}],"usage":{"prompt_tokens":5,"completion_tokens":3}}`)},
				{150, data(`{"id":"c1","choices":[{"delta":{"content":"!"}}],"usage":{"prompt_tokens":5,"completion_tokens":4}}`)},
				{150, data(`{"id":"c1","choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":4}}`)},
				{150, data(usageChunk(5, 4))}, {150, done}},
			want: want{output: "Hello big world!", finish: "stop", tokens: 4, events: 3,
				ttft: 100, e2e: 150, tpot: 50.0 / 3, itlMean: 50.0 / 3, p50: 15, p99: 19.9, mx: 20},
		},
		{
			// No usage: estimated 1 + 2 ("," " world") + 1 = 4 tokens.
			// Extras 1 by 0:1:0 → shares 1, 2, 1. Samples 10, 10, 20:
			// mean 40/3, p50 10, p99 (h=1.98) 10 + 0.98·10. TPOT = 40/3.
			name: "no usage: estimated",
			segs: []seg{{0, data(roleChunk)}, {100, data(contentChunk("Hello"))}, {120, data(contentChunk(", world"))},
				{140, data(contentChunk("!"))}, {140, data(finishChunk("stop"))}, {145, done}},
			want: want{output: "Hello, world!", finish: "stop", tokens: 4, events: 3, estimated: true,
				ttft: 100, e2e: 140, tpot: 40.0 / 3, itlMean: 40.0 / 3, p50: 10, p99: 19.8, mx: 20},
		},
		{
			// Reasoning is generated content: it starts TTFT and is timed,
			// but the Output holds the answer only.
			name: "reasoning content times but is not output",
			segs: []seg{{0, data(roleChunk)},
				{50, data(`{"choices":[{"delta":{"reasoning_content":"Let me think."}}]}`)},
				{90, data(`{"choices":[{"delta":{"reasoning":" Hmm"}}]}`)},
				{120, data(contentChunk("42"))}, {120, data(finishChunk("stop"))}, {120, data(usageChunk(5, 5))}, {120, done}},
			// Estimates 4 ("Let" " me" " think" "."), 1, 1; usage 5 →
			// extras 2 by 3:0:0 → shares 3, 1, 1. Samples 40, 30: mean 35,
			// p99 (h=0.99) 30 + 0.99·10. TPOT = 70/4.
			want: want{output: "42", finish: "stop", tokens: 5, events: 3,
				ttft: 50, e2e: 120, tpot: 17.5, itlMean: 35, p50: 35, p99: 39.9, mx: 40},
		},
		{
			name: "tool call arguments are generated content",
			segs: []seg{{0, data(roleChunk)},
				{40, data(`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"get","arguments":""}}]}}]}`)},
				{60, data(`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}`)},
				{60, data(finishChunk("tool_calls"))}, {60, data(usageChunk(5, 2))}, {60, done}},
			want: want{finish: "tool_calls", tokens: 2, events: 2, ttft: 40, e2e: 60, tpot: 20, itlMean: 20, p50: 20, p99: 20, mx: 20},
		},
		{
			name: "completions endpoint",
			segs: []seg{{30, data(`{"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":"Once","finish_reason":null}]}`)},
				{60, data(`{"id":"cmpl-1","choices":[{"index":0,"text":" upon","finish_reason":null}]}`)},
				{60, data(`{"id":"cmpl-1","choices":[{"index":0,"text":"","finish_reason":"length"}]}`)},
				{61, data(usageChunk(3, 2))}, {70, done}},
			want: want{output: "Once upon", finish: "length", tokens: 2, events: 2, ttft: 30, e2e: 60, tpot: 30, itlMean: 30, p50: 30, p99: 30, mx: 30},
		},
		{
			name: "CRLF, no space after data:, keep-alives, multi-line event",
			segs: []seg{{0, ": keep-alive\r\n\r\n"}, {20, "data:" + roleChunk + "\r\n\r\n"},
				{50, "data: {\"choices\":[{\"delta\":\r\ndata: {\"content\":\"a\"}}]}\r\n\r\n"}, {70, ": ping\r\n\r\n"},
				{80, "data:" + contentChunk("b") + "\r\n\r\n"}, {80, "data:" + usageChunk(1, 2) + "\r\n\r\n"}, {90, "data:[DONE]\r\n\r\n"}},
			want: want{output: "ab", tokens: 2, events: 2, ttft: 50, e2e: 80, tpot: 30, itlMean: 30, p50: 30, p99: 30, mx: 30},
		},
		{
			name: "no [DONE] but a finish_reason: complete",
			segs: []seg{{10, data(contentChunk("a"))}, {20, data(finishChunk("stop"))}, {30, data(usageChunk(1, 1))}},
			want: want{output: "a", finish: "stop", tokens: 1, events: 1, ttft: 10, e2e: 10},
		},
		{
			name: "[DONE] without a final blank line",
			segs: []seg{{10, data(contentChunk("a"))}, {12, data(usageChunk(1, 1))}, {20, "data: [DONE]"}},
			want: want{output: "a", tokens: 1, events: 1, ttft: 10, e2e: 10},
		},
		{
			// With no content E2E runs to the end of the stream.
			name: "no content at all",
			segs: []seg{{0, data(roleChunk)}, {30, data(finishChunk("stop"))}, {30, data(usageChunk(4, 0))}, {40, done}},
			want: want{finish: "stop", e2e: 40},
		},
		{
			name: "error: null in ordinary chunks",
			segs: []seg{{10, data(`{"choices":[{"delta":{"content":"a"}}],"error":null}`)}, {10, data(usageChunk(1, 1))}, {10, done}},
			want: want{output: "a", tokens: 1, events: 1, ttft: 10, e2e: 10},
		},
		{
			name: "disconnect: no [DONE], no finish_reason, partial output kept",
			segs: []seg{{0, data(roleChunk)}, {10, data(contentChunk("par"))}, {20, data(contentChunk("tial"))}},
			want: want{class: jobs.ErrDisconnect, output: "partial", tokens: 2, events: 2, estimated: true,
				ttft: 10, e2e: 20, tpot: 10, itlMean: 10, p50: 10, p99: 10, mx: 10, errContains: "ended before the response finished"},
		},
		{
			name: "cut in the middle of an event",
			segs: []seg{{10, data(contentChunk("a"))}, {20, `data: {"choices":[{"del`}},
			want: want{class: jobs.ErrDisconnect, output: "a", tokens: 1, events: 1, estimated: true, ttft: 10, e2e: 10,
				errContains: "in the middle of an event"},
		},
		{
			name: "malformed event mid-stream",
			segs: []seg{{10, data(contentChunk("ok"))}, {20, data(`{"choices": [ not json`)}, {30, data(contentChunk("never"))}},
			want: want{class: jobs.ErrMalformed, output: "ok", tokens: 1, events: 1, estimated: true, ttft: 10, e2e: 10,
				errContains: "event 2 is not a JSON chunk"},
		},
		{
			name: "a chunk of the wrong shape",
			segs: []seg{{10, data(`{"choices":{"delta":"x"}}`)}},
			want: want{class: jobs.ErrMalformed, e2e: 10, errContains: "not a JSON chunk"},
		},
		{
			name: "OpenAI-style error event",
			segs: []seg{{10, data(contentChunk("x"))}, {20, data(`{"error":{"message":"CUDA out of memory","type":"InternalServerError","code":500}}`)}},
			want: want{class: jobs.ErrRuntime, output: "x", tokens: 1, events: 1, estimated: true, ttft: 10, e2e: 10,
				errContains: "CUDA out of memory"},
		},
		{
			name: "vLLM bare error object",
			segs: []seg{{10, data(`{"object":"error","message":"max_tokens is too large","type":"BadRequestError","code":400}`)}},
			want: want{class: jobs.ErrRuntime, e2e: 10, errContains: "max_tokens is too large"},
		},
		{
			name: "TGI string error",
			segs: []seg{{10, data(`{"error":"Input validation error: inputs too long","error_type":"validation"}`)}},
			want: want{class: jobs.ErrRuntime, e2e: 10, errContains: "Input validation error"},
		},
		{
			name: "error event type",
			segs: []seg{{10, "event: error\ndata: {\"message\":\"overloaded\"}\n\n"}},
			want: want{class: jobs.ErrRuntime, e2e: 10, errContains: "overloaded"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			check(t, parse(c.segs...), c.want)
		})
	}
}

func TestStreamKeepsTheRequestID(t *testing.T) {
	t.Parallel()
	r := parse(seg{0, data(roleChunk)}, seg{1, data(contentChunk("a"))}, seg{2, done})
	if r.RequestID != "c1" {
		t.Fatalf("request id %q", r.RequestID)
	}
}

// FuzzSSE feeds arbitrary bytes, as an untrusted runtime might send them,
// through the event reader and the stream interpreter. It must never
// panic or hang, every failure must have a class, the figures must be
// sane, and the result must not depend on how the bytes were split into
// reads.
func FuzzSSE(f *testing.F) {
	for _, s := range []string{
		data(roleChunk) + data(contentChunk("x")) + data(usageChunk(1, 1)) + done,
		"data:{\"choices\":[{\"text\":\"a\"}]}\r\n\r\n: keep-alive\n\ndata: [DONE]\n\n",
		"data: {\"error\":\"x\"}\n\n",
		"event: error\ndata: {\ndata: }\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"usage\":{\"completion_tokens\":3}}\r\rdata: [DONE]",
		"data: {\"object\":\"error\",\"message\":{\"error\":{\"detail\":\"d\"}}}\n\n",
		"\uFEFFdata: {\"choices\":[{\"delta\":{\"reasoning\":\"r\",\"tool_calls\":[{\"function\":{\"arguments\":\"{}\"}}]}}]}\n\n",
		"data: {\"choices\":[{\"text\":\"1 2\"}],\"usage\":{\"completion_tokens\":1e300}}\n\ndata: {\"choices\":[{\"text\":\"3\",\"finish_reason\":\"stop\"}]}",
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, b []byte, split uint8) {
		run := func(r io.Reader) jobs.Result {
			clock := &tick{}
			m := &measure{now: clock.now, send: t0}
			class, msg := m.stream(newSSEReader(r, clock.now, nil))
			return m.result(class, msg)
		}
		r := run(bytes.NewReader(b))
		if again := run(&chunked{b: b, n: int(split%13) + 1}); !reflect.DeepEqual(r, again) {
			t.Fatalf("the result depends on how the stream is split:\n%+v\n%+v", r, again)
		}
		switch {
		case r.Status == jobs.StatusOK && r.ErrorClass == "" && r.Error == "":
		case r.Status == jobs.StatusError && r.ErrorClass != "" && r.Error != "":
			switch r.ErrorClass {
			case jobs.ErrDisconnect, jobs.ErrMalformed, jobs.ErrRuntime:
			default:
				t.Fatalf("class %q from a stream", r.ErrorClass)
			}
		default:
			t.Fatalf("status %q class %q error %q", r.Status, r.ErrorClass, r.Error)
		}
		if r.CompletionTokens < 0 || r.PromptTokens < 0 || r.ContentEvents < 0 || r.ContentEvents > bytes.Count(b, []byte("data")) {
			t.Fatalf("counts %+v", r)
		}
		if r.TTFT < 0 || r.E2E < r.TTFT || r.TPOT < 0 || r.ITLP50 < 0 || r.ITLP50 > r.ITLP99 || r.ITLP99 > r.ITLMax {
			t.Fatalf("timings %+v", r)
		}
		if (r.ContentEvents == 0) != (r.TTFT == 0) {
			t.Fatalf("TTFT %v with %d content events", r.TTFT, r.ContentEvents)
		}
	})
}

// chunked yields b at most n bytes per read.
type chunked struct {
	b []byte
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[k:]
	return k, nil
}
