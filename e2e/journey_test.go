//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// startAgent runs `agentd run` against the server's database with the
// simulated runtime, slowed down enough that a person (and the test) can
// watch a run advance, and waits until it has registered. It returns the
// hardware profile it registered.
func startAgent(t *testing.T, s *server, name string, extra ...string) string {
	t.Helper()
	args := append([]string{"run", "--name", name, "--runtime", "sim", "--no-gpu",
		"--heartbeat", "1s", "--progress-interval", "200ms"}, extra...)
	cmd := exec.Command(agentdBin, args...)
	// Its own restricted role, as `ruckus agent create` makes on a GPU node.
	cmd.Env = append(os.Environ(), "DATABASE_URL="+pgtest.AgentURL(t, s.Store.Pool(), name))
	logFile, err := os.Create(filepath.Join(t.TempDir(), name+".log"))
	must(t, err)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	must(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("%s log:\n%s", name, b)
		}
	})
	var profile string
	testkit.WaitFor(t, "agent "+name+" to register", func() bool {
		agents, err := s.Store.ListAgents(context.Background())
		must(t, err)
		for _, a := range agents {
			if a.Name == name && a.Profile != "" && a.State == store.AgentOnline {
				profile = a.Profile
				return true
			}
		}
		return false
	})
	return profile
}

// download clicks a link that downloads a file and returns the file's
// content.
func download(t *testing.T, page playwright.Page, link playwright.Locator) (name string, content []byte) {
	t.Helper()
	d, err := page.ExpectDownload(func() error { return link.Click() })
	must(t, err)
	path, err := d.Path()
	must(t, err)
	b, err := os.ReadFile(path)
	must(t, err)
	return d.SuggestedFilename(), b
}

// progressOf reads the first run's progress bar.
const progressOf = `() => { const p = document.querySelector('[data-testid="run-progress"]'); return p ? +p.value : -1 }`

// The whole journey of a user choosing between two models, in one browser:
// upload a dataset by drag and drop, launch a benchmark with two targets,
// watch it run, read the results, compare, export, get a recommendation,
// and cancel another benchmark while it runs; then an admin looks after
// the fleet, and the user is kept out of the admin pages.
func TestBenchmarkJourney(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	journey(t, "en-US")
}

// TestBenchmarkJourneyGerman is the same journey in a German browser; its
// screenshots go to the screenshots folder's de/.
func TestBenchmarkJourneyGerman(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	journey(t, "de-DE")
}

