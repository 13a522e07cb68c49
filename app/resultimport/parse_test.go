package resultimport

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

func parseAll(t *testing.T, in string) ([]store.ImportLine, error) {
	t.Helper()
	var out []store.ImportLine
	err := Parse(strings.NewReader(in), func(l store.ImportLine) error { out = append(out, l); return nil })
	return out, err
}

func TestParseBothFormats(t *testing.T) {
	in := `{"id":"batch_req_1","custom_id":"a","response":{"status_code":200,"request_id":"r1","body":{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Paris"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2}}},"error":null}
{"custom_id":"b","response":{"status_code":200,"body":{"choices":[{"text":" upon a time","finish_reason":"length"}]}},"error":null}
{"custom_id":"c","response":null,"error":{"code":"rate_limit_exceeded","message":"slow down"}}
{"custom_id":"d","response":{"status_code":500,"body":{"error":{"message":"boom"}}},"error":null}

{"custom_id":"e","output":"forty two"}
`
	ls, err := parseAll(t, in)
	if err != nil || len(ls) != 5 {
		t.Fatalf("%d lines, %v", len(ls), err)
	}
	if l := ls[0]; l.Status != jobs.StatusOK || l.Output != "Paris" || l.CompletionTokens != 2 || l.PromptTokens != 9 || l.RequestID != "r1" || l.TokensEstimated {
		t.Errorf("chat line: %+v", l)
	}
	if l := ls[1]; l.Output != " upon a time" || l.FinishReason != "length" || !l.TokensEstimated || l.CompletionTokens != 3 {
		t.Errorf("completion line: %+v", l)
	}
	if l := ls[2]; l.Status != jobs.StatusError || l.ErrorClass != "rate_limit_exceeded" || l.Error != "slow down" {
		t.Errorf("error line: %+v", l)
	}
	if l := ls[3]; l.Status != jobs.StatusError || l.ErrorClass != "http_500" || !strings.Contains(l.Error, "boom") {
		t.Errorf("500 line: %+v", l)
	}
	if l := ls[4]; l.Status != jobs.StatusOK || l.Output != "forty two" || !l.TokensEstimated {
		t.Errorf("simple line: %+v", l)
	}
}

func TestParseErrorsNameLineAndField(t *testing.T) {
	for in, want := range map[string]Error{
		"{\"custom_id\":\"a\",\"output\":\"x\"}\nnot json\n": {Line: 2, Field: "line"},
		`{"output":"x"}`:    {Line: 1, Field: "custom_id"},
		`{"custom_id":"a"}`: {Line: 1, Field: "output"},
		"{\"custom_id\":\"a\",\"output\":\"x\"}\n{\"custom_id\":\"a\",\"output\":\"y\"}": {Line: 2, Field: "custom_id"},
		`{"custom_id":"a","response":{"status_code":200,"body":{"choices":[]}}}`:         {Line: 1, Field: "response.body.choices"},
		`{"custom_id":"a","response":"x"}`:                                               {Line: 1, Field: "response"},
		`{"custom_id":"a","response":null,"error":null}`:                                 {Line: 1, Field: "response"},
	} {
		_, err := parseAll(t, in)
		var e *Error
		if !errors.As(err, &e) || e.Line != want.Line || e.Field != want.Field {
			t.Errorf("%q: %v, want line %d field %s", in, err, want.Line, want.Field)
		}
	}
}

// Values that would not fit their column, or that PostgreSQL text cannot
// hold, are refused naming the line and the field: a completion_tokens of
// 1e12 used to be stored as a negative number, a \u0000 in the output
// failed the whole import in PostgreSQL with a 500.
func TestParseBoundsValuesNamingLineAndField(t *testing.T) {
	ok := `{"custom_id":"ok","output":"fine"}` + "\n"
	batch := func(body string) string {
		return `{"custom_id":"a","response":{"status_code":200,"request_id":"r","body":` + body + `},"error":null}`
	}
	choice := func(usage string) string {
		return batch(`{"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],"usage":` + usage + `}`)
	}
	for _, tc := range []struct {
		line, field, want string
	}{
		{`{"custom_id":"a","output":"x\u0000y"}`, "output", `contains \u0000`},
		{`{"custom_id":"a\u0000","output":"x"}`, "custom_id", `contains \u0000`},
		{`{"custom_id":"` + strings.Repeat("é", MaxCustomIDChars+1) + `","output":"x"}`, "custom_id", "longer than 256 characters"},
		{batch(`{"choices":[{"message":{"content":"\u0000"}}]}`), "response.body.choices[0].message.content", `\u0000`},
		{batch(`{"choices":[{"text":"ok \u0000"}]}`), "response.body.choices[0].text", `\u0000`},
		{batch(`{"choices":[{"message":{"content":"x"},"finish_reason":"\u0000"}]}`), "response.body.choices[0].finish_reason", `\u0000`},
		{choice(`{"prompt_tokens":1,"completion_tokens":1e12}`), "response.body.usage.completion_tokens", "must be a whole number from 0 to 10000000 (got 1e12)"},
		{choice(`{"prompt_tokens":1,"completion_tokens":1000000000000}`), "response.body.usage.completion_tokens", "got 1000000000000"},
		{choice(`{"prompt_tokens":-1,"completion_tokens":1}`), "response.body.usage.prompt_tokens", "got -1"},
		{choice(`{"prompt_tokens":1.5,"completion_tokens":1}`), "response.body.usage.prompt_tokens", "got 1.5"},
		{choice(`{"prompt_tokens":1,"completion_tokens":1e400}`), "response.body.usage.completion_tokens", "got 1e400"},
		{`{"custom_id":"a","response":{"status_code":70000,"body":{}},"error":null}`, "response.status_code", "not an HTTP status"},
		{`{"custom_id":"a","response":{"status_code":200,"request_id":"\u0000","body":{"choices":[{"text":"x"}]}}}`, "response.request_id", `\u0000`},
		{`{"custom_id":"a","response":null,"error":{"code":"x","message":"m\u0000"}}`, "error.message", `\u0000`},
		{"{\"custom_id\":\"a\",\"response\":{\"status_code\":500,\"body\":{\"error\":\"\xff\"}}}", "response.body.error", "not UTF-8"},
	} {
		_, err := parseAll(t, ok+"\n"+tc.line+"\n")
		var e *Error
		if !errors.As(err, &e) || e.Line != 3 || e.Field != tc.field || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%.80s: %v; want line 3, field %s, saying %q", tc.line, err, tc.field, tc.want)
		}
	}
	// Within bounds: read as given.
	ls, err := parseAll(t, choice(`{"prompt_tokens":10000000,"completion_tokens":1e3}`))
	if err != nil || ls[0].PromptTokens != MaxTokens || ls[0].CompletionTokens != 1000 || ls[0].Line != 1 {
		t.Fatalf("%+v %v", ls, err)
	}
}

