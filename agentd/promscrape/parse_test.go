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

	"github.com/prometheus/common/model"
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
		// Prometheus' parser reads a # HELP or # TYPE line cut short as a comment.
		{"incomplete HELP and TYPE", "# HELP\n# TYPE m\n# HELP m\nm 1\n", []Sample{{Name: "m", Value: 1}}},
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
	// The messages are expfmt's TextParser's.
	tests := []struct{ in, want string }{
		{"up", `expected float as value, got ""`},
		{"up one", `expected float as value, got "one"`},
		{"up 1e999", `expected float as value, got "1e999"`},
		{"up 0x1p-2", `expected float as value`},
		{"up 1_0", `expected float as value`},
		{"up 1 2 3", "spurious string after timestamp"},
		{"up 1 1.5", "expected integer as timestamp"},
		{"9up 1", "invalid metric name"},
		{"up-time 1", `expected float as value, got "-time"`},
		{"{a=\"b\"} 1", "invalid metric name"},
		{`m{a="b" 1`, "unexpected end of label value"},
		{`m{a="b"`, "unexpected end of label value"},
		{`m{a="b`, "contains unescaped new-line"},
		{`m{a="b\`, "invalid escape sequence"},
		{`m{a="\t"} 1`, `invalid escape sequence '\t'`},
		{`m{a=b} 1`, `expected '"' at start of label value`},
		{`m{a} 1`, "expected '=' after label name"},
		{`m{1a="x"} 1`, "invalid label name"},
		{`m{a:b="x"} 1`, "expected '=' after label name, found ':'"},
		{`m{a="1",a="2"} 1`, `duplicate label names for metric "m"`},
		{"m{a=\"\xff\"} 1", "invalid label value"},
		{"m{", "invalid label name"},
		{"# TYPE m bogus", `unknown metric type "bogus"`},
		{"# TYPE m gauge\n# TYPE m counter", `second TYPE line for metric name "m"`},
		{"# TYPE h histogram\nh_bucket{le=\"x\"} 1", "expected float as value for 'le' label"},
		{"# TYPE s summary\ns{quantile=\"x\"} 1", "expected float as value for 'quantile' label"},
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

// A # TYPE after the family's samples is the malformed line; the samples
// stay, untyped.
func TestParseTypeAfterSamples(t *testing.T) {
	t.Parallel()
	samples, err := Parse([]byte("m 1\n# TYPE m gauge\n"))
	var synErr *SyntaxError
	if !errors.As(err, &synErr) || synErr.Line != 2 || !strings.Contains(err.Error(), "TYPE reported after samples") {
		t.Fatalf("err = %v", err)
	}
	if !samplesEqual(samples, []Sample{{Name: "m", Value: 1}}) {
		t.Errorf("samples %+v", samples)
	}
}

// Histograms and summaries come back as the lines they were written as,
// label sets one after another, other labels before le and quantile.
func TestParseHistogramsAndSummaries(t *testing.T) {
	t.Parallel()
	in := `# TYPE vllm:e2e_request_latency_seconds histogram
vllm:e2e_request_latency_seconds_bucket{model_name="a",le="0.3"} 1
vllm:e2e_request_latency_seconds_bucket{model_name="a",le="1.0"} 2.5
vllm:e2e_request_latency_seconds_bucket{model_name="a",le="+Inf"} 3
vllm:e2e_request_latency_seconds_sum{model_name="a"} 4.25
vllm:e2e_request_latency_seconds_count{model_name="a"} 3
vllm:e2e_request_latency_seconds_bucket{model_name="b",le="+Inf"} 0 1000
vllm:e2e_request_latency_seconds_count{model_name="b"} 0 1000
# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0.5"} 0.01
go_gc_duration_seconds{quantile="1"} 0.02
go_gc_duration_seconds_sum 0.5
go_gc_duration_seconds_count 40
`
	const h, g = "histogram", "summary"
	lat := "vllm:e2e_request_latency_seconds"
	want := []Sample{
		{Name: lat + "_bucket", Labels: []Label{{"model_name", "a"}, {"le", "0.3"}}, Value: 1, Type: h},
		{Name: lat + "_bucket", Labels: []Label{{"model_name", "a"}, {"le", "1"}}, Value: 2.5, Type: h},
		{Name: lat + "_bucket", Labels: []Label{{"model_name", "a"}, {"le", "+Inf"}}, Value: 3, Type: h},
		{Name: lat + "_sum", Labels: []Label{{"model_name", "a"}}, Value: 4.25, Type: h},
		{Name: lat + "_count", Labels: []Label{{"model_name", "a"}}, Value: 3, Type: h},
		{Name: lat + "_bucket", Labels: []Label{{"model_name", "b"}, {"le", "+Inf"}}, Value: 0, Type: h, Timestamp: 1000, HasTimestamp: true},
		{Name: lat + "_count", Labels: []Label{{"model_name", "b"}}, Value: 0, Type: h, Timestamp: 1000, HasTimestamp: true},
		{Name: "go_gc_duration_seconds", Labels: []Label{{"quantile", "0.5"}}, Value: 0.01, Type: g},
		{Name: "go_gc_duration_seconds", Labels: []Label{{"quantile", "1"}}, Value: 0.02, Type: g},
		{Name: "go_gc_duration_seconds_sum", Value: 0.5, Type: g},
		{Name: "go_gc_duration_seconds_count", Value: 40, Type: g},
	}
	got, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if !samplesEqual(got, want) {
		t.Errorf("Parse:\n got %+v\nwant %+v", got, want)
	}
}

// An exposition past the limits is not read: too many samples, or more
// malformed lines than are worth skipping.
func TestParseLimits(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range MaxSamples + 1 {
		b.WriteString("m{i=\"" + strconv.Itoa(i) + "\"} 1\n")
	}
	if samples, err := Parse([]byte(b.String())); !errors.Is(err, ErrTooManySamples) || samples != nil {
		t.Errorf("%d samples: %d back, err %v", MaxSamples+1, len(samples), err)
	}
	if _, err := Parse([]byte(strings.Repeat("m{i=\"1\"} 1\n# comment\n", MaxSamples/2))); err != nil {
		t.Errorf("%d samples: %v", MaxSamples/2, err)
	}

	garbage := "a 1\n" + strings.Repeat("not a sample\n", maxMalformed+1) + "b 2\n"
	samples, err := Parse([]byte(garbage))
	var synErr *SyntaxError
	if !errors.As(err, &synErr) || !synErr.GaveUp || synErr.Line != 2 || synErr.Count != maxMalformed+1 || samples != nil {
		t.Fatalf("%d malformed lines: %d samples, err %#v", maxMalformed+1, len(samples), err)
	}
	if !strings.Contains(err.Error(), "stopped there") {
		t.Errorf("message %q", err)
	}
	samples, err = Parse([]byte("a 1\n" + strings.Repeat("not a sample\n", maxMalformed) + "b 2\n"))
	if !errors.As(err, &synErr) || synErr.GaveUp || synErr.Count != maxMalformed || len(samples) != 2 {
		t.Errorf("%d malformed lines: %d samples, err %v", maxMalformed, len(samples), err)
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
		if err != nil && (!errors.As(err, &synErr) || synErr.Count < 1 || synErr.Line < 1 || synErr.Count > maxMalformed+1) {
			t.Fatalf("error %#v", err)
		}
		if synErr != nil && synErr.GaveUp && samples != nil {
			t.Fatalf("gave up but returned %d samples", len(samples))
		}
		if len(samples) > MaxSamples {
			t.Fatalf("%d samples", len(samples))
		}
		for _, s := range samples {
			if !model.LegacyValidation.IsValidMetricName(s.Name) {
				t.Fatalf("bad name %q", s.Name)
			}
			for _, l := range s.Labels {
				if !model.LegacyValidation.IsValidLabelName(l.Name) {
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
