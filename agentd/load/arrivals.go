package load

import (
	"math/rand/v2"
	"time"
)

// arrivals yields the gaps between an open loop's sends: 1/rate for a
// constant rate, exponential gaps of mean 1/rate for a Poisson process
// (whose arrivals are what independent users produce). It is kept apart
// from the sending so the schedule can be checked without waiting for it.
type arrivals struct {
	mean    float64 // nanoseconds
	poisson bool
	rng     *rand.Rand
}

// newArrivals gives the schedule for rate requests per second; a Poisson
// schedule depends only on seed, so a run can be repeated exactly.
func newArrivals(rate float64, poisson bool, seed uint64) *arrivals {
	a := &arrivals{mean: float64(time.Second) / rate, poisson: poisson}
	if poisson {
		a.rng = rand.New(rand.NewPCG(seed, 0x72756b7573)) // "rukus": any fixed stream
	}
	return a
}

// next is the gap before the following send.
func (a *arrivals) next() time.Duration {
	if !a.poisson {
		return time.Duration(a.mean)
	}
	return time.Duration(a.rng.ExpFloat64() * a.mean)
}
