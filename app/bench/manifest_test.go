package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/judge"
	"github.com/ruckus/ruckus/app/sandbox"
	"github.com/ruckus/ruckus/jobs"
)

const goodYAML = `
name: Qwen vs Llama on GSM8K
dataset: 4
targets:
  - {model: Qwen/Qwen2.5-7B-Instruct, runtime: vllm, hardware: h100-80gb-x1}
  - {model: meta-llama/Llama-3.1-8B-Instruct, runtime: sglang, hardware: h100-80gb-x1}
load: {profile: concurrency, concurrency: 8, warmup: 5, max_duration: 10m}
sampling: {temperature: 0, max_tokens: 256, stop: ["\n\n"]}
scorer: numeric
slo: {ttft: 500ms, e2e: 10s}
`

func TestDecodeYAMLAndJSON(t *testing.T) {
	t.Parallel()
	m, err := Decode(strings.NewReader(goodYAML))
	if err != nil {
		t.Fatal(err)
	}
	if errs := m.Validate(); len(errs) != 0 {
		t.Fatalf("valid manifest: %v", errs)
	}
	if m.Load.MaxDuration != jobs.Duration(10*time.Minute) || m.SLO.TTFT != jobs.Duration(500*time.Millisecond) ||
		*m.Sampling.Temperature != 0 || m.Targets[1].Runtime != "sglang" {
		t.Fatalf("decoded %+v", m)
	}
	j, err := Decode(strings.NewReader(`{"name":"j","dataset":"GSM8K test","targets":[{"model":"m","runtime":"sim","hardware":"cpu-2c"}],
		"load":{"profile":"sequential"},"sampling":{"max_tokens":16}}`))
	if err != nil || len(j.Validate()) != 0 || j.Targets[0].Hardware != "cpu-2c" || j.Dataset.Name != "GSM8K test" {
		t.Fatalf("JSON manifest: %+v %v %v", j, err, j.Validate())
	}
}

// goTypeName matches a Go type name such as bench.Manifest, which no
// message may show.
var goTypeName = regexp.MustCompile(`[a-z]+\.[A-Z][A-Za-z]+`)

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ in, want string }{
		"empty":                           {"  \n", "the manifest is empty"},
		"not yaml":                        {"name: [unclosed", "not valid YAML or JSON"},
		"unknown field":                   {"name: x\nsampling: {max_token: 5}\n", `sampling.max_token: unknown field "max_token" (line 2)`},
		"unknown top-level field in JSON": {`{"model_id": 3, "dataset_id": 4}`, `model_id: unknown field "model_id" (line 1)`},
		"a word for a number":             {"load: {profile: concurrency, concurrency: many}\n", `load.concurrency: must be a whole number (got "many") (line 1)`},
		"a list for a target":             {"targets: [[m]]\n", "targets[0]: is not what this field takes (got a list) (line 1)"},
		"bad duration":                    {"load: {profile: sequential, max_duration: forever}\n", `"forever" is not a duration`},
		"wrong type":                      {"dataset: [4]\n", "dataset must be a dataset id or name"},
		"too large":                       {"name: " + strings.Repeat("x", MaxManifestBytes), "larger than"},
	} {
		_, err := Decode(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", name, err, tc.want)
		}
		if err != nil && (goTypeName.MatchString(err.Error()) || strings.Contains(err.Error(), "type ")) {
			t.Errorf("%s: error %q names a Go type", name, err)
		}
	}
}

