package gpu

import (
	"context"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Sample is one reading of every GPU at one moment. At carries Go's
// monotonic clock reading, so differences between samples are not upset by
// wall-clock steps.
type Sample struct {
	At   time.Time
	GPUs []GPUSample
}

// GPUSample is one GPU's reading. NVML calls fail independently (a field
// unsupported on one model, a transient error on another), so each field
// has its own Has flag: a reading that failed is marked absent rather than
// recorded as zero, which would drag means and integrals down.
type GPUSample struct {
	// Index is the GPU's NVML index; it keys a GPU across samples.
	Index int

	HasUtilization bool
	// UtilizationPercent is the share of the last sample period in which
	// a kernel ran, 0–100, as NVML defines GPU utilisation.
	UtilizationPercent float64

	HasMemory        bool
	MemoryUsedBytes  uint64
	MemoryTotalBytes uint64

	HasPower bool
	// PowerWatts is the board's power draw (NVML reports milliwatts).
	PowerWatts float64

	// HasEnergy is false on GPUs without a total-energy counter (NVML
	// answers ERROR_NOT_SUPPORTED, pre-Volta) and when the read failed;
	// energy is then integrated from power instead.
	HasEnergy bool
	// EnergyJoules is the GPU's total-energy counter since the driver was
	// loaded (NVML reports millijoules). Only differences are meaningful.
	EnergyJoules float64
}

// Sample reads every GPU now. Failed reads are marked absent, never fatal,
// so a flaky GPU cannot stop a run. Without GPUs (Init failed, closed) it
// returns a Sample with no GPUs and makes no NVML call.
func (n *NVML) Sample() Sample {
	n.mu.RLock()
	defer n.mu.RUnlock()
	s := Sample{At: time.Now()}
	if !n.ok {
		return s
	}
	s.GPUs = make([]GPUSample, len(n.devices))
	for i, d := range n.devices {
		g := GPUSample{Index: i}
		if u, ret := d.GetUtilizationRates(); ret == nvml.SUCCESS {
			g.HasUtilization, g.UtilizationPercent = true, float64(u.Gpu)
		}
		if m, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
			g.HasMemory, g.MemoryUsedBytes, g.MemoryTotalBytes = true, m.Used, m.Total
		}
		if mw, ret := d.GetPowerUsage(); ret == nvml.SUCCESS {
			g.HasPower, g.PowerWatts = true, float64(mw)/1000
		}
		if mj, ret := d.GetTotalEnergyConsumption(); ret == nvml.SUCCESS {
			g.HasEnergy, g.EnergyJoules = true, float64(mj)/1000
		}
		s.GPUs[i] = g
	}
	return s
}

// Source gives readings of a machine's GPUs: an NVML session, or
// Simulated GPUs.
type Source interface {
	// Sample reads every GPU now; a Sample without GPUs means there are
	// none (any more).
	Sample() Sample
}

// Sampler takes a Sample every Interval while a run goes on, so the run's
// GPU figures (live charts, energy, peak memory) come from one place.
type Sampler struct {
	// Source is what to read (an *NVML); one without GPUs makes Run
	// return at once.
	Source Source
	// Interval between samples; 0 means DefaultInterval.
	Interval time.Duration
}

// DefaultInterval is one second: NVML's utilisation figure is itself
// averaged over roughly that long, and it keeps 8 GPUs' worth of calls
// negligible beside a benchmark.
const DefaultInterval = time.Second

// Run samples at once, then every Interval, and once more when ctx ends so
// that the samples span the whole run, handing each Sample to fn; it
// returns after the last one. fn runs on Run's goroutine, so a slow fn
// delays the next sample rather than piling samples up. Without GPUs Run
// returns at once without calling fn, and if the NVML is closed meanwhile
// it returns without passing the empty sample to fn.
func (s Sampler) Run(ctx context.Context, fn func(Sample)) {
	if s.Source == nil {
		return
	}
	if nv, ok := s.Source.(*NVML); ok && (nv == nil || !nv.Available()) {
		return
	}
	interval := s.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	emit := func() bool {
		sample := s.Source.Sample()
		if len(sample.GPUs) == 0 {
			return false
		}
		fn(sample)
		return true
	}
	if !emit() {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			emit()
			return
		case <-t.C:
			// A tick that races with cancellation must not add a sample
			// after the end; it becomes the final one instead.
			if ctx.Err() != nil {
				emit()
				return
			}
			if !emit() {
				return
			}
		}
	}
}