// journey is a user's way from an upload to a compared, recommended and
// cancelled benchmark, and the admin's pages, in a browser asking for
// locale; the labels it looks for come from the catalogue.
func journey(t *testing.T, locale string) {
	tr := i18n.Default().For("", locale)
	shots := ""
	if tr.Code() != "en" {
		shots = tr.Code() + "/"
	}
	newPage := func(t *testing.T, width, height int) playwright.Page { return newPageIn(t, width, height, locale) }
	signIn := func(t *testing.T, page playwright.Page, base, email, password string) {
		signInIn(t, page, base, email, password, tr)
	}
	s := startServer(t)
	ctx := context.Background()
	ex := expect(t)
	// 260 ms a request (30 ms to the first token, 23 more at 10 ms): with
	// two in flight a 40-item run takes about 5 s, long enough to watch.
	profile := startAgent(t, s, "e2e-sim", "--sim-ttft", "const:30ms", "--sim-itl", "const:10ms", "--sim-output-tokens", "const:24")
	for _, m := range []store.ModelFields{
		{Name: "acme/small-1b", ParamsB: 1, Quantization: "bf16", ContextLength: 8192},
		{Name: "acme/large-8b", ParamsB: 8, Quantization: "fp8", ContextLength: 32768},
	} {
		_, err := s.Store.CreateModel(ctx, m)
		must(t, err)
	}
	_, err := s.Store.CreateUser(ctx, store.NewUser{Email: "ada@example.com", Name: "Ada", PasswordHash: mustHash(t, "ada-password"), Role: store.RoleUser})
	must(t, err)

	// The admin prices the agent's hardware, so runs have a cost.
	admin := newPage(t, 1280, 800)
	signIn(t, admin, s.URL, adminEmail, adminPassword)
	must(t, admin.GetByTestId("nav-admin-hardware").Click())
	must(t, admin.GetByLabel(tr.T("admin_agents.hardware.price_for", "Slug", profile)).Fill("1.20"))
	must(t, admin.GetByTestId("save-price-"+profile).Click())
	must(t, ex.Locator(admin.GetByLabel(tr.T("admin_agents.hardware.price_for", "Slug", profile))).ToHaveValue("1.2"))

	page := newPage(t, 1280, 800)
	signIn(t, page, s.URL, "ada@example.com", "ada-password")

	// Upload by drag and drop.
	var items strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&items, "{\"id\":\"q%02d\",\"prompt\":\"What is %d plus %d?\",\"reference\":\"%d\"}\n", i, i, i, 2*i)
	}
	must(t, page.GetByTestId("nav-datasets").Click())
	must(t, page.GetByTestId("upload-form").GetByLabel(tr.T("tokens.name")).Fill("Sums"))
	drop(t, page, "sums.jsonl", items.String())
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: tr.T("datasets.upload")}).Click())
	must(t, ex.Locator(page.GetByTestId("dataset-count")).ToHaveText("40"))

	// A benchmark with two targets.
	newBenchmark := func(name string, concurrency int) {
		must(t, page.GetByTestId("nav-benchmarks").Click())
		must(t, page.GetByTestId("new-benchmark").Click())
		must(t, page.GetByLabel(tr.T("newbench.name"), playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill(name))
		_, err := page.Locator(`select[name="dataset_id"]`).SelectOption(playwright.SelectOptionValues{Labels: &[]string{tr.N("newbench.dataset_option", 40, "Name", "Sums")}})
		must(t, err)
		for i, model := range []string{"acme/small-1b", "acme/large-8b"} {
			for field, v := range map[string]string{"model": model, "runtime": "sim", "hardware": profile} {
				_, err := page.Locator(fmt.Sprintf(`select[name="target_%d_%s"]`, i, field)).SelectOption(playwright.SelectOptionValues{Values: &[]string{v}})
				must(t, err)
			}
		}
		_, err = page.Locator(`select[name="load_kind"]`).SelectOption(playwright.SelectOptionValues{Values: &[]string{"concurrency"}})
		must(t, err)
		must(t, page.GetByRole("textbox", playwright.PageGetByRoleOptions{Name: tr.T("newbench.concurrency")}).Fill(strconv.Itoa(concurrency)))
		must(t, page.GetByRole("textbox", playwright.PageGetByRoleOptions{Name: tr.T("newbench.max_tokens")}).Fill("24"))
		_, err = page.GetByLabel(tr.T("datasets.scorer")).SelectOption(playwright.SelectOptionValues{Values: &[]string{"contains"}})
		must(t, err)
		must(t, page.GetByTestId("launch").Click())
		must(t, ex.Locator(page.GetByTestId("benchmark-name")).ToHaveText(name))
	}
	newBenchmark("Small or large", 2)
	benchURL := page.URL()

	// The progress bar advances while the page stays put: htmx swaps the
	// fragment in, the page is never reloaded.
	_, err = page.Evaluate(`() => { window.__notReloaded = true }`)
	must(t, err)
	_, err = page.WaitForFunction(`() => (`+progressOf+`)() > 0`, nil)
	must(t, err)
	first, err := page.Evaluate(progressOf)
	must(t, err)
	if v := first.(int); v >= 40 {
		t.Logf("the first run was already done when first seen (%d)", v)
	}
	_, err = page.WaitForFunction(fmt.Sprintf(`() => (%s)() > %d`, progressOf, first), nil)
	must(t, err)
	screenshot(t, page, shots+"benchmark-running-desktop")
	for i := range 2 {
		must(t, ex.Locator(page.GetByTestId("run-state").Nth(i)).ToHaveText(tr.T("state.completed"), playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(60000)}))
	}
	still, err := page.Evaluate(`() => window.__notReloaded === true`)
	must(t, err)
	if still != true {
		t.Fatal("the benchmark page was reloaded to show progress; it should update in place")
	}
	// Polling stops once nothing runs.
	must(t, ex.Locator(page.Locator(`#runs[data-polling="on"]`)).ToHaveCount(0))

	runs, err := s.Store.BenchmarkByID(ctx, store.Viewer{Admin: true}, benchmarkID(t, benchURL))
	must(t, err)
	if len(runs.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs.Runs))
	}
	runA, runB := runs.Runs[0].ID, runs.Runs[1].ID

	// Exports, checked for content.
	name, b := download(t, page, page.GetByTestId(fmt.Sprintf("export-csv-%d", runA)))
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	must(t, err)
	if len(rows) != 41 || !strings.HasSuffix(name, ".csv") {
		t.Fatalf("run CSV %s: %d rows, want header + 40", name, len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, h := range []string{"custom_id", "status", "output", "prompt_tokens", "completion_tokens", "ttft_ms", "e2e_ms", "score", "error"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("run CSV has no %q column: %v", h, rows[0])
		}
	}
	if rows[1][col["custom_id"]] != "q01" || rows[1][col["completion_tokens"]] != "24" || rows[1][col["ttft_ms"]] == "" {
		t.Fatalf("run CSV first row %v", rows[1])
	}
	_, b = download(t, page, page.GetByTestId(fmt.Sprintf("export-jsonl-%d", runB)))
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var line struct {
			ID       string `json:"id"`
			CustomID string `json:"custom_id"`
			Response struct {
				StatusCode int `json:"status_code"`
				Body       struct {
					Usage struct {
						CompletionTokens int `json:"completion_tokens"`
					} `json:"usage"`
				} `json:"body"`
			} `json:"response"`
		}
		must(t, json.Unmarshal(sc.Bytes(), &line))
		lines++
		if line.ID == "" || line.CustomID != fmt.Sprintf("q%02d", lines) || line.Response.StatusCode != 200 || line.Response.Body.Usage.CompletionTokens != 24 {
			t.Fatalf("JSONL line %d: %s", lines, sc.Text())
		}
	}
	if lines != 40 {
		t.Fatalf("run JSONL: %d lines, want 40", lines)
	}
	_, b = download(t, page, page.GetByTestId("export-benchmark"))
	if n := bytes.Count(b, []byte("\n")); n != 81 {
		t.Fatalf("benchmark CSV: %d lines, want header + 80", n)
	}

	// Results of one run, then one item.
	must(t, page.GetByTestId(fmt.Sprintf("view-run-%d", runA)).Click())
	must(t, ex.Locator(page.Locator(`table[data-testid="results"] tbody tr`)).ToHaveCount(40))
	must(t, ex.Locator(page.GetByTestId("result-0")).ToContainText("q01"))
	must(t, ex.Locator(page.GetByTestId("run-quality")).ToBeVisible())
	must(t, page.GetByTestId("result-0").GetByRole("link", playwright.LocatorGetByRoleOptions{Name: "q01"}).Click())
	must(t, ex.Locator(page.GetByTestId("item-request")).ToContainText("What is 1 plus 1?"))
	must(t, ex.Locator(page.GetByTestId("item-reference")).ToContainText("2"))

	// Comparison: both runs side by side, linkable.
	_, err = page.Goto(benchURL)
	must(t, err)
	must(t, page.GetByTestId("compare-runs").Click())
	must(t, ex.Locator(page.GetByTestId(fmt.Sprintf("compare-run-%d", runA))).ToBeVisible())
	must(t, ex.Locator(page.GetByTestId(fmt.Sprintf("compare-run-%d", runB))).ToBeVisible())
	must(t, ex.Locator(page.GetByTestId("compare-items")).ToBeVisible())
	if u := page.URL(); !strings.Contains(u, strconv.FormatInt(runA, 10)) || !strings.Contains(u, strconv.FormatInt(runB, 10)) {
		t.Fatalf("comparison URL %s does not name both runs", u)
	}
	compareURL := page.URL()

	// Recommendation: both targets feasible, ranked, with a cost.
	_, err = page.Goto(benchURL)
	must(t, err)
	must(t, page.GetByTestId("recommend").Click())
	must(t, ex.Locator(page.Locator(`table[data-testid="feasible"] tbody tr`)).ToHaveCount(2))
	must(t, ex.Locator(page.GetByTestId("feasible")).ToContainText("acme/small-1b"))
	recommendURL := page.URL()

	// Cancel a benchmark while its first run is running.
	newBenchmark("To be cancelled", 1)
	cancelURL := page.URL()
	must(t, ex.Locator(page.GetByTestId("run-state").First()).ToHaveText(tr.T("state.running"), playwright.LocatorAssertionsToHaveTextOptions{Timeout: playwright.Float(30000)}))
	page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
	must(t, page.GetByTestId("cancel-benchmark").Click())
	for i := range 2 {
		must(t, ex.Locator(page.GetByTestId("run-state").Nth(i)).ToHaveText(tr.T("state.cancelled")))
	}
	cancelled, err := s.Store.BenchmarkByID(ctx, store.Viewer{Admin: true}, benchmarkID(t, cancelURL))
	must(t, err)
	for _, r := range cancelled.Runs {
		if r.State != "cancelled" || r.Completed >= r.Total {
			t.Fatalf("cancelled run %d: state %s, %d of %d done", r.ID, r.State, r.Completed, r.Total)
		}
	}

	// The admin looks after agents, models and users; the user is kept out.
	must(t, admin.GetByTestId("nav-admin-agents").Click())
	must(t, ex.Locator(admin.GetByTestId("agent-e2e-sim").GetByTestId("agent-state")).ToHaveText("online"))
	must(t, admin.GetByTestId("nav-admin-models").Click())
	must(t, ex.Locator(admin.GetByTestId("model-acme/large-8b")).ToBeVisible())
	must(t, admin.GetByTestId("nav-admin-users").Click())
	must(t, ex.Locator(admin.Locator(`table[data-testid="users"]`)).ToContainText("ada@example.com"))
	must(t, ex.Locator(page.GetByTestId("nav-admin-users")).ToHaveCount(0))
	for _, path := range []string{"/admin/agents", "/admin/models", "/admin/users", "/admin/hardware"} {
		_, err := page.Goto(s.URL + path)
		must(t, err)
		must(t, ex.Locator(page.GetByTestId("error-page")).ToContainText(tr.T("request.admins_only")))
	}

	// Every main page, at both widths: finished (nothing wider than the
	// screen; wide tables scroll inside their box) and accessible.
	datasets, err := s.Store.ListDatasets(ctx, store.Viewer{Admin: true})
	must(t, err)
	if len(datasets) == 0 {
		t.Fatal("no dataset listed")
	}
	userPages := map[string]string{
		"home":             "/",
		"datasets":         "/datasets",
		"dataset":          fmt.Sprintf("/datasets/%d", datasets[0].ID),
		"benchmarks":       "/benchmarks",
		"benchmark-new":    "/benchmarks/new",
		"benchmark":        strings.TrimPrefix(benchURL, s.URL),
		"run-results":      fmt.Sprintf("/runs/%d", runA),
		"result-item":      fmt.Sprintf("/runs/%d/items/0", runA),
		"compare":          strings.TrimPrefix(compareURL, s.URL),
		"recommend":        strings.TrimPrefix(recommendURL, s.URL),
		"settings":         "/settings",
		"benchmark-cancel": strings.TrimPrefix(cancelURL, s.URL),
	}
	adminPages := map[string]string{
		"admin-users":    "/admin/users",
		"admin-models":   "/admin/models",
		"admin-agents":   "/admin/agents",
		"admin-hardware": "/admin/hardware",
	}
	for _, w := range []struct {
		name          string
		width, height int
	}{{"desktop", 1280, 800}, {"mobile", 390, 844}} {
		user := newPage(t, w.width, w.height)
		signIn(t, user, s.URL, "ada@example.com", "ada-password")
		auditPagesIn(t, user, s.URL, userPages, w.name, shots)
		adm := newPage(t, w.width, w.height)
		signIn(t, adm, s.URL, adminEmail, adminPassword)
		auditPagesIn(t, adm, s.URL, adminPages, w.name, shots)
		visitor := newPage(t, w.width, w.height)
		auditPagesIn(t, visitor, s.URL, map[string]string{"signin": "/signin"}, w.name, shots)
	}
}

