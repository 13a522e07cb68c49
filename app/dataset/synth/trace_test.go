package synth

import (
	"strings"
	"testing"
)

func TestParseTrace(t *testing.T) {
	t.Parallel()
	good := []struct {
		name, in string
		want     []TraceLine
	}{
		{"lengths", `{"timestamp":0,"input_length":10,"output_length":5}` + "\n" + `{"timestamp":0.5,"input_length":3}`,
			[]TraceLine{{0, 10, 5, ""}, {0.5, 3, 0, ""}}},
		{"prompt and blank lines", "\n  \n" + `{"timestamp":2,"prompt":"hi there","output_length":1}` + "\r\n\n",
			[]TraceLine{{2, 0, 1, "hi there"}}},
		{"equal timestamps", `{"timestamp":1,"input_length":1}` + "\n" + `{"timestamp":1,"input_length":2}`,
			[]TraceLine{{1, 1, 0, ""}, {1, 2, 0, ""}}},
		{"integer-valued float", `{"timestamp":1e2,"input_length":2.0}`, []TraceLine{{100, 2, 0, ""}}},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := ParseTrace(strings.NewReader(tc.in))
			if len(errs) > 0 {
				t.Fatalf("errors: %v", errs)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("line %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
	bad := []struct {
		name, in    string
		line        int
		field, text string
	}{
		{"empty", "", 1, "", "no lines"},
		{"not JSON", "{", 1, "", "JSON object"},
		{"array", "[1]", 1, "", "JSON object"},
		{"no timestamp", `{"input_length":1}`, 1, "timestamp", "missing"},
		{"string timestamp", `{"timestamp":"0","input_length":1}`, 1, "timestamp", "number"},
		{"null timestamp", `{"timestamp":null,"input_length":1}`, 1, "timestamp", "number"},
		{"negative timestamp", `{"timestamp":-0.5,"input_length":1}`, 1, "timestamp", "between"},
		{"huge timestamp", `{"timestamp":1e300,"input_length":1}`, 1, "timestamp", "between"},
		{"overflowing timestamp", `{"timestamp":1e400,"input_length":1}`, 1, "timestamp", "number"},
		{"going back", `{"timestamp":2,"input_length":1}` + "\n" + `{"timestamp":1,"input_length":1}`, 2, "timestamp", "before"},
		{"zero length", `{"timestamp":0,"input_length":0}`, 1, "input_length", "whole number"},
		{"fractional length", `{"timestamp":0,"input_length":1.5}`, 1, "input_length", "whole number"},
		{"long output", `{"timestamp":0,"input_length":1,"output_length":999999999}`, 1, "output_length", "whole number"},
		{"neither", `{"timestamp":0}`, 1, "input_length", "missing"},
		{"both", `{"timestamp":0,"input_length":1,"prompt":"x"}`, 1, "prompt", "not both"},
		{"empty prompt", `{"timestamp":0,"prompt":" "}`, 1, "prompt", "non-empty"},
		{"NUL prompt", `{"timestamp":0,"prompt":"a\u0000"}`, 1, "prompt", "NUL"},
		{"unknown field", `{"timestamp":0,"input_length":1,"arrival":3}`, 1, "arrival", "unknown field"},
		{"bad UTF-8", "{\"timestamp\":0,\"prompt\":\"\xff\"}", 1, "", "UTF-8"},
		{"third line", `{"timestamp":0,"input_length":1}` + "\n\n" + `{"timestamp":1,"input_length":"x"}`, 3, "input_length", "whole number"},
		{"long line", `{"timestamp":0,"prompt":"` + strings.Repeat("a", MaxTraceLineBytes) + `"}`, 1, "", "longer than"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := ParseTrace(strings.NewReader(tc.in))
			if got != nil || len(errs) == 0 {
				t.Fatalf("want errors, got lines %+v", got)
			}
			e := errs[0]
			if e.Line != tc.line || e.Field != tc.field || !strings.Contains(e.Message, tc.text) {
				t.Fatalf("got %q, want line %d field %q containing %q", e.Error(), tc.line, tc.field, tc.text)
			}
		})
	}
	t.Run("many errors are counted", func(t *testing.T) {
		_, errs := ParseTrace(strings.NewReader(strings.Repeat("x\n", 80)))
		if len(errs) != maxTraceErrors+1 || !strings.Contains(errs[len(errs)-1].Message, "30 more") {
			t.Fatalf("%d errors, last %v", len(errs), errs[len(errs)-1])
		}
	})
}

func FuzzParseTrace(f *testing.F) {
	for _, s := range []string{
		`{"timestamp":0,"input_length":10,"output_length":5}`,
		`{"timestamp":0.5,"prompt":"hello","output_length":1}` + "\n" + `{"timestamp":0.25,"input_length":1}`,
		"{\"timestamp\":1e400}\n\n[",
		`{"timestamp":0,"input_length":1,"prompt":null,"x":{}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		lines, errs := ParseTrace(strings.NewReader(in))
		if (lines == nil) == (errs == nil) {
			t.Fatalf("want lines or errors, got %d lines and %d errors", len(lines), len(errs))
		}
		prev := 0.0
		for _, l := range lines {
			if !(l.Timestamp >= prev) || l.Timestamp > MaxTraceSeconds {
				t.Fatalf("timestamp %v after %v", l.Timestamp, prev)
			}
			prev = l.Timestamp
			if (l.InputLength == 0) == (l.Prompt == "") || l.InputLength < 0 || l.InputLength > MaxTokens || l.OutputLength < 0 || l.OutputLength > MaxTokens {
				t.Fatalf("line %+v", l)
			}
		}
		for _, e := range errs {
			if e.Line < 1 || e.Message == "" {
				t.Fatalf("error %+v", e)
			}
		}
		if len(lines) > 0 {
			// Whatever parses generates items.
			s := Spec{Kind: KindTrace, Trace: in, Output: Fixed(4)}
			s.Normalize()
			ls, verrs := s.Validate()
			if len(verrs) > 0 {
				t.Fatalf("validate: %v", verrs)
			}
			n := 0
			for range s.Items(ls) {
				n++
			}
			if n != len(lines) {
				t.Fatalf("%d items for %d lines", n, len(lines))
			}
		}
	})
}
