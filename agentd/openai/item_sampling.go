package openai

import (
	"bytes"
	"encoding/json"

	"github.com/ruckus/ruckus/jobs"
)

// ItemSampling is the sampling agentd sends one item with: the
// benchmark's, except that an item's own max_tokens (or
// max_completion_tokens) is kept. The benchmark's max_tokens is the
// default for items that set none, never an override: an OpenAI batch
// item or a synthetic one asks for its own answer length.
func ItemSampling(request []byte, s jobs.Sampling) jobs.Sampling {
	if s.MaxTokens <= 0 {
		return s
	}
	var it struct {
		Body struct {
			MaxTokens           json.RawMessage `json:"max_tokens"`
			MaxCompletionTokens json.RawMessage `json:"max_completion_tokens"`
		} `json:"body"`
	}
	if json.Unmarshal(request, &it) != nil {
		return s // BuildRequest says what is wrong with the item
	}
	set := func(raw json.RawMessage) bool { return len(raw) > 0 && !bytes.Equal(raw, []byte("null")) }
	if set(it.Body.MaxTokens) || set(it.Body.MaxCompletionTokens) {
		s.MaxTokens = 0
	}
	return s
}
