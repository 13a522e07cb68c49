package sim_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/agentd/sim"
)

func TestParseDist(t *testing.T) {
	t.Parallel()
	ms := float64(time.Millisecond)
	for _, c := range []struct {
		in   string
		want sim.Dist
		str  string // String(), when it differs from in
	}{
		{in: "const:20ms", want: sim.Dist{Kind: "const", A: 20 * ms, Durations: true}},
		{in: "20ms", want: sim.Dist{Kind: "const", A: 20 * ms, Durations: true}, str: "const:20ms"},
		{in: "128", want: sim.Dist{Kind: "const", A: 128}, str: "const:128"},
		{in: " Constant : 1.5s ", want: sim.Dist{Kind: "const", A: 1500 * ms, Durations: true}, str: "const:1.5s"},
		{in: "uniform:10ms,40ms", want: sim.Dist{Kind: "uniform", A: 10 * ms, B: 40 * ms, Durations: true}},
		{in: "uniform:0,40ms", want: sim.Dist{Kind: "uniform", B: 40 * ms, Durations: true}, str: "uniform:0s,40ms"},
		{in: "normal:20ms,0", want: sim.Dist{Kind: "normal", A: 20 * ms, Durations: true}, str: "normal:20ms,0s"},
		{in: "normal:128,32", want: sim.Dist{Kind: "normal", A: 128, B: 32}},
		{in: "normal:15ms,3ms", want: sim.Dist{Kind: "normal", A: 15 * ms, B: 3 * ms, Durations: true}},
		{in: "lognormal:150ms,0.5", want: sim.Dist{Kind: "lognormal", A: 150 * ms, B: 0.5, Durations: true}},
		{in: "lognorm:200,0.3", want: sim.Dist{Kind: "lognormal", A: 200, B: 0.3}, str: "lognormal:200,0.3"},
		{in: "exp:20ms", want: sim.Dist{Kind: "exp", A: 20 * ms, Durations: true}},
		{in: "exponential:7", want: sim.Dist{Kind: "exp", A: 7}, str: "exp:7"},
		{in: "const:0", want: sim.Dist{Kind: "const"}},
		{in: "const:1m30s", want: sim.Dist{Kind: "const", A: float64(90 * time.Second), Durations: true}},
	} {
		d, err := sim.ParseDist(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if d != c.want {
			t.Errorf("%q = %+v, want %+v", c.in, d, c.want)
		}
		str := c.str
		if str == "" {
			str = c.in
		}
		if d.String() != str {
			t.Errorf("%q.String() = %q, want %q", c.in, d.String(), str)
		}
	}
}

func TestParseDistErrors(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                       "empty distribution",
		"zipf:1.1":               `unknown distribution "zipf"`,
		"fast":                   "neither a number nor a duration",
		"const:":                 "parameter 1: missing",
		"const:1,2":              "const takes 1 parameter(s), got 2",
		"normal:1":               "normal takes 2 parameter(s), got 1",
		"uniform:1,2,3":          "uniform takes 2 parameter(s), got 3",
		"uniform:40ms,10ms":      "max is below its min",
		"const:-5ms":             "negative",
		"normal:-1,2":            "negative",
		"exp:NaN":                "not a finite number",
		"const:inf":              "not a finite number",
		"const:1e999":            "out of range",
		"uniform:10,40ms":        "mixes a duration and a plain number",
		"normal:15ms,3":          "mixes a duration and a plain number",
		"normal:1,0s":            "mixes a duration and a plain number",
		"lognormal:100ms,50ms":   "sigma is a plain number",
		"lognormal:100ms,11":     "sigma 11 is above 10",
		"const:48h":              "longer than 24h0m0s",
		"const:2e9":              "above 1e+09",
		"normal:20xs,1ms":        `"20xs" is neither a number nor a duration`,
		"uniform:10ms,":          "parameter 2: missing",
		"const:99999999999999h0": "neither a number nor a duration",
	} {
		_, err := sim.ParseDist(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to contain %q", in, err, want)
		}
	}
}

