package promscrape

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Sample is one sample line of an exposition.
type Sample struct {
	Name string
	// Labels in the order they were written.
	Labels []Label
	Value  float64
	// Timestamp is in milliseconds since the epoch, when HasTimestamp.
	Timestamp    int64
	HasTimestamp bool
	// Type is the metric family's # TYPE (counter, gauge, histogram,
	// summary, untyped, …), empty when none was given.
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
}

// Error names the first malformed line and says how many more there were.
func (e *SyntaxError) Error() string {
	if e.Count > 1 {
		return fmt.Sprintf("line %d: %s (and %d more malformed lines)", e.Line, e.Msg, e.Count-1)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// types a # TYPE line may name: the text format's and OpenMetrics'.
func knownType(t string) bool {
	switch t {
	case "counter", "gauge", "histogram", "summary", "untyped",
		"unknown", "gaugehistogram", "info", "stateset":
		return true
	}
	return false
}

// Parse reads the Prometheus text exposition format (version 0.0.4): # HELP
// and # TYPE lines, other comments, and samples `name{label="value",…}
// value [timestamp]` with the values Go's strconv reads (NaN, +Inf, -Inf
// included). It never panics. A malformed line is skipped; the samples of
// the others are returned all the same, with a *SyntaxError that names the
// first malformed line and counts them.
//
// Not supported (reported as malformed): Prometheus 3's quoted UTF-8
// metric and label names, and OpenMetrics exemplars.
func Parse(data []byte) ([]Sample, error) {
	var (
		samples []Sample
		types   = map[string]string{}
		synErr  *SyntaxError
	)
	fail := func(line int, format string, args ...any) {
		if synErr == nil {
			synErr = &SyntaxError{Line: line, Msg: fmt.Sprintf(format, args...)}
		}
		synErr.Count++
	}
	for n := 1; len(data) > 0; n++ {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		s := strings.TrimRight(strings.TrimLeft(string(line), " \t"), " \t\r")
		if s == "" {
			continue
		}
		if s[0] == '#' {
			if err := parseComment(s, types); err != nil {
				fail(n, "%s", err)
			}
			continue
		}
		sample, err := parseSample(s)
		if err != nil {
			fail(n, "%s", err)
			continue
		}
		sample.Type = familyType(sample.Name, types)
		samples = append(samples, sample)
	}
	if synErr != nil {
		return samples, synErr
	}
	return samples, nil
}

// parseComment checks # HELP and # TYPE lines and records types; other
// comments are ignored.
func parseComment(s string, types map[string]string) error {
	fields := strings.Fields(s[1:])
	if len(fields) == 0 || (fields[0] != "HELP" && fields[0] != "TYPE") {
		return nil
	}
	if len(fields) < 2 || !validMetricName(fields[1]) {
		return fmt.Errorf("# %s without a valid metric name", fields[0])
	}
	if fields[0] == "HELP" {
		return nil
	}
	if len(fields) != 3 || !knownType(fields[2]) {
		return fmt.Errorf("# TYPE %s: want one of counter, gauge, histogram, summary, untyped", fields[1])
	}
	if _, dup := types[fields[1]]; dup {
		return fmt.Errorf("second # TYPE for %s", fields[1])
	}
	types[fields[1]] = fields[2]
	return nil
}

// familyType finds a sample's family: its own name, or that name less the
// suffix a histogram, a summary or an OpenMetrics counter adds.
func familyType(name string, types map[string]string) string {
	if t, ok := types[name]; ok {
		return t
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count", "_total", "_created", "_gsum", "_gcount"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if t, ok := types[base]; ok {
				return t
			}
		}
	}
	return ""
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func skipBlanks(s string, i int) int {
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	return i
}

func isNameStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isNameChar(c byte) bool { return isNameStart(c) || ('0' <= c && c <= '9') }

func validMetricName(s string) bool {
	if s == "" || !(isNameStart(s[0]) || s[0] == ':') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameChar(s[i]) && s[i] != ':' {
			return false
		}
	}
	return true
}

func validLabelName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameChar(s[i]) {
			return false
		}
	}
	return true
}

var errLabels = errors.New("malformed labels")

