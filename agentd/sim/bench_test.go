package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// flushDiscard is a ResponseWriter that drops what it is sent, so a
// benchmark measures the simulated runtime's own work without a network.
type flushDiscard struct {
	h     http.Header
	bytes int
	keep  bool // keep what is sent in out
	out   strings.Builder
}

func (w *flushDiscard) Header() http.Header { return w.h }
func (w *flushDiscard) WriteHeader(int)     {}
func (w *flushDiscard) Write(p []byte) (int, error) {
	w.bytes += len(p)
	if w.keep {
		w.out.Write(p)
	}
	return len(p), nil
}
func (w *flushDiscard) Flush() {}

// BenchmarkStream is the sim's cost per streamed 16-token chat answer at
// zero latency: what bounds the requests per second it serves on a core.
func BenchmarkStream(b *testing.B) {
	cfg := DefaultConfig()
	cfg.TTFT, cfg.ITL = Dist{Kind: KindConst, Durations: true}, Dist{Kind: KindConst, Durations: true}
	cfg.OutputTokens = Dist{Kind: KindConst, A: 16}
	cfg.Batch = 1 << 20
	s := NewServer(cfg, nil)
	body := `{"model":"m","messages":[{"role":"user","content":"Write sixteen words about benchmarks."}],"max_tokens":16,"stream":true,"stream_options":{"include_usage":true}}`
	b.ReportAllocs()
	for b.Loop() {
		r, _ := http.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
		w := &flushDiscard{h: http.Header{}}
		s.ServeHTTP(w, r)
		if w.bytes < 16*100 {
			b.Fatalf("%d bytes streamed", w.bytes)
		}
	}
}

// The content chunks, built from a template, are the bytes json.Marshal
// makes of the chunk (a round trip through the wire type leaves every
// event as it was), whatever the model name holds.
func TestContentChunksAreMarshalled(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.TTFT, cfg.ITL = Dist{Kind: KindConst, Durations: true}, Dist{Kind: KindConst, Durations: true}
	cfg.OutputTokens, cfg.TokensPerEvent = Dist{Kind: KindConst, A: 12}, 2
	s := NewServer(cfg, nil)
	for _, c := range []struct{ path, model, input string }{
		{"/v1/chat/completions", `m\u0000<&>\"\u0000x`, `"messages":[{"role":"user","content":"hi"}]`},
		{"/v1/completions", `m\u0000<&>\"\u0000x`, `"prompt":"hi"`},
		{"/v1/chat/completions", `\u0000`, `"messages":[{"role":"user","content":"hi"}]`}, // the template's marker
	} {
		body := `{"model":"` + c.model + `",` + c.input + `,"stream":true,"stream_options":{"include_usage":true}}`
		r, _ := http.NewRequest(http.MethodPost, c.path, strings.NewReader(body))
		w := &flushDiscard{h: http.Header{}, keep: true}
		s.ServeHTTP(w, r)
		events := 0
		for line := range strings.SplitSeq(w.out.String(), "\n\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var ch chunk
			if err := json.Unmarshal([]byte(data), &ch); err != nil {
				t.Fatalf("%s: %v: %s", c.path, err, data)
			}
			var model string
			_ = json.Unmarshal([]byte(`"`+c.model+`"`), &model)
			if ch.Model != model {
				t.Errorf("%s: model %q, want %q", c.path, ch.Model, model)
			}
			for _, cc := range ch.Choices {
				if cc.Text != nil && *cc.Text == "\x00" || cc.Delta != nil && cc.Delta.Content != nil && *cc.Delta.Content == "\x00" {
					t.Errorf("%s: the template's marker was sent: %s", c.path, data)
				}
			}
			again, _ := json.Marshal(ch)
			if string(again) != data {
				t.Errorf("%s: sent  %s\nmarshal %s", c.path, data, again)
			}
			events++
		}
		want := 6 + 2 // content, finish and usage chunks
		if c.path == "/v1/chat/completions" {
			want++ // the role chunk
		}
		if events != want {
			t.Errorf("%s: %d events", c.path, events)
		}
	}
}
