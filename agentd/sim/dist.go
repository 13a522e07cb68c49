package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Distribution kinds, as written before the colon.
const (
	KindConst     = "const"
	KindUniform   = "uniform"
	KindNormal    = "normal"
	KindLognormal = "lognormal"
	KindExp       = "exp"
)

// Limits on what a distribution may be written with: beyond them a value
// is a typo, not a latency or a length.
const (
	maxDurationParam = 24 * time.Hour
	maxNumberParam   = 1e9
	maxSigma         = 10
)

// Dist is a distribution to draw latencies or token counts from. It is
// written compactly, the same on a command line and in YAML:
//
//	const:20ms            always 20 ms
//	uniform:10ms,40ms     between min and max
//	normal:200,50         mean, standard deviation (draws below 0 become 0)
//	lognormal:150ms,0.5   median, sigma (of the underlying normal)
//	exp:20ms              exponential with this mean
//
// A bare value ("20ms", "128") is a constant. Time distributions take
// durations, token counts plain numbers; lognormal's sigma is always a
// plain number. The zero Dist is unset.
type Dist struct {
	Kind string
	// A and B are the parameters in the order written (B unused by const
	// and exp); durations are in nanoseconds.
	A, B float64
	// Durations says the parameters were durations (lognormal's sigma
	// aside).
	Durations bool
}

// ParseDist reads a distribution written as Dist describes.
func ParseDist(s string) (Dist, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Dist{}, errors.New("empty distribution: want KIND:PARAMS such as const:20ms, uniform:10ms,40ms, normal:200,50, lognormal:150ms,0.5 or exp:20ms")
	}
	kind, params, ok := strings.Cut(s, ":")
	if !ok {
		// A bare value is a constant.
		kind, params = KindConst, s
	}
	kind = strings.ToLower(strings.TrimSpace(kind))
	want := 2
	switch kind {
	case KindConst, "constant":
		kind, want = KindConst, 1
	case KindExp, "exponential":
		kind, want = KindExp, 1
	case KindUniform, KindNormal:
	case KindLognormal, "lognorm":
		kind = KindLognormal
	default:
		return Dist{}, fmt.Errorf("%q: unknown distribution %q (want const, uniform, normal, lognormal or exp)", s, kind)
	}
	parts := strings.Split(params, ",")
	if len(parts) != want {
		return Dist{}, fmt.Errorf("%q: %s takes %d parameter(s), got %d", s, kind, want, len(parts))
	}
	d := Dist{Kind: kind}
	vals := [2]float64{}
	units := [2]bool{}
	for i, p := range parts {
		v, dur, err := parseParam(strings.TrimSpace(p))
		if err != nil {
			return Dist{}, fmt.Errorf("%q: %s parameter %d: %w", s, kind, i+1, err)
		}
		vals[i], units[i] = v, dur
	}
	d.A, d.B = vals[0], vals[1]
	switch {
	case kind == KindLognormal:
		if units[1] {
			return Dist{}, fmt.Errorf("%q: lognormal's sigma is a plain number such as 0.5, not a duration", s)
		}
		if d.B > maxSigma {
			return Dist{}, fmt.Errorf("%q: lognormal's sigma %g is above %d", s, d.B, maxSigma)
		}
		d.Durations = units[0]
	case want == 2 && units[0] != units[1] && (!units[0] && d.A != 0 || !units[1] && d.B != 0):
		// A plain 0 fits durations ("uniform:0,40ms"); other numbers do not.
		return Dist{}, fmt.Errorf("%q: mixes a duration and a plain number", s)
	default:
		d.Durations = units[0] || (want == 2 && units[1])
	}
	for i, v := range vals[:want] {
		if kind == KindLognormal && i == 1 {
			continue
		}
		if d.Durations && v > float64(maxDurationParam) {
			return Dist{}, fmt.Errorf("%q: %s is longer than %s", s, time.Duration(v), maxDurationParam)
		}
		if !d.Durations && v > maxNumberParam {
			return Dist{}, fmt.Errorf("%q: %g is above %g", s, v, float64(maxNumberParam))
		}
	}
	if kind == KindUniform && d.B < d.A {
		return Dist{}, fmt.Errorf("%q: uniform's max is below its min", s)
	}
	return d, nil
}

