package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ruckus/ruckus/jobs"
)

// The two endpoints a dataset item may target.
const (
	PathChat       = "/v1/chat/completions"
	PathCompletion = "/v1/completions"
)

// Request is one HTTP request, ready to send: the API path (PathChat or
// PathCompletion) and the JSON body. It is built once per item and sent by
// Client.Do, so building (which can fail on a bad item) is kept apart from
// sending (which is timed).
type Request struct {
	Path string
	Body []byte
}

// BuildRequest turns a stored dataset item into the request for model.
//
// The item has the OpenAI batch request shape
// {"method":"POST","url":"/v1/chat/completions"|"/v1/completions","body":{…}},
// which is what app/dataset stores for every accepted format. In the body:
//   - "model" is replaced by model: the benchmark decides what is served;
//   - "stream" is set to true and "stream_options"."include_usage" to true
//     (other stream_options are kept), because every timing needs the
//     stream and the token count needs the server's usage;
//   - each Sampling field the benchmark sets replaces the item's own:
//     Temperature, TopP and Seed when non-nil, Stop when non-empty,
//     MaxTokens when above zero. MaxTokens also removes the item's
//     "max_completion_tokens", which runtimes such as vLLM would otherwise
//     prefer over max_tokens. Unset fields leave the item's values, and
//     when neither gives max_tokens it stays unset (the runtime's default).
//     agentd passes MaxTokens 0 for an item that sets its own (see
//     ItemSampling), so there the benchmark's value is only a default;
//   - every other field is passed through byte for byte.
//
// Errors name what is wrong with the item, for the run's error list.
func BuildRequest(item json.RawMessage, model string, s jobs.Sampling) (Request, error) {
	if model == "" {
		return Request{}, errors.New("no model to request")
	}
	var it struct {
		Method *string         `json:"method"`
		URL    *string         `json:"url"`
		Body   json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(item, &it); err != nil {
		return Request{}, fmt.Errorf("dataset item is not an OpenAI batch request object: %w", err)
	}
	if it.Method != nil && *it.Method != "POST" {
		return Request{}, fmt.Errorf("dataset item method %q: only POST is supported", *it.Method)
	}
	if it.URL == nil {
		return Request{}, fmt.Errorf("dataset item has no url (want %q or %q)", PathChat, PathCompletion)
	}
	path := *it.URL
	if path != PathChat && path != PathCompletion {
		return Request{}, fmt.Errorf("dataset item url %q: want %q or %q", path, PathChat, PathCompletion)
	}
	if len(it.Body) == 0 || bytes.Equal(it.Body, []byte("null")) {
		return Request{}, errors.New("dataset item has no body")
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(it.Body, &body); err != nil {
		return Request{}, fmt.Errorf("dataset item body is not a JSON object: %w", err)
	}
	if err := checkInput(path, body); err != nil {
		return Request{}, err
	}

	opts := map[string]json.RawMessage{}
	if raw, ok := body["stream_options"]; ok && !bytes.Equal(raw, []byte("null")) {
		if err := json.Unmarshal(raw, &opts); err != nil {
			return Request{}, fmt.Errorf("dataset item body.stream_options is not a JSON object: %w", err)
		}
	}
	opts["include_usage"] = json.RawMessage("true")
	set := map[string]any{"model": model, "stream": true, "stream_options": opts}
	if s.Temperature != nil {
		set["temperature"] = *s.Temperature
	}
	if s.TopP != nil {
		set["top_p"] = *s.TopP
	}
	if s.Seed != nil {
		set["seed"] = *s.Seed
	}
	if len(s.Stop) > 0 {
		set["stop"] = s.Stop
	}
	if s.MaxTokens > 0 {
		set["max_tokens"] = s.MaxTokens
	}
	for k, v := range set {
		raw, err := json.Marshal(v)
		if err != nil { // NaN or ±Inf: JSON has no such numbers
			return Request{}, fmt.Errorf("sampling parameter %s: %w", k, err)
		}
		body[k] = raw
	}
	if s.MaxTokens > 0 {
		delete(body, "max_completion_tokens")
	}
	out, err := json.Marshal(body)
	if err != nil {
		return Request{}, fmt.Errorf("encoding the request body: %w", err)
	}
	return Request{Path: path, Body: out}, nil
}

// checkInput refuses a body that cannot produce a generation, so the item
// fails as invalid_req here rather than as an HTTP 400 counted against the
// runtime.
func checkInput(path string, body map[string]json.RawMessage) error {
	raw, has := body["messages"], false
	want, other := "messages", "prompt"
	if path == PathCompletion {
		raw = body["prompt"]
		want, other = "prompt", "messages"
	}
	has = len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
	if !has {
		if _, ok := body[other]; ok {
			return fmt.Errorf("dataset item body has %q but url %s needs %q", other, path, want)
		}
		return fmt.Errorf("dataset item body has no %q (url %s needs it)", want, path)
	}
	if path == PathChat {
		var msgs []json.RawMessage
		if err := json.Unmarshal(raw, &msgs); err != nil {
			return fmt.Errorf("dataset item body.messages is not an array: %w", err)
		}
		if len(msgs) == 0 {
			return errors.New("dataset item body.messages is empty")
		}
	}
	return nil
}
