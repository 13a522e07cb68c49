//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/store"
)

// A person asks the new-benchmark form for "0,3" examples per question on
// an ARC dataset: the preview lists the target once 0-shot and once
// 3-shot, the launched benchmark labels the 3-shot run, both runs are
// scored on the simulated runtime, and the 3-shot run's page says what
// its prompts were and shows an item's prompt with three solved examples;
// the verdict weighs both runs and ranks neither over the other.
func TestFewShotFromTheForm(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t)
	ctx := context.Background()
	ex := expect(t)
	profile := startAgent(t, s, "e2e-fewshot", "--sim-ttft", "const:2ms", "--sim-itl", "const:1ms")
	_, err := s.Store.CreateModel(ctx, store.ModelFields{Name: "acme/small-1b", ParamsB: 1, Quantization: "bf16", ContextLength: 8192})
	must(t, err)
	u, err := s.Store.CreateUser(ctx, store.NewUser{Email: "ada@example.com", Name: "Ada", PasswordHash: mustHash(t, "ada-password"), Role: store.RoleUser})
	must(t, err)
	var arc strings.Builder
	for i := range 12 {
		fmt.Fprintf(&arc, `{"id":"q%d","question":"Which planet is number %d from the Sun?","choices":{"text":["Mercury","Venus","Earth","Mars"],"label":["A","B","C","D"]},"answerKey":"%c"}`+"\n", i, i%4+1, 'A'+rune(i%4))
	}
	up := &ingest.Uploader{Store: s.Store, Limits: dataset.DefaultLimits()}
	res, err := up.Upload(ctx, ingest.Source{File: strings.NewReader(arc.String())}, ingest.Request{Viewer: store.Viewer{UserID: u.ID}, Name: "planets", FileName: "arc.jsonl"})
	must(t, err)

	page := newPage(t, 1280, 900)
	signIn(t, page, s.URL, "ada@example.com", "ada-password")
	_, err = page.Goto(s.URL + "/benchmarks/new")
	must(t, err)
	must(t, page.GetByLabel("Name", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill("0 vs 3 shots"))
	_, err = page.Locator(`select[name="dataset_id"]`).SelectOption(playwright.SelectOptionValues{Values: &[]string{fmt.Sprint(res.Dataset.ID)}})
	must(t, err)
	must(t, page.Locator(`#target-1 [data-testid="remove-target"]`).Click())
	must(t, ex.Locator(page.Locator(`[data-target-row]`)).ToHaveCount(1))
	for _, f := range [][2]string{{"model", "acme/small-1b"}, {"runtime", "sim"}, {"hardware", profile}} {
		_, err := page.Locator(`select[name="target_0_` + f[0] + `"]`).SelectOption(playwright.SelectOptionValues{Values: &[]string{f[1]}})
		must(t, err)
		must(t, ex.Locator(page.Locator(".htmx-request")).ToHaveCount(0))
		must(t, ex.Locator(page.Locator(`select[name="target_0_`+f[0]+`"]`)).ToHaveValue(f[1]))
	}
	must(t, page.Locator(`input[name="max_tokens"]`).Fill("32"))
	must(t, page.GetByTestId("fewshot-k").Fill("0,3"))
	must(t, page.GetByTestId("preview").Click())
	if n, _ := page.GetByTestId("benchmark-error").Count(); n > 0 {
		msg, _ := page.GetByTestId("benchmark-errors").TextContent()
		t.Fatalf("preview refused: %s", msg)
	}
	must(t, ex.Locator(page.GetByTestId("plan-fewshot")).ToHaveText([]string{"0-shot", "3-shot, seed 1234"}))
	must(t, page.GetByTestId("launch").Click())
	must(t, ex.Locator(page.GetByTestId("benchmark-name")).ToHaveText("0 vs 3 shots"))
	must(t, ex.Locator(page.GetByTestId("run-fewshot")).ToHaveText("3-shot, seed 1234"))
	id := benchmarkID(t, page.URL())
	var shots store.Run
	waitUntil(t, 90*time.Second, "both runs scored", func() (bool, string) {
		bm, err := s.Store.BenchmarkByID(ctx, store.Viewer{Admin: true}, id)
		must(t, err)
		scored := 0
		for _, r := range bm.Runs {
			if r.Scorer != "" && r.State == "completed" {
				scored++
			}
			if r.FewShotK == 3 {
				shots = r
			}
		}
		return scored == 2, fmt.Sprintf("%d of 2 runs scored", scored)
	})
	_, err = page.Reload()
	must(t, err)
	// Two targets, not two repeats of one: the verdict weighs both runs and
	// ranks neither over the other (their prompts differ).
	must(t, ex.Locator(page.GetByTestId("verdict")).ToContainText("Comparing 2 finished runs"))
	// A pair that cannot be ranked has no leader on any line, and says why
	// (docs/verdict.md#not-comparable).
	must(t, ex.Locator(page.GetByTestId("verdict-missing").First()).ToContainText("not comparable"))
	if n, err := page.GetByTestId("verdict-winner").Count(); err != nil || n != 0 {
		t.Errorf("the verdict names %d leaders between runs it cannot compare (%v)", n, err)
	}
	checkPage(t, page, "benchmark-fewshot", "desktop")
	_, err = page.Goto(fmt.Sprintf("%s/runs/%d", s.URL, shots.ID))
	must(t, err)
	must(t, ex.Locator(page.GetByTestId("run-fewshot")).ToContainText("3-shot (examples drawn from the dataset with seed 1234"))
	_, err = page.Goto(fmt.Sprintf("%s/runs/%d/items/5", s.URL, shots.ID))
	must(t, err)
	req, err := page.GetByTestId("item-request").TextContent()
	must(t, err)
	if strings.Count(req, `Answer: `) != 3 || !strings.Contains(req, "number 2 from the Sun?") {
		t.Errorf("the 3-shot run's item 5 shows the request %s", req)
	}
}
