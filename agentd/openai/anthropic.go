package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// Anthropic's Messages API (Client.Dialect jobs.DialectAnthropic). The
// request BuildRequest made is translated (toMessages) and sent to POST
// /v1/messages with x-api-key and anthropic-version; its event stream is
// read by measure.messages into the same measure as a chat completion's,
// so TTFT, ITL, TPOT and E2E mean exactly what they mean for OpenAI's
// dialect:
//
//   - content is a content_block_delta's text_delta (the answer),
//     thinking_delta (reasoning) or input_json_delta (a tool call's
//     arguments); all are generated tokens and time TTFT and ITL, only the
//     text goes into the Output;
//   - prompt tokens are message_start's usage.input_tokens (plus cached
//     input tokens read or written); output tokens message_delta's
//     cumulative usage.output_tokens, the last one sent;
//   - the finish reason is message_delta's stop_reason (end_turn,
//     max_tokens, stop_sequence, tool_use);
//   - the answer is whole at message_stop; an error event
//     ({"type":"error","error":{"type":…,"message":…}}) ends it as a
//     runtime error naming the error's type.

// PathMessages is the Messages API's endpoint.
const PathMessages = "/v1/messages"

// AnthropicVersion is the API version requested (anthropic-version).
const AnthropicVersion = "2023-06-01"

// DefaultMessagesMaxTokens is max_tokens for an item that sets none,
// since the Messages API requires it (benchmarks always set it).
const DefaultMessagesMaxTokens = 4096

// toMessages translates a chat completions (or completions) request, as
// BuildRequest built it, into a Messages API request: system and
// developer messages become the top-level system prompt, user and
// assistant messages pass with their text (a string or text parts),
// max_tokens (or max_completion_tokens) and temperature, top_p and stop
// (as stop_sequences) are kept. Fields the Messages API has no place for
// (seed, n, stream_options, penalties, logprobs…) are dropped; messages
// it cannot carry (tool results, images) fail the item as invalid.
func toMessages(r Request) (Request, error) {
	var in struct {
		Model               string            `json:"model"`
		Messages            []json.RawMessage `json:"messages"`
		Prompt              json.RawMessage   `json:"prompt"`
		MaxTokens           *int              `json:"max_tokens"`
		MaxCompletionTokens *int              `json:"max_completion_tokens"`
		Temperature         *float64          `json:"temperature"`
		TopP                *float64          `json:"top_p"`
		Stop                json.RawMessage   `json:"stop"`
	}
	if err := json.Unmarshal(r.Body, &in); err != nil {
		return r, fmt.Errorf("the request body: %w", err)
	}
	type message struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	out := struct {
		Model         string    `json:"model"`
		System        string    `json:"system,omitempty"`
		Messages      []message `json:"messages"`
		MaxTokens     int       `json:"max_tokens"`
		Temperature   *float64  `json:"temperature,omitempty"`
		TopP          *float64  `json:"top_p,omitempty"`
		StopSequences []string  `json:"stop_sequences,omitempty"`
		Stream        bool      `json:"stream"`
	}{Model: in.Model, MaxTokens: DefaultMessagesMaxTokens, Temperature: in.Temperature, TopP: in.TopP, Stream: true}
	for _, v := range []*int{in.MaxCompletionTokens, in.MaxTokens} {
		if v != nil && *v > 0 {
			out.MaxTokens = *v
		}
	}
	if r.Path == PathCompletion {
		var prompt string
		if err := json.Unmarshal(in.Prompt, &prompt); err != nil {
			return r, errors.New("the Messages API takes a text prompt, not token ids or a list of prompts")
		}
		raw, _ := json.Marshal(prompt)
		out.Messages = []message{{Role: "user", Content: raw}}
	}
	var system []string
	for i, raw := range in.Messages {
		var m message
		if err := json.Unmarshal(raw, &m); err != nil {
			return r, fmt.Errorf("messages[%d]: %w", i, err)
		}
		text, content, err := messageText(m.Content)
		if err != nil {
			return r, fmt.Errorf("messages[%d].content: %w", i, err)
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user", "assistant":
			out.Messages = append(out.Messages, message{Role: m.Role, Content: content})
		default:
			return r, fmt.Errorf("messages[%d].role %q: the Messages API carries user and assistant messages (and a system prompt)", i, m.Role)
		}
	}
	if len(out.Messages) == 0 {
		return r, errors.New("the Messages API needs at least one user or assistant message")
	}
	out.System = strings.Join(system, "\n\n")
	if len(in.Stop) > 0 && !bytes.Equal(in.Stop, []byte("null")) {
		var one string
		if json.Unmarshal(in.Stop, &one) == nil {
			out.StopSequences = []string{one}
		} else if err := json.Unmarshal(in.Stop, &out.StopSequences); err != nil {
			return r, errors.New("stop: a string or a list of strings")
		}
	}
	body, err := json.Marshal(out)
	if err != nil {
		return r, err
	}
	return Request{Path: PathMessages, Body: body}, nil
}

// messageText reads a chat message's content, a string or a list of text
// parts: the text joined, and the content as the Messages API takes it.
func messageText(raw json.RawMessage) (string, json.RawMessage, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, raw, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, errors.New("a string or a list of text parts")
	}
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	blocks := make([]block, 0, len(parts))
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Type != "text" {
			return "", nil, fmt.Errorf("a %q part: only text parts are translated to the Messages API", p.Type)
		}
		blocks = append(blocks, block{"text", p.Text})
		texts = append(texts, p.Text)
	}
	b, _ := json.Marshal(blocks)
	return strings.Join(texts, "\n"), b, nil
}

