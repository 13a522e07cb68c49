package gpu

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"

	"github.com/ruckus/ruckus/jobs"
)

// busyServer is a mock DGX A100 under load: GPU i runs at 10·(i+1) %
// utilisation, uses (i+1) GiB, draws 100+i W, and, when withCounter is
// set, its energy counter grows by (i+1) J on every read. dgxa100 leaves
// the utilisation, power and energy functions nil, so they are set here.
func busyServer(withCounter bool) *dgxa100.Server {
	server := dgxa100.New()
	for i, d := range server.Devices {
		dev := d.(*dgxa100.Device)
		dev.MemoryInfo.Used = uint64(i+1) << 30
		dev.MemoryInfo.Free = dev.MemoryInfo.Total - dev.MemoryInfo.Used
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: uint32(10 * (i + 1)), Memory: 5}, nvml.SUCCESS
		}
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) {
			return uint32(100+i) * 1000, nvml.SUCCESS
		}
		var counter atomic.Uint64
		counter.Store(5_000_000) // the counter runs from driver load, not from zero
		dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) {
			if !withCounter {
				return 0, nvml.ERROR_NOT_SUPPORTED
			}
			return counter.Add(uint64(1000 * (i + 1))), nvml.SUCCESS
		}
	}
	return server
}

// runSampler runs a Sampler until it has handed over want samples, then
// cancels it, and returns everything it handed over.
func runSampler(t *testing.T, n *NVML, want int) []Sample {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var got []Sample
	Sampler{Source: n, Interval: time.Millisecond}.Run(ctx, func(s Sample) {
		got = append(got, s)
		if len(got) == want {
			cancel()
		}
	})
	return got
}

func TestSampleDGXA100(t *testing.T) {
	n, err := Open(busyServer(true))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	s := n.Sample()
	if s.At.IsZero() || len(s.GPUs) != 8 {
		t.Fatalf("sample at %v with %d GPUs", s.At, len(s.GPUs))
	}
	for i, g := range s.GPUs {
		want := GPUSample{
			Index:              i,
			HasUtilization:     true,
			UtilizationPercent: float64(10 * (i + 1)),
			HasMemory:          true,
			MemoryUsedBytes:    uint64(i+1) << 30,
			MemoryTotalBytes:   40 << 30,
			HasPower:           true,
			PowerWatts:         float64(100 + i),
			HasEnergy:          true,
			EnergyJoules:       5000 + float64(i+1),
		}
		if g != want {
			t.Errorf("GPU %d = %+v\nwant %+v", i, g, want)
		}
	}
}

func TestSampleToleratesFailedReads(t *testing.T) {
	server := busyServer(false)
	d2 := server.Devices[2].(*dgxa100.Device)
	d2.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED }
	d2.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST }
	server.Devices[5].(*dgxa100.Device).GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
	n, err := Open(server)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	s := n.Sample()
	if len(s.GPUs) != 8 {
		t.Fatalf("%d GPUs, want 8", len(s.GPUs))
	}
	for i, g := range s.GPUs {
		if g.HasEnergy || g.EnergyJoules != 0 {
			t.Errorf("GPU %d: energy present without a counter: %+v", i, g)
		}
		if wantUtil := i != 2; g.HasUtilization != wantUtil || (!wantUtil && g.UtilizationPercent != 0) {
			t.Errorf("GPU %d utilisation: %+v", i, g)
		}
		if wantMem := i != 2; g.HasMemory != wantMem || (!wantMem && g.MemoryTotalBytes != 0) {
			t.Errorf("GPU %d memory: %+v", i, g)
		}
		if wantPower := i != 5; g.HasPower != wantPower || (!wantPower && g.PowerWatts != 0) {
			t.Errorf("GPU %d power: %+v", i, g)
		}
	}
}

func TestSamplerEnergyCounter(t *testing.T) {
	n, err := Open(busyServer(true))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	samples := runSampler(t, n, 3)
	// Three on schedule, then the final one when the context ends.
	if len(samples) != 4 {
		t.Fatalf("%d samples, want 4", len(samples))
	}
	for k, s := range samples {
		if k > 0 && !s.At.After(samples[k-1].At) {
			t.Errorf("sample %d not after sample %d", k, k-1)
		}
		for i, g := range s.GPUs {
			// Each read adds (i+1) J, so the k-th sample reads k+1 times that.
			if want := 5000 + float64((k+1)*(i+1)); g.EnergyJoules != want || !g.HasEnergy {
				t.Errorf("sample %d GPU %d energy %v, want %v", k, i, g.EnergyJoules, want)
			}
		}
	}
	sum := Summarize(samples)
	// 3 increments of 1+2+…+8 = 36 J.
	if sum.EnergyMethod != EnergyCounter || sum.EnergyJoules != 108 || sum.EnergyPartial {
		t.Errorf("energy %v J by %q (partial %v), want 108 J by counter", sum.EnergyJoules, sum.EnergyMethod, sum.EnergyPartial)
	}
	if sum.Samples != 4 || sum.Start != samples[0].At || sum.End != samples[3].At {
		t.Errorf("window %+v", sum)
	}
	// Means of 10…80 % and the sum of 100…107 W.
	if sum.PeakMemoryUsedBytes != 8<<30 || sum.MeanUtilizationPercent != 45 || sum.MeanPowerWatts != 828 {
		t.Errorf("peak %d, util %v, power %v; want 8 GiB, 45, 828", sum.PeakMemoryUsedBytes, sum.MeanUtilizationPercent, sum.MeanPowerWatts)
	}
}

