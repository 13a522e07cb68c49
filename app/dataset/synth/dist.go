package synth

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ruckus/ruckus/app/valid"
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
//
// Each field's own rules are its tags; the caller's bound (MaxTokens for
// lengths, MaxTurns for turns) and the rules weighing one field against
// another are steps.
type Dist struct {
	Kind   string  `json:"dist" yaml:"dist" validate:"required,oneof=fixed uniform normal lognormal" msg_required:"synth.dist_required"`
	Value  int     `json:"value,omitempty" yaml:"value,omitempty" validate:"required_if=Kind fixed,min=0" msg:"synth.dist_value"`
	Min    int     `json:"min,omitempty" yaml:"min,omitempty" validate:"required_if=Kind uniform,min=0" msg_required_if:"synth.dist_min_required" msg_min:"synth.dist_min"`
	Max    int     `json:"max,omitempty" yaml:"max,omitempty" validate:"required_if=Kind uniform,min=0" msg_required_if:"synth.dist_max_required" msg_min:"synth.dist_max"`
	Mean   float64 `json:"mean,omitempty" yaml:"mean,omitempty" validate:"finite,required_if=Kind normal,omitempty,min=1" msg_required_if:"synth.dist_mean_required" msg_min:"synth.at_least_1"`
	StdDev float64 `json:"stddev,omitempty" yaml:"stddev,omitempty" validate:"finite,min=0" msg_min:"synth.at_least_0"`
	Median float64 `json:"median,omitempty" yaml:"median,omitempty" validate:"finite,omitempty,min=1" msg_min:"synth.at_least_1"`
	Sigma  float64 `json:"sigma,omitempty" yaml:"sigma,omitempty" validate:"finite,required_if=Kind lognormal,min=0,max=4" msg_required_if:"synth.dist_sigma" msg_min:"synth.dist_sigma" msg_max:"synth.dist_sigma"`
}

// Fixed is the distribution that always gives n.
func Fixed(n int) Dist { return Dist{Kind: DistFixed, Value: n} }

func finite(x float64) bool { return valid.Finite(x) }

// validate checks d, on its own, for lengths up to bound: its tags, then
// its steps; errors name path's fields.
func (d Dist) validate(path string, bound int) Errors {
	errs := rules().Struct(d).Prefix(path)
	return append(errs, d.steps(path, bound)...)
}

// steps are the rules of d beyond its fields' tags: every length at most
// bound, min and max in order, and a lognormal's median or mean.
func (d Dist) steps(path string, bound int) Errors {
	var errs Errors
	say := func(field, key string, args ...any) { errs.Say(valid.Join(path, field), key, args...) }
	if d.Kind == DistFixed && d.Value > bound {
		say("value", "synth.between_1", "Max", bound, "Got", d.Value)
	}
	if d.Min > bound {
		say("min", "synth.between_0", "Max", bound, "Got", d.Min)
	}
	if d.Max > bound {
		say("max", "synth.between_0", "Max", bound, "Got", d.Max)
	}
	for _, f := range []struct {
		name  string
		v     float64
		kinds []string
	}{{"mean", d.Mean, []string{DistNormal, DistLognormal}}, {"median", d.Median, []string{DistLognormal}}, {"stddev", d.StdDev, []string{DistNormal}}} {
		if finite(f.v) && f.v > float64(bound) && slices.Contains(f.kinds, d.Kind) {
			say(f.name, "synth.between_1", "Max", bound, "Got", f.v)
		}
	}
	switch d.Kind {
	case DistUniform:
		if d.Min >= 1 && d.Max >= 1 && d.Max < d.Min && d.Min <= bound {
			say("max", "synth.max_below_min", "Min", d.Min, "Max", bound, "Got", d.Max)
		}
	case DistNormal, DistLognormal:
		if d.Max > 0 && d.Min > d.Max && d.Min <= bound {
			say("min", "synth.min_above_max", "Max", d.Max, "Got", d.Min)
		}
	}
	if d.Kind == DistLognormal && finite(d.Median) && finite(d.Mean) {
		switch {
		case d.Median != 0 && d.Mean != 0:
			say("median", "synth.median_or_mean")
		case d.Median == 0 && d.Mean == 0:
			say("median", "synth.median_needed")
		}
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
