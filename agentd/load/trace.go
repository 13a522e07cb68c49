package load

import (
	"time"
)

// traceLoop sends every item at its own arrival time (Config.Arrivals,
// from the start of the measured window, divided by the profile's speed),
// whatever the answers: the replay of a recorded or generated trace. Like
// an open loop it keeps its schedule when a send was held up, and caps
// what is in flight at the profile's Concurrency (OpenLoopCeiling when it
// has none), counting held sends in CapDelays. A turn of a conversation
// leaves at its arrival time or when its previous turn has finished,
// whichever is later. A resumed run's remaining items keep their times,
// less the measured time earlier segments used.
func (g *gen) traceLoop(items []int, ph *phaseStat) bool {
	speed := g.cfg.Profile.Speed
	if speed <= 0 {
		speed = 1
	}
	sem := make(chan struct{}, openCap(g.cfg.Profile.Concurrency))
	o := g.useOrder(items)
	for {
		idx, ok := o.next(g)
		if !ok {
			return o.exhausted()
		}
		at := time.Duration(float64(g.cfg.Arrivals[idx])/speed) - g.cfg.Done.Measured
		if !g.sleepUntil(g.start.Add(at)) {
			return false
		}
		if !g.sendOpen(idx, ph, sem) {
			return false
		}
	}
}

// checkTrace refuses a trace profile (Run calls it for that profile only)
// without a valid speed and a time for every item.
func checkTrace(cfg Config) []string {
	var why []string
	p := cfg.Profile
	if !(p.Speed >= 0) || p.Speed > 1000 {
		why = append(why, "the trace profile's speed must be between 0 and 1000 (0 means 1)")
	}
	for _, idx := range cfg.Indices {
		if _, ok := cfg.Arrivals[idx]; !ok {
			why = append(why, "the trace profile needs a dataset whose every item has an arrival time (a synthetic trace)")
			break
		}
	}
	return why
}
