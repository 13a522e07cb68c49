//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Variants in a browser: a base model, a fine-tune of it and a LoRA
// adapter on it (the registry's base model and adapter flag) benchmarked
// on one categorised dataset on the simulated runtime, the agent
// presenting a simulated GPU; the dataset page leads to the variants
// view, which puts them side by side with their deltas overall and per
// category. The run page shows the node's CPU and memory and the GPU
// charts labelled simulated. Screenshots at 1280 and 390 px
// (variants-desktop.png, variants-mobile.png, run-node-metrics-*.png),
// axe-core clean, nothing wider than the screen.
func TestVariantsViewAndNodeMetrics(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t, "RUCKUS_SIM_ACCURACY="+"acme/base-1b=0.4,acme/base-1b-sql=0.85,acme/base-1b-lora=0.45")
	profile := startAgent(t, s, "e2e-variants", "--sim-gpu", "NVIDIA A100-SXM4-80GB:80:1", "--sim-time-scale", "0.2")
	a := newAPIClient(t, s)
	var base struct {
		ID int64 `json:"model_id"`
	}
	a.postJSON("/api/v1/models", map[string]any{"name": "acme/base-1b", "params_b": 1, "quantization": "bf16", "context_length": 8192},
		http.StatusCreated, &base)
	var ignored map[string]any
	a.postJSON("/api/v1/models", map[string]any{"name": "acme/base-1b-sql", "params_b": 1, "quantization": "bf16", "context_length": 8192,
		"base_model_id": base.ID}, http.StatusCreated, &ignored)
	a.postJSON("/api/v1/models", map[string]any{"name": "acme/base-1b-lora", "params_b": 1, "quantization": "bf16", "context_length": 8192,
		"base_model_id": base.ID, "adapter": true}, http.StatusCreated, &ignored)

	var items strings.Builder
	for i := range 90 {
		cat := []string{"arithmetic", "geography", "history"}[i%3]
		fmt.Fprintf(&items, "{\"id\":\"q%02d\",\"prompt\":\"Question %d about %s?\",\"reference\":\"answer %d\",\"category\":%q}\n", i, i, cat, i, cat)
	}
	dsID := a.uploadDataset("Mixed questions", "mixed.jsonl", items.String())
	var created struct {
		ID   int64 `json:"benchmark_id"`
		Runs []struct {
			ID int64 `json:"run_id"`
		} `json:"runs"`
	}
	targets := []map[string]string{}
	for _, m := range []string{"acme/base-1b", "acme/base-1b-sql", "acme/base-1b-lora"} {
		targets = append(targets, map[string]string{"model": m, "runtime": "sim", "hardware": profile})
	}
	a.postJSON("/api/v1/benchmarks", map[string]any{
		"name": "Variants", "dataset": dsID, "targets": targets, "scorer": "exact",
		"load": map[string]any{"profile": "concurrency", "concurrency": 4}, "sampling": map[string]any{"max_tokens": 16},
	}, http.StatusCreated, &created)
	for _, r := range created.Runs {
		waitUntil(t, 3*time.Minute, "the runs to be scored", func() (bool, string) {
			var run struct {
				State   string   `json:"state"`
				Quality *float64 `json:"quality"`
			}
			must(t, json.Unmarshal(a.call(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", r.ID), "", nil, http.StatusOK), &run))
			return run.State == "completed" && run.Quality != nil, run.State
		})
	}

	ex := expect(t)
	desk := newPage(t, 1280, 800)
	signIn(t, desk, s.URL, adminEmail, adminPassword)
	_, err := desk.Goto(fmt.Sprintf("%s/datasets/%d", s.URL, dsID))
	must(t, err)
	must(t, desk.GetByTestId("variants-link").Click())
	must(t, ex.Locator(desk.GetByTestId("variants-family-acme/base-1b")).ToBeVisible())
	must(t, ex.Locator(desk.Locator(`[data-testid="variants-table"] tbody tr`)).ToHaveCount(3))
	must(t, ex.Locator(desk.Locator(`[data-testid="variants-categories"] tbody tr`)).ToHaveCount(3))
	must(t, ex.Locator(desk.GetByTestId("variant-kind").Nth(1)).ToHaveText("fine-tune of acme/base-1b"))
	must(t, ex.Locator(desk.GetByTestId("variant-kind").Nth(2)).ToHaveText("LoRA adapter on acme/base-1b"))
	variants := strings.TrimPrefix(desk.URL(), s.URL)

	// The base model's run: the node's CPU and memory, GPU charts
	// simulated from the load.
	run := fmt.Sprintf("/runs/%d", created.Runs[0].ID)
	_, err = desk.Goto(s.URL + run)
	must(t, err)
	must(t, ex.Locator(desk.GetByTestId("run-node")).ToContainText("Node over"))
	must(t, ex.Locator(desk.GetByTestId("chart-node-cpu")).ToBeVisible())
	must(t, ex.Locator(desk.GetByTestId("chart-gpu-util")).ToContainText("simulated from the load"))

	mobile := newPage(t, 390, 844)
	signIn(t, mobile, s.URL, adminEmail, adminPassword)
	pages := map[string]string{"variants": variants, "run-node-metrics": run}
	auditPages(t, desk, s.URL, pages, "desktop")
	auditPages(t, mobile, s.URL, pages, "mobile")
}
