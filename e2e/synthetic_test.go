//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"
)

// A generated dataset on the tiny real runtime: every answer is as long as
// its item asked (the item's own max_tokens wins over the benchmark's), and
// the runtime's prompt token counts follow the requested input lengths.
// The tiny model's 512-token tokenizer splits the generator's words, which
// common tokenizers keep whole, so its counts are a multiple of the
// requested lengths: the test measures that ratio and the chat template's
// overhead by a least-squares fit, and checks every item against the fit.
func TestSyntheticLengthsOnOllama(t *testing.T) {
	ollama, gguf := realRuntime(t)
	ollamaEnv(t, ollama)
	base := startOllama(t, ollama)
	createOllamaModel(t, ollama, base, gguf)

	s := startServer(t)
	a := newAPIClient(t, s)
	profile := startAgent(t, s, "e2e-synthetic", "--runtime", "openai", "--endpoint", base, "--serves", "ollama")
	var model struct {
		ID int64 `json:"model_id"`
	}
	a.postJSON("/api/v1/models", map[string]any{"name": tinyModel, "display_name": "Tiny llama (random weights)",
		"family": "llama", "params_b": 0.00014, "quantization": "fp32", "context_length": 2048}, http.StatusCreated, &model)

	var ds struct {
		ID    int64 `json:"dataset_id"`
		Count int   `json:"count"`
	}
	a.postJSON("/api/v1/datasets/generate", map[string]any{"name": "synthetic lengths", "kind": "random", "count": 16, "seed": 11,
		"input": map[string]any{"dist": "uniform", "min": 16, "max": 160}, "output": map[string]any{"dist": "uniform", "min": 4, "max": 24}},
		http.StatusCreated, &ds)
	if ds.Count != 16 {
		t.Fatalf("generated %d items, want 16", ds.Count)
	}
	manifest := map[string]any{
		"name":     "synthetic lengths",
		"dataset":  ds.ID,
		"targets":  []map[string]string{{"model": tinyModel, "runtime": "ollama", "hardware": profile}},
		"load":     map[string]any{"profile": "concurrency", "concurrency": 4},
		"sampling": map[string]any{"temperature": 0, "max_tokens": 64},
	}
	var created struct {
		ID int64 `json:"benchmark_id"`
	}
	a.postJSON("/api/v1/benchmarks", manifest, http.StatusCreated, &created)
	var runID int64
	waitUntil(t, 3*time.Minute, "the run to finish", func() (bool, string) {
		var b struct {
			Runs []apiRun `json:"runs"`
		}
		must(t, json.Unmarshal(a.call(http.MethodGet, fmt.Sprintf("/api/v1/benchmarks/%d", created.ID), "", nil, http.StatusOK), &b))
		if len(b.Runs) != 1 {
			return false, "no run yet"
		}
		runID = b.Runs[0].ID
		switch b.Runs[0].State {
		case "completed":
			return true, ""
		case "failed", "cancelled":
			t.Fatalf("run %+v", b.Runs[0])
		}
		return false, b.Runs[0].State
	})

	rows, err := s.Store.Pool().Query(context.Background(), `SELECT r.custom_id, r.prompt_tokens, r.completion_tokens,
		(i.request->'synthetic'->>'input_tokens')::int, (i.request->'synthetic'->>'output_tokens')::int
		FROM results r JOIN runs u ON u.id = r.run_id JOIN benchmarks b ON b.id = u.benchmark_id
		JOIN dataset_items i ON i.dataset_id = b.dataset_id AND i.idx = r.idx WHERE r.run_id = $1 ORDER BY r.idx`, runID)
	must(t, err)
	type row struct {
		id              string
		prompt, out     int
		wantIn, wantOut int
	}
	var got []row
	for rows.Next() {
		var r row
		must(t, rows.Scan(&r.id, &r.prompt, &r.out, &r.wantIn, &r.wantOut))
		got = append(got, r)
	}
	must(t, rows.Err())
	if len(got) != 16 {
		t.Fatalf("%d results, want 16", len(got))
	}
	// Least squares: prompt_tokens ≈ slope × requested + overhead.
	var sx, sy, sxx, sxy float64
	for _, r := range got {
		if r.out != r.wantOut {
			t.Errorf("%s: %d output tokens, the item asked for %d", r.id, r.out, r.wantOut)
		}
		x, y := float64(r.wantIn), float64(r.prompt)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	n := float64(len(got))
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	overhead := (sy - slope*sx) / n
	worst := 0.0
	for _, r := range got {
		fit := slope*float64(r.wantIn) + overhead
		worst = math.Max(worst, math.Abs(float64(r.prompt)-fit)/fit)
	}
	t.Logf("prompt tokens ≈ %.3f × requested + %.1f (chat template); mean ratio prompt/requested %.3f; worst item off the fit by %.1f%%",
		slope, overhead, sy/sx, worst*100)
	// Stated tolerance: the ratio is the tokenizer's (1 on tokenizers that
	// keep the words whole, more on the tiny one's), and every item is
	// within 15 % of the fit.
	if slope < 0.9 || slope > 4 || worst > 0.15 {
		t.Errorf("prompt tokens do not follow the requested lengths: slope %.3f, worst %.1f%% off", slope, worst*100)
	}
}
