package promscrape

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Bounds on one exposition. A runtime is a process on a GPU node, less
// trusted than agentd: what it sends is read within these limits.
const (
	// MaxSamples is the most sample lines an exposition may hold; vLLM's
	// with its histograms is a few thousand.
	MaxSamples = 100_000
	// maxMalformed is how many malformed lines are skipped before the
	// exposition is given up as not the text format. Each one costs a
	// parse of the whole exposition.
	maxMalformed = 16
)

// ErrTooManySamples is returned by Parse for an exposition over MaxSamples
// sample lines; nothing of it is read.
var ErrTooManySamples = fmt.Errorf("promscrape: exposition over %d samples", MaxSamples)

// Sample is one sample line of an exposition.
type Sample struct {
	Name string
	// Labels in the order they were written (a histogram's le and a
	// summary's quantile last).
	Labels []Label
	Value  float64
	// Timestamp is in milliseconds since the epoch, when HasTimestamp.
	Timestamp    int64
	HasTimestamp bool
	// Type is the metric family's # TYPE (counter, gauge, histogram,
	// summary, untyped, gaugehistogram), empty when none was given.
	Type string
}

// Label is one label pair.
type Label struct{ Name, Value string }

// Label returns the value of the label called name.
func (s Sample) Label(name string) (string, bool) {
	for _, l := range s.Labels {
		if l.Name == name {
			return l.Value, true
		}
	}
	return "", false
}

// SyntaxError reports the malformed lines of an exposition: the first one
// and how many there were.
type SyntaxError struct {
	Line  int // 1-based
	Msg   string
	Count int
	// GaveUp is set when there were too many malformed lines to go on;
	// Count is then how many were seen before stopping.
	GaveUp bool
}

