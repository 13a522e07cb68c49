package promscrape

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	tests := []struct {
		name string
		in   string
		want []Sample
	}{
		{"empty", "", nil},
		{"blank lines and comments", "\n  \n# just a comment\n#\n# EOF\n", nil},
		{"plain", "up 1\n", []Sample{{Name: "up", Value: 1}}},
		{"no final newline, CRLF, tabs", "a\t2\r\nb 3", []Sample{{Name: "a", Value: 2}, {Name: "b", Value: 3}}},
		{"colons and underscores", "vllm:num_requests_running 4.0\n_x:y_ 5",
			[]Sample{{Name: "vllm:num_requests_running", Value: 4}, {Name: "_x:y_", Value: 5}}},
		{"labels", `m{a="1",b="two words"} 7`,
			[]Sample{{Name: "m", Labels: []Label{{"a", "1"}, {"b", "two words"}}, Value: 7}}},
		{"label escapes", `m{path="C:\\dir",q="say \"hi\"",nl="a\nb",u="héllo"} 1`,
			[]Sample{{Name: "m", Labels: []Label{{"path", `C:\dir`}, {"q", `say "hi"`}, {"nl", "a\nb"}, {"u", "héllo"}}, Value: 1}}},
		{"label braces and commas in values", `m{a="{x,y}=z"} 1`,
			[]Sample{{Name: "m", Labels: []Label{{"a", "{x,y}=z"}}, Value: 1}}},
		{"blanks around labels, trailing comma, empty set", `m { a = "1" , } 1` + "\nn{} 2",
			[]Sample{{Name: "m", Labels: []Label{{"a", "1"}}, Value: 1}, {Name: "n", Value: 2}}},
		{"special values", "a NaN\nb +Inf\nc -Inf\nd -0.5e-3\ne 1.7e+308\nf Inf",
			[]Sample{{Name: "a", Value: nan}, {Name: "b", Value: math.Inf(1)}, {Name: "c", Value: math.Inf(-1)},
				{Name: "d", Value: -0.0005}, {Name: "e", Value: 1.7e308}, {Name: "f", Value: math.Inf(1)}}},
		{"timestamps", "a 1 1712345678901\nb{x=\"y\"} 2 -5",
			[]Sample{{Name: "a", Value: 1, Timestamp: 1712345678901, HasTimestamp: true},
				{Name: "b", Labels: []Label{{"x", "y"}}, Value: 2, Timestamp: -5, HasTimestamp: true}}},
		{"types", `# HELP h A histogram with "quotes" and \\ escapes.
# TYPE h histogram
h_bucket{le="0.5"} 1
h_bucket{le="+Inf"} 3
h_sum 2.5
h_count 3
# TYPE c counter
c_total 9
# TYPE g gauge
g 1
u 2
`, []Sample{
			{Name: "h_bucket", Labels: []Label{{"le", "0.5"}}, Value: 1, Type: "histogram"},
			{Name: "h_bucket", Labels: []Label{{"le", "+Inf"}}, Value: 3, Type: "histogram"},
			{Name: "h_sum", Value: 2.5, Type: "histogram"},
			{Name: "h_count", Value: 3, Type: "histogram"},
			{Name: "c_total", Value: 9, Type: "counter"},
			{Name: "g", Value: 1, Type: "gauge"},
			{Name: "u", Value: 2},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !samplesEqual(got, tt.want) {
				t.Errorf("Parse:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"up", "up: no value"},
		{"up one", `value "one": invalid syntax`},
		{"up 1e999", "value out of range"},
		{"up 1 2 3", "text after the timestamp"},
		{"up 1 1.5", "timestamp"},
		{"9up 1", "invalid metric name"},
		{"up-time 1", "invalid metric name"},
		{"{a=\"b\"} 1", "invalid metric name"},
		{`m{a="b" 1`, "want ',' or '}'"},
		{`m{a="b"`, "want ',' or '}'"},
		{`m{a="b`, "unterminated value"},
		{`m{a="b\`, "unterminated value"},
		{`m{a="\t"} 1`, `invalid escape \t`},
		{`m{a=b} 1`, "value not quoted"},
		{`m{a} 1`, "no '=' after label a"},
		{`m{1a="x"} 1`, "invalid label name"},
		{`m{a:b="x"} 1`, "no '=' after label a"},
		{`m{a="1",a="2"} 1`, "label a twice"},
		{"m{a=\"\xff\"} 1", "not UTF-8"},
		{"m{", "no closing brace"},
		{"# TYPE m bogus", "# TYPE m"},
		{"# TYPE m", "# TYPE m"},
		{"# TYPE m gauge\n# TYPE m counter", "second # TYPE for m"},
		{"# HELP", "# HELP without a valid metric name"},
		{"<html><body>Not Found</body></html>", "invalid metric name"},
	}
	for _, tt := range tests {
		samples, err := Parse([]byte(tt.in))
		var synErr *SyntaxError
		if !errors.As(err, &synErr) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", tt.in, err, tt.want)
		}
		if len(samples) != 0 {
			t.Errorf("Parse(%q) returned %d samples", tt.in, len(samples))
		}
	}
}

// A malformed line costs only itself.
func TestParseSkipsMalformedLines(t *testing.T) {
	t.Parallel()
	samples, err := Parse([]byte("a 1\nbad line here\nb 2\nc{ 3\nd 4\n"))
	var synErr *SyntaxError
	if !errors.As(err, &synErr) || synErr.Line != 2 || synErr.Count != 2 {
		t.Fatalf("err = %#v", err)
	}
	if !strings.Contains(err.Error(), "line 2:") || !strings.Contains(err.Error(), "and 1 more") {
		t.Errorf("message %q", err)
	}
	if len(samples) != 3 || samples[0].Name != "a" || samples[1].Name != "b" || samples[2].Name != "d" {
		t.Errorf("samples %+v", samples)
	}
}

func TestSampleLabel(t *testing.T) {
	t.Parallel()
	s := Sample{Labels: []Label{{"a", "1"}, {"b", ""}}}
	if v, ok := s.Label("b"); !ok || v != "" {
		t.Error("label b")
	}
	if _, ok := s.Label("c"); ok {
		t.Error("label c")
	}
}

func samplesEqual(a, b []Sample) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || len(x.Labels) != len(y.Labels) || (len(x.Labels) > 0 && !reflect.DeepEqual(x.Labels, y.Labels)) ||
			x.Timestamp != y.Timestamp || x.HasTimestamp != y.HasTimestamp || x.Type != y.Type {
			return false
		}
		if x.Value != y.Value && !(math.IsNaN(x.Value) && math.IsNaN(y.Value)) {
			return false
		}
	}
	return true
}

// format writes samples back in the text format.
func format(samples []Sample) string {
	var b strings.Builder
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	for _, s := range samples {
		b.WriteString(s.Name)
		if len(s.Labels) > 0 {
			b.WriteByte('{')
			for i, l := range s.Labels {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(l.Name + `="` + esc.Replace(l.Value) + `"`)
			}
			b.WriteByte('}')
		}
		b.WriteString(" " + strconv.FormatFloat(s.Value, 'g', -1, 64))
		if s.HasTimestamp {
			b.WriteString(" " + strconv.FormatInt(s.Timestamp, 10))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// FuzzParse: Parse never panics, what it returns is well formed, and it
// reads back what it returned, written out again, unchanged.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.prom")
	for _, path := range seeds {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"", "up 1", `m{a="b\"c\\d\n",e="f",} NaN 123`, "a +Inf\nb -Inf -1", "# TYPE x histogram\nx_bucket{le=\"1\"} 1",
		"m{", `m{a="`, "m 0x1p-2", "m 1_0", "\xff\xfe", "# HELP \n# TYPE", "<html>", "m{a=\"b\"}1",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		samples, err := Parse(data)
		var synErr *SyntaxError
		if err != nil && (!errors.As(err, &synErr) || synErr.Count < 1 || synErr.Line < 1) {
			t.Fatalf("error %#v", err)
		}
		for _, s := range samples {
			if !validMetricName(s.Name) {
				t.Fatalf("bad name %q", s.Name)
			}
			for _, l := range s.Labels {
				if !validLabelName(l.Name) {
					t.Fatalf("bad label name %q", l.Name)
				}
			}
		}
		again, err := Parse([]byte(format(samples)))
		if err != nil {
			t.Fatalf("reparse: %v\n%s", err, format(samples))
		}
		for i := range again {
			again[i].Type = samples[i].Type
		}
		if !samplesEqual(samples, again) {
			t.Fatalf("round trip:\n %+v\n %+v", samples, again)
		}
		_ = FromSamples(samples)
	})
}
