package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Anthropic's Messages API, as the simulated runtime serves it with
// Dialect DialectAnthropic: POST /v1/messages, streamed as message_start,
// content_block_start, ping, content_block_delta…, content_block_stop,
// message_delta (stop_reason and the output tokens) and message_stop, or
// one message object; errors as {"type":"error","error":{type, message}},
// 529 overloaded_error for the server error fault and 429
// rate_limit_error with retry-after for the rate limit fault.

// messagesAPI is the Messages API.
func messagesAPI(s *Server) api {
	return api{chat: true, decode: decodeMessages, fail: messagesError, status5xx: 529, kind5xx: "overloaded_error",
		stream: s.streamMessages, whole: s.wholeMessage}
}

// messagesError answers with the Messages API's error body.
func messagesError(w http.ResponseWriter, status int, kind, msg string) {
	type detail struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	writeJSON(w, status, struct {
		Type  string `json:"type"`
		Error detail `json:"error"`
	}{"error", detail{kind, msg}})
}

// decodeMessages reads and checks a Messages API request; it returns it
// as the chat request it amounts to, with the prompt's estimated tokens.
func decodeMessages(w http.ResponseWriter, r *http.Request) (request, int, error) {
	var in struct {
		Model         string          `json:"model"`
		Messages      json.RawMessage `json:"messages"`
		System        json.RawMessage `json:"system"`
		MaxTokens     *int            `json:"max_tokens"`
		Stream        bool            `json:"stream"`
		Temperature   *float64        `json:"temperature"`
		Answer        string          `json:"ruckus_sim_answer"`
		StopSequences []string        `json:"stop_sequences"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(&in); err != nil {
		return request{}, 0, fmt.Errorf("the body is not a JSON request: %v", err)
	}
	req := request{Model: in.Model, Messages: in.Messages, MaxTokens: in.MaxTokens, Stream: in.Stream, Temperature: in.Temperature, Answer: in.Answer}
	switch {
	case in.Model == "":
		return req, 0, errors.New("model: field required")
	case in.MaxTokens == nil:
		return req, 0, errors.New("max_tokens: field required")
	case *in.MaxTokens < 1:
		return req, 0, fmt.Errorf("max_tokens: must be at least 1 (got %d)", *in.MaxTokens)
	case len(in.Messages) == 0 || string(in.Messages) == "null":
		return req, 0, errors.New("messages: field required")
	}
	var roles []struct {
		Role string `json:"role"`
	}
	if err := json.Unmarshal(in.Messages, &roles); err != nil {
		return req, 0, errors.New("messages: an array of {role, content} objects")
	}
	for i, m := range roles {
		if m.Role != "user" && m.Role != "assistant" {
			return req, 0, fmt.Errorf("messages.%d.role: user or assistant (got %q; the system prompt is the top-level system field)", i, m.Role)
		}
	}
	chars, err := chatPromptChars(in.Messages)
	if err != nil {
		return req, 0, err
	}
	var system string
	if json.Unmarshal(in.System, &system) == nil {
		chars += utf8.RuneCountInString(system)
	}
	return req, promptTokens(chars, 0), nil
}

// stopReason is the Messages API's name for a finish reason.
func stopReason(finish string) string {
	if finish == "length" {
		return "max_tokens"
	}
	return "end_turn"
}

func (a *answer) messageID() string {
	return "msg_sim_" + strings.TrimPrefix(a.id, "cmpl-sim-")
}

// streamMessages sends the answer as the Messages API's event stream.
func (s *Server) streamMessages(ctx context.Context, w http.ResponseWriter, a *answer) bool {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	var buf []byte
	event := func(kind string, data []byte) {
		buf = append(append(append(append(append(buf[:0], "event: "...), kind...), "\ndata: "...), data...), '\n', '\n')
		_, _ = w.Write(buf)
		_ = rc.Flush()
	}
	send := func(kind string, v any) {
		b, _ := json.Marshal(v)
		event(kind, b)
	}
	type usage struct {
		InputTokens  int `json:"input_tokens,omitempty"`
		OutputTokens int `json:"output_tokens"`
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": a.messageID(), "type": "message", "role": "assistant", "content": []any{}, "model": a.model,
		"stop_reason": nil, "stop_sequence": nil, "usage": usage{InputTokens: a.promptTokens, OutputTokens: 1}}})
	send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
		"content_block": map[string]string{"type": "text", "text": ""}})
	event("ping", []byte(`{"type": "ping"}`))
	ok := s.generate(ctx, a, func(text string, k int) {
		t, _ := json.Marshal(text)
		event("content_block_delta", fmt.Appendf(nil, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%s}}`, t))
		s.c.tokens.Add(int64(k))
	}, s.onStreamFault(ctx, a, func() {
		event("content_block_delta", []byte(`{"type":"content_block_delta","index":0, this is not JSON`))
	}))
	if !ok {
		return false
	}
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopReason(a.finish), "stop_sequence": nil}, "usage": usage{OutputTokens: a.tokens}})
	send("message_stop", map[string]string{"type": "message_stop"})
	return true
}

// wholeMessage sends the answer as one Messages API message.
func (s *Server) wholeMessage(ctx context.Context, w http.ResponseWriter, a *answer) bool {
	text, malformed, ok := s.generateWhole(ctx, a)
	if !ok {
		return false
	}
	b, _ := json.Marshal(map[string]any{"id": a.messageID(), "type": "message", "role": "assistant", "model": a.model,
		"content":     []map[string]string{{"type": "text", "text": text}},
		"stop_reason": stopReason(a.finish), "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": a.promptTokens, "output_tokens": a.tokens}})
	s.writeWhole(w, a, b, malformed)
	return true
}
