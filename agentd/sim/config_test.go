package sim_test

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/agentd/sim"
)

func TestDefaultConfigIsValid(t *testing.T) {
	t.Parallel()
	c := sim.DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.TTFT.String() != "lognormal:120ms,0.5" || c.ITL.String() != "normal:15ms,3ms" || c.OutputTokens.String() != "normal:200,60" ||
		c.TokensPerEvent != 1 || c.Batch != 8 || c.TimeScale != 1 || c.StallMax != 10*time.Minute {
		t.Fatalf("defaults %+v", c)
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	t.Parallel()
	c := sim.DefaultConfig()
	c.TTFT = sim.MustParseDist("const:20") // a number where a duration belongs
	c.OutputTokens = sim.MustParseDist("normal:200ms,1ms")
	c.ITL = sim.Dist{}
	c.TokensPerEvent, c.Batch, c.TimeScale = 0, 0, -1
	c.HTTP5xx, c.HTTP429, c.Stall = 1.5, -0.1, 0.9
	c.StallMax = 0
	err := c.Validate()
	for _, want := range []string{
		`--sim-ttft "const:20": times are durations`,
		"--sim-itl is not set",
		`--sim-output-tokens "normal:200ms,1ms": token counts are plain numbers`,
		"--sim-tokens-per-event must be 1 to 1024 (got 0)",
		"--sim-batch must be 1 to 1000000 (got 0)",
		"--sim-time-scale must be above 0",
		"--sim-fault-5xx must be between 0 and 1 (got 1.5)",
		"--sim-fault-429 must be between 0 and 1 (got -0.1)",
		"--sim-stall-max must be positive",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\ndoes not say %q", err, want)
		}
	}

	c = sim.DefaultConfig()
	c.HTTP5xx, c.Disconnect, c.Malformed = 0.5, 0.4, 0.2
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "add up to 1.1") {
		t.Errorf("fault shares over 1: %v", err)
	}
	c.Malformed = 0.1 // exactly 1 is allowed
	if err := c.Validate(); err != nil {
		t.Errorf("fault shares of 1: %v", err)
	}
}

func TestRegisterFlags(t *testing.T) {
	t.Parallel()
	c := sim.DefaultConfig()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.RegisterFlags(fs)
	err := fs.Parse(strings.Fields(`--sim-ttft const:5ms --sim-itl uniform:1ms,2ms --sim-output-tokens 64
		--sim-tokens-per-event 4 --sim-batch 3 --sim-time-scale 0.5 --sim-seed 42 --sim-models a,b --sim-models c
		--sim-fault-5xx 0.1 --sim-fault-429 0.2 --sim-fault-stall 0.01 --sim-fault-disconnect 0.02
		--sim-fault-malformed 0.03 --sim-stall-max 5s --sim-drift 0.04 --sim-drift-period 3s`))
	if err != nil {
		t.Fatal(err)
	}
	want := sim.Config{
		TTFT: sim.MustParseDist("const:5ms"), ITL: sim.MustParseDist("uniform:1ms,2ms"), OutputTokens: sim.MustParseDist("const:64"),
		TokensPerEvent: 4, Batch: 3, TimeScale: 0.5, Drift: 0.04, DriftPeriod: 3 * time.Second, Seed: 42, Models: []string{"a", "b", "c"},
		Faults: sim.Faults{HTTP5xx: 0.1, HTTP429: 0.2, Stall: 0.01, Disconnect: 0.02, Malformed: 0.03, StallMax: 5 * time.Second},
	}
	if got, _ := yaml.Marshal(c); !bytes.Equal(got, mustYAML(t, want)) {
		t.Fatalf("flags gave\n%s\nwant\n%s", got, mustYAML(t, want))
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}

	// A distribution in the wrong unit is refused as the flag is parsed,
	// naming it.
	for args, want := range map[string]string{
		"--sim-itl fast":            `--sim-itl "fast"`,
		"--sim-ttft 200":            `--sim-ttft "200": times are durations`,
		"--sim-output-tokens 200ms": `--sim-output-tokens "200ms": token counts are plain numbers`,
	} {
		c := sim.DefaultConfig()
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		c.RegisterFlags(fs)
		if err := fs.Parse(strings.Fields(args)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}

func mustYAML(t *testing.T, v any) []byte {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The YAML keys are the flags' names without sim-; a file's values become
// the flags' defaults, so flags override the file.
func TestConfigFromYAMLThenFlags(t *testing.T) {
	t.Parallel()
	doc := `
ttft: lognormal:200ms,0.3
itl: exp:10ms
output_tokens: uniform:10,20
tokens_per_event: 2
batch: 16
time_scale: 0.01
seed: 9
models: [x/one, x/two]
fault_5xx: 0.01
fault_429: 0.02
fault_stall: 0.03
fault_disconnect: 0.04
fault_malformed: 0.05
stall_max: 1m
`
	c := sim.DefaultConfig()
	dec := yaml.NewDecoder(strings.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.TTFT.String() != "lognormal:200ms,0.3" || c.ITL.String() != "exp:10ms" || c.OutputTokens.String() != "uniform:10,20" ||
		c.TokensPerEvent != 2 || c.Batch != 16 || c.TimeScale != 0.01 || c.Seed != 9 || strings.Join(c.Models, ",") != "x/one,x/two" ||
		c.HTTP5xx != 0.01 || c.HTTP429 != 0.02 || c.Stall != 0.03 || c.Disconnect != 0.04 || c.Malformed != 0.05 || c.StallMax != time.Minute {
		t.Fatalf("from yaml: %+v", c)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--sim-batch", "2", "--sim-models", "y"}); err != nil {
		t.Fatal(err)
	}
	if c.Batch != 2 || strings.Join(c.Models, ",") != "y" || c.Seed != 9 || c.ITL.String() != "exp:10ms" {
		t.Fatalf("flags over yaml: %+v", c)
	}

	for doc, want := range map[string]string{
		"ttft: const:5\n":         "", // parsed; Validate finds the unit
		"batch: 2\nttft: slow\n":  "line 2",
		"fault_500: 0.1\n":        "field fault_500 not found",
		"stall_max: forever\n":    "line 1: cannot unmarshal !!str `forever` into time.Duration",
		"output_tokens: [1, 2]\n": "line 1",
	} {
		c := sim.DefaultConfig()
		dec := yaml.NewDecoder(strings.NewReader(doc))
		dec.KnownFields(true)
		err := dec.Decode(&c)
		if want == "" {
			if err != nil {
				t.Errorf("%q: %v", doc, err)
			} else if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--sim-ttft") {
				t.Errorf("%q: validate %v", doc, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}
