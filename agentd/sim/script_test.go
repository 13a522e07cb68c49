package sim_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// A request carrying the server's answer (ruckus_sim_answer) streams that
// text word by word, with its own length as the usage, capped by
// max_tokens like any answer; streamed and whole it is the same text.
func TestScriptedAnswerIsStreamedInsteadOfFiller(t *testing.T) {
	t.Parallel()
	_, ts := newServer(t, nil) // filler answers are 12 tokens
	answer := "Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nShe makes 9 * 2 = $18 every day.\n#### 18"
	field, _ := json.Marshal(answer)
	extra := `"ruckus_sim_answer":` + string(field)
	n := len(strings.Fields(answer))
	for _, path := range []string{chatPath, textPath} {
		texts, usage := checkStream(t, stream(t, ts, path, body(path, extra)), path == chatPath, "stop")
		if got := strings.Join(texts, ""); got != answer || len(texts) != n || usage.Usage.CompletionTokens != n {
			t.Errorf("%s: streamed %q in %d events, usage %+v; want %q in %d", path, got, len(texts), usage.Usage, answer, n)
		}
		texts, usage = checkStream(t, stream(t, ts, path, body(path, extra+`,"max_tokens":5`)), path == chatPath, "length")
		if got := strings.Join(texts, ""); got != "Janet sells 16 - 3" || usage.Usage.CompletionTokens != 5 {
			t.Errorf("%s capped: %q, usage %+v", path, got, usage.Usage)
		}
	}
	b := strings.Replace(body(chatPath, extra), `"stream":true,`, "", 1)
	resp := post(t, context.Background(), ts, chatPath, b)
	raw, _ := io.ReadAll(resp.Body)
	w := decodeWire(t, string(raw))
	if len(w.Choices) != 1 || w.Choices[0].Message == nil || w.Choices[0].Message.Content != answer || w.Usage.CompletionTokens != n {
		t.Errorf("whole: %s", raw)
	}
	// Without it: filler, as before.
	texts, _ := checkStream(t, stream(t, ts, chatPath, body(chatPath, `"ruckus_sim_answer":""`)), true, "stop")
	if words(texts) != 12 {
		t.Errorf("empty answer: %q, want 12 filler words", texts)
	}
}
