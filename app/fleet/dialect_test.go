package fleet

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// The fleet benchmarking document's example manifest, copied as written
// (testdata/document-example.json) and as YAML.
func TestDocumentExampleDecodes(t *testing.T) {
	for _, file := range []string{"testdata/document-example.json", "testdata/document-example.yaml"} {
		t.Run(file, func(t *testing.T) {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := Decode(f)
			if err != nil {
				t.Fatal(err)
			}
			if errs := m.Validate(); len(errs) > 0 {
				t.Fatalf("the document's example: %v", errs)
			}
			if m.Name != "agentics-fleet-2025" || m.Version != "1.0" || m.Description != "Production Agentics system benchmark" {
				t.Fatalf("fleet: %q %q %q", m.Name, m.Version, m.Description)
			}
			if len(m.Scenarios) != 2 {
				t.Fatalf("scenarios: %+v", m.Scenarios)
			}
			coding, reasoning := m.Scenarios[0], m.Scenarios[1]
			if coding.Key() != "test-bench/coding" || coding.Dataset.Name != "coding-tasks.json" ||
				!reflect.DeepEqual(coding.Load, jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 5, MaxRequests: 100}) ||
				coding.Sampling.MaxTokens != DocMaxTokens {
				t.Errorf("coding: %+v", coding)
			}
			// No profile: the native adapter's dataset named after the
			// scenario, one request at a time, every item.
			if reasoning.Key() != "test-bench/reasoning" || reasoning.Dataset.Name != "reasoning" ||
				!reflect.DeepEqual(reasoning.Load, jobs.LoadProfile{Profile: jobs.LoadSequential}) {
				t.Errorf("reasoning: %+v", reasoning)
			}
			want := []Target{{Model: "gpt-4", Runtime: "openai", Hardware: "cpu", Provider: "openai"},
				{Model: "claude-3-opus", Runtime: "anthropic", Hardware: "cpu", Provider: "anthropic"}}
			for i, tg := range want {
				if m.Targets[i] != tg {
					t.Errorf("providers[%d] = %+v, want %+v", i, m.Targets[i], tg)
				}
			}
			if m.Output == nil || m.Output.BaseDir != "./fleet-results" || !m.WantsFormat(FormatHTML) || !m.WantsFormat(FormatCSV) {
				t.Errorf("output: %+v", m.Output)
			}
		})
	}
}

func readExample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/document-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Errors in the document's dialect name its own paths.
func TestDocumentDialectErrorsNameItsPaths(t *testing.T) {
	example := readExample(t)
	cases := []struct {
		name, from, to, path, msg string
	}{
		{"fleet id", "fleet_id: agentics-fleet-2025", "fleet_id: Agentics Fleet", "fleet_id", "lower-case letters"},
		{"adapter", "adapter: native", "adapter: generic", "repositories[0].adapter", `adapter "generic": the adapters are native`},
		{"no repo id", "repo_id: test-bench", "repo_id: ''", "repositories[0].repo_id", "give the repository an id"},
		{"repo id", "repo_id: test-bench", "repo_id: '=x'", "repositories[0].repo_id", "letters, digits"},
		{"scenario name", "scenarios: [coding, reasoning]", "scenarios: [coding, '=cmd']", "repositories[0].scenarios[1]", "letters, digits"},
		{"no scenarios", "scenarios: [coding, reasoning]", "scenarios: []", "repositories[0].scenarios", "list at least one scenario"},
		{"duplicate scenario", "scenarios: [coding, reasoning]", "scenarios: [coding, Coding]", "repositories[0].scenarios[1]", "the same name"},
		{"concurrency", "concurrency: 5", "concurrency: 5000", "scenario_profiles.coding.concurrency", "between 1 and 4096"},
		{"num examples", "num_examples: 100", "num_examples: -1", "scenario_profiles.coding.num_examples", "cannot be negative"},
		{"max tokens", "num_examples: 100", "num_examples: 100\n    max_tokens: -3", "scenario_profiles.coding.max_tokens", "between 1 and 1000000"},
		{"scorer", "num_examples: 100", "num_examples: 100\n    scorer: vibes", "scenario_profiles.coding.scorer", "must be one of"},
		{"provider", `"anthropic:claude-3-opus"`, `"google:gemini-pro"`, "providers[1]", `unknown provider "google"`},
		{"no providers", `providers: ["openai:gpt-4", "anthropic:claude-3-opus"]`, "providers: []", "providers", "add at least one"},
		{"format", "formats: [json, csv, html]", "formats: [json, pdf]", "output.formats[1]", "json, csv or html"},
		{"unused profile", "  coding:\n", "  codng:\n", "scenario_profiles.codng", `no repository lists a scenario "codng"`},
		{"no repositories", "repositories:\n  - repo_id: test-bench\n    path: .\n    adapter: native\n    scenarios: [coding, reasoning]\n", "repositories: []\n", "repositories", "add at least one repository"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(example, c.from) {
				t.Fatalf("the example has no %q", c.from)
			}
			m, err := Decode(strings.NewReader(strings.Replace(example, c.from, c.to, 1)))
			if err != nil {
				t.Fatal(err)
			}
			errs := m.Validate()
			for _, e := range errs {
				if strings.HasPrefix(e.Path, "scenarios") || strings.HasPrefix(e.Path, "targets") || e.Path == "name" {
					t.Errorf("a path of Ruckus's dialect: %v", e)
				}
				if e.Path == c.path && strings.Contains(e.Message, c.msg) {
					return
				}
			}
			t.Fatalf("want %s: …%s…, got %v", c.path, c.msg, errs)
		})
	}
}