// parseParam reads one parameter: a plain number or a duration, never
// negative.
func parseParam(p string) (v float64, duration bool, err error) {
	if p == "" {
		return 0, false, errors.New("missing")
	}
	if v, err := strconv.ParseFloat(p, 64); err == nil {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false, fmt.Errorf("%q is not a finite number", p)
		}
		if v < 0 {
			return 0, false, fmt.Errorf("%q is negative", p)
		}
		return v, false, nil
	} else if errors.Is(err, strconv.ErrRange) {
		return 0, false, fmt.Errorf("%q is out of range", p)
	}
	d, err := time.ParseDuration(p)
	if err != nil {
		return 0, false, fmt.Errorf("%q is neither a number nor a duration (such as 20ms)", p)
	}
	if d < 0 {
		return 0, false, fmt.Errorf("%q is negative", p)
	}
	return float64(d), true, nil
}

// MustParseDist is ParseDist for distributions written in code; it panics
// on an error.
func MustParseDist(s string) Dist {
	d, err := ParseDist(s)
	if err != nil {
		panic(err)
	}
	return d
}

// IsZero says the distribution is unset.
func (d Dist) IsZero() bool { return d.Kind == "" }

// fitsDurations says the distribution can be read as durations: it was
// written with them, or every value it can draw is 0 ("const:0").
func (d Dist) fitsDurations() bool {
	return d.Durations || (d.A == 0 && (d.B == 0 || d.Kind == KindLognormal || d.Kind == KindConst || d.Kind == KindExp))
}

// String is the distribution in the form ParseDist reads back unchanged.
func (d Dist) String() string {
	if d.IsZero() {
		return ""
	}
	f := func(v float64, dur bool) string {
		if dur {
			return time.Duration(v).String()
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	switch d.Kind {
	case KindConst, KindExp:
		return d.Kind + ":" + f(d.A, d.Durations)
	case KindLognormal:
		return d.Kind + ":" + f(d.A, d.Durations) + "," + f(d.B, false)
	}
	return d.Kind + ":" + f(d.A, d.Durations) + "," + f(d.B, d.Durations)
}

// Sample draws one value (nanoseconds for durations), never negative.
func (d Dist) Sample(r *rand.Rand) float64 {
	var v float64
	switch d.Kind {
	case KindConst:
		v = d.A
	case KindUniform:
		v = d.A + r.Float64()*(d.B-d.A)
	case KindNormal:
		v = d.A + r.NormFloat64()*d.B
	case KindLognormal:
		v = d.A * math.Exp(r.NormFloat64()*d.B)
	case KindExp:
		v = r.ExpFloat64() * d.A
	}
	if !(v > 0) { // negative, or NaN from 0×Inf
		return 0
	}
	return v
}

// Duration draws a duration, at most a day (a lognormal tail can reach
// further than a time.Duration holds).
func (d Dist) Duration(r *rand.Rand) time.Duration {
	return time.Duration(min(d.Sample(r), float64(maxDurationParam)))
}

// MarshalText writes the distribution as String does.
func (d Dist) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads the distribution as ParseDist does (for JSON and
// flag.TextVar).
func (d *Dist) UnmarshalText(b []byte) error {
	v, err := ParseDist(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// UnmarshalYAML reads the distribution from a scalar, naming the line of
// a bad one.
func (d *Dist) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: a distribution is a string such as lognormal:150ms,0.5", n.Line)
	}
	v, err := ParseDist(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = v
	return nil
}

// MarshalYAML writes the distribution as String does.
func (d Dist) MarshalYAML() (any, error) { return d.String(), nil }
