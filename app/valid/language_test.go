package valid_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/valid"
)

func inLanguage(code string) context.Context {
	return i18n.With(context.Background(), i18n.Default().Lang(code))
}

// TestMessagesInTheReadersLanguage: an error keeps its English text for
// the API and words the same message in German for a page, its numbers
// and values carried over; a message of its own (a tag that is no key)
// stays as written.
func TestMessagesInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	var s struct {
		Count  int      `json:"count" validate:"min=1"`
		Share  float64  `json:"share" validate:"max=1" msg:"valid.negative"`
		Own    int      `json:"own" validate:"min=1" msg:"give it one at least"`
		Labels []string `json:"labels" validate:"min=2"`
	}
	s.Share = 2
	errs := valid.Default().Struct(&s)
	m := errs.Map()
	de := errs.MapText(inLanguage("de"))
	for _, tc := range []struct{ path, en, de string }{
		{"count", "must be at least 1 (got 0)", "muss mindestens 1 sein (erhalten: 0)"},
		{"share", "cannot be negative", "darf nicht negativ sein"},
		{"own", "give it one at least", "give it one at least"},
		{"labels", "must have at least 2 items", "muss mindestens 2 Einträge haben"},
	} {
		if m[tc.path] != tc.en {
			t.Errorf("%s in English = %q, want %q", tc.path, m[tc.path], tc.en)
		}
		if de[tc.path] != tc.de {
			t.Errorf("%s in German = %q, want %q", tc.path, de[tc.path], tc.de)
		}
	}
	if got := errs.MapText(inLanguage("en")); got["count"] != m["count"] {
		t.Errorf("English Text %q differs from Message %q", got["count"], m["count"])
	}

	// Decoding: a nested value (what JSON held) is worded too.
	var b struct {
		N int `json:"n"`
	}
	derrs := valid.DecodeJSON([]byte(`{"n": [1]}`), &b)
	if len(derrs) != 1 || derrs[0].Message != "must be a whole number (got a list)" {
		t.Fatalf("DecodeJSON = %v", derrs)
	}
	if got := derrs.Text(inLanguage("de")); got != "n: muss eine ganze Zahl sein (erhalten: eine Liste)" {
		t.Errorf("German = %q", got)
	}
	yerrs := valid.DecodeYAML([]byte("n: x\n"), &b)
	if len(yerrs) != 1 || yerrs[0].Message != `must be a whole number (got "x") (line 1)` {
		t.Fatalf("DecodeYAML = %v", yerrs)
	}
	if got := yerrs[0].Text(inLanguage("de")); got != `muss eine ganze Zahl sein (erhalten: "x") (Zeile 1)` {
		t.Errorf("German = %q", got)
	}

	// The API's JSON is the English text and the path, nothing else.
	out, err := json.Marshal(valid.E("a", "valid.negative"))
	if err != nil || string(out) != `{"path":"a","message":"cannot be negative"}` {
		t.Errorf("JSON = %s, %v", out, err)
	}

	// Text without a key (a library's own error) is the message itself.
	plain := valid.FieldError{Path: "x", Message: "as it came"}
	if got := valid.Text(inLanguage("de"), plain); got != "as it came" {
		t.Errorf("plain Text = %q", got)
	}
}