func TestSamplerPowerIntegralFallback(t *testing.T) {
	n, err := Open(busyServer(false))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	samples := runSampler(t, n, 5)
	if len(samples) != 6 {
		t.Fatalf("%d samples, want 6", len(samples))
	}
	sum := Summarize(samples)
	if sum.EnergyMethod != EnergyPowerIntegral || sum.EnergyPartial {
		t.Fatalf("method %q partial %v, want complete power integral", sum.EnergyMethod, sum.EnergyPartial)
	}
	// Constant power: the integral is 828 W over the window.
	want := 828 * sum.Duration().Seconds()
	if want <= 0 || math.Abs(sum.EnergyJoules-want) > 1e-9*want {
		t.Errorf("energy %v J, want %v J", sum.EnergyJoules, want)
	}
}

func TestSamplerStopsWhenClosed(t *testing.T) {
	n, err := Open(busyServer(true))
	if err != nil {
		t.Fatal(err)
	}
	var count int
	Sampler{Source: n, Interval: time.Millisecond}.Run(t.Context(), func(Sample) {
		count++
		if count == 2 {
			n.Close()
		}
	})
	if count != 2 {
		t.Errorf("%d samples, want 2 (none after Close)", count)
	}
}

func TestSamplerDefaultInterval(t *testing.T) {
	n, err := Open(busyServer(true))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx, cancel := context.WithCancel(t.Context())
	var got []Sample
	// With the one-second default, cancelling in the first callback ends
	// the run before any tick: the first sample and the final one.
	Sampler{Source: n}.Run(ctx, func(s Sample) {
		got = append(got, s)
		cancel()
	})
	if len(got) != 2 {
		t.Errorf("%d samples, want 2", len(got))
	}
}

func TestSamplerCloseFromAnotherGoroutine(t *testing.T) {
	n, err := Open(busyServer(true))
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan struct{})
	done := make(chan struct{})
	var count atomic.Int64
	go func() {
		defer close(done)
		Sampler{Source: n, Interval: time.Millisecond}.Run(t.Context(), func(s Sample) {
			if len(s.GPUs) != 8 {
				t.Errorf("sample with %d GPUs", len(s.GPUs))
			}
			if count.Add(1) == 1 {
				close(first)
			}
		})
	}()
	<-first
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	<-done // Run returns on its own once the NVML is closed
	if count.Load() < 1 {
		t.Error("no sample")
	}
}

// Simulated GPUs follow the load they are given, clamped to a full batch,
// and integrate their energy from power (they have no counter).
func TestSimulatedGPUsFollowTheLoad(t *testing.T) {
	t.Parallel()
	load := 0.0
	s := Simulated{GPUs: []jobs.GPU{{Name: "sim", MemoryBytes: 100}, {Name: "sim", MemoryBytes: 100}}, Load: func() float64 { return load }}
	for _, c := range []struct{ load, util, watts float64 }{{0, 0, 60}, {0.5, 50, 230}, {3, 100, 400}, {math.NaN(), 0, 60}} {
		load = c.load
		got := s.Sample()
		if len(got.GPUs) != 2 {
			t.Fatalf("%d GPUs", len(got.GPUs))
		}
		g := got.GPUs[1]
		if g.Index != 1 || g.UtilizationPercent != c.util || g.PowerWatts != c.watts || g.HasEnergy || g.MemoryTotalBytes != 100 ||
			g.MemoryUsedBytes != uint64(100*(SimBaseMemoryShare+SimLoadMemoryShare*c.util/100)) {
			t.Errorf("load %v: %+v", c.load, g)
		}
	}
	var m EnergyMeter
	load = 1
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	Sampler{Source: s, Interval: 5 * time.Millisecond}.Run(ctx, m.Add)
	if sum := m.Summary(); sum.EnergyMethod != EnergyPowerIntegral || sum.EnergyJoules <= 0 || sum.MeanPowerWatts != 800 {
		t.Fatalf("summary %+v", sum)
	}
	// No GPUs: nothing sampled.
	called := false
	Sampler{Source: Simulated{}}.Run(t.Context(), func(Sample) { called = true })
	if called {
		t.Fatal("sampled no GPUs")
	}
}
