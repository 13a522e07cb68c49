package valid_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/app/valid"
)

type body struct {
	Name    string  `json:"name" yaml:"name"`
	Load    load    `json:"load" yaml:"load"`
	Targets []load  `json:"targets" yaml:"targets"`
	Share   float64 `json:"share" yaml:"share"`
	On      bool    `json:"on" yaml:"on"`
}

type load struct {
	Concurrency int      `json:"concurrency" yaml:"concurrency"`
	Stop        []string `json:"stop" yaml:"stop"`
}

// TestDecodeJSON: a decoding error names the field's path (indices too)
// and what the field takes, without Go's type names.
func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, path, msg string }{
		{`{"name":"n","model_idd":1}`, "model_idd", `unknown field "model_idd"`},
		{`{"load":{"concurrency":1,"rat":2}}`, "load.rat", `unknown field "rat"`},
		{`{"targets":[{},{"stop":[],"x":1}]}`, "targets[1].x", `unknown field "x"`},
		{`{"load":{"concurrency":"x"}}`, "load.concurrency", "must be a whole number (got text)"},
		{`{"targets":[{},{"concurrency":1.5}]}`, "targets[1].concurrency", "must be a whole number (got 1.5)"},
		{`{"targets":[{"stop":["a",3]}]}`, "targets[0].stop[1]", "must be text (got a number)"},
		{`{"load":[1]}`, "load", "must be an object (names and values) (got a list)"},
		{`{"load":{"stop":"a"}}`, "load.stop", "must be a list (got text)"},
		{`{"share":"half"}`, "share", "must be a number (got text)"},
		{`{"on":1}`, "on", "must be true or false (got a number)"},
		{`{"targets":{}}`, "targets", "must be a list (got an object)"},
		{`{"name":`, "", "not valid JSON"},
		{`{"name" "x"}`, "", "not valid JSON: invalid character"},
		{"", "", "the body is empty"},
		{`{"name":"a"} {"name":"b"}`, "", "unexpected data after the JSON object"},
		{`[1]`, "", "must be an object"},
	} {
		var b body
		errs := valid.DecodeJSON([]byte(tc.in), &b)
		if len(errs) != 1 || errs[0].Path != tc.path || !strings.Contains(errs[0].Message, tc.msg) {
			t.Errorf("%s: errors %#v, want one at %q saying %q", tc.in, errs, tc.path, tc.msg)
		}
		checkShown(t, errs)
	}
	var b body
	if errs := valid.DecodeJSON([]byte(`{"name":"n","load":{"concurrency":4},"targets":[{"stop":["x"]}]}`+"\n"), &b); errs != nil || b.Load.Concurrency != 4 {
		t.Fatalf("a good body: %v %+v", errs, b)
	}
}

// TestDecodeYAML: YAML's type errors carry neither a path nor a readable
// type; both come from the document's node tree.
func TestDecodeYAML(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, path, msg string }{
		{"name: n\nmodel_idd: 1\n", "model_idd", `unknown field "model_idd" (line 2)`},
		{"load:\n  concurrency: 1\n  rat: 2\n", "load.rat", `unknown field "rat" (line 3)`},
		{"load: {concurrency: x}\n", "load.concurrency", `must be a whole number (got "x") (line 1)`},
		{"targets:\n - {}\n - concurrency: many\n", "targets[1].concurrency", `must be a whole number (got "many") (line 3)`},
		{"load: [1]\n", "load", "is not what this field takes (got a list) (line 1)"},
		{"load: {concurrency: 'a very long string value here'}\n", "load.concurrency", "must be a whole number"},
		{"targets: {a: 1}\n", "targets", "must be a list (got a mapping)"},
		{"share: [1, 2]\n", "share", "must be a number (got a list)"},
		{"name: [unclosed\n", "", "not valid YAML or JSON"},
		{`{"load":{"concurrency":"x"}}`, "load.concurrency", "must be a whole number"},
	} {
		var b body
		errs := valid.DecodeYAML([]byte(tc.in), &b)
		if len(errs) != 1 || errs[0].Path != tc.path || !strings.Contains(errs[0].Message, tc.msg) {
			t.Errorf("%q: errors %#v, want one at %q saying %q", tc.in, errs, tc.path, tc.msg)
		}
		checkShown(t, errs)
	}
	var b body
	errs := valid.DecodeYAML([]byte("load: {concurrency: x, stop: y}\nshare: z\n"), &b)
	if len(errs) != 3 {
		t.Fatalf("every type error is reported: %v", errs)
	}
	checkShown(t, errs)
}

var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// FuzzDecodeJSON: whatever the body, through the JSON or the YAML decoder,
// an error has a message and no Go type name.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"name":"n","load":{"concurrency":"x"}}`, `{"targets":[{},{"stop":[1]}]}`, `{"zz":1}`, `[`, `{"load":[]}`, `{"on":"x","share":true}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var b body
		for _, errs := range []valid.Errors{valid.DecodeJSON([]byte(in), &b), valid.DecodeYAML([]byte(in), &b)} {
			for _, fe := range errs {
				// What the input said is quoted; the rest is ours.
				ours := quoted.ReplaceAllString(fe.Message, `""`)
				if fe.Message == "" || goType.MatchString(ours) || strings.Contains(ours, "type ") {
					t.Fatalf("message %q at %q", fe.Message, fe.Path)
				}
			}
		}
	})
}

// TestTranslate: errors from elsewhere come out as field errors without
// Go's type names; field errors pass through as they are.
func TestTranslate(t *testing.T) {
	t.Parallel()
	var b body
	err := json.Unmarshal([]byte(`{"load":{"concurrency":"x"}}`), &b)
	errs := valid.Translate(err)
	if len(errs) != 1 || errs[0].Path != "load.concurrency" || errs[0].Message != "must be a whole number (got text)" {
		t.Fatalf("json: %v", errs)
	}
	err = yaml.Unmarshal([]byte("share: [1]\n"), &b)
	errs = valid.Translate(err)
	if len(errs) != 1 || goType.MatchString(errs[0].Message) || strings.Contains(errs[0].Message, "type ") {
		t.Fatalf("yaml: %v", errs)
	}
	in := valid.Errors{{Path: "a", Message: "b"}}
	if got := valid.Translate(fmt.Errorf("wrapped: %w", in)); len(got) != 1 || got[0].Path != in[0].Path || got[0].Message != in[0].Message {
		t.Fatalf("field errors: %v", got)
	}
}
