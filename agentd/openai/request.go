// Package openai is agentd's client for any OpenAI-compatible runtime: it
// turns a dataset item into a streaming request, sends it, and measures it
// exactly as DESIGN.md § Metric definitions says.
package openai

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ruckus/ruckus/jobs"
)

// Request is one HTTP request to send: the API path and the JSON body.
type Request struct {
	Path string
	Body []byte
}

// BuildRequest turns a stored dataset item (the OpenAI batch request
// shape {"method","url","body"}) into the request for model: the model is
// set, streaming with usage is asked for, and every sampling parameter the
// benchmark sets replaces the item's own.
func BuildRequest(item []byte, model string, s jobs.Sampling) (Request, error) {
	var it struct {
		URL  string                     `json:"url"`
		Body map[string]json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(item, &it); err != nil {
		return Request{}, fmt.Errorf("dataset item is not a batch request: %w", err)
	}
	if it.URL != "/v1/chat/completions" && it.URL != "/v1/completions" {
		return Request{}, fmt.Errorf("dataset item url %q: want /v1/chat/completions or /v1/completions", it.URL)
	}
	if it.Body == nil {
		return Request{}, errors.New("dataset item has no body")
	}
	b := it.Body
	set := func(k string, v any) {
		raw, _ := json.Marshal(v)
		b[k] = raw
	}
	set("model", model)
	set("stream", true)
	set("stream_options", map[string]bool{"include_usage": true})
	if s.Temperature != nil {
		set("temperature", *s.Temperature)
	}
	if s.TopP != nil {
		set("top_p", *s.TopP)
	}
	if s.Seed != nil {
		set("seed", *s.Seed)
	}
	if len(s.Stop) > 0 {
		set("stop", s.Stop)
	}
	if s.MaxTokens > 0 {
		set("max_tokens", s.MaxTokens)
		delete(b, "max_completion_tokens")
	}
	body, err := json.Marshal(b)
	if err != nil {
		return Request{}, err
	}
	return Request{Path: it.URL, Body: body}, nil
}
