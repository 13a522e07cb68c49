package gpu

import (
	"slices"
	"time"
)

// EnergyMethod says how a run's energy figure was obtained, because the
// two methods differ in accuracy and the UI and exports must say which one
// a number came from. Its values are stable strings for storage.
type EnergyMethod string

const (
	// EnergyNone: no GPU gave a counter or a power reading, so there is no
	// energy figure.
	EnergyNone EnergyMethod = "none"
	// EnergyCounter: the difference of NVML's total-energy counters, used
	// when every GPU has one at both ends of the window. The hardware
	// integrates power far more finely than sampling can.
	EnergyCounter EnergyMethod = "counter"
	// EnergyPowerIntegral: power readings integrated over time with the
	// trapezoidal rule, for GPUs without the counter.
	EnergyPowerIntegral EnergyMethod = "power_integral"
)

// Summary is a window's GPU figures as a run reports them.
type Summary struct {
	// Start and End are the times of the first and last samples.
	Start, End time.Time
	Samples    int

	// EnergyJoules is the energy of all GPUs together over the window,
	// which is what energy per output token is computed from.
	EnergyJoules float64
	EnergyMethod EnergyMethod
	// EnergyPartial is set when power was integrated and some GPU's
	// readings did not reach from the first sample to the last, so the
	// figure is a lower bound.
	EnergyPartial bool

	// PeakMemoryUsedBytes is the most memory used on any one GPU at any
	// sample: a per-GPU figure because a model must fit on each GPU.
	PeakMemoryUsedBytes uint64
	// MeanUtilizationPercent is the mean over GPUs of each GPU's mean
	// utilisation.
	MeanUtilizationPercent float64
	// MeanPowerWatts is the draw of all GPUs together (the sum of each
	// GPU's mean power), comparable with EnergyJoules / Duration.
	MeanPowerWatts float64
}

// Duration is the length of the window the summary covers.
func (s Summary) Duration() time.Duration { return s.End.Sub(s.Start) }

// EnergyMeter accumulates successive Samples of one window (a run's
// measured part) into a Summary. It keeps running totals, not the samples,
// so a run of any length costs the same memory. It is a plain value with
// no clock or NVML of its own, so it is tested with synthetic samples; the
// zero value is ready to use. Samples must be added in time order.
type EnergyMeter struct {
	samples    int
	start, end time.Time

	gpus map[int]*gpuTotals
	// firstEnergy holds the counters of the window's first sample, or is
	// nil when some GPU in it had none; lastEnergy likewise for the most
	// recent sample.
	firstEnergy map[int]float64
	lastEnergy  map[int]float64
}

// gpuTotals is one GPU's running totals.
type gpuTotals struct {
	utilSum   float64
	utilN     int
	powerSum  float64
	powerN    int
	peakMem   uint64
	integral  float64 // joules, trapezoidal
	lastPower float64
	lastAt    time.Time
	// firstPowerSample and lastPowerSample are the ordinals of the first
	// and latest samples with a power reading (valid when powerN > 0).
	firstPowerSample int
	lastPowerSample  int
}

// Add takes in the next sample of the window.
func (m *EnergyMeter) Add(s Sample) {
	if m.gpus == nil {
		m.gpus = map[int]*gpuTotals{}
	}
	ordinal := m.samples
	if ordinal == 0 {
		m.start = s.At
	}
	m.samples++
	m.end = s.At

	energy := make(map[int]float64, len(s.GPUs))
	allEnergy := len(s.GPUs) > 0
	for _, g := range s.GPUs {
		t := m.gpus[g.Index]
		if t == nil {
			t = &gpuTotals{}
			m.gpus[g.Index] = t
		}
		if g.HasUtilization {
			t.utilSum += g.UtilizationPercent
			t.utilN++
		}
		if g.HasMemory {
			t.peakMem = max(t.peakMem, g.MemoryUsedBytes)
		}
		if g.HasPower {
			if t.powerN == 0 {
				t.firstPowerSample = ordinal
			} else if dt := s.At.Sub(t.lastAt).Seconds(); dt > 0 {
				t.integral += dt * (t.lastPower + g.PowerWatts) / 2
			}
			t.powerSum += g.PowerWatts
			t.powerN++
			t.lastPower, t.lastAt, t.lastPowerSample = g.PowerWatts, s.At, ordinal
		}
		if g.HasEnergy {
			energy[g.Index] = g.EnergyJoules
		} else {
			allEnergy = false
		}
	}
	if !allEnergy {
		energy = nil
	}
	if ordinal == 0 {
		m.firstEnergy = energy
	}
	m.lastEnergy = energy
}

// Summary reports the window so far. It can be called at any time, e.g.
// for live figures, and does not change the meter.
func (m *EnergyMeter) Summary() Summary {
	s := Summary{Start: m.start, End: m.end, Samples: m.samples, EnergyMethod: EnergyNone}
	// Sum in index order so the result does not depend on map order.
	indices := make([]int, 0, len(m.gpus))
	for i := range m.gpus {
		indices = append(indices, i)
	}
	slices.Sort(indices)

	var utilMeans float64
	var utilGPUs int
	var integral float64
	var powered, partial bool
	for _, i := range indices {
		t := m.gpus[i]
		s.PeakMemoryUsedBytes = max(s.PeakMemoryUsedBytes, t.peakMem)
		if t.utilN > 0 {
			utilMeans += t.utilSum / float64(t.utilN)
			utilGPUs++
		}
		if t.powerN > 0 {
			s.MeanPowerWatts += t.powerSum / float64(t.powerN)
			integral += t.integral
			powered = true
		}
		if t.powerN == 0 || t.firstPowerSample != 0 || t.lastPowerSample != m.samples-1 {
			partial = true
		}
	}
	if utilGPUs > 0 {
		s.MeanUtilizationPercent = utilMeans / float64(utilGPUs)
	}

	if joules, ok := m.counterEnergy(indices); ok {
		s.EnergyJoules, s.EnergyMethod = joules, EnergyCounter
	} else if powered {
		s.EnergyJoules, s.EnergyMethod, s.EnergyPartial = integral, EnergyPowerIntegral, partial
	}
	return s
}

// counterEnergy is the sum of the counters' increases when every GPU seen
// in the window had a counter in the first and the last sample. A counter
// that went backwards (driver reloaded, GPU reset) disqualifies the method.
func (m *EnergyMeter) counterEnergy(indices []int) (float64, bool) {
	if m.firstEnergy == nil || m.lastEnergy == nil ||
		len(m.firstEnergy) != len(indices) || len(m.lastEnergy) != len(indices) {
		return 0, false
	}
	var joules float64
	for _, i := range indices {
		first, ok1 := m.firstEnergy[i]
		last, ok2 := m.lastEnergy[i]
		if !ok1 || !ok2 || last < first {
			return 0, false
		}
		joules += last - first
	}
	return joules, true
}

// Summarize is the one-call form of EnergyMeter for samples already
// collected, in time order.
func Summarize(samples []Sample) Summary {
	var m EnergyMeter
	for _, s := range samples {
		m.Add(s)
	}
	return m.Summary()
}
