package agent

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/ruckus/ruckus/agentd/gpu"
	"github.com/ruckus/ruckus/agentd/node"
	"github.com/ruckus/ruckus/agentd/promscrape"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// gpuSummary is a run segment's GPU figures, stored as the run's
// gpu_summary (docs/metrics.md#gpu-energy-and-node-figures: energy from the
// total-energy counter where every GPU has one, else power integrated over
// time).
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
	// Simulated: the readings were drawn from the simulated runtime's
	// load (--sim-gpu); they measure nothing.
	Simulated bool `json:"simulated,omitempty"`
}

// monitorConfig is what a run's monitor samples.
type monitorConfig struct {
	// gpus is read every interval when count > 0: NVML, or simulated
	// GPUs (simulated then set).
	gpus      gpu.Source
	count     int
	simulated bool
	// metricsURL is the runtime's /metrics, "" when it has none.
	metricsURL string
	// pid is the runtime's process (0: not watched), process what it is
	// (jobs.NodeSummary.Process).
	pid     int
	process string
	// proc is the procfs root ("" for /proc).
	proc     string
	interval time.Duration
}

// monitor samples the GPUs, the node and the runtime's /metrics during a
// run: the latest readings go into the next progress sample, every GPU
// reading into the energy meter and every node reading into its meter.
type monitor struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	cfg    monitorConfig

	mu     sync.Mutex
	latest gpu.Sample
	meter  gpu.EnergyMeter
	prom   promscrape.Snapshot
	node   node.Sample
	nodes  node.Meter
}

// startMonitor samples what cfg names every interval until Stop; the GPUs
// and /metrics only when there are any.
func startMonitor(ctx context.Context, cfg monitorConfig, logger *slog.Logger) *monitor {
	ctx, cancel := context.WithCancel(ctx)
	m := &monitor{cancel: cancel, cfg: cfg}
	if cfg.gpus != nil && cfg.count > 0 {
		m.wg.Go(func() {
			gpu.Sampler{Source: cfg.gpus, Interval: cfg.interval}.Run(ctx, func(s gpu.Sample) {
				m.mu.Lock()
				m.latest = s
				m.meter.Add(s)
				m.mu.Unlock()
			})
		})
	}
	m.wg.Go(func() {
		ns := &node.Sampler{Proc: cfg.proc, PID: cfg.pid}
		ns.Run(ctx, cfg.interval, func(s node.Sample) {
			m.mu.Lock()
			m.node = s
			m.nodes.Add(s)
			m.mu.Unlock()
		})
	})
	if cfg.metricsURL != "" {
		m.wg.Go(func() {
			sc := &promscrape.Scraper{Client: &http.Client{Timeout: 5 * time.Second}, URL: cfg.metricsURL, Interval: cfg.interval, Logger: logger}
			sc.Run(ctx, func(s promscrape.Snapshot) {
				m.mu.Lock()
				m.prom = s
				m.mu.Unlock()
			})
		})
	}
	return m
}

// Latest is the newest readings as a chart sample: the node's CPU and
// memory, the GPUs' mean utilisation, memory and power summed over them,
// energy used so far; each within what the database keeps.
func (m *monitor) Latest() store.Sample {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := store.Sample{Running: m.prom.Running, Waiting: m.prom.Waiting, KVCache: m.prom.KVCacheUsage, Preemptions: m.prom.Preemptions,
		NodeReading: store.NodeReading{CPUUtil: m.node.CPUPercent, MemUsedBytes: m.node.MemUsedBytes, MemTotalBytes: m.node.MemTotalBytes,
			ProcCPUUtil: m.node.ProcCPUPercent, ProcRSSBytes: m.node.ProcRSSBytes}}
	if len(m.latest.GPUs) > 0 {
		m.gpuFigures(&out)
	}
	boundSample(&out)
	return out
}

// gpuFigures adds the latest GPU reading to out; m.mu is held.
func (m *monitor) gpuFigures(out *store.Sample) {
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
			mem += int64(min(g.MemoryUsedBytes, jobs.MaxSampleBytes))
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
	out.GPUSimulated = m.cfg.simulated
}

// boundSample leaves out a reading outside what the database keeps
// (migration 0025_node_metrics, jobs/limits.go): a GPU or /proc answer
// that makes no sense is not measured, and must not cost the progress
// write it travels with.
func boundSample(s *store.Sample) {
	within := func(v **float64, hi float64) {
		if *v != nil && !(**v >= 0 && **v <= hi) { // NaN fails both
			*v = nil
		}
	}
	bytes := func(v **int64) {
		if *v != nil && (**v < 0 || **v > jobs.MaxSampleBytes) {
			*v = nil
		}
	}
	within(&s.GPUUtil, 100)
	within(&s.CPUUtil, 100)
	within(&s.ProcCPUUtil, 100)
	within(&s.GPUPowerW, jobs.MaxSamplePowerW)
	within(&s.EnergyJ, jobs.MaxSampleEnergyJ)
	within(&s.Running, jobs.MaxSampleCount)
	within(&s.Waiting, jobs.MaxSampleCount)
	within(&s.KVCache, jobs.MaxSampleCount)
	within(&s.Preemptions, jobs.MaxSampleCount)
	bytes(&s.GPUMemBytes)
	bytes(&s.MemUsedBytes)
	bytes(&s.MemTotalBytes)
	bytes(&s.ProcRSSBytes)
}

// Stop ends sampling and returns the segment's GPU summary (nil without
// GPUs) and node summary.
func (m *monitor) Stop() (*gpuSummary, jobs.NodeSummary) {
	m.cancel()
	m.wg.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	ns := m.nodes.Summary(m.cfg.process)
	if m.cfg.count == 0 {
		return nil, ns
	}
	s := m.meter.Summary()
	return &gpuSummary{GPUs: m.cfg.count, Samples: s.Samples, Seconds: s.Duration().Seconds(), PeakMemBytes: s.PeakMemoryUsedBytes,
		MeanUtil: s.MeanUtilizationPercent, MeanPowerW: s.MeanPowerWatts, EnergyJ: s.EnergyJoules,
		EnergyMethod: string(s.EnergyMethod), EnergyPartial: s.EnergyPartial, Simulated: m.cfg.simulated}, ns
}
