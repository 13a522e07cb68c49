package jobs

import (
	"fmt"
	"strconv"
	"strings"
)

// Lengths are a length sweep's steps: every input length with every output
// length, inputs outermost, in the order given
// (docs/benchmarks.md#length-sweeps). Without output lengths each answer
// is bounded by the sampling's max_tokens alone.
type Lengths struct {
	// Input are prompt lengths in tokens of the served model's tokenizer.
	Input []int `json:"input" yaml:"input"`
	// Output are answer lengths in tokens, asked as max_tokens with
	// min_tokens and ignore_eos (as synthetic items ask them).
	Output []int `json:"output,omitempty" yaml:"output,omitempty"`
}

// MaxLengthTokens bounds one length of a length sweep, as a synthetic
// dataset's lengths are bounded (docs/workloads.md).
const MaxLengthTokens = 131072

// MaxLengthSteps bounds a length sweep's steps (inputs × outputs), as a
// sweep's rates are bounded.
const MaxLengthSteps = 20

// LengthStep is one step of a length sweep: the prompt's length in tokens
// and the answer's (0: the sampling's max_tokens, not forced).
type LengthStep struct {
	Input, Output int
}

// Steps are l's steps in the order they run.
func (l *Lengths) Steps() []LengthStep {
	if l == nil {
		return nil
	}
	var out []LengthStep
	for _, in := range l.Input {
		if len(l.Output) == 0 {
			out = append(out, LengthStep{Input: in})
			continue
		}
		for _, o := range l.Output {
			out = append(out, LengthStep{Input: in, Output: o})
		}
	}
	return out
}

// Phase is the step's label on its results ("input 512", "input 512
// output 128"); ParseLengthPhase reads it back.
func (s LengthStep) Phase() string {
	if s.Output > 0 {
		return fmt.Sprintf("input %d output %d", s.Input, s.Output)
	}
	return fmt.Sprintf("input %d", s.Input)
}

// ParseLengthPhase reads a length sweep's step from its label; false for
// any other label (a sweep's "rate 2.50/s", a trace's "").
func ParseLengthPhase(phase string) (LengthStep, bool) {
	rest, ok := strings.CutPrefix(phase, "input ")
	if !ok {
		return LengthStep{}, false
	}
	in, out, hasOut := strings.Cut(rest, " output ")
	var s LengthStep
	var err error
	if s.Input, err = strconv.Atoi(in); err != nil || s.Input < 1 || s.Input > MaxLengthTokens {
		return LengthStep{}, false
	}
	if hasOut {
		if s.Output, err = strconv.Atoi(out); err != nil || s.Output < 1 || s.Output > MaxLengthTokens {
			return LengthStep{}, false
		}
	}
	return s, s.Phase() == phase
}
