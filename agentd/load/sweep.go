package load

import "math"

// sweep sends consecutive shares of items as a sequential step, a max
// step, then Steps constant rates evenly spaced strictly between the rates
// those two achieved. Each step waits for the previous one to finish so
// its window measures that load alone.
func (g *gen) sweep(items []int) {
	p := g.cfg.Profile
	conc := p.Concurrency
	if conc <= 0 {
		conc = DefaultSweepConcurrency
	}
	if len(p.Rates) > 0 || len(p.Concurrencies) > 0 {
		g.listedSweep(items, conc)
		return
	}
	steps := max(p.Steps, 0)
	shares := split(items, 2+steps)

	seq := g.newPhase(PhaseSequential, 0)
	if !g.closedLoop(shares[0], 1, seq) {
		return
	}
	g.wg.Wait()
	top := g.newPhase(PhaseMax, 0)
	if !g.closedLoop(shares[1], conc, top) {
		return
	}
	g.wg.Wait()

	g.mu.Lock()
	lo, hi := seq.rate(), top.rate()
	g.mu.Unlock()
	if lo <= 0 { // too few items for a sequential share
		lo = hi
	}
	for i, share := range shares[2:] {
		if len(share) == 0 {
			return // split puts empty shares last
		}
		rate := lo + (hi-lo)*float64(i+1)/float64(steps+1)
		ph := g.newPhase(ratePhase(rate), rate)
		var ok bool
		if rate > 0 && !math.IsInf(rate, 0) {
			ok = g.openLoop(share, newArrivals(rate, false, 0), conc, ph)
		} else {
			// Nothing was measured to pace by (every earlier request was
			// dropped); send the share rather than skip it silently.
			ok = g.closedLoop(share, 1, ph)
		}
		if !ok {
			return
		}
		g.wg.Wait()
	}
}

// listedSweep sends consecutive shares of items at the user's own steps:
// constant rates (capped at conc in flight) or concurrencies, in order,
// each step waiting for the previous one to finish.
func (g *gen) listedSweep(items []int, conc int) {
	p := g.cfg.Profile
	n := len(p.Rates) + len(p.Concurrencies)
	for i, share := range split(items, n) {
		if len(share) == 0 {
			return
		}
		var ok bool
		if i < len(p.Rates) {
			rate := p.Rates[i]
			ok = g.openLoop(share, newArrivals(rate, false, 0), conc, g.newPhase(ratePhase(rate), rate))
		} else {
			c := p.Concurrencies[i-len(p.Rates)]
			ok = g.closedLoop(share, c, g.newPhase(concurrencyPhase(c), 0))
		}
		if !ok {
			return
		}
		g.wg.Wait()
	}
}

// split divides items into n consecutive shares whose sizes differ by at
// most one, the first shares taking the extra items: with few items the
// sequential and max steps, which the rates depend on, get some first.
func split(items []int, n int) [][]int {
	out := make([][]int, n)
	q, r := len(items)/n, len(items)%n
	at := 0
	for i := range out {
		size := q
		if i < r {
			size++
		}
		out[i] = items[at : at+size]
		at += size
	}
	return out
}

// lengthSweep sends consecutive shares of items as the steps of a length
// sweep, in order, each at the profile's one rate (capped at its
// concurrency in flight) or, without a rate, as a closed loop at its
// concurrency (1 when unset); Send is told the step by its phase, which
// says the lengths to generate (docs/benchmarks.md#length-sweeps). Each
// step waits for the previous one, so its window and the runtime's state
// in it belong to one length alone.
func (g *gen) lengthSweep(items []int) {
	p := g.cfg.Profile
	steps := p.Lengths.Steps()
	conc := max(p.Concurrency, 1)
	for i, share := range split(items, len(steps)) {
		if len(share) == 0 {
			return
		}
		ph := g.newPhase(steps[i].Phase(), p.Rate)
		var ok bool
		if p.Rate > 0 && !math.IsInf(p.Rate, 0) {
			ceiling := openCap(p.Concurrency)
			ok = g.openLoop(share, newArrivals(p.Rate, false, 0), ceiling, ph)
		} else {
			ok = g.closedLoop(share, conc, ph)
		}
		if !ok {
			return
		}
		g.wg.Wait()
	}
}
