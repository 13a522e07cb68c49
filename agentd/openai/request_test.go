package openai

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/jobs"
)

func ptr[T any](v T) *T { return &v }

const chatItem = `{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"hi"}]}}`

func TestBuildRequest(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		item     string
		sampling jobs.Sampling
		path     string
		// want holds body fields as raw JSON; absent lists fields that
		// must not be there.
		want   map[string]string
		absent []string
	}{
		{
			name: "chat: model, stream and usage are always set",
			item: chatItem,
			path: PathChat,
			want: map[string]string{"model": `"served/model"`, "stream": `true`, "stream_options": `{"include_usage":true}`,
				"messages": `[{"role":"user","content":"hi"}]`},
			absent: []string{"max_tokens", "temperature", "top_p", "seed", "stop"},
		},
		{
			name: "completions, method may be left out",
			item: `{"url":"/v1/completions","body":{"prompt":"Once upon"}}`,
			path: PathCompletion,
			want: map[string]string{"prompt": `"Once upon"`, "stream": `true`},
		},
		{
			name: "sampling replaces the item's own, zero temperature included",
			item: `{"method":"POST","url":"/v1/completions","body":{"model":"old","prompt":"p","max_tokens":99,"max_completion_tokens":98,"temperature":0.7,"top_p":0.5,"seed":1,"stop":["x"]}}`,
			sampling: jobs.Sampling{Temperature: ptr(0.0), TopP: ptr(0.9), Seed: ptr(int64(7)), Stop: []string{"\n", "END"},
				MaxTokens: 16},
			path: PathCompletion,
			want: map[string]string{"model": `"served/model"`, "max_tokens": `16`, "temperature": `0`, "top_p": `0.9`,
				"seed": `7`, "stop": `["\n","END"]`},
			absent: []string{"max_completion_tokens"},
		},
		{
			name:     "unset sampling keeps the item's values",
			item:     `{"method":"POST","url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"q"}],"max_tokens":5,"max_completion_tokens":6,"temperature":0.2,"stop":"\n"}}`,
			sampling: jobs.Sampling{Stop: []string{}},
			path:     PathChat,
			want:     map[string]string{"max_tokens": `5`, "max_completion_tokens": `6`, "temperature": `0.2`, "stop": `"\n"`},
		},
		{
			name: "unknown fields pass through byte for byte",
			item: `{"method":"POST","url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"q"}],"logprobs":true,"top_k":20,"extra":{"w":[1.50,2e3]},"response_format":{"type":"json_object"}}}`,
			path: PathChat,
			want: map[string]string{"logprobs": `true`, "top_k": `20`, "extra": `{"w":[1.50,2e3]}`, "response_format": `{"type":"json_object"}`},
		},
		{
			name: "the item's stream settings are overridden, its other stream options kept",
			item: `{"method":"POST","url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"q"}],"stream":false,"stream_options":{"include_usage":false,"continuous_usage_stats":true}}}`,
			path: PathChat,
			want: map[string]string{"stream": `true`, "stream_options": `{"continuous_usage_stats":true,"include_usage":true}`},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := BuildRequest(json.RawMessage(c.item), "served/model", c.sampling)
			if err != nil {
				t.Fatal(err)
			}
			if req.Path != c.path {
				t.Errorf("path %q, want %q", req.Path, c.path)
			}
			var body map[string]json.RawMessage
			if err := json.Unmarshal(req.Body, &body); err != nil {
				t.Fatalf("body is not a JSON object: %v\n%s", err, req.Body)
			}
			for k, v := range c.want {
				if string(body[k]) != v {
					t.Errorf("body.%s = %s, want %s", k, body[k], v)
				}
			}
			for _, k := range c.absent {
				if _, ok := body[k]; ok {
					t.Errorf("body.%s = %s, want it absent", k, body[k])
				}
			}
		})
	}
}