func TestDocumentDialectRefusesUnknownFields(t *testing.T) {
	example := readExample(t)
	cases := map[string][2]string{
		"top":     {"version: \"1.0\"", "version: \"1.0\"\nowner: me"},
		"repo":    {"path: .", "path: .\n    branch: main"},
		"profile": {"concurrency: 5", "concurrency: 5\n    timeout: 30"},
		"output":  {"base_dir: ./fleet-results", "base_dir: ./fleet-results\n  compress: true"},
	}
	for name, c := range cases {
		_, err := Decode(strings.NewReader(strings.Replace(example, c[0], c[1], 1)))
		if err == nil || !strings.Contains(err.Error(), "unknown field") {
			t.Errorf("%s: want an unknown field error, got %v", name, err)
		}
	}
}

// Repositories group scenarios: the same scenario name in two
// repositories is two scenarios, with run ids of their own.
func TestDocumentRepositoriesGroupScenarios(t *testing.T) {
	example := strings.Replace(readExample(t), "    scenarios: [coding, reasoning]\n",
		"    scenarios: [coding, reasoning]\n  - repo_id: agents\n    path: ../agents\n    scenarios: [coding]\n", 1)
	m, err := Decode(strings.NewReader(example))
	if err != nil {
		t.Fatal(err)
	}
	if errs := m.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(m.Scenarios) != 3 || m.Scenarios[2].Key() != "agents/coding" || m.Scenarios[2].Dataset.Name != "coding-tasks.json" {
		t.Fatalf("%+v", m.Scenarios)
	}
	if RunID(m.Name, time.Unix(1767225600, 0), m.Scenarios[0].Key(), m.Targets[0]) == RunID(m.Name, time.Unix(1767225600, 0), m.Scenarios[2].Key(), m.Targets[0]) {
		t.Fatal("two repositories' scenarios share a run id")
	}
}

// A configured provider is known to the benchmark service's table only.
func TestValidateForProviderTable(t *testing.T) {
	example := strings.Replace(readExample(t), `"anthropic:claude-3-opus"`, `"together:meta-llama/Llama-3-8b-chat-hf"`, 1)
	m, err := Decode(strings.NewReader(example))
	if err != nil {
		t.Fatal(err)
	}
	if errs := m.Validate(); len(errs) != 1 || errs[0].Path != "providers[1]" {
		t.Fatalf("default table: %v", errs)
	}
	table, err := jobs.ReadProviders(strings.NewReader("providers:\n  together: {base_url: https://api.together.xyz/v1, api_key_env: TOGETHER_API_KEY, dialect: openai}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if errs := m.ValidateFor(table); len(errs) > 0 {
		t.Fatalf("with together: %v", errs)
	}
	if m.Targets[1].Runtime != "together" {
		t.Fatalf("runtime %q", m.Targets[1].Runtime)
	}
}

// A stored manifest (JSON, targets as written back) reads back the same.
func TestManifestJSONRoundTrip(t *testing.T) {
	m, err := Decode(strings.NewReader(readExample(t)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Manifest
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	back.normalize()
	back.doc = m.doc
	if !reflect.DeepEqual(back, m) {
		t.Fatalf("round trip:\n%+v\n%+v", back, m)
	}
	if err := json.Unmarshal([]byte(`{"targets":["no-colon"]}`), &back); err == nil {
		t.Fatal("a target string without a provider read")
	}
}
