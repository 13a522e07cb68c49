package agent

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/ruckus/ruckus/agentd/sim"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// busyDGX is go-nvml's mock DGX A100 with the readings it leaves unset:
// every GPU at 50 % utilisation, 2 GiB used, 200 W, and an energy counter
// that grows by 1 J per read.
func busyDGX() *dgxa100.Server {
	server := dgxa100.New()
	for _, d := range server.Devices {
		dev := d.(*dgxa100.Device)
		dev.MemoryInfo.Used = 2 << 30
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 50}, nvml.SUCCESS }
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 200_000, nvml.SUCCESS }
		var counter atomic.Uint64
		dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return counter.Add(1000), nvml.SUCCESS }
	}
	return server
}

// An agent on a GPU machine registers its GPUs as its hardware profile and
// samples them while it works a run: chart samples and the run's GPU
// summary, energy from the counter.
func TestAgentOnGPUsRegistersAndSamplesThem(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 40)
	cfg := testConfig(t, w.agentURL("dgx-1"), "dgx-1")
	cfg.nvml = busyDGX()
	cfg.ProgressInterval = 100 * time.Millisecond
	cfg.Sim.TTFT, cfg.Sim.ITL, cfg.Sim.OutputTokens = sim.MustParseDist("const:5ms"), sim.MustParseDist("const:5ms"), sim.MustParseDist("const:8")
	as := runAgentUntilOnline(t, w, cfg)
	const profile = "mock-a100-sxm4-40gb-x8"
	if as[0].Profile != profile {
		t.Fatalf("profile %q, want %q", as[0].Profile, profile)
	}
	var caps jobs.Capabilities
	if err := json.Unmarshal(as[0].Capabilities, &caps); err != nil || len(caps.Hardware.GPUs) != 8 || caps.Hardware.DriverVersion == "" || caps.Hardware.CUDAVersion != "12.4" {
		t.Fatalf("capabilities %s", as[0].Capabilities)
	}

	id := w.launchOn(profile, jobs.LoadProfile{Profile: jobs.LoadSequential})
	testkit.WaitWithin(t, 60*time.Second, "the run to finish", func() bool { return w.run(id).State == "completed" })
	r := w.run(id)
	var samples int
	var util, power float64
	var mem int64
	if err := w.st.Pool().QueryRow(context.Background(), `SELECT count(*), max(gpu_util), max(gpu_power_w), max(gpu_mem_bytes)
		FROM run_samples WHERE run_id = $1 AND gpu_util IS NOT NULL`, r.ID).Scan(&samples, &util, &power, &mem); err != nil {
		t.Fatal(err)
	}
	if samples == 0 || util != 50 || power != 8*200 || mem != 8*2<<30 {
		t.Fatalf("samples: %d, util %v, power %v, memory %v", samples, util, power, mem)
	}
	var raw []byte
	if err := w.st.Pool().QueryRow(context.Background(), `SELECT gpu_summary FROM runs WHERE id = $1`, r.ID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var g gpuSummary
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if g.GPUs != 8 || g.EnergyMethod != "counter" || g.EnergyJ <= 0 || g.JoulesPerToken <= 0 || g.PeakMemBytes != 2<<30 || g.MeanPowerW != 1600 {
		t.Fatalf("gpu summary %s", raw)
	}
	if r.Mode != "sim" {
		t.Fatalf("mode %q", r.Mode)
	}
	// The agent queued the run's scoring for the server.
	var scoring int
	if err := w.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = 'score_run' AND (args->>'run_id')::bigint = $1`, r.ID).Scan(&scoring); err != nil || scoring != 1 {
		t.Fatalf("score_run jobs for the run: %d %v", scoring, err)
	}
}

// A simulated agent with --sim-gpu draws its GPU samples from the load:
// utilisation follows the requests in flight (4 of a batch of 8: 50 %),
// power and memory with it, every sample and the GPU summary labelled
// simulated. Beside them it samples the node's CPU and memory, and the
// process the simulated runtime runs in (agentd's).
func TestSimGPUSamplesFollowTheLoadAndNodeIsSampled(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 40)
	cfg := testConfig(t, w.agentURL("sim-a100"), "sim-a100")
	cfg.SimGPU = "NVIDIA A100-SXM4-80GB:80:2"
	cfg.NoGPU = true
	cfg.ProgressInterval = 100 * time.Millisecond
	cfg.Sim.TTFT, cfg.Sim.ITL, cfg.Sim.OutputTokens = sim.MustParseDist("const:20ms"), sim.MustParseDist("const:10ms"), sim.MustParseDist("const:20")
	as := runAgentUntilOnline(t, w, cfg)
	id := w.launchOn(as[0].Profile, jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 4})
	testkit.WaitWithin(t, 60*time.Second, "the run to finish", func() bool { return w.run(id).State == "completed" })
	r := w.run(id)

	var gpuSamples, simulated, nodeSamples, procSamples int
	var maxUtil, maxPower float64
	var maxMem, memTotal int64
	if err := w.st.Pool().QueryRow(context.Background(), `SELECT count(gpu_util), count(*) FILTER (WHERE gpu_simulated),
			count(cpu_util), count(proc_rss_bytes), coalesce(max(gpu_util), 0), coalesce(max(gpu_power_w), 0),
			coalesce(max(gpu_mem_bytes), 0), coalesce(max(mem_total_bytes), 0)
		FROM run_samples WHERE run_id = $1`, r.ID).Scan(&gpuSamples, &simulated, &nodeSamples, &procSamples, &maxUtil, &maxPower, &maxMem, &memTotal); err != nil {
		t.Fatal(err)
	}
	if gpuSamples == 0 || simulated != gpuSamples {
		t.Fatalf("%d GPU samples, %d labelled simulated", gpuSamples, simulated)
	}
	// 4 in flight of a batch of 8 on each of 2 GPUs: 50 %, 2 × (60 + 340 × 0.5) W,
	// 2 × 80 GiB × (0.6 + 0.3 × 0.5).
	if maxUtil != 50 || maxPower != 2*(60+170) || maxMem != int64(2*float64(80<<30)*0.75) {
		t.Fatalf("GPU readings at the run's load: util %v %%, power %v W, memory %d", maxUtil, maxPower, maxMem)
	}
	if nodeSamples == 0 || procSamples == 0 || memTotal <= 0 {
		t.Fatalf("node samples %d, process samples %d, memory total %d", nodeSamples, procSamples, memTotal)
	}
	var gpuRaw, nodeRaw []byte
	if err := w.st.Pool().QueryRow(context.Background(), `SELECT gpu_summary, node_summary FROM runs WHERE id = $1`, r.ID).Scan(&gpuRaw, &nodeRaw); err != nil {
		t.Fatal(err)
	}
	var g gpuSummary
	if err := json.Unmarshal(gpuRaw, &g); err != nil || !g.Simulated || g.GPUs != 2 || g.EnergyMethod != "power_integral" || g.EnergyJ <= 0 {
		t.Fatalf("gpu summary %s (%v)", gpuRaw, err)
	}
	var n jobs.NodeSummary
	if err := json.Unmarshal(nodeRaw, &n); err != nil || n.Samples == 0 || n.MeanCPUPercent == nil || n.PeakMemUsed == nil ||
		n.Process != "agentd" || n.ProcPeakRSSBytes == nil || *n.ProcPeakRSSBytes <= 0 {
		t.Fatalf("node summary %s (%v)", nodeRaw, err)
	}
}

// A reading outside what the database keeps is left out of the sample
// (not measured) rather than costing the progress write it travels with.
func TestBoundSampleLeavesOutNonsense(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	i := func(v int64) *int64 { return &v }
	s := store.Sample{GPUUtil: f(math.NaN()), GPUPowerW: f(math.Inf(1)), EnergyJ: f(2e15), Running: f(3), KVCache: f(0.5),
		NodeReading: store.NodeReading{CPUUtil: f(101), ProcCPUUtil: f(-1), MemUsedBytes: i(-5), ProcRSSBytes: i(1 << 61), MemTotalBytes: i(1 << 30)}}
	boundSample(&s)
	if s.GPUUtil != nil || s.CPUUtil != nil || s.ProcCPUUtil != nil || s.GPUPowerW != nil || s.EnergyJ != nil || s.MemUsedBytes != nil || s.ProcRSSBytes != nil {
		t.Fatalf("kept nonsense: %+v", s)
	}
	if s.Running == nil || *s.Running != 3 || s.MemTotalBytes == nil || s.KVCache == nil {
		t.Fatalf("left out sense: %+v", s)
	}
}

// runAgentUntilOnline runs an agent with cfg in this process until the
// test ends, and returns the agents once it is online.
func runAgentUntilOnline(t *testing.T, w *world, cfg runConfig) []store.Agent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runAgent(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	t.Cleanup(func() { cancel(); <-done })
	testkit.WaitFor(t, "registration", func() bool { return w.online() == 1 })
	as, err := w.st.ListAgents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return as
}
