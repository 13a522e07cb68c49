//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// Two configurations of one model on the simulated runtime that differ
// only in engine settings — a batch cap of 2 against 16 under 8
// concurrent requests, so the first queues past its SLO — read as a
// person would: the benchmark page links its configurations, the page
// ranks the batch of 16 first with its settings, marks the Pareto front,
// tests the lead, and opens the capacity planner on the winner; at both
// widths, with axe-core clean (screenshots configurations-desktop and
// configurations-mobile).
func TestBestConfigurationPage(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t)
	profile := startAgent(t, s, "e2e-configs", "--sim-ttft", "const:30ms", "--sim-itl", "const:4ms", "--sim-output-tokens", "const:16")
	a := newAPIClient(t, s)
	var model struct {
		ID int64 `json:"model_id"`
	}
	a.postJSON("/api/v1/models", map[string]any{"name": "acme/small-1b", "params_b": 1, "quantization": "bf16", "context_length": 8192},
		http.StatusCreated, &model)
	must(t, s.Store.SetHardwarePrice(t.Context(), profile, ptr(1.5)))
	var items strings.Builder
	for i := 1; i <= 48; i++ {
		fmt.Fprintf(&items, "{\"id\":\"q%03d\",\"prompt\":\"What is %d plus %d?\",\"reference\":\"%d\"}\n", i, i, i, 2*i)
	}
	dsID := a.uploadDataset("Sums for configurations", "sums.jsonl", items.String())
	var created struct {
		ID   int64 `json:"benchmark_id"`
		Runs []struct {
			ID int64 `json:"run_id"`
		} `json:"runs"`
	}
	// One target expanded by a matrix into its two configurations
	// (docs/benchmarks.md#configuration-matrix).
	a.postJSON("/api/v1/benchmarks", map[string]any{
		"name":    "Which batch cap",
		"dataset": dsID,
		"targets": []map[string]any{{"model": "acme/small-1b", "runtime": "sim", "hardware": profile,
			"matrix": map[string]any{"max_num_seqs": []int{2, 16}}}},
		"load":     map[string]any{"profile": "concurrency", "concurrency": 8},
		"sampling": map[string]any{"max_tokens": 16},
		"slo":      map[string]any{"e2e": "200ms"},
	}, http.StatusCreated, &created)
	if len(created.Runs) != 2 {
		t.Fatalf("created %+v", created)
	}
	var cfg map[string]any
	waitUntil(t, 3*time.Minute, "both configurations to finish and be ranked", func() (bool, string) {
		cfg = map[string]any{}
		must(t, json.Unmarshal(a.call(http.MethodGet, fmt.Sprintf("/api/v1/benchmarks/%d/configurations", created.ID), "", nil, http.StatusOK), &cfg))
		ranked, _ := cfg["ranked"].([]any)
		return cfg["pending"] == false && len(ranked) == 2, fmt.Sprintf("pending %v, %d ranked, left out %v", cfg["pending"], len(ranked), cfg["left_out"])
	})
	win := cfg["ranked"].([]any)[0].(map[string]any)
	if fmt.Sprint(win["engine"]) != "map[max_num_seqs:16]" {
		t.Errorf("winner %v, want max_num_seqs 16: %v", win, cfg)
	}
	if lead, _ := cfg["lead"].(map[string]any); lead == nil || lead["test"] != "t-log-goodput-per-dollar" || lead["p"] == nil {
		t.Errorf("the winner's lead is not tested: %v", cfg["lead"])
	}
	raw, _ := json.MarshalIndent(cfg, "", "  ")
	t.Logf("GET /api/v1/benchmarks/%d/configurations:\n%s", created.ID, raw)

	bench := fmt.Sprintf("/benchmarks/%d", created.ID)
	for _, w := range []struct {
		name          string
		width, height int
	}{{"desktop", 1280, 900}, {"mobile", 390, 844}} {
		page := newPage(t, w.width, w.height)
		signIn(t, page, s.URL, adminEmail, adminPassword)
		auditPages(t, page, s.URL, map[string]string{"configurations": bench + "/configurations"}, w.name)
		if w.name != "desktop" {
			continue
		}
		docsImage(t, "configurations-desktop", "configurations")
		_, err := page.Goto(s.URL + bench)
		must(t, err)
		must(t, page.Locator(`[data-testid="verdict-configurations"]`).Click())
		must(t, page.WaitForURL("**"+bench+"/configurations"))
		rows := page.Locator(`[data-testid="configuration-row"]`)
		if n, err := rows.Count(); err != nil || n != 2 {
			t.Fatalf("%d configuration rows (%v)", n, err)
		}
		first, err := rows.First().Locator(`[data-testid="configuration-engine"]`).InnerText()
		must(t, err)
		rec, err := page.Locator(`[data-testid="configurations-recommendation"]`).InnerText()
		must(t, err)
		basis, err := page.Locator(`[data-testid="configurations-basis"]`).InnerText()
		must(t, err)
		if first != "max_num_seqs=16" || !strings.Contains(rec, "max_num_seqs=16") || !strings.Contains(basis, "Welch") {
			t.Errorf("first %q, recommendation %q, basis %q", first, rec, basis)
		}
		if n, err := page.Locator(`[data-testid="configuration-front"] .badge`).Count(); err != nil || n < 1 {
			t.Errorf("no configuration on the Pareto front (%v)", err)
		}
		must(t, page.Locator(`[data-testid="configurations-plan"]`).Click())
		must(t, page.WaitForURL("**/capacity?**", playwright.PageWaitForURLOptions{}))
		note, err := page.Locator(`[data-testid="capacity-configuration"]`).InnerText()
		must(t, err)
		if !strings.Contains(note, "acme/small-1b") || !strings.Contains(note, "max_num_seqs=16") {
			t.Errorf("the planner opened on the winner says %q", note)
		}
	}
}