// The parser reads a stream: lines as they come, each with its number,
// and stops at the first it cannot take.
func TestParserStreams(t *testing.T) {
	p := NewParser(strings.NewReader("\n" + `{"custom_id":"a","output":"1"}` + "\n\n" + `{"custom_id":"b","output":"2"}` + "\n" + `{"custom_id":"a","output":"3"}` + "\n" + `{"custom_id":"c","output":"4"}`))
	var got []string
	for l, ok := p.Next(); ok; l, ok = p.Next() {
		got = append(got, fmt.Sprintf("%d:%s", l.Line, l.CustomID))
	}
	var e *Error
	if strings.Join(got, " ") != "2:a 4:b" || !errors.As(p.Err(), &e) || e.Line != 5 || !strings.Contains(e.Message, "already appeared on line 2") || p.Count() != 2 {
		t.Fatalf("lines %v, err %v, count %d", got, p.Err(), p.Count())
	}
	if _, ok := p.Next(); ok {
		t.Fatal("Next after the end")
	}
}

// FuzzParse: whatever the input, a line is either refused naming its line
// and field, or taken with values that fit the results table: an id and a
// status, text PostgreSQL can hold, token counts and an HTTP status within
// bounds.
func FuzzParse(f *testing.F) {
	f.Add(`{"custom_id":"a","output":"x"}`)
	f.Add(`{"custom_id":"a","response":{"status_code":200,"body":{"choices":[{"message":{"content":"x"}}]}},"error":null}`)
	f.Add("{\"custom_id\":\"a\",\"error\":{\"code\":\"x\"}}\n\n{")
	f.Add(`{"custom_id":"a","output":"x\u0000"}`)
	f.Add(`{"custom_id":"a","response":{"status_code":200,"body":{"choices":[{"text":"x"}],"usage":{"prompt_tokens":1,"completion_tokens":1e12}}}}`)
	f.Add(`{"custom_id":"a","response":{"status_code":503,"request_id":"\ud800","body":{"error":{"message":"\u0000"}}},"error":null}`)
	f.Add("{\"custom_id\":\"\xff\",\"output\":\"\xfe\"}\n{\"custom_id\":\"b\",\"error\":{\"code\":\"c\",\"message\":\"m\"}}")
	f.Fuzz(func(t *testing.T, in string) {
		last := 0
		err := Parse(strings.NewReader(in), func(l store.ImportLine) error {
			if l.CustomID == "" || (l.Status != jobs.StatusOK && l.Status != jobs.StatusError) {
				t.Fatalf("accepted a line without id or status: %+v", l)
			}
			if l.Line <= last {
				t.Fatalf("line %d after line %d", l.Line, last)
			}
			last = l.Line
			for _, s := range []string{l.CustomID, l.Output, l.FinishReason, l.RequestID, l.ErrorClass, l.Error} {
				if strings.ContainsRune(s, 0) || !utf8.ValidString(s) {
					t.Fatalf("accepted text PostgreSQL cannot store: %q", s)
				}
			}
			if utf8.RuneCountInString(l.CustomID) > MaxCustomIDChars || l.PromptTokens < 0 || l.PromptTokens > MaxTokens ||
				l.CompletionTokens < 0 || l.CompletionTokens > math.MaxInt32 || (l.HTTPStatus != 0 && (l.HTTPStatus < 100 || l.HTTPStatus > 599)) {
				t.Fatalf("accepted values out of bounds: %+v", l)
			}
			return nil
		})
		var e *Error
		if err != nil && (!errors.As(err, &e) || e.Line < 1 || e.Field == "") {
			t.Fatalf("error without line and field: %v", err)
		}
	})
}

// TestErrorsInBothLanguages: a bad line keeps its English message (the
// API's) and reads in German on a page.
func TestErrorsInBothLanguages(t *testing.T) {
	_, err := parseAll(t, `{"output": "x"}`+"\n")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v", err)
	}
	if e.Message != "missing or empty: every line needs the custom_id of a dataset item" {
		t.Errorf("English %q", e.Message)
	}
	if got := e.Wording.In(i18n.Default().Lang("de")); got != "fehlt oder ist leer: jede Zeile braucht die custom_id eines Eintrags des Datensatzes" {
		t.Errorf("German %q", got)
	}
}
