package imports

import (
	"errors"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/jobs"
)

func parseAll(t *testing.T, in string) ([]Line, error) {
	t.Helper()
	var out []Line
	err := Parse(strings.NewReader(in), func(l Line) error { out = append(out, l); return nil })
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

func FuzzParse(f *testing.F) {
	f.Add(`{"custom_id":"a","output":"x"}`)
	f.Add(`{"custom_id":"a","response":{"status_code":200,"body":{"choices":[{"message":{"content":"x"}}]}},"error":null}`)
	f.Add("{\"custom_id\":\"a\",\"error\":{\"code\":\"x\"}}\n\n{")
	f.Fuzz(func(t *testing.T, in string) {
		err := Parse(strings.NewReader(in), func(l Line) error {
			if l.CustomID == "" || (l.Status != jobs.StatusOK && l.Status != jobs.StatusError) {
				t.Fatalf("accepted a line without id or status: %+v", l)
			}
			return nil
		})
		var e *Error
		if err != nil && (!errors.As(err, &e) || e.Line < 1 || e.Field == "") {
			t.Fatalf("error without line and field: %v", err)
		}
	})
}