func TestBuildRequestRefusesMalformedItems(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, item string
		sampling   jobs.Sampling
		model      string
		// wantErr is a part of the message: it must say what is wrong.
		wantErr string
	}{
		{"not JSON", `{`, jobs.Sampling{}, "m", "not an OpenAI batch request"},
		{"an array", `[1]`, jobs.Sampling{}, "m", "not an OpenAI batch request"},
		{"method GET", `{"method":"GET","url":"/v1/completions","body":{"prompt":"p"}}`, jobs.Sampling{}, "m", `method "GET"`},
		{"no url", `{"method":"POST","body":{"prompt":"p"}}`, jobs.Sampling{}, "m", "no url"},
		{"other endpoint", `{"method":"POST","url":"/v1/embeddings","body":{"input":"p"}}`, jobs.Sampling{}, "m", `url "/v1/embeddings"`},
		{"no body", `{"method":"POST","url":"/v1/completions"}`, jobs.Sampling{}, "m", "no body"},
		{"null body", `{"method":"POST","url":"/v1/completions","body":null}`, jobs.Sampling{}, "m", "no body"},
		{"body not an object", `{"method":"POST","url":"/v1/completions","body":["p"]}`, jobs.Sampling{}, "m", "body is not a JSON object"},
		{"chat without messages", `{"url":"/v1/chat/completions","body":{}}`, jobs.Sampling{}, "m", `no "messages"`},
		{"chat with a prompt", `{"url":"/v1/chat/completions","body":{"prompt":"p"}}`, jobs.Sampling{}, "m", `has "prompt" but url /v1/chat/completions needs "messages"`},
		{"messages not an array", `{"url":"/v1/chat/completions","body":{"messages":"hi"}}`, jobs.Sampling{}, "m", "messages is not an array"},
		{"messages empty", `{"url":"/v1/chat/completions","body":{"messages":[]}}`, jobs.Sampling{}, "m", "messages is empty"},
		{"completion with messages", `{"url":"/v1/completions","body":{"messages":[{"role":"user","content":"q"}]}}`, jobs.Sampling{}, "m", `needs "prompt"`},
		{"completion with null prompt", `{"url":"/v1/completions","body":{"prompt":null}}`, jobs.Sampling{}, "m", `no "prompt"`},
		{"stream_options not an object", `{"url":"/v1/completions","body":{"prompt":"p","stream_options":true}}`, jobs.Sampling{}, "m", "stream_options is not a JSON object"},
		{"NaN temperature", chatItem, jobs.Sampling{Temperature: ptr(math.NaN())}, "m", "sampling parameter temperature"},
		{"no model", chatItem, jobs.Sampling{}, "", "no model"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := BuildRequest(json.RawMessage(c.item), c.model, c.sampling)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}

// FuzzBuildRequest: whatever the item, BuildRequest either refuses it or
// builds a JSON object body that streams with usage.
func FuzzBuildRequest(f *testing.F) {
	f.Add([]byte(chatItem))
	f.Add([]byte(`{"url":"/v1/completions","body":{"prompt":"p","stream_options":{"a":1}}}`))
	f.Add([]byte(`{"url":"/v1/completions","body":{"prompt":[1,2],"max_tokens":3}}`))
	f.Fuzz(func(t *testing.T, item []byte) {
		req, err := BuildRequest(item, "m", jobs.Sampling{MaxTokens: 4})
		if err != nil {
			return
		}
		var body struct {
			Model         string          `json:"model"`
			Stream        bool            `json:"stream"`
			StreamOptions map[string]any  `json:"stream_options"`
			MaxTokens     json.RawMessage `json:"max_tokens"`
		}
		if err := json.Unmarshal(req.Body, &body); err != nil {
			t.Fatalf("body %s: %v", req.Body, err)
		}
		if body.Model != "m" || !body.Stream || body.StreamOptions["include_usage"] != true || string(body.MaxTokens) != "4" {
			t.Fatalf("body %s", req.Body)
		}
	})
}