// benchmarkID reads the id from a benchmark page's URL.
func benchmarkID(t *testing.T, url string) int64 {
	t.Helper()
	i := strings.LastIndex(url, "/benchmarks/")
	id, err := strconv.ParseInt(url[i+len("/benchmarks/"):], 10, 64)
	if i < 0 || err != nil {
		t.Fatalf("not a benchmark page: %s", url)
	}
	return id
}

// auditPages opens each page, saves a screenshot NAME-WIDTH.png, checks
// that nothing is wider than the viewport (so nothing is cut off or
// overlaps at that width) and runs axe-core's rules, failing on serious or
// critical violations.
func auditPages(t *testing.T, page playwright.Page, base string, pages map[string]string, width string) {
	t.Helper()
	auditPagesIn(t, page, base, pages, width, "")
}

// auditPagesIn is auditPages with the screenshots' names prefixed by shots
// ("de/" puts them in the screenshots folder's de/).
func auditPagesIn(t *testing.T, page playwright.Page, base string, pages map[string]string, width, shots string) {
	t.Helper()
	for name, path := range pages {
		res, err := page.Goto(base + path)
		must(t, err)
		if res.Status() != 200 {
			t.Errorf("%s (%s): HTTP %d", name, path, res.Status())
			continue
		}
		screenshot(t, page, shots+name+"-"+width)
		over, err := page.Evaluate(`() => {
			const vw = document.documentElement.clientWidth;
			const wide = [];
			for (const el of document.body.querySelectorAll('*')) {
				const r = el.getBoundingClientRect();
				if (r.width === 0 || r.height === 0) continue;
				if (el.closest('.table-wrap, pre, svg, .scroll-x') && !el.matches('.table-wrap, .scroll-x')) continue;
				if (r.right > vw + 1) wide.push((el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ').join('.') : '')) + ' ' + Math.round(r.right) + 'px');
			}
			return { scroll: document.documentElement.scrollWidth, vw, wide: wide.slice(0, 5) };
		}`)
		must(t, err)
		o := over.(map[string]any)
		if o["scroll"].(int) > o["vw"].(int) {
			t.Errorf("%s at %s: the page is %v px wide in a %v px viewport: %v", name, width, o["scroll"], o["vw"], o["wide"])
		}
		axeCheck(t, page, name, width)
	}
}

