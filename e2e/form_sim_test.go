//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/dataset/starter"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/store"
)

// checkPage saves a screenshot of the page as it is, NAME-WIDTH.png, and
// runs axe-core's rules on it, failing on serious or critical violations.
func checkPage(t *testing.T, page playwright.Page, name, width string) {
	t.Helper()
	screenshot(t, page, name+"-"+width)
	axeCheck(t, page, name, width)
}

// The new-benchmark form builds two targets (the second row added with
// htmx), shows each model's size and memory need, takes the "quick check"
// preset and previews; launched on the simulated runtime over the starter
// summaries with the server's default accuracies (0.35 and 0.9), the two
// runs end with different qualities.
func TestFormAndSimulatedQuality(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t, "RUCKUS_SIM_ACCURACY="+"acme/small-1b=0.35,acme/large-8b=0.9")
	ctx := context.Background()
	ex := expect(t)
	profile := startAgent(t, s, "e2e-form-sim", "--sim-ttft", "const:5ms", "--sim-itl", "const:1ms")
	for _, m := range []store.ModelFields{
		{Name: "acme/small-1b", ParamsB: 1, Quantization: "bf16", ContextLength: 8192},
		{Name: "acme/large-8b", ParamsB: 8, Quantization: "fp8", ContextLength: 32768},
	} {
		_, err := s.Store.CreateModel(ctx, m)
		must(t, err)
	}
	u, err := s.Store.CreateUser(ctx, store.NewUser{Email: "ada@example.com", Name: "Ada", PasswordHash: mustHash(t, "ada-password"), Role: store.RoleUser})
	must(t, err)
	d := starter.All[0] // the encyclopedia summaries, with references
	b, err := starter.Open(d)
	must(t, err)
	up := &ingest.Uploader{Store: s.Store, Limits: dataset.DefaultLimits()}
	res, err := up.Upload(ctx, ingest.Source{File: bytes.NewReader(b)}, ingest.Request{Viewer: store.Viewer{UserID: u.ID}, Name: d.Name, FileName: d.File})
	must(t, err)

	page := newPage(t, 1280, 900)
	signIn(t, page, s.URL, "ada@example.com", "ada-password")
	_, err = page.Goto(s.URL + "/benchmarks/new")
	must(t, err)
	must(t, page.GetByLabel("Name", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill("Small vs large on summaries"))
	_, err = page.Locator(`select[name="dataset_id"]`).SelectOption(playwright.SelectOptionValues{Values: &[]string{fmt.Sprint(res.Dataset.ID)}})
	must(t, err)
	// Remove the second row, then add it back with htmx: one request, one row.
	must(t, page.Locator(`#target-1 [data-testid="remove-target"]`).Click())
	must(t, ex.Locator(page.Locator(`[data-target-row]`)).ToHaveCount(1))
	must(t, page.GetByTestId("add-target").Click())
	must(t, ex.Locator(page.Locator(`[data-target-row]`)).ToHaveCount(2))
	// The rows are 0 and 2: indices are not reused.
	for i, model := range map[int]string{0: "acme/small-1b", 2: "acme/large-8b"} {
		for _, f := range [][2]string{{"model", model}, {"runtime", "sim"}, {"hardware", profile}} {
			sel := page.Locator(fmt.Sprintf(`select[name="target_%d_%s"]`, i, f[0]))
			_, err := sel.SelectOption(playwright.SelectOptionValues{Values: &[]string{f[1]}})
			must(t, err)
			// A model or runtime change redraws the row: wait for it.
			must(t, ex.Locator(page.Locator(".htmx-request")).ToHaveCount(0))
			must(t, ex.Locator(page.Locator(fmt.Sprintf(`select[name="target_%d_%s"]`, i, f[0]))).ToHaveValue(f[1]))
		}
	}
	must(t, ex.Locator(page.Locator(`select[name="target_0_model"] option[value="acme/large-8b"]`)).ToHaveText("acme/large-8b (8B fp8, needs ~9.6 GB)"))
	must(t, page.GetByTestId("preset-quick").Click())
	must(t, ex.Locator(page.GetByTestId("preset-applied")).ToBeVisible())
	must(t, ex.Locator(page.Locator(`input[name="max_requests"]`)).ToHaveValue("20"))
	_, err = page.GetByLabel("Scorer").SelectOption(playwright.SelectOptionValues{Values: &[]string{"rougeL"}})
	must(t, err)
	must(t, page.GetByTestId("preview").Click())
	if n, _ := page.GetByTestId("benchmark-error").Count(); n > 0 {
		msg, _ := page.GetByTestId("benchmark-errors").TextContent()
		t.Fatalf("preview refused: %s", msg)
	}
	must(t, ex.Locator(page.GetByTestId("plan-run")).ToHaveCount(2))
	must(t, ex.Locator(page.GetByTestId("plan-requests")).ToHaveText("40 requests"))
	checkPage(t, page, "benchmark-form", "desktop")
	must(t, page.SetViewportSize(390, 844))
	checkPage(t, page, "benchmark-form", "mobile")
	must(t, page.SetViewportSize(1280, 900))

	must(t, page.GetByTestId("launch").Click())
	must(t, ex.Locator(page.GetByTestId("benchmark-name")).ToHaveText("Small vs large on summaries"))
	id := benchmarkID(t, page.URL())
	var runs []store.Run
	waitUntil(t, 90*time.Second, "both runs scored", func() (bool, string) {
		bm, err := s.Store.BenchmarkByID(ctx, store.Viewer{Admin: true}, id)
		must(t, err)
		runs = bm.Runs
		scored := 0
		for _, r := range runs {
			if r.Quality != nil {
				scored++
			}
		}
		return scored == len(runs), fmt.Sprintf("%d of %d runs scored", scored, len(runs))
	})
	q := map[string]float64{}
	for _, r := range runs {
		q[r.ModelName] = *r.Quality
		fmt.Printf("e2e: sim quality %-14s %.3f [%.3f, %.3f] over %d items (%s)\n", r.ModelName, *r.Quality, *r.QualityLo, *r.QualityHi, r.Scored, r.Scorer)
	}
	if !(q["acme/large-8b"] > q["acme/small-1b"]+0.2) {
		t.Errorf("qualities %v: the 0.9 model should be well ahead of the 0.35 one", q)
	}
	_, err = page.Reload()
	must(t, err)
	checkPage(t, page, "benchmark-sim-quality", "desktop")
	must(t, page.SetViewportSize(390, 844))
	checkPage(t, page, "benchmark-sim-quality", "mobile")
}
