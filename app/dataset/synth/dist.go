package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Distribution kinds of a Dist.
const (
	DistFixed     = "fixed"
	DistUniform   = "uniform"
	DistNormal    = "normal"
	DistLognormal = "lognormal"
)

// MaxTokens bounds every token length a Spec may ask for: beyond the
// context of any model served today, and small enough that a generated
// prompt stays well under the dataset line limit.
const MaxTokens = 131072

// Dist is a distribution of positive integer lengths (tokens, or turns).
//
//   - fixed: Value every time.
//   - uniform: an integer drawn evenly from [Min, Max] (vLLM bench's random
//     dataset with --random-range-ratio r is uniform over
//     [len·(1−r), len·(1+r)]).
//   - normal: Mean and StdDev, rounded and clipped to [max(Min,1), Max]
//     (GuideLLM's prompt_tokens, prompt_tokens_stdev, _min and _max).
//   - lognormal: a heavy right tail as real prompt lengths have; Median
//     (e^μ) or Mean (e^(μ+σ²/2)) and Sigma (σ, of the logarithm), rounded
//     and clipped to [max(Min,1), Max].
//
// Max, when zero, is the bound the caller passes to Validate.
type Dist struct {
	Kind   string  `json:"dist" yaml:"dist"`
	Value  int     `json:"value,omitempty" yaml:"value,omitempty"`
	Min    int     `json:"min,omitempty" yaml:"min,omitempty"`
	Max    int     `json:"max,omitempty" yaml:"max,omitempty"`
	Mean   float64 `json:"mean,omitempty" yaml:"mean,omitempty"`
	StdDev float64 `json:"stddev,omitempty" yaml:"stddev,omitempty"`
	Median float64 `json:"median,omitempty" yaml:"median,omitempty"`
	Sigma  float64 `json:"sigma,omitempty" yaml:"sigma,omitempty"`
}

// Fixed is the distribution that always gives n.
func Fixed(n int) Dist { return Dist{Kind: DistFixed, Value: n} }

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// validate checks d for lengths up to bound and fills nothing in; errors
// name path's fields.
func (d Dist) validate(path string, bound int) Errors {
	var errs Errors
	add := func(field, format string, args ...any) {
		errs = append(errs, FieldError{Field: path + "." + field, Message: fmt.Sprintf(format, args...)})
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"mean", d.Mean}, {"stddev", d.StdDev}, {"median", d.Median}, {"sigma", d.Sigma}} {
		if !finite(f.v) {
			add(f.name, "must be a finite number (got %v)", f.v)
			return errs
		}
	}
	if d.Min < 0 || d.Min > bound {
		add("min", "between 0 and %d (got %d)", bound, d.Min)
	}
	if d.Max < 0 || d.Max > bound {
		add("max", "between 0 and %d (got %d)", bound, d.Max)
	}
	if len(errs) > 0 {
		return errs
	}
	hi := d.hi(bound)
	switch d.Kind {
	case DistFixed:
		if d.Value < 1 || d.Value > bound {
			add("value", "between 1 and %d (got %d)", bound, d.Value)
		}
	case DistUniform:
		if d.Min < 1 {
			add("min", "at least 1 (got %d)", d.Min)
		} else if d.Max < d.Min {
			add("max", "at least min (%d) and at most %d (got %d)", d.Min, bound, d.Max)
		}
	case DistNormal:
		if d.Mean < 1 || d.Mean > float64(bound) {
			add("mean", "between 1 and %d (got %v)", bound, d.Mean)
		}
		if d.StdDev < 0 || d.StdDev > float64(bound) {
			add("stddev", "between 0 and %d (got %v)", bound, d.StdDev)
		}
	case DistLognormal:
		switch {
		case d.Median != 0 && d.Mean != 0:
			add("median", "give the median or the mean, not both")
		case d.Median == 0 && d.Mean == 0:
			add("median", "give the median (or the mean) of the lengths")
		case d.Median != 0 && (d.Median < 1 || d.Median > float64(bound)):
			add("median", "between 1 and %d (got %v)", bound, d.Median)
		case d.Mean != 0 && (d.Mean < 1 || d.Mean > float64(bound)):
			add("mean", "between 1 and %d (got %v)", bound, d.Mean)
		}
		if !(d.Sigma > 0) || d.Sigma > 4 {
			add("sigma", "above 0 and at most 4 (the standard deviation of the lengths' logarithm; got %v)", d.Sigma)
		}
	case "":
		add("dist", "choose a distribution: fixed, uniform, normal or lognormal")
	default:
		add("dist", "must be fixed, uniform, normal or lognormal (got %q)", d.Kind)
	}
	if (d.Kind == DistNormal || d.Kind == DistLognormal) && d.Min > hi {
		add("min", "at most max (%d; got %d)", hi, d.Min)
	}
	return errs
}

// hi is the upper clip of d.
func (d Dist) hi(bound int) int {
	if d.Max > 0 {
		return d.Max
	}
	return bound
}

// lo is the lower clip of d.
func (d Dist) lo() int { return max(d.Min, 1) }

// Upper is the largest length d can give under bound: for sizing what a
// Spec may cost before generating it.
func (d Dist) Upper(bound int) int {
	switch d.Kind {
	case DistFixed:
		return d.Value
	case DistUniform:
		return d.Max
	}
	return d.hi(bound)
}

// draw takes one length from d; d must have passed validate with bound.
// Every kind takes a fixed number of draws from rng (fixed takes none), so
// the sequence of items does not depend on the values clipped.
func (d Dist) draw(rng *rand.Rand, bound int) int {
	switch d.Kind {
	case DistFixed:
		return d.Value
	case DistUniform:
		return d.Min + rng.IntN(d.Max-d.Min+1)
	case DistNormal:
		return clip(math.Round(d.Mean+d.StdDev*rng.NormFloat64()), d.lo(), d.hi(bound))
	case DistLognormal:
		mu := math.Log(d.Median)
		if d.Median == 0 {
			mu = math.Log(d.Mean) - d.Sigma*d.Sigma/2
		}
		return clip(math.Round(math.Exp(mu+d.Sigma*rng.NormFloat64())), d.lo(), d.hi(bound))
	}
	panic("synth: draw from an unvalidated distribution " + d.Kind)
}

func clip(x float64, lo, hi int) int {
	switch {
	case x < float64(lo):
		return lo
	case x > float64(hi):
		return hi
	}
	return int(x)
}