// Error names the first malformed line and says how many more there were.
func (e *SyntaxError) Error() string {
	switch {
	case e.GaveUp:
		return fmt.Sprintf("line %d: %s (and %d more malformed lines; stopped there)", e.Line, e.Msg, e.Count-1)
	case e.Count > 1:
		return fmt.Sprintf("line %d: %s (and %d more malformed lines)", e.Line, e.Msg, e.Count-1)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// exposition is an exposition made ready for expfmt's parser: every line
// trimmed of blanks and a CR, the last one ended by a newline, so that
// line n of the parser is line n of the input.
type exposition struct {
	buf []byte
	// lines holds each line's start and end in buf.
	lines [][2]int
	// first is the line on which each sample name first appears.
	first map[string]int
	// declared is the line of each name's first # TYPE and its type.
	declared map[string]typeLine
	samples  int
}

type typeLine struct {
	line int
	typ  string
}

func prepare(data []byte) *exposition {
	e := &exposition{buf: make([]byte, 0, len(data)+1), first: map[string]int{}, declared: map[string]typeLine{}}
	for n := 1; len(data) > 0; n++ {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		line = bytes.TrimRight(bytes.TrimLeft(line, " \t"), " \t\r")
		start := len(e.buf)
		e.buf = append(e.buf, line...)
		e.lines = append(e.lines, [2]int{start, len(e.buf)})
		e.buf = append(e.buf, '\n')
		switch {
		case len(line) == 0:
		case line[0] == '#':
			if f := strings.Fields(string(line[1:])); len(f) == 3 && f[0] == "TYPE" {
				if _, dup := e.declared[f[1]]; !dup {
					e.declared[f[1]] = typeLine{n, strings.ToLower(f[2])}
				}
			}
		default:
			e.samples++
			if end := bytes.IndexAny(line, "{ \t"); end != 0 {
				if end < 0 {
					end = len(line)
				}
				if _, seen := e.first[string(line[:end])]; !seen {
					e.first[string(line[:end])] = n
				}
			}
		}
	}
	return e
}

// blank empties line n (1-based) for the next parse.
func (e *exposition) blank(n int) {
	for i := e.lines[n-1][0]; i < e.lines[n-1][1]; i++ {
		e.buf[i] = ' '
	}
}

func (e *exposition) isBlank(n int) bool {
	span := e.lines[n-1]
	return len(bytes.TrimLeft(e.buf[span[0]:span[1]], " ")) == 0
}

// Parse reads the Prometheus text exposition format (version 0.0.4) with
// expfmt's TextParser, names as in Prometheus 2 (legacy validation). It
// never panics. A malformed line is skipped; the samples of the others are
// returned all the same, with a *SyntaxError that names the first
// malformed line and counts them. After more than a few malformed lines
// it stops and returns no samples. CR line ends, blanks around a line and
// a missing final newline are accepted. An exposition over MaxSamples
// sample lines gives ErrTooManySamples.
//
// Histograms and summaries come back as their sample lines (name_bucket
// with le, name with quantile, name_sum, name_count), one label set after
// another; families in the order they first appear.
func Parse(data []byte) ([]Sample, error) {
	e := prepare(data)
	if e.samples > MaxSamples {
		return nil, ErrTooManySamples
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	var synErr *SyntaxError
	for {
		families, err := parser.TextToMetricFamilies(bytes.NewReader(e.buf))
		if err == nil {
			samples := e.samplesOf(families)
			if synErr != nil {
				return samples, synErr
			}
			return samples, nil
		}
		var pe expfmt.ParseError
		if !errors.As(err, &pe) || pe.Line < 1 || pe.Line > len(e.lines) || e.isBlank(pe.Line) {
			// Not a line that skipping would mend.
			if synErr == nil {
				synErr = &SyntaxError{Line: max(pe.Line, 1), Msg: err.Error()}
			}
			synErr.Count++
			synErr.GaveUp = true
			return nil, synErr
		}
		if synErr == nil {
			synErr = &SyntaxError{Line: pe.Line, Msg: pe.Msg}
		}
		synErr.Count++
		if synErr.Count > maxMalformed {
			synErr.GaveUp = true
			return nil, synErr
		}
		e.blank(pe.Line)
	}
}

// samplesOf writes families back out as sample lines, the families in the
// order their first sample appeared.
func (e *exposition) samplesOf(families map[string]*dto.MetricFamily) []Sample {
	firstOf := func(f *dto.MetricFamily) int {
		name, at := f.GetName(), math.MaxInt
		names := []string{name}
		switch f.GetType() {
		case dto.MetricType_SUMMARY, dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			names = append(names, name+"_bucket", name+"_sum", name+"_count")
		}
		for _, n := range names {
			if line, ok := e.first[n]; ok {
				at = min(at, line)
			}
		}
		return at
	}
	ordered := make([]*dto.MetricFamily, 0, len(families))
	for _, f := range families {
		ordered = append(ordered, f)
	}
	slices.SortFunc(ordered, func(a, b *dto.MetricFamily) int {
		if c := firstOf(a) - firstOf(b); c != 0 {
			return c
		}
		return strings.Compare(a.GetName(), b.GetName())
	})
	var samples []Sample
	for _, f := range ordered {
		name, typ := f.GetName(), e.typeOf(f)
		for _, m := range f.GetMetric() {
			base := Sample{Type: typ, Timestamp: m.GetTimestampMs(), HasTimestamp: m.TimestampMs != nil}
			for _, l := range m.GetLabel() {
				base.Labels = append(base.Labels, Label{l.GetName(), l.GetValue()})
			}
			add := func(suffix string, v float64, extra ...Label) {
				s := base
				s.Name, s.Value = name+suffix, v
				if len(extra) > 0 {
					s.Labels = append(slices.Clip(base.Labels), extra...)
				}
				samples = append(samples, s)
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				add("", m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add("", m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add("", m.GetUntyped().GetValue())
			case dto.MetricType_SUMMARY:
				s := m.GetSummary()
				for _, q := range s.GetQuantile() {
					add("", q.GetValue(), Label{model.QuantileLabel, formatFloat(q.GetQuantile())})
				}
				if s.SampleSum != nil {
					add("_sum", s.GetSampleSum())
				}
				if s.SampleCount != nil {
					add("_count", float64(s.GetSampleCount()))
				}
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					add("_bucket", countOf(b.CumulativeCountFloat, b.GetCumulativeCount()), Label{model.BucketLabel, formatFloat(b.GetUpperBound())})
				}
				if h.SampleSum != nil {
					add("_sum", h.GetSampleSum())
				}
				if h.SampleCount != nil || h.SampleCountFloat != nil {
					add("_count", countOf(h.SampleCountFloat, h.GetSampleCount()))
				}
			}
		}
	}
	return samples
}

// typeOf is a family's # TYPE as the format names it, empty when it had
// none. An untyped family without its own # TYPE takes that of the name
// it extends by an OpenMetrics suffix (a counter's c_total after
// "# TYPE c counter").
func (e *exposition) typeOf(f *dto.MetricFamily) string {
	switch f.GetType() {
	case dto.MetricType_GAUGE_HISTOGRAM:
		return "gaugehistogram"
	case dto.MetricType_UNTYPED:
		if e.declaredType(f.GetName()) != "" {
			return "untyped"
		}
		for _, suffix := range []string{"_total", "_created", "_gsum", "_gcount"} {
			if base, ok := strings.CutSuffix(f.GetName(), suffix); ok {
				if t := e.declaredType(base); t != "" {
					return t
				}
			}
		}
		return ""
	}
	return strings.ToLower(f.GetType().String())
}

// declaredType is the type of name's # TYPE line when the parser kept it.
func (e *exposition) declaredType(name string) string {
	d, ok := e.declared[name]
	if !ok || e.isBlank(d.line) {
		return ""
	}
	return d.typ
}

func countOf(float *float64, count uint64) float64 {
	if float != nil {
		return *float
	}
	return float64(count)
}

// formatFloat writes an le or quantile value as Prometheus clients do.
func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
