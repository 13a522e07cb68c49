//go:build e2e

package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/ruckus/ruckus/app/store"
)

// History across benchmarks in a browser: a finished benchmark's runs on
// its dataset's leaderboard, re-sorted and filtered in place (htmx, no
// reload), a model's history chart with its points linking to runs, the
// recommendation across the dataset, and the benchmark renamed, shared
// (another user then reads it without its controls) and deleted.
// Screenshots at 1280 and 390 px, axe-core clean, nothing wider than the
// screen.
func TestLeaderboardHistoryAndSharing(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t, "RUCKUS_SIM_ACCURACY="+"Qwen/Qwen2.5-0.5B-Instruct=0.3,microsoft/Phi-3.5-mini-instruct=0.6")
	ctx := context.Background()
	ex := expect(t)
	seed := exec.Command(ruckusBin, "seed")
	seed.Env = append(os.Environ(), "DATABASE_URL="+s.DBURL)
	if out, err := seed.CombinedOutput(); err != nil {
		t.Fatalf("ruckus seed: %v\n%s", err, out)
	}
	for _, email := range []string{"ada@example.com", "bob@example.com"} {
		_, err := s.Store.CreateUser(ctx, store.NewUser{Email: email, Name: email, PasswordHash: mustHash(t, "user-password"), Role: store.RoleUser})
		must(t, err)
	}
	startAgent(t, s, "e2e-history", "--sim-time-scale", "0.25")

	desk := newPage(t, 1280, 800)
	signIn(t, desk, s.URL, "ada@example.com", "user-password")
	_, err := desk.Goto(s.URL + "/")
	must(t, err)
	must(t, desk.GetByTestId("launch-first").Click())
	must(t, ex.Locator(desk.GetByTestId("benchmark-name")).ToContainText("First benchmark"))
	benchURL := desk.URL()
	must(t, ex.Locator(desk.GetByTestId("verdict")).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(120000)}))

	// The leaderboard: the four runs (each model twice), best quality
	// first; sorting by speed swaps the table in place.
	must(t, desk.GetByTestId("dataset-leaderboard").Click())
	rows := desk.Locator(`[data-testid="leaderboard"] tbody tr`)
	must(t, ex.Locator(rows).ToHaveCount(4))
	must(t, ex.Locator(rows.First().Locator("td").Nth(1)).ToHaveText("microsoft/Phi-3.5-mini-instruct"))
	_, err = desk.Evaluate(`() => { window.__notReloaded = true }`)
	must(t, err)
	_, err = desk.GetByTestId("filter-model").SelectOption(playwright.SelectOptionValues{Values: &[]string{"Qwen/Qwen2.5-0.5B-Instruct"}})
	must(t, err)
	must(t, ex.Locator(rows).ToHaveCount(2))
	must(t, ex.Locator(rows.First().Locator("td").Nth(1)).ToHaveText("Qwen/Qwen2.5-0.5B-Instruct"))
	if !strings.Contains(desk.URL(), "model=Qwen") {
		t.Errorf("the filter is not in the URL: %s", desk.URL())
	}
	_, err = desk.GetByTestId("filter-model").SelectOption(playwright.SelectOptionValues{Values: &[]string{""}})
	must(t, err)
	must(t, ex.Locator(rows).ToHaveCount(4))
	must(t, desk.GetByTestId("sort-date").Click())
	must(t, ex.Locator(desk.GetByTestId("sorted-date")).ToBeVisible())
	still, err := desk.Evaluate(`() => window.__notReloaded === true`)
	must(t, err)
	if still != true {
		t.Error("filtering or sorting reloaded the page")
	}
	leaderboard := strings.TrimPrefix(desk.URL(), s.URL)

	// A model's history: its point links to its run.
	must(t, rows.First().GetByTestId("history-link").Click())
	must(t, ex.Locator(desk.GetByTestId("chart-history")).ToBeVisible())
	must(t, ex.Locator(desk.GetByTestId("chart-point-link")).ToHaveCount(2))
	history := strings.TrimPrefix(desk.URL(), s.URL)
	href, err := desk.GetByTestId("chart-point-link").First().GetAttribute("href")
	must(t, err)
	if !strings.HasPrefix(href, "/runs/") {
		t.Errorf("the point links to %q", href)
	}

	// The recommendation across the dataset: each model once, its two
	// runs in the benchmark merged as repeats, as in the verdict.
	_, err = desk.Goto(s.URL + leaderboard)
	must(t, err)
	must(t, desk.GetByTestId("dataset-recommend").Click())
	must(t, ex.Locator(desk.GetByTestId("dataset-scope")).ToBeVisible())
	must(t, ex.Locator(desk.Locator(`[data-testid="feasible"] tbody tr`)).ToHaveCount(2))
	recommend := strings.TrimPrefix(desk.URL(), s.URL)

	mobile := newPage(t, 390, 844)
	signIn(t, mobile, s.URL, "ada@example.com", "user-password")
	pages := map[string]string{"leaderboard": leaderboard, "history": history, "dataset-recommend": recommend}
	auditPages(t, desk, s.URL, pages, "desktop")
	auditPages(t, mobile, s.URL, pages, "mobile")

	// Rename and share from the benchmark page.
	_, err = desk.Goto(benchURL)
	must(t, err)
	must(t, desk.GetByTestId("manage-benchmark").Locator("summary").Click())
	must(t, desk.GetByTestId("rename-name").Fill("Nightly small models"))
	must(t, desk.GetByTestId("rename-submit").Click())
	must(t, ex.Locator(desk.GetByTestId("benchmark-name")).ToHaveText("Nightly small models"))
	must(t, desk.GetByTestId("manage-benchmark").Locator("summary").Click())
	must(t, desk.GetByTestId("share-submit").Click())
	must(t, ex.Locator(desk.GetByTestId("benchmark-visibility")).ToHaveText("shared"))
	auditPages(t, desk, s.URL, map[string]string{"benchmark-shared": strings.TrimPrefix(benchURL, s.URL)}, "desktop")

	// Bob reads it, with no controls.
	bob := newPage(t, 1280, 800)
	signIn(t, bob, s.URL, "bob@example.com", "user-password")
	_, err = bob.Goto(benchURL)
	must(t, err)
	must(t, ex.Locator(bob.GetByTestId("benchmark-name")).ToHaveText("Nightly small models"))
	must(t, ex.Locator(bob.GetByTestId("manage-benchmark")).ToHaveCount(0))

	// Ada deletes it: gone for both, its runs no longer on the leaderboard.
	_, err = desk.Goto(benchURL)
	must(t, err)
	desk.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
	must(t, desk.GetByTestId("manage-benchmark").Locator("summary").Click())
	must(t, desk.GetByTestId("delete-benchmark").Click())
	must(t, ex.Locator(desk.GetByTestId("flash")).ToContainText("deleted"))
	for who, page := range map[string]playwright.Page{"ada": desk, "bob": bob} {
		res, err := page.Goto(benchURL)
		must(t, err)
		if res.Status() != 404 {
			t.Errorf("%s opens the deleted benchmark: %d", who, res.Status())
		}
	}
	_, err = desk.Goto(s.URL + leaderboard)
	must(t, err)
	must(t, ex.Locator(desk.GetByTestId("leaderboard-empty")).ToBeVisible())
}
