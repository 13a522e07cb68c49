package gpu

import (
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// The simulated GPUs' readings: each draws SimIdleWatts idle and
// SimPeakWatts at full load, and holds SimBaseMemoryShare of its memory
// (weights and the runtime's reservation) plus up to SimLoadMemoryShare
// more as its batch fills (the KV cache). Made-up figures of the order of
// a data-centre GPU's, so that a demo draws every GPU chart; they measure
// nothing.
const (
	SimIdleWatts       = 60
	SimPeakWatts       = 400
	SimBaseMemoryShare = 0.6
	SimLoadMemoryShare = 0.3
)

// Simulated is GPUs that do not exist, whose readings follow the load of
// the simulated runtime: utilisation is the share of its batch in flight
// (100 % once it is full), power and memory grow with it. They have no
// energy counter, so energy is integrated from power as on old GPUs.
// Everything sampled from them is labelled simulated where it is stored
// and shown.
type Simulated struct {
	// GPUs are the GPUs the agent presents (--sim-gpu).
	GPUs []jobs.GPU
	// Load is the share of the runtime's capacity in use now: requests in
	// flight over the batch it serves at full speed.
	Load func() float64
}

// Sample reads the simulated GPUs now.
func (s Simulated) Sample() Sample {
	out := Sample{At: time.Now()}
	if len(s.GPUs) == 0 {
		return out
	}
	load := 0.0
	if s.Load != nil {
		if l := s.Load(); l > 0 { // NaN stays 0
			load = min(l, 1)
		}
	}
	out.GPUs = make([]GPUSample, len(s.GPUs))
	for i, g := range s.GPUs {
		out.GPUs[i] = GPUSample{
			Index:              i,
			HasUtilization:     true,
			UtilizationPercent: 100 * load,
			HasMemory:          true,
			MemoryUsedBytes:    uint64(float64(g.MemoryBytes) * (SimBaseMemoryShare + SimLoadMemoryShare*load)),
			MemoryTotalBytes:   g.MemoryBytes,
			HasPower:           true,
			PowerWatts:         SimIdleWatts + (SimPeakWatts-SimIdleWatts)*load,
		}
	}
	return out
}