func TestValidateNamesFieldPaths(t *testing.T) {
	t.Parallel()
	valid := func() Manifest {
		m, err := Decode(strings.NewReader(goodYAML))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	neg, big, nan, inf := -1.0, 1.5, math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name   string
		change func(*Manifest)
		path   string
	}{
		{"no name", func(m *Manifest) { m.Name = " " }, "name"},
		{"no dataset", func(m *Manifest) { m.Dataset = DatasetRef{} }, "dataset"},
		{"no targets", func(m *Manifest) { m.Targets = nil }, "targets"},
		{"bad runtime", func(m *Manifest) { m.Targets[1].Runtime = "magic" }, "targets[1].runtime"},
		{"no model", func(m *Manifest) { m.Targets[0].Model = "" }, "targets[0].model"},
		{"no hardware", func(m *Manifest) { m.Targets[0].Hardware = "" }, "targets[0].hardware"},
		{"duplicate target", func(m *Manifest) { m.Targets[1] = m.Targets[0] }, "targets[1]"},
		{"bad profile", func(m *Manifest) { m.Load.Profile = "burst" }, "load.profile"},
		{"no concurrency", func(m *Manifest) { m.Load.Concurrency = 0 }, "load.concurrency"},
		{"no rate", func(m *Manifest) { m.Load = jobs.LoadProfile{Profile: jobs.LoadPoisson} }, "load.rate"},
		{"sweep steps", func(m *Manifest) { m.Load = jobs.LoadProfile{Profile: jobs.LoadSweep, Concurrency: 8, Steps: 1} }, "load.steps"},
		{"negative warmup", func(m *Manifest) { m.Load.Warmup = -1 }, "load.warmup"},
		{"negative duration", func(m *Manifest) { m.Load.MaxDuration = -1 }, "load.max_duration"},
		{"temperature", func(m *Manifest) { m.Sampling.Temperature = &neg }, "sampling.temperature"},
		{"top_p", func(m *Manifest) { m.Sampling.TopP = &big }, "sampling.top_p"},
		{"max_tokens", func(m *Manifest) { m.Sampling.MaxTokens = 0 }, "sampling.max_tokens"},
		{"empty stop", func(m *Manifest) { m.Sampling.Stop = []string{""} }, "sampling.stop[0]"},
		{"scorer", func(m *Manifest) { m.Scorer = "vibes" }, "scorer"},
		{"slo", func(m *Manifest) { m.SLO.TPOT = -1 }, "slo.tpot"},
		{"sweep rates and concurrencies", func(m *Manifest) {
			m.Load = jobs.LoadProfile{Profile: jobs.LoadSweep, Concurrency: 8, Rates: []float64{1}, Concurrencies: []int{2}}
		}, "load.rates"},
		{"sweep rate NaN", func(m *Manifest) {
			m.Load = jobs.LoadProfile{Profile: jobs.LoadSweep, Concurrency: 8, Rates: []float64{1, math.NaN()}}
		}, "load.rates[1]"},
		{"sweep rates equal to the hundredth", func(m *Manifest) {
			m.Load = jobs.LoadProfile{Profile: jobs.LoadSweep, Concurrency: 8, Rates: []float64{1.001, 1.004}}
		}, "load.rates[1]"},
		{"sweep concurrency 0", func(m *Manifest) {
			m.Load = jobs.LoadProfile{Profile: jobs.LoadSweep, Concurrency: 8, Concurrencies: []int{0}}
		}, "load.concurrencies[0]"},
		{"goodput share above 1", func(m *Manifest) { m.SLO.Goodput = 1.5 }, "slo.goodput"},
		{"negative goodput share", func(m *Manifest) { m.SLO.Goodput = -0.1 }, "slo.goodput"},
		{"goodput share NaN", func(m *Manifest) { m.SLO.Goodput = math.NaN() }, "slo.goodput"},
		{"hostile model", func(m *Manifest) { m.Targets[0].Model = "--trust-remote-code" }, "targets[0].model"},
		{"model with a space", func(m *Manifest) { m.Targets[1].Model = "Qwen/Qwen 7B" }, "targets[1].model"},
		{"NUL in the name", func(m *Manifest) { m.Name = "a\x00b" }, "name"},
		{"invalid UTF-8 in the name", func(m *Manifest) { m.Name = "a\xffb" }, "name"},
		{"NUL in the dataset name", func(m *Manifest) { m.Dataset = DatasetRef{Name: "gsm\x00"} }, "dataset"},
		{"NUL in the hardware", func(m *Manifest) { m.Targets[0].Hardware = "cpu\x00" }, "targets[0].hardware"},
		{"NUL in a stop sequence", func(m *Manifest) { m.Sampling.Stop = []string{"\x00"} }, "sampling.stop[0]"},
		{"NaN rate", func(m *Manifest) { m.Load = jobs.LoadProfile{Profile: jobs.LoadPoisson, Rate: nan} }, "load.rate"},
		{"infinite rate", func(m *Manifest) { m.Load = jobs.LoadProfile{Profile: jobs.LoadConstant, Rate: inf} }, "load.rate"},
		{"NaN rate on a profile without one", func(m *Manifest) { m.Load.Rate = nan }, "load.rate"},
		{"NaN temperature", func(m *Manifest) { m.Sampling.Temperature = &nan }, "sampling.temperature"},
		{"NaN top_p", func(m *Manifest) { m.Sampling.TopP = &nan }, "sampling.top_p"},
		{"infinite top_p", func(m *Manifest) { m.Sampling.TopP = &inf }, "sampling.top_p"},
		{"negative exec timeout", func(m *Manifest) {
			m.ScorerOptions = &ScorerOptions{Exec: &sandbox.ExecOptions{Timeout: jobs.Duration(-time.Second)}}
		}, "scorer_options.exec.timeout"},
		{"exec timeout above a minute", func(m *Manifest) {
			m.ScorerOptions = &ScorerOptions{Exec: &sandbox.ExecOptions{Timeout: jobs.Duration(61 * time.Second)}}
		}, "scorer_options.exec.timeout"},
		{"exec truncate", func(m *Manifest) {
			m.ScorerOptions = &ScorerOptions{Exec: &sandbox.ExecOptions{Truncate: "words"}}
		}, "scorer_options.exec.truncate"},
		{"too many stop sequences", func(m *Manifest) { m.Sampling.Stop = []string{"a", "b", "c", "d", "e"} }, "sampling.stop"},
		{"n above the most samples", func(m *Manifest) { m.Sampling.N = jobs.MaxSamples + 1 }, "sampling.n"},
		{"51 targets", func(m *Manifest) {
			for i := len(m.Targets); i <= 50; i++ {
				m.Targets = append(m.Targets, Target{Model: fmt.Sprintf("m/x%d", i), Runtime: "sim", Hardware: "cpu"})
			}
		}, "targets"},
		{"long hardware", func(m *Manifest) { m.Targets[0].Hardware = strings.Repeat("h", 65) }, "targets[0].hardware"},
		{"speed off trace", func(m *Manifest) { m.Load.Speed = 2 }, "load.speed"},
		{"NaN speed", func(m *Manifest) { m.Load.Speed = nan }, "load.speed"},
	} {
		m := valid()
		tc.change(&m)
		errs := m.Validate()
		if len(errs) != 1 || errs[0].Path != tc.path || errs[0].Message == "" {
			t.Errorf("%s: errors %v, want one at %q", tc.name, errs, tc.path)
		}
		for _, fe := range errs {
			if goTypeName.MatchString(fe.Message) || strings.Contains(fe.Message, "type ") {
				t.Errorf("%s: message %q names a Go type", tc.name, fe.Message)
			}
		}
	}
}

