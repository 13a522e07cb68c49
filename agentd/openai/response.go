package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ruckus/ruckus/jobs"
)

// chunk is the part of a streamed chunk, or of a whole (non-streaming)
// response, that Ruckus reads. Fields whose shape varies between runtimes
// and that Ruckus reads only on error are kept raw, so an odd value there
// does not fail a good response.
type chunk struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Message json.RawMessage `json:"message"` // vLLM's bare error object: {"object":"error","message":…}
	Choices []choice        `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type choice struct {
	Delta        *message `json:"delta"`   // streamed chat
	Message      *message `json:"message"` // whole chat response
	Text         string   `json:"text"`    // completions, streamed or whole
	FinishReason *string  `json:"finish_reason"`
}

type message struct {
	Content string `json:"content"`
	// Reasoning models stream their thinking apart from the answer:
	// vLLM and SGLang as reasoning_content, newer vLLM and Ollama as
	// reasoning.
	ReasoningContent string     `json:"reasoning_content"`
	Reasoning        string     `json:"reasoning"`
	ToolCalls        []toolCall `json:"tool_calls"`
}

type toolCall struct {
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// usage counts are read as numbers of any form ("12" or "12.0"): a
// runtime's number formatting must not fail the request.
type usage struct {
	PromptTokens     float64 `json:"prompt_tokens"`
	CompletionTokens float64 `json:"completion_tokens"`
}

// count turns a usage number into a token count, refusing the absurd.
func count(v float64) int {
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	return int(min(math.Round(v), math.MaxInt32))
}

// measure collects one request's outcome as the response is read.
type measure struct {
	now    func() time.Time
	send   time.Time
	end    time.Time // the last event read, or when reading ended
	status int
	id     string
	events []contentEvent
	output strings.Builder
	finish string

	haveUsage          bool
	prompt, completion int
	cumAtLastEvent     int // completion_tokens reported with the last content event

	sawDone bool
}

// take applies one decoded chunk that arrived at t. It returns the
// runtime's error message when the chunk is an error.
//
// Generated content is the chat delta's (or message's) content, the
// completion's text, reasoning (reasoning_content or reasoning) and tool
// call names and arguments: all are tokens the model generated, so all
// time TTFT and ITL and count towards the estimate. Only content and text
// go into the Output, the answer that scorers read; reasoning is not part
// of the answer, and tool calls are not text.
func (m *measure) take(c chunk, t time.Time) string {
	if m.id == "" {
		m.id = c.ID
	}
	if isSet(c.Error) {
		return errorMessage(c.Error)
	}
	if c.Object == "error" {
		if isSet(c.Message) {
			return errorMessage(c.Message)
		}
		return "an error object without a message"
	}
	var out, gen joined
	for _, ch := range c.Choices {
		for _, msg := range []*message{ch.Delta, ch.Message} {
			if msg == nil {
				continue
			}
			out.add(msg.Content)
			gen.add(msg.Content)
			gen.add(msg.ReasoningContent)
			gen.add(msg.Reasoning)
			for _, tc := range msg.ToolCalls {
				gen.add(tc.Function.Name)
				gen.add(tc.Function.Arguments)
			}
		}
		out.add(ch.Text)
		gen.add(ch.Text)
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			m.finish = *ch.FinishReason
		}
	}
	if c.Usage != nil {
		m.haveUsage = true
		m.prompt, m.completion = count(c.Usage.PromptTokens), count(c.Usage.CompletionTokens)
	}
	if g := gen.String(); g != "" {
		m.output.WriteString(out.String())
		e := contentEvent{at: t, estimate: estimateTokens(g), chars: runes(g)}
		if c.Usage != nil {
			e.reported = max(m.completion-m.cumAtLastEvent, 0)
			m.cumAtLastEvent = m.completion
		}
		m.events = append(m.events, e)
	}
	return ""
}

// joined concatenates strings, copying only when a second non-empty one
// comes: an event nearly always carries one piece of text, and joining it
// through a strings.Builder cost an allocation per event.
type joined struct {
	s string
	b *strings.Builder
}

func (j *joined) add(p string) {
	switch {
	case p == "":
	case j.b != nil:
		j.b.WriteString(p)
	case j.s == "":
		j.s = p
	default:
		j.b = &strings.Builder{}
		j.b.WriteString(j.s)
		j.b.WriteString(p)
	}
}

func (j *joined) String() string {
	if j.b != nil {
		return j.b.String()
	}
	return j.s
}

func isSet(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// errorMessage finds the human-readable part of an error a runtime sent:
// {"message":…} (OpenAI, vLLM), a bare string (TGI), {"detail":…}
// (FastAPI), or the raw text.
func errorMessage(raw []byte) string {
	var e struct {
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Error   json.RawMessage `json:"error"`
	}
	var s string
	switch {
	case json.Unmarshal(raw, &s) == nil && s != "":
		return snippet([]byte(s))
	case json.Unmarshal(raw, &e) == nil:
		for _, v := range []json.RawMessage{e.Message, e.Error, e.Detail} {
			if isSet(v) {
				return errorMessage(v)
			}
		}
	}
	return snippet(raw)
}

// snippet is text fit for an error message: one line, at most 300 bytes.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "�")), " ")
	if len(s) <= 300 {
		return s
	}
	cut := 300
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// stream reads events until [DONE] or the end of the body. It returns the
// error class and message, both empty on success.
//
// A stream that ends without [DONE] is still a success when a
// finish_reason came (some runtimes omit [DONE]); without either it was
// cut short. An error event ends the request at once, keeping the output
// so far.
func (m *measure) stream(events *sseReader) (class, msg string) {
	var c, prev chunk // one of each per stream, not per event
	for n := 1; ; n++ {
		ev, done, class, msg := m.nextEvent(events, "no finish_reason and no [DONE]")
		if done {
			return class, msg
		}
		data := bytes.TrimSpace(ev.data)
		if ev.kind == "error" {
			return jobs.ErrRuntime, "the runtime reported an error: " + errorMessage(data)
		}
		if len(data) == 0 {
			continue
		}
		if bytes.Equal(data, []byte("[DONE]")) {
			m.sawDone = true
			return "", ""
		}
		prev.ID, prev.Object = c.ID, c.Object
		c = chunk{}
		if err := decodeChunk(data, &c, &prev); err != nil {
			if ev.unterminated {
				return jobs.ErrDisconnect, "the stream ended in the middle of an event"
			}
			return jobs.ErrMalformed, fmt.Sprintf("event %d is not a JSON chunk (%v): %s", n, err, snippet(data))
		}
		if e := m.take(c, ev.at); e != "" {
			return jobs.ErrRuntime, "the runtime reported an error: " + e
		}
	}
}

// nextEvent reads the next event of a stream. When the stream ends (done)
// it gives the outcome: a success when a finish reason came, else the
// class and message of how it ended (missing says what never came).
func (m *measure) nextEvent(events *sseReader, missing string) (ev sseEvent, done bool, class, msg string) {
	ev, err := events.next()
	if err == nil {
		m.end = ev.at
		return ev, false, "", ""
	}
	m.end = m.now()
	switch {
	case errors.Is(err, io.EOF):
		if m.finish != "" {
			return ev, true, "", ""
		}
		return ev, true, jobs.ErrDisconnect, "the stream ended before the response finished (" + missing + ")"
	case errors.Is(err, errLineTooLong):
		return ev, true, jobs.ErrMalformed, err.Error()
	}
	class, msg = readFailure(err)
	return ev, true, class, msg
}

// readWhole reads a non-streaming response's body, bounded, and marks the
// end of the request.
func (m *measure) readWhole(body io.Reader) (b []byte, class, msg string) {
	b, err := io.ReadAll(io.LimitReader(body, maxLine+1))
	m.end = m.now()
	if err != nil {
		class, msg = readFailure(err)
		return nil, class, msg
	}
	if len(b) > maxLine {
		return nil, jobs.ErrMalformed, fmt.Sprintf("the response body is larger than %d MiB", maxLine>>20)
	}
	return b, "", ""
}

// whole reads a non-streaming response (from a server that ignored
// "stream"): the whole answer arrives at once, so TTFT = E2E = send → body
// read, and the tokens come from the body's usage.
func (m *measure) whole(body io.Reader) (class, msg string) {
	b, class, msg := m.readWhole(body)
	if class != "" {
		return class, msg
	}
	var c chunk
	if err := json.Unmarshal(b, &c); err != nil {
		return jobs.ErrMalformed, fmt.Sprintf("the response is neither an event stream nor a JSON response (%v): %s", err, snippet(b))
	}
	if e := m.take(c, m.end); e != "" {
		return jobs.ErrRuntime, "the runtime reported an error: " + e
	}
	if c.Choices == nil {
		return jobs.ErrMalformed, "the JSON response has no choices: " + snippet(b)
	}
	return "", ""
}

// isEventStream decides how to read a successful response: by its
// Content-Type when that says, else by its first non-blank byte (a JSON
// response starts with '{', an event stream with a field or a comment).
func isEventStream(contentType string, br *bufio.Reader) bool {
	ct := strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	switch ct {
	case "text/event-stream":
		return true
	case "application/json":
		return false
	}
	for i := 1; i <= 4096; i++ {
		b, err := br.Peek(i)
		if err != nil {
			return true
		}
		switch b[i-1] {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return false
		}
		return true
	}
	return true
}

// result is the record of the request: the timings from what arrived,
// with the error class and message when it failed (the partial output is
// kept).
//
// Output tokens are the runtime's usage.completion_tokens. When it sent no
// usage they are estimated, the sum of estimateTokens over the content
// events, and flagged as estimated — unless no content arrived either,
// when zero is simply what was received.
func (m *measure) result(class, msg string) jobs.Result {
	r := jobs.Result{
		Status:       jobs.StatusOK,
		Output:       m.output.String(),
		FinishReason: m.finish,
		PromptTokens: m.prompt,
		HTTPStatus:   m.status,
		RequestID:    m.id,
	}
	tokens := m.completion
	if !m.haveUsage {
		tokens = 0
		for _, e := range m.events {
			tokens += e.estimate
		}
		r.TokensEstimated = len(m.events) > 0
	}
	r.CompletionTokens = tokens
	t := computeTimings(m.send, m.events, m.end, tokens)
	r.TTFT, r.E2E, r.TPOT = t.TTFT, t.E2E, t.TPOT
	r.ITLMean, r.ITLP50, r.ITLP99, r.ITLMax = t.ITLMean, t.ITLP50, t.ITLP99, t.ITLMax
	r.ITLGapsMicros, r.ITLTokens = t.GapsMicros, t.Tokens
	r.ContentEvents = len(m.events)
	if class != "" {
		r.Status, r.ErrorClass, r.Error = jobs.StatusError, class, msg
	}
	return r
}
