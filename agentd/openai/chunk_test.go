package openai

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// chunkSeeds are chunks as runtimes send them, and the odd ones that
// encoding/json decodes in its own way.
var chunkSeeds = []string{
	// agentd sim, vLLM, SGLang, Ollama, llama.cpp
	`{"id":"cmpl-sim-7","object":"chat.completion.chunk","created":1764000000,"model":"m","system_fingerprint":"ruckus-sim","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":9,"total_tokens":25,"completion_tokens":16}}`,
	`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"reasoning_content":"hm","content":null},"finish_reason":"stop","stop_reason":null}],"usage":{"prompt_tokens":1.0,"completion_tokens":2e0}}`,
	`{"id":"cmpl-2","object":"text_completion","created":1,"choices":[{"index":0,"text":" é ✓ 😀","logprobs":null,"finish_reason":"length"}]}`,
	`{"choices":[{"delta":{"reasoning":"r","tool_calls":null},"message":{"content":"whole"}}],"usage":{"completion_tokens":null}}`,
	`{"object":"error","message":"bad request","type":"BadRequestError","param":null,"code":400}`,
	`{"error":{"message":"boom","type":"server_error","code":{"nested":[1,-2.5e-3,true,false,null,"\u00e9\n"]}}}`,
	` {"choices":null,"id":"x"} ` + "\r\n\t",
	`{"choices":[null,{}],"usage":{}}`,
	// left to encoding/json
	`{"choices":[{"delta":{"content":"a\nb \"q\" \u00e9 \ud83d\ude00"}}]}`,
	`{"ID":"upper","Choices":[{"Delta":{"Content":"x"}}]}`,
	`{"id":"a","id":"b"}`,
	`{"choices":[{"delta":{"content":"a"}}],"choices":[{"text":"b"}]}`,
	`{"id":5}`,
	`{"usage":{"completion_tokens":"12"}}`,
	`{"usage":{"completion_tokens":1e400}}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}}]}`,
	`{"prompt_to\u212aens":1}`,
	`{"usage":{"prompt_to` + "\u212a" + `ens":1}}`,
	`{"choices":[{"text":"` + "\xff" + `"}]}`,
	`{"x":01}`, `{"x":-}`, `{"x":1.}`, `{"x":1e}`, `{"x":tru}`, `{"x":nullx}`, `{"a":1,}`, `{"a" 1}`, `{`, `[]`, `null`, `{}x`,
	`{"x":"\q"}`, `{"x":"\u12g4"}`, "{\"x\":\"a\tb\"}", `{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
}

// FuzzFastChunk: whatever the single-pass decoder accepts, encoding/json
// decodes to the same chunk without an error.
func FuzzFastChunk(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast chunk
		if !fastChunk(b, &fast, nil) {
			return
		}
		var slow chunk
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatalf("fastChunk accepted what encoding/json refuses (%v): %q", err, b)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfastChunk    %#v\nencoding/json %#v", b, fast, slow)
		}
	})
}

// The common chunks take the fast path (else the fuzz test above proves
// nothing), the odd ones are left to encoding/json, and decodeChunk gives
// encoding/json's result and error either way.
func TestDecodeChunk(t *testing.T) {
	t.Parallel()
	fastWanted := 10 // the first seeds, up to the "left to encoding/json" ones
	for i, s := range chunkSeeds {
		var fast chunk
		took := fastChunk([]byte(s), &fast, nil)
		if took != (i < fastWanted) {
			t.Errorf("%q: fast path taken %v, want %v", s, took, i < fastWanted)
		}
		var got, want chunk
		gotErr, wantErr := decodeChunk([]byte(s), &got, &chunk{ID: "cmpl-sim-7", Object: "chat.completion.chunk"}), json.Unmarshal([]byte(s), &want)
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Errorf("%q: error %v, encoding/json's %v", s, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\ndecodeChunk   %#v\nencoding/json %#v", s, got, want)
		}
	}
}

func TestJoined(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""}, {[]string{"", ""}, ""}, {[]string{"a"}, "a"}, {[]string{"", "a", ""}, "a"},
		{[]string{"a", "b"}, "ab"}, {[]string{"a", "", "b", "c"}, "abc"},
	} {
		var j joined
		for _, p := range c.in {
			j.add(p)
		}
		if got := j.String(); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}