// YAML's .nan and .inf decode into float fields and pass every range
// check written as "x < lo || x > hi"; Validate names them.
func TestValidateRefusesNonFiniteNumbersFromYAML(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ yaml, path string }{
		{"load: {profile: poisson, rate: .nan}", "load.rate"},
		{"load: {profile: constant-rate, rate: .inf}", "load.rate"},
		{"load: {profile: constant-rate, rate: -.inf}", "load.rate"},
		{"load: {profile: sequential}\nsampling: {max_tokens: 8, temperature: .nan}", "sampling.temperature"},
		{"load: {profile: sequential}\nsampling: {max_tokens: 8, top_p: .NaN}", "sampling.top_p"},
	} {
		in := "name: n\ndataset: 1\ntargets: [{model: m, runtime: sim, hardware: cpu}]\n" + tc.yaml + "\n"
		if !strings.Contains(tc.yaml, "sampling") {
			in += "sampling: {max_tokens: 8}\n"
		}
		m, err := Decode(strings.NewReader(in))
		if err != nil {
			t.Fatalf("%s: %v", tc.yaml, err)
		}
		errs := m.Validate()
		if len(errs) != 1 || errs[0].Path != tc.path || !strings.Contains(errs[0].Message, "finite") {
			t.Errorf("%s: errors %v, want one at %q saying the number must be finite", tc.yaml, errs, tc.path)
		}
	}
}

