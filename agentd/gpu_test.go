package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/ruckus/ruckus/agentd/sim"
	"github.com/ruckus/ruckus/app/pgtest"
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
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runAgent(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	t.Cleanup(func() { cancel(); <-done })

	until(t, 20*time.Second, "registration", func() bool { return w.online() == 1 })
	as, _ := w.st.ListAgents(context.Background())
	const profile = "mock-a100-sxm4-40gb-x8"
	if as[0].Profile != profile {
		t.Fatalf("profile %q, want %q", as[0].Profile, profile)
	}
	var caps jobs.Capabilities
	if err := json.Unmarshal(as[0].Capabilities, &caps); err != nil || len(caps.Hardware.GPUs) != 8 || caps.Hardware.DriverVersion == "" || caps.Hardware.CUDAVersion != "12.4" {
		t.Fatalf("capabilities %s", as[0].Capabilities)
	}

	id := w.launchOn(profile, jobs.LoadProfile{Profile: jobs.LoadSequential})
	until(t, 60*time.Second, "the run to finish", func() bool { return w.run(id).State == "completed" })
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
