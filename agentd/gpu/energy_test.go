package gpu

import (
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// at is t0 plus sec seconds.
func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

// absent marks a reading that failed in g's arguments.
const absent = -1

// g builds one GPU's reading; an argument of absent leaves that field out.
func g(index int, util float64, memGiB int, watts, joules float64) GPUSample {
	s := GPUSample{Index: index}
	if util != absent {
		s.HasUtilization, s.UtilizationPercent = true, util
	}
	if memGiB != absent {
		s.HasMemory, s.MemoryUsedBytes, s.MemoryTotalBytes = true, uint64(memGiB)<<30, 80<<30
	}
	if watts != absent {
		s.HasPower, s.PowerWatts = true, watts
	}
	if joules != absent {
		s.HasEnergy, s.EnergyJoules = true, joules
	}
	return s
}

func sample(sec float64, gpus ...GPUSample) Sample { return Sample{At: at(sec), GPUs: gpus} }

// Two GPUs over 3 s, sampled at 0, 1 and 3 s (an uneven gap on purpose).
// GPU 0 draws 100, 200, 300 W: trapezoids 1·150 + 2·250 = 650 J.
// GPU 1 draws a steady 50 W: 3·50 = 150 J. Together 800 J.
// Counters rise 100→400 J and 1000→1250 J: 550 J.
func twoGPUs(mod func(k int, gpus []GPUSample)) []Sample {
	secs := []float64{0, 1, 3}
	gpu0 := []GPUSample{g(0, 10, 1, 100, 100), g(0, 20, 3, 200, 150), g(0, 30, 2, 300, 400)}
	gpu1 := []GPUSample{g(1, 0, 4, 50, 1000), g(1, 50, 4, 50, 1100), g(1, 100, 4, 50, 1250)}
	var out []Sample
	for k := range secs {
		gpus := []GPUSample{gpu0[k], gpu1[k]}
		if mod != nil {
			mod(k, gpus)
		}
		out = append(out, sample(secs[k], gpus...))
	}
	return out
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []Sample
		energy  float64
		method  EnergyMethod
		partial bool
		peak    uint64
		util    float64
		power   float64
	}{
		{
			name:    "counter on every GPU",
			samples: twoGPUs(nil),
			energy:  550, method: EnergyCounter,
			peak: 4 << 30, util: 35, power: 250,
		},
		{
			name: "no counters: power integral",
			samples: twoGPUs(func(k int, gpus []GPUSample) {
				for i := range gpus {
					gpus[i].HasEnergy, gpus[i].EnergyJoules = false, 0
				}
			}),
			energy: 800, method: EnergyPowerIntegral,
			peak: 4 << 30, util: 35, power: 250,
		},
		{
			name: "one GPU without counter at the end: power integral for all",
			samples: twoGPUs(func(k int, gpus []GPUSample) {
				if k == 2 {
					gpus[1].HasEnergy = false
				}
			}),
			energy: 800, method: EnergyPowerIntegral,
			peak: 4 << 30, util: 35, power: 250,
		},
		{
			name: "counter missing only in the middle: the ends suffice",
			samples: twoGPUs(func(k int, gpus []GPUSample) {
				if k == 1 {
					gpus[0].HasEnergy = false
				}
			}),
			energy: 550, method: EnergyCounter,
			peak: 4 << 30, util: 35, power: 250,
		},
		{
			name: "counter went backwards (driver reload): power integral",
			samples: twoGPUs(func(k int, gpus []GPUSample) {
				if k == 2 {
					gpus[1].EnergyJoules = 3
				}
			}),
			energy: 800, method: EnergyPowerIntegral,
			peak: 4 << 30, util: 35, power: 250,
		},
		{
			name: "power gap in the middle is bridged",
			samples: twoGPUs(func(k int, gpus []GPUSample) {
				gpus[0].HasEnergy, gpus[1].HasEnergy = false, false
				if k == 1 {
					// GPU 0 then integrates 3·(100+300)/2 = 600 J.
					gpus[0].HasPower = false
				}
			}),
			// GPU 0's mean power is now (100+300)/2 = 200 W, as before.
			energy: 750, method: EnergyPowerIntegral,
			peak: 4 << 30, util: 35, power: 250,
		},
		{
			name: "power missing at the end: partial lower bound",
			samples: twoGPUs(func(k int, gpus []GPUSample) {
				gpus[0].HasEnergy, gpus[1].HasEnergy = false, false
				if k == 2 {
					gpus[1].HasPower = false
				}
			}),
			energy: 650 + 50, method: EnergyPowerIntegral, partial: true,
			peak: 4 << 30, util: 35, power: 250,
		},
		{
			name: "a GPU with no power at all: partial",
			samples: twoGPUs(func(k int, gpus []GPUSample) {
				gpus[0].HasEnergy, gpus[1].HasEnergy = false, false
				gpus[1].HasPower = false
			}),
			energy: 650, method: EnergyPowerIntegral, partial: true,
			peak: 4 << 30, util: 35, power: 200,
		},
		{
			name: "absent readings are left out of means and peaks",
			samples: twoGPUs(func(k int, gpus []GPUSample) {
				if k == 2 {
					gpus[0].HasUtilization = false // GPU 0: mean of 10, 20
					gpus[1].HasMemory = false
				}
				if k == 0 {
					gpus[1].HasMemory = false
				}
			}),
			energy: 550, method: EnergyCounter,
			// GPU 0 mean util 15, GPU 1 mean 50.
			peak: 4 << 30, util: 32.5, power: 250,
		},
		{
			name: "a GPU that only shows up mid-window disqualifies the counter",
			samples: []Sample{
				sample(0, g(0, 50, 1, 100, 10)),
				sample(1, g(0, 50, 1, 100, 110), g(1, 50, 2, 100, 7)),
				sample(2, g(0, 50, 1, 100, 210)),
			},
			energy: 200, method: EnergyPowerIntegral, partial: true,
			peak: 2 << 30, util: 50, power: 200,
		},
		{
			name:    "one sample: no time, no energy",
			samples: []Sample{sample(0, g(0, 40, 2, 100, 10))},
			energy:  0, method: EnergyCounter,
			peak: 2 << 30, util: 40, power: 100,
		},
		{
			name: "neither counter nor power",
			samples: []Sample{
				sample(0, g(0, 40, 2, absent, absent)),
				sample(1, g(0, 60, 3, absent, absent)),
			},
			method: EnergyNone,
			peak:   3 << 30, util: 50,
		},
		{
			name:    "samples without GPUs",
			samples: []Sample{sample(0), sample(1)},
			method:  EnergyNone,
		},
		{
			name:   "nothing",
			method: EnergyNone,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Summarize(tc.samples)
			want := Summary{
				Samples:                len(tc.samples),
				EnergyJoules:           tc.energy,
				EnergyMethod:           tc.method,
				EnergyPartial:          tc.partial,
				PeakMemoryUsedBytes:    tc.peak,
				MeanUtilizationPercent: tc.util,
				MeanPowerWatts:         tc.power,
			}
			if len(tc.samples) > 0 {
				want.Start, want.End = tc.samples[0].At, tc.samples[len(tc.samples)-1].At
			}
			if got != want {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestEnergyMeterLive(t *testing.T) {
	samples := twoGPUs(func(k int, gpus []GPUSample) {
		gpus[0].HasEnergy, gpus[1].HasEnergy = false, false
	})
	var m EnergyMeter
	if s := m.Summary(); s.Samples != 0 || s.EnergyMethod != EnergyNone {
		t.Errorf("zero meter: %+v", s)
	}
	m.Add(samples[0])
	m.Add(samples[1])
	// After 1 s: GPU 0 150 J, GPU 1 50 J.
	first := m.Summary()
	if first.EnergyJoules != 200 || first.Duration() != time.Second || first.Samples != 2 {
		t.Errorf("after two samples: %+v", first)
	}
	if again := m.Summary(); again != first {
		t.Errorf("Summary changed the meter: %+v then %+v", first, again)
	}
	m.Add(samples[2])
	if s := m.Summary(); s.EnergyJoules != 800 || s.Duration() != 3*time.Second {
		t.Errorf("after three samples: %+v", s)
	}
}

func TestEnergyMeterIgnoresBackwardTime(t *testing.T) {
	// A sample stamped before its predecessor adds no (negative) energy.
	s := Summarize([]Sample{
		sample(0, g(0, absent, absent, 100, absent)),
		sample(2, g(0, absent, absent, 100, absent)),
		sample(1, g(0, absent, absent, 100, absent)),
	})
	if s.EnergyJoules != 200 {
		t.Errorf("energy %v, want 200", s.EnergyJoules)
	}
}
