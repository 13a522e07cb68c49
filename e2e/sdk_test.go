//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// sdkDir is the TypeScript SDK's package, generated from
// handlers/openapi.yaml.
const sdkDir = "../handlers/sdk/typescript"

// startSimRuntime runs `agentd sim` in the dialect given and returns its
// base URL.
func startSimRuntime(t *testing.T, dialect string) string {
	t.Helper()
	cmd := exec.Command(agentdBin, "sim", "--listen", "127.0.0.1:0", "--dialect", dialect,
		"--sim-ttft", "const:20ms", "--sim-itl", "const:4ms", "--sim-output-tokens", "const:12")
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	must(t, err)
	m := regexp.MustCompile(`serving on (http://\S+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("agentd sim said %q", line)
	}
	return m[1]
}

// npm runs an npm script in the SDK's package.
func npm(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("npm", args...)
	cmd.Dir = sdkDir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The TypeScript SDK against a live server: a fleet in the fleet
// document's dialect mixing OpenAI's API (agentd sim), Anthropic's
// Messages API (agentd sim --dialect anthropic, served by an agent with
// --provider anthropic) and a self-hosted target on the simulated runtime,
// submitted, waited for and read through the SDK (its test in
// handlers/sdk/typescript/test).
func TestTypeScriptSDKRunsAFleet(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the TypeScript SDK's test needs node 18 or later (and npm)")
	}
	if _, err := os.Stat(filepath.Join(sdkDir, "node_modules")); err != nil {
		npm(t, nil, "ci", "--no-audit", "--no-fund")
	}
	// Its types are those of the OpenAPI description as committed.
	npm(t, nil, "run", "check-generated")
	npm(t, nil, "run", "build")

	s := startServer(t)
	api := newAPIClient(t, s)
	ctx := context.Background()
	var items strings.Builder
	for i := range 6 {
		items.WriteString(`{"custom_id":"q` + string(rune('0'+i)) + `","prompt":"What is ` + string(rune('0'+i)) + ` plus 2?","reference":"` + string(rune('2'+i)) + `"}` + "\n")
	}
	api.uploadDataset("qa-small", "qa.jsonl", items.String())
	for _, name := range []string{"gpt-4o-mini", "claude-3-haiku", "Qwen/Qwen2.5-0.5B-Instruct"} {
		if _, err := s.Store.CreateModel(ctx, store.ModelFields{Name: name, ParamsB: 0.5, Quantization: "bf16", ContextLength: 8192}); err != nil {
			t.Fatal(err)
		}
	}
	must(t, s.Store.SetProviderPrice(ctx, store.ProviderPrice{Provider: "anthropic", Model: "claude-3-haiku", InputPer1M: 0.25, OutputPer1M: 1.25}))
	startAgent(t, s, "self-hosted")
	startAgent(t, s, "openai-remote", "--runtime", "openai", "--endpoint", startSimRuntime(t, "openai"))
	startAgent(t, s, "anthropic-remote", "--provider", "anthropic", "--endpoint", startSimRuntime(t, "anthropic"))

	manifest := filepath.Join(t.TempDir(), "fleet.json")
	must(t, os.WriteFile(manifest, []byte(`{
  "fleet_id": "sdk-mixed",
  "version": "1.0",
  "description": "OpenAI, Anthropic and a self-hosted model on one dataset",
  "repositories": [{"repo_id": "chat-app", "path": ".", "adapter": "native", "scenarios": ["qa"]}],
  "providers": ["openai:gpt-4o-mini", "anthropic:claude-3-haiku", {"model": "Qwen/Qwen2.5-0.5B-Instruct", "runtime": "sim", "hardware": "cpu"}],
  "scenario_profiles": {"qa": {"dataset": "qa-small", "concurrency": 2, "num_examples": 6, "max_tokens": 16}},
  "output": {"base_dir": "./fleet-results", "formats": ["json", "csv", "html"]}
}`), 0o600))

	out := npm(t, []string{"RUCKUS_URL=" + s.URL, "RUCKUS_TOKEN=" + api.token, "RUCKUS_FLEET_MANIFEST=" + manifest}, "test")
	t.Logf("npm test:\n%s", out)
	if !strings.Contains(out, "# pass 1") || !strings.Contains(out, "# fail 0") || strings.Contains(out, "# skipped 1") {
		t.Fatalf("the SDK's test did not pass:\n%s", out)
	}
	i := strings.Index(out, "SDK-REPORT ")
	if i < 0 {
		t.Fatal("the SDK's test printed no report")
	}
	var rep struct {
		Runs, Completed int
		Summary         struct {
			TotalTests     int      `json:"total_tests"`
			TotalSucceeded int      `json:"total_succeeded"`
			TotalCost      *float64 `json:"total_cost"`
		}
		Providers []struct {
			Provider         string
			Tests, Succeeded int
			Cost             *float64
		}
	}
	line, _, _ := strings.Cut(out[i+len("SDK-REPORT "):], "\n")
	must(t, json.Unmarshal([]byte(line), &rep))
	providers := map[string]int{}
	for _, p := range rep.Providers {
		providers[p.Provider] = p.Succeeded
	}
	// Three runs of six tests, every one answered; only the anthropic runs
	// are priced (per token), so the fleet's cost is theirs.
	if rep.Runs != 3 || rep.Completed != 3 || rep.Summary.TotalTests != 18 || rep.Summary.TotalSucceeded != 18 ||
		providers["openai"] != 6 || providers["anthropic"] != 6 || providers["sim"] != 6 || rep.Summary.TotalCost == nil || *rep.Summary.TotalCost <= 0 {
		t.Fatalf("report: %s", line)
	}
}
