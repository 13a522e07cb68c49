//go:build e2e

package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// A user adds a webhook on the Settings page; when their benchmark
// finishes, a real receiver gets the event signed with the secret and the
// page's delivery log says it was delivered; on the run's page the
// results verify as signed.
func TestWebhookAndVerifiedResultsInTheBrowser(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t, "RUCKUS_WEBHOOK_ALLOWED_NETWORKS=127.0.0.0/8")
	ex := expect(t)
	var mu sync.Mutex
	var got []*http.Request
	var bodies [][]byte
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got, bodies = append(got, r), append(bodies, b)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()
	const secret = "the e2e webhook secret"

	page := newPage(t, 1280, 800)
	signIn(t, page, s.URL, adminEmail, adminPassword)
	_, err := page.Goto(s.URL + "/settings")
	must(t, err)
	form := page.GetByTestId("webhook-form")
	must(t, form.GetByLabel("URL").Fill(recv.URL+"/ruckus"))
	must(t, form.GetByLabel("Secret").Fill(secret))
	must(t, form.GetByLabel("benchmark.finished").Check())
	must(t, page.GetByTestId("create-webhook").Click())
	must(t, ex.Locator(page.GetByTestId("webhook-saved")).ToContainText("/ruckus added"))
	must(t, ex.Locator(page.Locator(`[data-testid="webhooks"] tbody tr`)).ToHaveCount(1))
	axeCheck(t, page, "settings-webhooks", "desktop")

	// A benchmark run by a sim agent, through the API.
	profile := startAgent(t, s, "e2e-ops", "--sim-ttft", "const:10ms", "--sim-itl", "const:2ms", "--sim-output-tokens", "const:8")
	api := newAPIClient(t, s)
	var model struct {
		ID int64 `json:"model_id"`
	}
	api.postJSON("/api/v1/models", map[string]any{"name": "acme/ops-1b", "params_b": 1, "quantization": "bf16", "context_length": 4096}, http.StatusCreated, &model)
	var items strings.Builder
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&items, "{\"id\":\"q%02d\",\"prompt\":\"What is %d plus %d?\",\"reference\":\"%d\"}\n", i, i, i, 2*i)
	}
	dsID := api.uploadDataset("Ops sums", "sums.jsonl", items.String())
	var created struct {
		ID int64 `json:"benchmark_id"`
	}
	api.postJSON("/api/v1/benchmarks", map[string]any{"name": "Ops", "dataset": dsID,
		"targets": []map[string]string{{"model": "acme/ops-1b", "runtime": "sim", "hardware": profile}},
		"load":    map[string]any{"profile": "concurrency", "concurrency": 4}, "sampling": map[string]any{"max_tokens": 8}, "scorer": "contains"},
		http.StatusCreated, &created)

	waitUntil(t, 2*time.Minute, "the webhook to be delivered", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0, fmt.Sprintf("%d requests received", len(got))
	})
	mu.Lock()
	r, body := got[0], bodies[0]
	mu.Unlock()
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	var ev struct {
		Event     string `json:"event"`
		Benchmark struct {
			ID int64 `json:"id"`
		} `json:"benchmark"`
	}
	if r.Header.Get("X-Ruckus-Signature") != "sha256="+hex.EncodeToString(m.Sum(nil)) || json.Unmarshal(body, &ev) != nil ||
		ev.Event != "benchmark.finished" || ev.Benchmark.ID != created.ID || r.URL.Path != "/ruckus" {
		t.Fatalf("received %s %s %v: %s", r.Method, r.URL, r.Header, body)
	}

	_, err = page.Reload()
	must(t, err)
	must(t, ex.Locator(page.GetByTestId("delivery-state").First()).ToHaveText("delivered"))
	must(t, ex.Locator(page.GetByTestId("delivery-attempts").First()).ToHaveText("1"))
	screenshot(t, page, "settings-webhooks-desktop")

	var b struct {
		Runs []apiRun `json:"runs"`
	}
	must(t, json.Unmarshal(api.call(http.MethodGet, fmt.Sprintf("/api/v1/benchmarks/%d", created.ID), "", nil, http.StatusOK), &b))
	_, err = page.Goto(fmt.Sprintf("%s/runs/%d", s.URL, b.Runs[0].ID))
	must(t, err)
	must(t, page.GetByTestId("verify-run").Click())
	must(t, ex.Locator(page.GetByTestId("attestation-state")).ToContainText("intact", playwright.LocatorAssertionsToContainTextOptions{Timeout: playwright.Float(20000)}))
	must(t, ex.Locator(page.GetByTestId("attestation-state")).ToContainText("The 12 result rows are as they were signed"))
	axeCheck(t, page, "run-integrity", "desktop")
	screenshot(t, page, "run-integrity-desktop")
}
