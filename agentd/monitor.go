package main

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/ruckus/ruckus/agentd/gpu"
	"github.com/ruckus/ruckus/agentd/promscrape"
	"github.com/ruckus/ruckus/app/store"
)

// gpuSummary is a run segment's GPU figures, stored as the run's
// gpu_summary (DESIGN.md § Metric definitions: energy from the total-energy
// counter where every GPU has one, else power integrated over time).
type gpuSummary struct {
	GPUs           int     `json:"gpus"`
	Samples        int     `json:"samples"`
	Seconds        float64 `json:"seconds"`
	PeakMemBytes   uint64  `json:"peak_mem_bytes"`
	MeanUtil       float64 `json:"mean_util_percent"`
	MeanPowerW     float64 `json:"mean_power_w"`
	EnergyJ        float64 `json:"energy_j"`
	EnergyMethod   string  `json:"energy_method"`
	EnergyPartial  bool    `json:"energy_partial,omitempty"`
	JoulesPerToken float64 `json:"joules_per_token,omitempty"`
}

// monitor samples the GPUs and the runtime's /metrics during a run: the
// latest readings go into the next progress sample, every GPU reading into
// the energy meter.
type monitor struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	gpus   int

	mu     sync.Mutex
	latest gpu.Sample
	meter  gpu.EnergyMeter
	prom   promscrape.Snapshot
}

// startMonitor samples nv and scrapes metricsURL every interval until
// Stop; whichever is absent is not sampled.
func startMonitor(ctx context.Context, nv *gpu.NVML, gpus int, metricsURL string, interval time.Duration, logger *slog.Logger) *monitor {
	ctx, cancel := context.WithCancel(ctx)
	m := &monitor{cancel: cancel, gpus: gpus}
	if nv != nil && gpus > 0 {
		m.wg.Go(func() {
			gpu.Sampler{NVML: nv, Interval: interval}.Run(ctx, func(s gpu.Sample) {
				m.mu.Lock()
				m.latest = s
				m.meter.Add(s)
				m.mu.Unlock()
			})
		})
	}
	if metricsURL != "" {
		m.wg.Go(func() {
			sc := &promscrape.Scraper{Client: &http.Client{Timeout: 5 * time.Second}, URL: metricsURL, Interval: interval, Logger: logger}
			sc.Run(ctx, func(s promscrape.Snapshot) {
				m.mu.Lock()
				m.prom = s
				m.mu.Unlock()
			})
		})
	}
	return m
}

// Latest is the newest GPU reading as a chart sample: mean utilisation,
// memory and power summed over the GPUs, energy used so far.
func (m *monitor) Latest() store.Sample {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := store.Sample{Running: m.prom.Running, Waiting: m.prom.Waiting, KVCache: m.prom.KVCacheUsage}
	if len(m.latest.GPUs) == 0 {
		return out
	}
	var util, power float64
	var mem int64
	nu, np, nm := 0, 0, 0
	for _, g := range m.latest.GPUs {
		if g.HasUtilization {
			util += g.UtilizationPercent
			nu++
		}
		if g.HasPower {
			power += g.PowerWatts
			np++
		}
		if g.HasMemory {
			mem += int64(g.MemoryUsedBytes)
			nm++
		}
	}
	if nu > 0 {
		u := util / float64(nu)
		out.GPUUtil = &u
	}
	if np > 0 {
		out.GPUPowerW = &power
	}
	if nm > 0 {
		out.GPUMemBytes = &mem
	}
	if sum := m.meter.Summary(); sum.EnergyMethod != gpu.EnergyNone {
		e := sum.EnergyJoules
		out.EnergyJ = &e
	}
	return out
}

// Stop ends sampling and returns the segment's GPU summary, nil without
// GPUs.
func (m *monitor) Stop() *gpuSummary {
	m.cancel()
	m.wg.Wait()
	if m.gpus == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.meter.Summary()
	return &gpuSummary{GPUs: m.gpus, Samples: s.Samples, Seconds: s.Duration().Seconds(), PeakMemBytes: s.PeakMemoryUsedBytes,
		MeanUtil: s.MeanUtilizationPercent, MeanPowerW: s.MeanPowerWatts, EnergyJ: s.EnergyJoules,
		EnergyMethod: string(s.EnergyMethod), EnergyPartial: s.EnergyPartial}
}