// axeCheck runs axe-core's rules on the page as it is, failing on serious
// or critical violations. The script is evaluated through the driver, as
// the page's own CSP forbids inline scripts.
func axeCheck(t *testing.T, page playwright.Page, name, width string) {
	t.Helper()
	_, err := page.Evaluate(axeSource)
	must(t, err)
	v, err := page.Evaluate(`async () => {
		const r = await axe.run(document, { resultTypes: ['violations'] });
		return r.violations.map(v => ({ id: v.id, impact: v.impact || '', nodes: v.nodes.length,
			where: v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | ') }));
	}`)
	must(t, err)
	var serious, other []string
	for _, x := range v.([]any) {
		m := x.(map[string]any)
		line := fmt.Sprintf("%s (%s, %v nodes: %s)", m["id"], m["impact"], m["nodes"], m["where"])
		if m["impact"] == "serious" || m["impact"] == "critical" {
			serious = append(serious, line)
		} else {
			other = append(other, line)
		}
	}
	fmt.Printf("e2e: axe %-22s %-7s serious/critical %d, moderate/minor %d %v\n", name, width, len(serious), len(other), other)
	if len(serious) > 0 {
		t.Errorf("%s at %s: axe finds serious or critical violations:\n  %s", name, width, strings.Join(serious, "\n  "))
	}
}