// The draws have the distributions' means, for a fixed seed.
func TestDistSampleMeans(t *testing.T) {
	t.Parallel()
	for in, mean := range map[string]float64{
		"const:20ms":          20e6,
		"uniform:10ms,30ms":   20e6,
		"normal:200,20":       200,
		"exp:10ms":            10e6,
		"lognormal:100ms,0.5": 100e6 * math.Exp(0.5*0.5/2),
		"lognormal:150,0.2":   150 * math.Exp(0.2*0.2/2),
	} {
		d := sim.MustParseDist(in)
		r := rand.New(rand.NewPCG(7, 11))
		const n = 50_000
		sum := 0.0
		for range n {
			v := d.Sample(r)
			if v < 0 {
				t.Fatalf("%s drew %g", in, v)
			}
			sum += v
		}
		if got := sum / n; math.Abs(got-mean)/mean > 0.02 {
			t.Errorf("%s: sample mean %g, want %g ± 2%%", in, got, mean)
		}
	}
	// A normal reaching below zero is clamped there, never negative.
	d, r := sim.MustParseDist("normal:1ms,5ms"), rand.New(rand.NewPCG(1, 2))
	zeros := 0
	for range 10_000 {
		if v := d.Duration(r); v < 0 {
			t.Fatalf("negative duration %v", v)
		} else if v == 0 {
			zeros++
		}
	}
	if zeros < 3000 || zeros > 5000 {
		t.Errorf("%d of 10000 clamped to 0, want about 42%%", zeros)
	}
}

func TestDistTextAndYAML(t *testing.T) {
	t.Parallel()
	var v struct {
		T sim.Dist `json:"t" yaml:"t"`
		N sim.Dist `json:"count" yaml:"count"`
	}
	if err := yaml.Unmarshal([]byte("t: lognormal:150ms,0.5\ncount: 128\n"), &v); err != nil {
		t.Fatal(err)
	}
	if v.T.String() != "lognormal:150ms,0.5" || v.N.String() != "const:128" {
		t.Fatalf("yaml: %+v", v)
	}
	out, err := yaml.Marshal(v)
	if err != nil || string(out) != "t: lognormal:150ms,0.5\ncount: const:128\n" {
		t.Fatalf("yaml out %q %v", out, err)
	}
	b, err := json.Marshal(v)
	if err != nil || string(b) != `{"t":"lognormal:150ms,0.5","count":"const:128"}` {
		t.Fatalf("json %s %v", b, err)
	}
	if err := json.Unmarshal([]byte(`{"t":"exp:3s"}`), &v); err != nil || v.T.String() != "exp:3s" {
		t.Fatalf("json in: %+v %v", v, err)
	}
	err = yaml.Unmarshal([]byte("t: const:1ms\ncount: normal:1\n"), &v)
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "takes 2 parameter") {
		t.Fatalf("bad yaml: %v", err)
	}
	if err := yaml.Unmarshal([]byte("t: [1, 2]\n"), &v); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a list as a distribution: %v", err)
	}
}

// ParseDist reads what users type: it must never panic, and what it
// accepts draws valid values and prints back to itself.
func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"const:20ms", "uniform:10ms,40ms", "normal:128,32", "lognormal:150ms,0.5", "exp:20ms",
		"20ms", "128", "uniform:0,1s", "exp:", "normal:,", ":", "lognormal:1e-300,10", "const:0x1p3", "uniform:1h,24h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := sim.ParseDist(s)
		if err != nil {
			if d != (sim.Dist{}) {
				t.Fatalf("%q: error %v with a value %+v", s, err, d)
			}
			return
		}
		again, err := sim.ParseDist(d.String())
		if err != nil || again != d {
			t.Fatalf("%q → %q → %+v, %v; want %+v", s, d.String(), again, err, d)
		}
		r := rand.New(rand.NewPCG(1, 1))
		for range 20 {
			v := d.Sample(r)
			if !(v >= 0) || math.IsInf(v, 0) {
				t.Fatalf("%q sampled %v", s, v)
			}
			if dur := d.Duration(r); dur < 0 || dur > 24*time.Hour {
				t.Fatalf("%q drew the duration %v", s, dur)
			}
		}
	})
}
