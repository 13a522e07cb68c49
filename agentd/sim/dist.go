package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Dist is a distribution to draw latencies or token counts from, written
// compactly for flags and YAML: "const:20ms", "uniform:10ms,40ms",
// "normal:200,50", "lognormal:120ms,0.5" (median, sigma), "exp:20ms"
// (mean). Time distributions take durations; count distributions plain
// numbers.
type Dist struct {
	Kind string
	A, B float64 // parameters; durations in nanoseconds
	text string
}

// ParseDist reads a distribution; durations says whether its parameters
// are durations (true) or counts.
func ParseDist(s string, durations bool) (Dist, error) {
	kind, params, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return Dist{}, fmt.Errorf("%q: want KIND:PARAMS, such as const:20ms, uniform:10ms,40ms, normal:200,50, lognormal:120ms,0.5 or exp:20ms", s)
	}
	parts := strings.Split(params, ",")
	num := func(i int, dur bool) (float64, error) {
		if i >= len(parts) {
			return 0, fmt.Errorf("%q: %s needs %d parameters", s, kind, i+1)
		}
		p := strings.TrimSpace(parts[i])
		if dur {
			d, err := time.ParseDuration(p)
			if err != nil {
				return 0, fmt.Errorf("%q: %q is not a duration (such as 20ms)", s, p)
			}
			return float64(d), nil
		}
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%q: %q is not a number", s, p)
		}
		return v, nil
	}
	d := Dist{Kind: kind, text: strings.TrimSpace(s)}
	var err error
	want := 1
	switch kind {
	case "const", "exp":
		d.A, err = num(0, durations)
	case "uniform", "normal":
		want = 2
		if d.A, err = num(0, durations); err == nil {
			d.B, err = num(1, durations)
		}
	case "lognormal":
		want = 2
		if d.A, err = num(0, durations); err == nil {
			d.B, err = num(1, false) // sigma is unitless
		}
	default:
		return Dist{}, fmt.Errorf("%q: unknown distribution %q (const, uniform, normal, lognormal, exp)", s, kind)
	}
	if err != nil {
		return Dist{}, err
	}
	if len(parts) != want {
		return Dist{}, fmt.Errorf("%q: %s takes %d parameter(s)", s, kind, want)
	}
	if d.A < 0 || d.B < 0 || (kind == "uniform" && d.B < d.A) {
		return Dist{}, fmt.Errorf("%q: parameters must be non-negative (and uniform's max at least its min)", s)
	}
	if d.A > 1e15 || d.B > 1e15 {
		return Dist{}, fmt.Errorf("%q: parameters are too large", s)
	}
	return d, nil
}

// String is the distribution as written.
func (d Dist) String() string { return d.text }

// Sample draws one value (nanoseconds for durations), never negative.
func (d Dist) Sample(r *rand.Rand) float64 {
	var v float64
	switch d.Kind {
	case "uniform":
		v = d.A + r.Float64()*(d.B-d.A)
	case "normal":
		v = d.A + r.NormFloat64()*d.B
	case "lognormal":
		v = d.A * math.Exp(r.NormFloat64()*d.B)
	case "exp":
		v = r.ExpFloat64() * d.A
	default:
		v = d.A
	}
	return max(v, 0)
}

// Duration draws a duration.
func (d Dist) Duration(r *rand.Rand) time.Duration { return time.Duration(d.Sample(r)) }