// parseSample reads `name[{labels}] value [timestamp]`; s has no leading
// or trailing blanks.
func parseSample(s string) (Sample, error) {
	var smp Sample
	i := 0
	for i < len(s) && (isNameChar(s[i]) || s[i] == ':') {
		i++
	}
	smp.Name = s[:i]
	if !validMetricName(smp.Name) {
		return Sample{}, fmt.Errorf("invalid metric name at %q", truncate(s))
	}
	j := skipBlanks(s, i)
	switch {
	case j < len(s) && s[j] == '{':
		labels, next, err := parseLabels(s, j+1)
		if err != nil {
			return Sample{}, fmt.Errorf("%s: %w", smp.Name, err)
		}
		smp.Labels, i = labels, next
	case j == i && i < len(s):
		return Sample{}, fmt.Errorf("invalid metric name at %q", truncate(s))
	}
	rest := strings.FieldsFunc(s[i:], func(r rune) bool { return r == ' ' || r == '\t' })
	switch len(rest) {
	case 0:
		return Sample{}, fmt.Errorf("%s: no value", smp.Name)
	case 1, 2:
	default:
		return Sample{}, fmt.Errorf("%s: text after the timestamp", smp.Name)
	}
	v, err := parseValue(rest[0])
	if err != nil {
		return Sample{}, fmt.Errorf("%s: value %q: %w", smp.Name, truncate(rest[0]), err)
	}
	smp.Value = v
	if len(rest) == 2 {
		ts, err := strconv.ParseInt(rest[1], 10, 64)
		if err != nil {
			return Sample{}, fmt.Errorf("%s: timestamp %q is not an integer", smp.Name, truncate(rest[1]))
		}
		smp.Timestamp, smp.HasTimestamp = ts, true
	}
	return smp, nil
}

// parseValue reads a value as Go does, which covers the format's NaN,
// +Inf and -Inf; a value out of float64's range is an error.
func parseValue(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		var numErr *strconv.NumError
		if errors.As(err, &numErr) {
			return 0, numErr.Err
		}
		return 0, err
	}
	return v, nil
}

// parseLabels reads label pairs from s[i:], just after the '{', up to and
// including the '}', and returns the index after it.
func parseLabels(s string, i int) ([]Label, int, error) {
	var labels []Label
	for {
		i = skipBlanks(s, i)
		if i >= len(s) {
			return nil, 0, fmt.Errorf("%w: no closing brace", errLabels)
		}
		if s[i] == '}' {
			return labels, i + 1, nil
		}
		start := i
		for i < len(s) && isNameChar(s[i]) {
			i++
		}
		name := s[start:i]
		if !validLabelName(name) {
			return nil, 0, fmt.Errorf("%w: invalid label name at %q", errLabels, truncate(s[start:]))
		}
		for _, l := range labels {
			if l.Name == name {
				return nil, 0, fmt.Errorf("%w: label %s twice", errLabels, name)
			}
		}
		i = skipBlanks(s, i)
		if i >= len(s) || s[i] != '=' {
			return nil, 0, fmt.Errorf("%w: no '=' after label %s", errLabels, name)
		}
		i = skipBlanks(s, i+1)
		if i >= len(s) || s[i] != '"' {
			return nil, 0, fmt.Errorf("%w: label %s: value not quoted", errLabels, name)
		}
		value, next, err := parseLabelValue(s, i+1)
		if err != nil {
			return nil, 0, fmt.Errorf("%w: label %s: %w", errLabels, name, err)
		}
		labels = append(labels, Label{Name: name, Value: value})
		i = skipBlanks(s, next)
		if i < len(s) && s[i] == ',' {
			i++
			continue
		}
		if i < len(s) && s[i] == '}' {
			return labels, i + 1, nil
		}
		return nil, 0, fmt.Errorf("%w: want ',' or '}' after label %s", errLabels, name)
	}
}

// parseLabelValue reads an escaped value from s[i:], just after the opening
// quote, and returns the index after the closing one.
func parseLabelValue(s string, i int) (string, int, error) {
	var b strings.Builder
	for i < len(s) {
		c := s[i]
		switch c {
		case '"':
			v := b.String()
			if !utf8.ValidString(v) {
				return "", 0, errors.New("value is not UTF-8")
			}
			return v, i + 1, nil
		case '\\':
			if i+1 >= len(s) {
				return "", 0, errors.New("unterminated value")
			}
			switch s[i+1] {
			case '\\':
				b.WriteByte('\\')
			case '"':
				b.WriteByte('"')
			case 'n':
				b.WriteByte('\n')
			default:
				return "", 0, fmt.Errorf("invalid escape \\%c", s[i+1])
			}
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", 0, errors.New("unterminated value")
}

// truncate shortens text quoted in an error.
func truncate(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…"
}
