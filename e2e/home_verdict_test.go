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

// A newcomer's first hour: the start page's three steps on an installation
// seeded as `make run` seeds it, the first benchmark launched in one click,
// its runs live on the start page, its verdict appearing on the benchmark
// page without a reload, the recommendation explaining its ranking, and
// the start page afterwards with the verdict in one line; an admin sees
// the agents and queues. Screenshots at 1280 and 390 px, axe-core clean.
func TestHomeVerdictAndRanking(t *testing.T) {
	// The share of right answers make run gives the two smallest starter
	// models on the simulated runtime.
	t.Setenv("RUCKUS_SIM_ACCURACY", "Qwen/Qwen2.5-0.5B-Instruct=0.3,microsoft/Phi-3.5-mini-instruct=0.6")
	s := startServer(t)
	ctx := context.Background()
	ex := expect(t)
	seed := exec.Command(ruckusBin, "seed")
	seed.Env = append(os.Environ(), "DATABASE_URL="+s.DBURL)
	if out, err := seed.CombinedOutput(); err != nil {
		t.Fatalf("ruckus seed: %v\n%s", err, out)
	}
	_, err := s.Store.CreateUser(ctx, store.NewUser{Email: "ada@example.com", Name: "Ada", PasswordHash: mustHash(t, "ada-password"), Role: store.RoleUser})
	must(t, err)

	// No agent yet: the third step says what is missing.
	desk := newPage(t, 1280, 800)
	signIn(t, desk, s.URL, "ada@example.com", "ada-password")
	must(t, ex.Locator(desk.GetByTestId("first-steps")).ToBeVisible())
	must(t, ex.Locator(desk.GetByTestId("step-runtime")).ToContainText("No live agent serves the simulated runtime"))
	must(t, ex.Locator(desk.GetByTestId("launch-first")).ToBeDisabled())
	screenshot(t, desk, "home-first-steps-missing-desktop")

	// make run's agent: the simulated runtime, at half its latencies so a
	// person (and the test) sees the runs go.
	startAgent(t, s, "e2e-sim", "--sim-time-scale", "0.5")
	mobile := newPage(t, 390, 844)
	signIn(t, mobile, s.URL, "ada@example.com", "ada-password")
	auditPages(t, desk, s.URL, map[string]string{"home-first-steps": "/"}, "desktop")
	auditPages(t, mobile, s.URL, map[string]string{"home-first-steps": "/"}, "mobile")
	_, err = desk.Goto(s.URL + "/")
	must(t, err)
	must(t, ex.Locator(desk.GetByTestId("launch-first")).ToContainText("Qwen2.5-0.5B-Instruct vs Phi-3.5-mini-instruct"))

	// One click launches it.
	must(t, desk.GetByTestId("launch-first").Click())
	must(t, ex.Locator(desk.GetByTestId("benchmark-name")).ToHaveText("First benchmark: Qwen2.5-0.5B-Instruct vs Phi-3.5-mini-instruct"))
	benchURL := desk.URL()
	must(t, ex.Locator(desk.GetByTestId("verdict-pending")).ToBeVisible())
	_, err = desk.Evaluate(`() => { window.__notReloaded = true }`)
	must(t, err)

	// Meanwhile the start page shows the runs live.
	_, err = mobile.Goto(s.URL + "/")
	must(t, err)
	if n, _ := mobile.Locator(`#running[data-polling="on"] [data-testid^="running-run-"]`).Count(); n > 0 {
		screenshot(t, mobile, "home-running-mobile")
	} else {
		t.Log("the first benchmark had finished before the start page was seen running")
	}

	// The verdict replaces the placeholder in place once the runs are done
	// and scored; the polls stop.
	must(t, ex.Locator(desk.GetByTestId("verdict")).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(120000)}))
	still, err := desk.Evaluate(`() => window.__notReloaded === true`)
	must(t, err)
	if still != true {
		t.Fatal("the benchmark page was reloaded to show the verdict")
	}
	must(t, ex.Locator(desk.Locator(`[data-polling="on"]`)).ToHaveCount(0))
	for _, id := range []string{"quality", "latency", "speed", "cost"} {
		must(t, ex.Locator(desk.GetByTestId("verdict-"+id)).ToBeVisible())
	}
	// No price for the agent's hardware: cost is not measured, not 0.
	must(t, ex.Locator(desk.GetByTestId("verdict-cost").GetByTestId("verdict-missing")).ToContainText("no price per hour"))
	must(t, ex.Locator(desk.GetByTestId("verdict-quality").GetByTestId("verdict-winner")).ToHaveText("microsoft/Phi-3.5-mini-instruct"))

	// Read afresh, the cards are folded under the verdict.
	_, err = desk.Goto(benchURL)
	must(t, err)
	must(t, ex.Locator(desk.Locator(`details[data-testid="run-cards"]:not([open])`)).ToHaveCount(1))
	path := strings.TrimPrefix(benchURL, s.URL)
	auditPages(t, desk, s.URL, map[string]string{"benchmark-verdict": path}, "desktop")
	auditPages(t, mobile, s.URL, map[string]string{"benchmark-verdict": path}, "mobile")
	docsImage(t, "benchmark-verdict-desktop", "benchmark")

	// The recommendation explains its ranking in words.
	_, err = desk.Goto(benchURL)
	must(t, err)
	must(t, desk.GetByTestId("verdict-recommend").Click())
	must(t, ex.Locator(desk.GetByTestId("rec-headline")).ToBeVisible())
	must(t, ex.Locator(desk.GetByTestId("explanations").Locator("li")).ToHaveCount(2))
	must(t, ex.Locator(desk.GetByTestId("explanations")).ToContainText("Ranked first"))
	recommend := strings.TrimPrefix(desk.URL(), s.URL)
	auditPages(t, desk, s.URL, map[string]string{"recommend-ranking": recommend}, "desktop")
	auditPages(t, mobile, s.URL, map[string]string{"recommend-ranking": recommend}, "mobile")

	// The start page now: nothing running, the benchmark with its verdict
	// in one line, no first steps.
	_, err = desk.Goto(s.URL + "/")
	must(t, err)
	must(t, ex.Locator(desk.GetByTestId("nothing-running")).ToBeVisible())
	must(t, ex.Locator(desk.GetByTestId("recent-verdict")).ToContainText("Best quality: microsoft/Phi-3.5-mini-instruct"))
	must(t, ex.Locator(desk.GetByTestId("first-steps")).ToHaveCount(0))
	auditPages(t, desk, s.URL, map[string]string{"home-recent": "/"}, "desktop")
	auditPages(t, mobile, s.URL, map[string]string{"home-recent": "/"}, "mobile")
	docsImage(t, "home-recent-desktop", "home")
	// The documentation, linked from every page's footer.
	auditPages(t, desk, s.URL, map[string]string{"docs-metrics": "/docs/metrics", "docs-index": "/docs"}, "desktop")
	auditPages(t, mobile, s.URL, map[string]string{"docs-metrics": "/docs/metrics"}, "mobile")

	// An administrator also sees the agents and queues.
	for _, w := range []struct {
		name          string
		width, height int
	}{{"desktop", 1280, 800}, {"mobile", 390, 844}} {
		adm := newPage(t, w.width, w.height)
		signIn(t, adm, s.URL, adminEmail, adminPassword)
		must(t, ex.Locator(adm.GetByTestId("agents-online")).ToHaveText("1"))
		must(t, ex.Locator(adm.GetByTestId("oldest-waiting")).ToHaveText("none"))
		auditPages(t, adm, s.URL, map[string]string{"home-admin-agents": "/"}, w.name)
	}
}
