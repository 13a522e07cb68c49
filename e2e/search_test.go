//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// A budgeted search through the whole system: `ruckus serve` (whose
// reaper decides the rungs), a simulated agent that launches a simulated
// runtime per run with the run's engine settings, and the API. Three
// max_num_seqs at eight requests in flight: 1 and 2 queue requests past
// the TTFT SLO, so the search keeps 8, and its record is on the
// benchmark's page.
func TestSearchThroughTheServer(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t)
	a := newAPIClient(t, s)
	profile := startAgent(t, s, "e2e-search", "--sim-ttft", "const:5ms", "--sim-itl", "const:2ms", "--sim-output-tokens", "const:16")
	var model struct {
		ID int64 `json:"model_id"`
	}
	// The search ranks goodput per dollar as the configurations page does:
	// the profile needs a price.
	a.call(http.MethodPut, "/api/v1/hardware/"+profile+"/price", "application/json", strings.NewReader(`{"price_per_hour":1}`), http.StatusOK)
	a.postJSON("/api/v1/models", map[string]any{"name": "acme/search-1b", "params_b": 1, "quantization": "bf16", "context_length": 4096}, http.StatusCreated, &model)
	var items strings.Builder
	for i := range 48 {
		fmt.Fprintf(&items, "{\"prompt\":\"question %d\"}\n", i)
	}
	ds := a.uploadDataset("Search prompts", "q.jsonl", items.String())
	var created struct {
		ID int64 `json:"benchmark_id"`
	}
	a.postJSON("/api/v1/benchmarks", map[string]any{"name": "Which max_num_seqs?", "dataset": ds,
		"targets": []map[string]any{{"model": "acme/search-1b", "runtime": "sim", "hardware": profile,
			"matrix": map[string]any{"max_num_seqs": []int{1, 2, 8}}}},
		"load": map[string]any{"profile": "concurrency", "concurrency": 8}, "sampling": map[string]any{"max_tokens": 16},
		"slo": map[string]any{"ttft": "40ms"}, "search": map[string]any{"budget_runs": 5}}, http.StatusCreated, &created)

	type record struct {
		Best string `json:"best"`
		Done bool   `json:"done"`
		Cuts []struct {
			Keep     int `json:"keep"`
			Verdicts []struct {
				Config    string  `json:"configuration"`
				PerDollar float64 `json:"goodput_per_dollar"`
				Requests  int     `json:"requests"`
			} `json:"verdicts"`
		} `json:"cuts"`
	}
	var b struct {
		Runs   []apiRun `json:"runs"`
		Search record   `json:"search"`
	}
	waitUntil(t, 3*time.Minute, "the search to end", func() (bool, string) {
		must(t, json.Unmarshal(a.call(http.MethodGet, fmt.Sprintf("/api/v1/benchmarks/%d", created.ID), "", nil, http.StatusOK), &b))
		return b.Search.Done, fmt.Sprintf("%d runs, %d rungs decided", len(b.Runs), len(b.Search.Cuts))
	})
	for _, c := range b.Search.Cuts {
		for _, v := range c.Verdicts {
			t.Logf("keep %d: %s, %d requests, %.0f good requests per dollar", c.Keep, v.Config, v.Requests, v.PerDollar)
		}
	}
	if len(b.Runs) != 5 || len(b.Search.Cuts) != 2 || !strings.HasSuffix(b.Search.Best, "max_num_seqs=8") {
		t.Fatalf("%d runs, record %+v: want 5 runs, 2 rungs and max_num_seqs=8 chosen", len(b.Runs), b.Search)
	}
	// Rung 0: three runs of 16 requests, rung 1: two of 24, against three
	// of 48 in full.
	sent := 0
	for _, r := range b.Runs {
		sent += r.Total
	}
	if sent != 96 {
		t.Errorf("the search sent %d requests, want 96 (the grid: 144)", sent)
	}

	page := newPage(t, 1280, 900)
	signIn(t, page, s.URL, adminEmail, adminPassword)
	_, err := page.Goto(fmt.Sprintf("%s/benchmarks/%d", s.URL, created.ID))
	must(t, err)
	ex := expect(t)
	must(t, ex.Locator(page.GetByTestId("search-best")).ToContainText("max_num_seqs=8"))
	must(t, ex.Locator(page.GetByTestId("search-verdict")).ToHaveCount(5))
	screenshot(t, page, "search-benchmark")
	_, err = page.GetByTestId("search").Screenshot(playwright.LocatorScreenshotOptions{Path: playwright.String(filepath.Join(screenshotDir, "search-record.png"))})
	must(t, err)
	docsImage(t, "search-record", "search")
}
