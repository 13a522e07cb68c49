//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestAPIDocsShowOperations opens the API reference without signing in and
// sees the vendored viewer render operations from the server's own
// description, under the site's Content-Security-Policy (no violation, no
// script error).
func TestAPIDocsShowOperations(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t)
	page := newPage(t, 1280, 800)
	ex := expect(t)
	var mu sync.Mutex
	var problems []string
	page.On("console", func(m playwright.ConsoleMessage) {
		// A failed load is reported by the response handler below, with
		// its URL (the browser's own favicon request is not the page's).
		if m.Type() == "error" && !strings.HasPrefix(m.Text(), "Failed to load resource") {
			mu.Lock()
			problems = append(problems, m.Text())
			mu.Unlock()
		}
	})
	page.On("pageerror", func(err error) {
		mu.Lock()
		problems = append(problems, err.Error())
		mu.Unlock()
	})
	page.On("response", func(r playwright.Response) {
		if r.Status() >= 400 && !strings.HasSuffix(r.URL(), "/favicon.ico") {
			mu.Lock()
			problems = append(problems, fmt.Sprintf("%s: %d", r.URL(), r.Status()))
			mu.Unlock()
		}
	})
	_, err := page.Goto(s.URL + "/api/docs")
	must(t, err)
	// An operation's summary from openapi.yaml, and its path.
	must(t, ex.Locator(page.GetByText("Create a benchmark from a manifest").First()).ToBeVisible())
	must(t, ex.Locator(page.Locator(`[data-path="/benchmarks/{id}/recommendation"]`).First()).ToBeVisible())
	must(t, ex.Locator(page.GetByText("Ruckus API").First()).ToBeVisible())
	// Opening an operation shows its responses.
	must(t, page.GetByText("Create a benchmark from a manifest").First().Click())
	must(t, ex.Locator(page.GetByText("Created; its runs are queued.").First()).ToBeVisible())
	screenshot(t, page, "api-docs-desktop")
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		if strings.Contains(p, "Content Security Policy") || strings.Contains(p, "Content-Security-Policy") {
			t.Errorf("CSP violation: %s", p)
		} else {
			t.Errorf("browser error: %s", p)
		}
	}
}
