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

// A rate sweep on the simulated runtime, read as a person would: the run
// page's steps table and curves with the saturation point, and the
// capacity planner's answer for a traffic profile from that measurement,
// at both widths, with axe-core clean.
func TestSweepCurvesAndCapacityPlanner(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t)
	// 30 ms to the first token, 16 tokens 4 ms apart, at most 4 in the
	// sim's batch: latency climbs with the offered rate.
	profile := startAgent(t, s, "e2e-sweep", "--sim-ttft", "const:30ms", "--sim-itl", "const:4ms", "--sim-output-tokens", "const:16", "--sim-batch", "2")
	a := newAPIClient(t, s)
	var model struct {
		ID int64 `json:"model_id"`
	}
	a.postJSON("/api/v1/models", map[string]any{"name": "acme/small-1b", "params_b": 1, "quantization": "bf16", "context_length": 8192},
		http.StatusCreated, &model)
	must(t, s.Store.SetHardwarePrice(t.Context(), profile, ptr(1.5)))

	var items strings.Builder
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&items, "{\"id\":\"q%03d\",\"prompt\":\"What is %d plus %d?\",\"reference\":\"%d\"}\n", i, i, i, 2*i)
	}
	dsID := a.uploadDataset("Sums for a sweep", "sums.jsonl", items.String())
	var created struct {
		ID   int64 `json:"benchmark_id"`
		Runs []struct {
			ID int64 `json:"run_id"`
		} `json:"runs"`
	}
	a.postJSON("/api/v1/benchmarks", map[string]any{
		"name":     "Sweep",
		"dataset":  dsID,
		"targets":  []map[string]string{{"model": "acme/small-1b", "runtime": "sim", "hardware": profile}},
		"load":     map[string]any{"profile": "sweep", "concurrency": 8, "steps": 3},
		"sampling": map[string]any{"max_tokens": 16},
		"slo":      map[string]any{"ttft": "100ms", "e2e": "250ms"},
	}, http.StatusCreated, &created)
	if len(created.Runs) != 1 {
		t.Fatalf("created %+v", created)
	}
	run := created.Runs[0].ID
	waitUntil(t, 2*time.Minute, "the sweep to finish", func() (bool, string) {
		var r struct {
			State     string `json:"state"`
			Completed int    `json:"completed"`
		}
		must(t, json.Unmarshal(a.call(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", run), "", nil, http.StatusOK), &r))
		return r.State == "completed" || r.State == "failed" || r.State == "cancelled", fmt.Sprintf("%s, %d done", r.State, r.Completed)
	})
	var steps struct {
		Steps []map[string]any `json:"steps"`
	}
	must(t, json.Unmarshal(a.call(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d/steps", run), "", nil, http.StatusOK), &steps))
	if len(steps.Steps) < 3 {
		t.Fatalf("the sweep has %d steps, want at least 3: %v", len(steps.Steps), steps)
	}

	capacity := fmt.Sprintf("/capacity?dataset=%d&peak_rps=40&average_rps=12&input_tokens=64&output_tokens=16&ttft_ms=100&tpot_ms=50&e2e_ms=250", dsID)
	for _, w := range []struct {
		name          string
		width, height int
	}{{"desktop", 1280, 800}, {"mobile", 390, 844}} {
		page := newPage(t, w.width, w.height)
		signIn(t, page, s.URL, adminEmail, adminPassword)
		auditPages(t, page, s.URL, map[string]string{"sweep-curves": fmt.Sprintf("/runs/%d", run), "capacity": capacity}, w.name)
		if w.name != "desktop" {
			continue
		}
		// What the pages say, not only that they render.
		_, err := page.Goto(s.URL + fmt.Sprintf("/runs/%d", run))
		must(t, err)
		text, err := page.Locator("main").InnerText()
		must(t, err)
		for _, want := range []string{"sweep steps", "saturation between", "achieved vs offered rate"} {
			if !strings.Contains(strings.ToLower(text), want) {
				t.Errorf("the sweep's run page does not say %q:\n%.2000s", want, text)
			}
		}
		if n, err := page.Locator("main svg").Count(); err != nil || n < 4 {
			t.Errorf("the sweep's run page has %d charts (%v), want the curves", n, err)
		}
		_, err = page.Goto(s.URL + capacity)
		must(t, err)
		text, err = page.Locator("main").InnerText()
		must(t, err)
		if !strings.Contains(text, "acme/small-1b") || !strings.Contains(strings.ToLower(text), "replica") {
			t.Errorf("the capacity plan does not name the target and its replicas:\n%.2000s", text)
		}
	}
}

func ptr[T any](v T) *T { return &v }
