package fleet

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

const goodManifest = `
name: nightly-small
scenarios:
  - name: gsm8k c8
    dataset: gsm8k-test
    load: {profile: concurrency, concurrency: 8, max_requests: 50}
    sampling: {temperature: 0, max_tokens: 256}
    scorer: numeric
  - name: chat-poisson
    dataset: 7
    load: {profile: poisson, rate: 2}
    sampling: {max_tokens: 128}
targets:
  - {model: Qwen/Qwen2.5-0.5B-Instruct, runtime: sim, hardware: cpu}
  - openai:gpt-4o-mini
`

func TestDecodeReadsLocalAndRemoteTargets(t *testing.T) {
	m, err := Decode(strings.NewReader(goodManifest))
	if err != nil {
		t.Fatal(err)
	}
	if errs := m.Validate(); len(errs) > 0 {
		t.Fatalf("valid manifest: %v", errs)
	}
	if len(m.Scenarios) != 2 || m.Scenarios[0].Dataset.Name != "gsm8k-test" || m.Scenarios[1].Dataset.ID != 7 {
		t.Fatalf("scenarios: %+v", m.Scenarios)
	}
	want := []Target{{Model: "Qwen/Qwen2.5-0.5B-Instruct", Runtime: "sim", Hardware: "cpu"},
		{Model: "gpt-4o-mini", Runtime: "openai", Hardware: "cpu", Provider: "openai"}}
	for i, tg := range want {
		if m.Targets[i] != tg {
			t.Errorf("targets[%d] = %+v, want %+v", i, m.Targets[i], tg)
		}
	}
	// remote_hardware moves the remote targets, and the string form
	// survives a round trip through the stored JSON.
	m, err = Decode(strings.NewReader(strings.Replace(goodManifest, "name: nightly-small", "name: nightly-small\nremote_hardware: edge-box", 1)))
	if err != nil || m.Targets[1].Hardware != "edge-box" || m.Targets[0].Hardware != "cpu" {
		t.Fatalf("remote hardware: %+v %v", m.Targets, err)
	}
	b, err := m.Targets[1].MarshalJSON()
	if err != nil || string(b) != `"openai:gpt-4o-mini"` {
		t.Fatalf("remote target JSON: %s %v", b, err)
	}
	// A model name with a colon of its own keeps it.
	m, err = Decode(strings.NewReader(strings.Replace(goodManifest, "openai:gpt-4o-mini", "openai:llama3.2:1b", 1)))
	if err != nil || m.Targets[1].Model != "llama3.2:1b" || m.Targets[1].Provider != "openai" {
		t.Fatalf("colon in model: %+v %v", m.Targets, err)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	cases := []struct {
		name, from, to, path, msg string
	}{
		{"fleet name", "name: nightly-small", "name: Nightly Small", "name", "lower-case letters, digits and hyphens"},
		{"no name", "name: nightly-small", "name: ''", "name", "give it a name"},
		{"unknown provider", "openai:gpt-4o-mini", "groq:llama-3", "targets[1]", `unknown provider "groq": the remote providers are anthropic, openai`},
		{"bad runtime", "runtime: sim", "runtime: magic", "targets[0].runtime", "must be one of sim, openai"},
		{"bad model", "model: Qwen/Qwen2.5-0.5B-Instruct", "model: '-rf'", "targets[0].model", "is not a model id"},
		{"bad hardware", "hardware: cpu}", "hardware: 'a b'}", "targets[0].hardware", "a hardware profile"},
		{"duplicate target", "  - openai:gpt-4o-mini", "  - openai:gpt-4o-mini\n  - openai:gpt-4o-mini", "targets[2]", "the same target as targets[1]"},
		{"duplicate scenario", "name: chat-poisson", "name: GSM8K C8", "scenarios[1].name", "the same name as scenarios[0]"},
		{"scenario name", "name: chat-poisson", "name: '=cmd'", "scenarios[1].name", "letters, digits, spaces"},
		{"scenario load", "rate: 2", "rate: 0", "scenarios[1].load.rate", "a rate above 0"},
		{"scenario sampling", "max_tokens: 128", "max_tokens: 0", "scenarios[1].sampling.max_tokens", "between 1 and 1000000"},
		{"scenario scorer", "scorer: numeric", "scorer: vibes", "scenarios[0].scorer", "must be one of"},
		{"temperature above Anthropic's", "sampling: {temperature: 0, max_tokens: 256}\n", "sampling: {temperature: 1.5, max_tokens: 256}\n",
			"scenarios[0].sampling.temperature", "above 1, the most Anthropic's Messages API takes (targets[1] is anthropic:claude-3-haiku)"},
		{"scenario dataset", "dataset: 7", "dataset: ''", "scenarios[1].dataset", "choose a dataset"},
		{"no targets", "targets:\n  - {model: Qwen/Qwen2.5-0.5B-Instruct, runtime: sim, hardware: cpu}\n  - openai:gpt-4o-mini\n", "targets: []\n", "targets", "add at least one target"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(goodManifest, c.from) {
				t.Fatalf("the manifest has no %q", c.from)
			}
			in := strings.Replace(goodManifest, c.from, c.to, 1)
			if strings.Contains(c.msg, "Anthropic") {
				in = strings.Replace(in, "openai:gpt-4o-mini", "anthropic:claude-3-haiku", 1)
			}
			m, err := Decode(strings.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			errs := m.Validate()
			for _, e := range errs {
				if e.Path == c.path && strings.Contains(e.Message, c.msg) {
					return
				}
			}
			t.Fatalf("want %s: …%s…, got %v", c.path, c.msg, errs)
		})
	}
}

func TestValidateBoundsTheFleet(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: big\nscenarios:\n")
	for i := range 11 {
		b.WriteString("  - {name: s" + string(rune('a'+i)) + ", dataset: 1, load: {profile: sequential}, sampling: {max_tokens: 8}}\n")
	}
	b.WriteString("targets:\n")
	for i := range 20 {
		b.WriteString("  - openai:m" + string(rune('a'+i)) + "\n")
	}
	m, err := Decode(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	errs := m.Validate()
	if len(errs) != 1 || errs[0].Path != "targets" || !strings.Contains(errs[0].Message, "220 runs; at most 200") {
		t.Fatalf("220 runs: %v", errs)
	}
}

// goTypeName matches a Go type name such as fleet.Manifest, which no
// message may show.
var goTypeName = regexp.MustCompile(`[a-z]+\.[A-Z][A-Za-z]+`)

func TestDecodeRejects(t *testing.T) {
	cases := map[string]string{
		"":                        "the fleet manifest is empty",
		"name: x\nscenario: []\n": `scenario: unknown field "scenario" (line 2)`,
		"name: x\nscenarios: [{name: s, load: {concurrency: many}}]\n": `scenarios[0].load.concurrency: must be a whole number (got "many")`,
		"name: [x]\n": "name: must be text (got a list)",
		"name: x\ntargets: [{model: m, gpu: a100}]\n": "field gpu not found in a target",
		"name: x\ntargets: [gpt-4o]\n":                "provider:model, such as openai:gpt-4o-mini",
		"name: x\ntargets: [[1]]\n":                   "a target is a mapping",
		"{":                                           "not valid YAML or JSON",
		strings.Repeat("#", MaxManifestBytes+1):       "larger than",
	}
	for in, want := range cases {
		_, err := Decode(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: want …%s…, got %v", in, want, err)
		}
		if err != nil && (goTypeName.MatchString(err.Error()) || strings.Contains(err.Error(), "type ")) {
			t.Errorf("%.40q: %v names a Go type", in, err)
		}
	}
}

func TestRunIDIsDeterministic(t *testing.T) {
	at := time.Date(2025, 12, 31, 23, 59, 58, 0, time.FixedZone("CET", 3600))
	tg := Target{Model: "gpt-4o-mini", Runtime: "openai", Hardware: "cpu", Provider: "openai"}
	id := RunID("nightly", at, "gsm8k", tg)
	// The hash is sha256("gsm8k\x00gpt-4o-mini\x00openai\x00cpu")[:6]:
	// printf 'gsm8k\0gpt-4o-mini\0openai\0cpu' | sha256sum
	if id != "nightly-20251231T225958Z-e279337b0ba4" {
		t.Fatalf("id %q", id)
	}
	if RunID("nightly", at.UTC(), "gsm8k", tg) != id {
		t.Fatal("the same submission in another zone gives another id")
	}
	seen := map[string]bool{id: true}
	for _, other := range []string{
		RunID("nightly", at, "gsm8k2", tg),
		RunID("nightly", at, "gsm8k", Target{Model: "gpt-4o-mini", Runtime: "openai", Hardware: "gpu"}),
		RunID("nightly", at.Add(time.Second), "gsm8k", tg),
		RunID("nightly2", at, "gsm8k", tg),
	} {
		if seen[other] {
			t.Fatalf("%s repeats", other)
		}
		seen[other] = true
	}
}

// FuzzDecode: whatever the bytes, decoding and validating neither panic
// nor accept a manifest whose names break their rules.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(goodManifest))
	f.Add([]byte(`{"name":"a","scenarios":[{"name":"s","dataset":1,"load":{"profile":"sequential"},"sampling":{"max_tokens":1}}],"targets":["openai:m"]}`))
	f.Add([]byte("name: x\ntargets: [':', 'openai:', {model: a}]\n"))
	if b, err := os.ReadFile("testdata/document-example.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("fleet_id: a\nrepositories: [{repo_id: r, scenarios: [s, s]}]\nproviders: ['anthropic:m']\nscenario_profiles: {s: {concurrency: -1}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		if errs := m.Validate(); len(errs) == 0 {
			if !fleetNamePattern.MatchString(m.Name) || len(m.Scenarios) == 0 || len(m.Targets) == 0 ||
				len(m.Scenarios)*len(m.Targets) > MaxRuns {
				t.Fatalf("accepted %+v", m)
			}
			for _, s := range m.Scenarios {
				if !scenarioNamePattern.MatchString(s.Name) {
					t.Fatalf("accepted scenario %q", s.Name)
				}
			}
			for _, tg := range m.Targets {
				if !hardwarePattern.MatchString(tg.Hardware) || tg.Runtime == "" {
					t.Fatalf("accepted target %+v", tg)
				}
			}
		}
	})
}
