//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/ruckus/ruckus/app/store"
)

// A newcomer's first hour: the start page's three steps on an installation
// seeded as `make run` seeds it, the first benchmark launched in one click,
// its runs live on the start page, its verdict appearing on the benchmark
// page without a reload, the recommendation explaining its ranking, and
// the start page afterwards with the verdict in one line; an admin sees
// the agents and queues; the better run, judged from its page, gets from
// the simulated judge the quality its scorer gave it. Screenshots at 1280
// and 390 px, axe-core clean.
func TestHomeVerdictAndRanking(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	// The share of right answers make run gives the two smallest starter
	// models on the simulated runtime.
	s := startServer(t, "RUCKUS_SIM_ACCURACY="+"Qwen/Qwen2.5-0.5B-Instruct=0.3,microsoft/Phi-3.5-mini-instruct=0.6")
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

	// The better run judged from its page by a larger model on the
	// simulated runtime: the judge follows the simulated model, so it
	// agrees with ROUGE-L item by item and the run shows one quality
	// under both.
	judgeFirstRun(t, s, desk, benchURL, "microsoft/Phi-3.5-mini-instruct")
}

// judgeFirstRun judges model's run of the benchmark at benchURL from the
// run's page (correctness rubric, Qwen2.5 7B on the simulated runtime)
// and checks that the run's quality under the judge is its quality under
// ROUGE-L, with every item rated as ROUGE-L scored it.
func judgeFirstRun(t *testing.T, s *server, page playwright.Page, benchURL, model string) {
	t.Helper()
	ctx := context.Background()
	ex := expect(t)
	var runID int64
	must(t, s.Store.Pool().QueryRow(ctx, `SELECT r.id FROM runs r JOIN models m ON m.id = r.model_id
		WHERE r.benchmark_id = $1 AND m.name = $2 ORDER BY r.id LIMIT 1`, benchmarkID(t, benchURL), model).Scan(&runID))
	runURL := fmt.Sprintf("%s/runs/%d", s.URL, runID)
	_, err := page.Goto(runURL)
	must(t, err)
	must(t, page.GetByText("Judge this run with an LLM").Click())
	form := page.GetByTestId("judge-form")
	_, err = form.Locator(`select[name="judge_model"]`).SelectOption(playwright.SelectOptionValues{Values: &[]string{"Qwen/Qwen2.5-7B-Instruct"}})
	must(t, err)
	must(t, form.GetByTestId("judge-submit").Click())
	waitUntil(t, 2*time.Minute, "the judging to finish", func() (bool, string) {
		var state string
		err := s.Store.Pool().QueryRow(ctx, `SELECT state FROM judge_runs WHERE run_a = $1`, runID).Scan(&state)
		return err == nil && state == "judged", fmt.Sprint(state, err)
	})
	var items, agree int
	must(t, s.Store.Pool().QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE j.score = q.score) FROM judgments j
		JOIN (SELECT unnest(idx) AS idx, unnest(scores) AS score FROM run_qualities WHERE run_id = $1 AND scorer_key = 'rougeL') q ON q.idx = j.idx
		WHERE j.judged_run_id = $1 AND j.ord = 'single'`, runID).Scan(&items, &agree))
	fmt.Printf("e2e: the simulated judge agrees with ROUGE-L on %d of %d items of %s\n", agree, items, model)
	if items != 24 || agree != items {
		t.Fatalf("the simulated judge agrees with ROUGE-L on %d of %d items, want all 24", agree, items)
	}
	_, err = page.Goto(runURL)
	must(t, err)
	rows := page.GetByTestId("run-quality-under")
	n, err := rows.Count()
	must(t, err)
	under := map[string]string{}
	for i := range n {
		line, err := rows.Nth(i).TextContent()
		must(t, err)
		key, err := rows.Nth(i).Locator("code").TextContent()
		must(t, err)
		_, rest, _ := strings.Cut(line, key+":")
		if f := strings.Fields(rest); len(f) > 0 {
			under[strings.SplitN(key, "{", 2)[0]] = strings.TrimRight(f[0], ",")
		}
	}
	if under["rougeL"] == "" || under["judge"] != under["rougeL"] {
		t.Fatalf("the run page's qualities %v: want the same under rougeL and judge", under)
	}
	must(t, ex.Locator(page.GetByTestId("judgings").GetByTestId("judging-state")).ToHaveText("judged"))
}