// messagesEvent is the part of a Messages API event Ruckus reads.
type messagesEvent struct {
	Type    string `json:"type"`
	Message *struct {
		ID    string         `json:"id"`
		Usage *messagesUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *messagesUsage  `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type messagesUsage struct {
	InputTokens              *float64 `json:"input_tokens"`
	CacheCreationInputTokens float64  `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     float64  `json:"cache_read_input_tokens"`
	OutputTokens             *float64 `json:"output_tokens"`
}

// messagesError reads the Messages API's error object {type, message} as
// "type: message".
func messagesErrorText(raw json.RawMessage) string {
	var e struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" {
		if e.Type != "" {
			return snippet([]byte(e.Type + ": " + e.Message))
		}
		return snippet([]byte(e.Message))
	}
	return errorMessage(raw)
}

// takeMessages applies one event that arrived at t; done is set by
// message_stop. It returns the runtime's error message for an error event.
func (m *measure) takeMessages(ev messagesEvent, t time.Time) (done bool, errMsg string) {
	switch ev.Type {
	case "error":
		return false, messagesErrorText(ev.Error)
	case "message_start":
		if ev.Message != nil {
			m.id = ev.Message.ID
			m.messagesUsage(ev.Message.Usage, false)
		}
	case "content_block_start":
		if ev.ContentBlock != nil && ev.ContentBlock.Text != "" {
			m.content(ev.ContentBlock.Text, ev.ContentBlock.Text, t)
		}
	case "content_block_delta":
		if d := ev.Delta; d != nil {
			switch d.Type {
			case "text_delta":
				m.content(d.Text, d.Text, t)
			case "thinking_delta":
				m.content("", d.Thinking, t)
			case "input_json_delta":
				m.content("", d.PartialJSON, t)
			}
		}
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			m.finish = ev.Delta.StopReason
		}
		m.messagesUsage(ev.Usage, true)
	case "message_stop":
		return true, ""
	}
	return false, ""
}

// messagesUsage takes a usage object: input tokens from message_start,
// the cumulative output tokens from message_delta (final says which; only
// those count as the server's output count).
func (m *measure) messagesUsage(u *messagesUsage, final bool) {
	if u == nil {
		return
	}
	if u.InputTokens != nil {
		m.prompt = count(*u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens)
	}
	if final && u.OutputTokens != nil {
		m.haveUsage = true
		m.completion = count(*u.OutputTokens)
	}
}

// content records a content event: out is the answer's text in it, gen
// all the generated text.
func (m *measure) content(out, gen string, t time.Time) {
	if gen == "" {
		return
	}
	m.output.WriteString(out)
	m.events = append(m.events, contentEvent{at: t, estimate: estimateTokens(gen), chars: runes(gen)})
}

// messages reads a Messages API event stream until message_stop (see the
// top of this file). A stream that ends without message_stop is a
// success only when a stop_reason came.
func (m *measure) messages(events *sseReader) (class, msg string) {
	for n := 1; ; n++ {
		ev, done, class, msg := m.nextEvent(events, "no stop_reason and no message_stop")
		if done {
			return class, msg
		}
		data := bytes.TrimSpace(ev.data)
		if len(data) == 0 {
			continue
		}
		var e messagesEvent
		if err := json.Unmarshal(data, &e); err != nil {
			if ev.unterminated {
				return jobs.ErrDisconnect, "the stream ended in the middle of an event"
			}
			return jobs.ErrMalformed, fmt.Sprintf("event %d is not a JSON event (%v): %s", n, err, snippet(data))
		}
		if e.Type == "" {
			e.Type = ev.kind
		}
		done, errMsg := m.takeMessages(e, ev.at)
		if errMsg != "" || ev.kind == "error" {
			if errMsg == "" {
				errMsg = errorMessage(data)
			}
			return jobs.ErrRuntime, "the runtime reported an error: " + errMsg
		}
		if done {
			m.sawDone = true
			return "", ""
		}
	}
}

// wholeMessage reads a non-streaming Messages API response.
func (m *measure) wholeMessage(body io.Reader) (class, msg string) {
	b, class, msg := m.readWhole(body)
	if class != "" {
		return class, msg
	}
	var r struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Thinking string `json:"thinking"`
		} `json:"content"`
		StopReason string          `json:"stop_reason"`
		Usage      *messagesUsage  `json:"usage"`
		Error      json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return jobs.ErrMalformed, fmt.Sprintf("the response is neither an event stream nor a JSON message (%v): %s", err, snippet(b))
	}
	if r.Type == "error" {
		return jobs.ErrRuntime, "the runtime reported an error: " + messagesErrorText(r.Error)
	}
	if r.Type != "message" {
		return jobs.ErrMalformed, "the JSON response is not a message: " + snippet(b)
	}
	m.id, m.finish = r.ID, r.StopReason
	var out, gen strings.Builder
	for _, c := range r.Content {
		out.WriteString(c.Text)
		gen.WriteString(c.Text)
		gen.WriteString(c.Thinking)
	}
	m.content(out.String(), gen.String(), m.end)
	m.messagesUsage(r.Usage, false)
	m.messagesUsage(r.Usage, true)
	return "", ""
}
