package bench

import (
	"math"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// Per request, a preview assumes 5 to 40 ms per output token, answers of
// a quarter to all of max_tokens, and 50 ms to 1 s before the first
// token: from a small model on a fast GPU to a large one on a busy GPU.
const (
	FastToken, SlowToken = 5 * time.Millisecond, 40 * time.Millisecond
	fastFirst, slowFirst = 50 * time.Millisecond, time.Second
)

// EstimateRun is a range for how long one run of n requests takes under
// m's load profile, from FastToken to SlowToken per output token, capped
// at the load's max_duration.
func EstimateRun(m Manifest, n int) (low, high time.Duration) {
	tokens := max(m.Sampling.MaxTokens, 1)
	one := fastFirst + time.Duration(tokens/4)*FastToken
	oneSlow := slowFirst + time.Duration(tokens)*SlowToken
	load := m.Load
	waves := func(k, c int) float64 { return math.Ceil(float64(k) / float64(max(c, 1))) }
	scale := func(f float64) {
		low, high = time.Duration(f*float64(one)), time.Duration(f*float64(oneSlow))
	}
	switch load.Profile {
	case jobs.LoadConcurrency:
		scale(waves(n, load.Concurrency))
	case jobs.LoadConstant, jobs.LoadPoisson:
		// Paced by the rate, unless the runtime is slower than it.
		paced := time.Duration(float64(n) / max(load.Rate, 1e-9) * float64(time.Second))
		scale(waves(n, 1))
		low, high = max(paced+one, time.Duration(float64(low)/64)), max(paced+oneSlow, time.Duration(float64(high)/64))
	case jobs.LoadSweep:
		// A sequential share, a share at full concurrency, and the steps in
		// between at about half of it.
		steps := max(load.Steps, len(load.Rates), len(load.Concurrencies))
		share := max(n/(2+steps), 1)
		scale(waves(share, 1) + waves(share, load.Concurrency) + float64(steps)*waves(share, max(load.Concurrency/2, 1)))
	case jobs.LoadLengthSweep:
		// Each step a closed loop at the concurrency; longer prompts'
		// prefill is not in the per-token range.
		scale(waves(n, max(load.Concurrency, 1)))
	default: // sequential; a trace depends on its timestamps
		scale(float64(n))
	}
	if d := time.Duration(load.MaxDuration); d > 0 {
		low, high = min(low, d), min(high, d)
	}
	return low, high
}