// FuzzDecode: whatever the input, Decode and Validate answer with messages,
// and a manifest that validates can be written as a job (JSON, which has
// no NaN or infinity) and stored (no NUL in its text).
func FuzzDecode(f *testing.F) {
	f.Add(goodYAML)
	f.Add("name: n\ndataset: 1\ntargets: [{model: m, runtime: sim, hardware: cpu}]\nload: {profile: poisson, rate: .nan}\nsampling: {max_tokens: 8}\n")
	f.Add("name: n\ndataset: 1\ntargets: [{model: m, runtime: sim, hardware: cpu}]\nload: {profile: sequential}\nsampling: {max_tokens: 8, temperature: .inf, top_p: -.inf}\n")
	f.Add("name: \"a\\0b\"\ndataset: 1\ntargets: [{model: \"--x\", runtime: sim, hardware: cpu}]\nload: {profile: sequential}\nsampling: {max_tokens: 8, stop: [\"\\0\"]}\n")
	f.Add(`{"name":"j","dataset":"GSM8K test","targets":[{"model":"m","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":16}}`)
	f.Add("load: {profile: sweep, concurrency: 64, steps: 5}\nslo: {tpot: 50ms}\n")
	f.Add("name: n\ndataset: 1\ntargets: [{model: m/a, runtime: sim, hardware: cpu}]\nload: {profile: sequential}\nsampling: {max_tokens: 8}\n" +
		"scorer: judge\nscorer_options: {judge: {model: m/j, runtime: sim, hardware: cpu, template: \"Q {{question}} A {{answer}}\", scale: {min: 1, max: 10}}}\n")
	f.Add(`{"name":"j","dataset":1,"targets":[{"model":"m","runtime":"sim","hardware":"c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":1},` +
		`"scorer":"judge","scorer_options":{"judge":{"model":"m","runtime":"sim","hardware":"c","rubric":"custom","template":"{{answer}} {{ctx}"}}}`)
	f.Fuzz(func(t *testing.T, in string) {
		m, err := Decode(strings.NewReader(in))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		errs := m.Validate()
		for _, fe := range errs {
			if fe.Message == "" {
				t.Fatalf("a validation error without a message at %q", fe.Path)
			}
		}
		if len(errs) > 0 {
			return
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("a valid manifest cannot be written as JSON: %v", err)
		}
		if b, _ := json.Marshal(m); bytes.Contains(b, []byte(`\u0000`)) {
			t.Fatalf("a valid manifest carries a NUL character: %s", b)
		}
		for _, tg := range m.Targets {
			if jobs.CheckModelName(tg.Model) != nil {
				t.Fatalf("a valid manifest names model %q", tg.Model)
			}
		}
		if m.ScorerOptions != nil && m.ScorerOptions.Judge != nil {
			j := m.ScorerOptions.Judge
			if m.Scorer != ScorerJudge || jobs.CheckModelName(j.Model) != nil {
				t.Fatalf("a valid manifest's judge: scorer %q, model %q", m.Scorer, j.Model)
			}
			if j.Template != "" && judge.CheckTemplate(judge.Single, j.Template) != nil {
				t.Fatalf("a valid manifest's judge template is refused: %q", j.Template)
			}
			if lo, hi := j.Bounds(); lo >= hi {
				t.Fatalf("a valid manifest's judge scale %d..%d", lo, hi)
			}
		}
	})
}
