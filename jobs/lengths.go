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

// MedianInterval is a median with its distribution-free 95 % interval
// (exact binomial order statistics, app/stats.QuantileInterval); Lo and
// Hi are nil when N is too small for one (fewer than 6 values).
type MedianInterval struct {
	Median float64  `json:"median"`
	Lo     *float64 `json:"lo"`
	Hi     *float64 `json:"hi"`
	N      int      `json:"n"`
}

// RuntimeState is what the runtime's own /metrics said during one step
// (gray-box: vLLM's names, scraped into the run's samples;
// docs/simulated-runtime.md#serving-model): the most requests waiting,
// the highest KV-cache usage (a share, 0 to 1) and the preemptions made.
// A nil figure was not measured (no reading in the step, or a runtime
// that does not serve it), which is not zero.
type RuntimeState struct {
	Readings    int      `json:"readings"`
	MaxWaiting  *float64 `json:"max_waiting"`
	MaxKVCache  *float64 `json:"max_kv_cache_usage"`
	Preemptions *float64 `json:"preemptions"`
}

// Queueing says whether requests waited at the runtime during the step.
func (r *RuntimeState) Queueing() bool { return r != nil && r.MaxWaiting != nil && *r.MaxWaiting > 0 }

// Preempting says whether the runtime preempted requests during the step.
func (r *RuntimeState) Preempting() bool {
	return r != nil && r.Preemptions != nil && *r.Preemptions > 0
}

// LengthLimits is where a length sweep's runtime began to queue and to
// preempt: the first step (in the order run) at which it did, with its
// input length; empty when it never did at a measured step. Measured
// counts the steps with a reading of the runtime's /metrics: none means
// the runtime serves none, and nothing is concluded.
type LengthLimits struct {
	Measured        int    `json:"measured_steps"`
	QueueingStep    string `json:"queueing_step,omitempty"`
	QueueingInput   int    `json:"queueing_input_tokens,omitempty"`
	PreemptingStep  string `json:"preempting_step,omitempty"`
	PreemptingInput int    `json:"preempting_input_tokens,omitempty"`
}

// FindLengthLimits places where queueing and preemption begin among a
// length sweep's steps; nil when the steps are not a length sweep's.
func FindLengthLimits(steps []StepSummary) *LengthLimits {
	var lim *LengthLimits
	for _, st := range steps {
		if st.InputTarget == 0 {
			continue
		}
		if lim == nil {
			lim = &LengthLimits{}
		}
		if st.Runtime == nil || st.Runtime.Readings == 0 {
			continue
		}
		lim.Measured++
		if st.Runtime.Queueing() && lim.QueueingStep == "" {
			lim.QueueingStep, lim.QueueingInput = st.Name, st.InputTarget
		}
		if st.Runtime.Preempting() && lim.PreemptingStep == "" {
			lim.PreemptingStep, lim.PreemptingInput = st.Name, st.InputTarget
		}
	}
	return lim
}

// IsLengthSweep says whether steps are a length sweep's.
func IsLengthSweep(steps []StepSummary) bool {
	return len(steps) > 0 && steps[0].InputTarget > 0
}

// SetRuntimeStates gives a sweep's steps what the runtime's /metrics said
// during each (by step name) and places where it began to queue and to
// preempt: a length sweep's by input length (LengthLimits), a rate or
// concurrency sweep's by the load offered (SweepLimits). A summary without
// steps is left as it is.
func (s *RunSummary) SetRuntimeStates(states map[string]RuntimeState) {
	if len(s.Steps) == 0 {
		return
	}
	for i := range s.Steps {
		if st, ok := states[s.Steps[i].Name]; ok {
			s.Steps[i].Runtime = &st
		}
	}
	if IsLengthSweep(s.Steps) {
		s.LengthLimits = FindLengthLimits(s.Steps)
		return
	}
	s.SweepLimits = FindSweepLimits(s.Steps)
}

// SweepLimits is where a rate or concurrency sweep's runtime began to
// queue and to preempt: the first step, in the order run, at which its
// /metrics showed requests waiting or preemptions made, with that step's
// concurrency (a "concurrency N" step) or offered rate — the load at which
// the runtime's batch or KV cache is full. Measured counts the steps with
// a reading; none means the runtime serves no /metrics and nothing is
// concluded.
type SweepLimits struct {
	Measured              int      `json:"measured_steps"`
	QueueingStep          string   `json:"queueing_step,omitempty"`
	QueueingConcurrency   int      `json:"queueing_concurrency,omitempty"`
	QueueingOfferedRPS    *float64 `json:"queueing_offered_rps,omitempty"`
	PreemptingStep        string   `json:"preempting_step,omitempty"`
	PreemptingConcurrency int      `json:"preempting_concurrency,omitempty"`
	PreemptingOfferedRPS  *float64 `json:"preempting_offered_rps,omitempty"`
}

// FindSweepLimits places where queueing and preemption begin among a rate
// or concurrency sweep's steps.
func FindSweepLimits(steps []StepSummary) *SweepLimits {
	lim := &SweepLimits{}
	for _, st := range steps {
		if st.Runtime == nil || st.Runtime.Readings == 0 {
			continue
		}
		lim.Measured++
		if st.Runtime.Queueing() && lim.QueueingStep == "" {
			lim.QueueingStep, lim.QueueingConcurrency, lim.QueueingOfferedRPS = st.Name, StepConcurrency(st.Name), st.OfferedRPS
		}
		if st.Runtime.Preempting() && lim.PreemptingStep == "" {
			lim.PreemptingStep, lim.PreemptingConcurrency, lim.PreemptingOfferedRPS = st.Name, StepConcurrency(st.Name), st.OfferedRPS
		}
	}
	return lim
}

// StepConcurrency is the requests in flight a "concurrency N" step held
// (agentd/load names its steps so); 0 for other steps.
func StepConcurrency(name string) int {
	var n int
	if _, err := fmt.Sscanf(name, "concurrency %d", &n); err != nil || n < 1 {
		return 0
	}
	return n
}
