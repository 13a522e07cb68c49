//go:build e2e

// Package e2e drives the real programs in a real Chromium: each test starts
// its own `ruckus serve` on its own database and clicks through it as a
// person would, in a browser context of its own within the one Chromium
// the package shares, so the tests run in parallel (all but the Ollama
// ones, which set the process environment Ollama reads). Run with
// `make e2e` (part of `make test`).
package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

var (
	ruckusBin     string
	agentdBin     string
	browser       playwright.Browser
	screenshotDir string
	axeSource     string // axe-core, injected into pages for the accessibility check
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "ruckus-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	// make e2e and make test have just built both programs into bin/ and
	// say so (RUCKUS_E2E_BIN); run on its own, the test builds them.
	ruckusBin = filepath.Join(tmp, "ruckus")
	agentdBin = filepath.Join(tmp, "agentd")
	if dir := os.Getenv("RUCKUS_E2E_BIN"); dir != "" {
		ruckusBin, agentdBin = filepath.Join(dir, "ruckus"), filepath.Join(dir, "agentd")
	}
	for bin, pkg := range map[string]string{ruckusBin: "../cmd/ruckus", agentdBin: "../agentd"} {
		if os.Getenv("RUCKUS_E2E_BIN") != "" {
			continue
		}
		build := exec.Command("go", "build", "-o", bin, pkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n", pkg, err)
			return 1
		}
	}
	// e2e/install-browser.sh puts axe-core beside the driver.
	axe, err := os.ReadFile(filepath.Join(os.Getenv("PLAYWRIGHT_DRIVER_PATH"), "axe-core", "axe.min.js"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "axe-core (run e2e/install-browser.sh and set PLAYWRIGHT_DRIVER_PATH):", err)
		return 1
	}
	axeSource = string(axe)

	screenshotDir = os.Getenv("RUCKUS_SCREENSHOTS")
	if screenshotDir == "" {
		screenshotDir, _ = filepath.Abs("../bin/screenshots")
	}
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("e2e: screenshots in", screenshotDir)

	// The driver comes from e2e/install-browser.sh; nothing is downloaded.
	pw, err := playwright.Run(&playwright.RunOptions{SkipInstallBrowsers: true, Verbose: false})
	if err != nil {
		fmt.Fprintln(os.Stderr, "playwright (run e2e/install-browser.sh and set PLAYWRIGHT_DRIVER_PATH):", err)
		return 1
	}
	defer pw.Stop() //nolint:errcheck
	browser, err = pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath: playwright.String("/usr/bin/chromium"),
		Headless:       playwright.Bool(true),
		Args: []string{"--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--no-first-run"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "launch chromium:", err)
		return 1
	}
	defer browser.Close() //nolint:errcheck
	return m.Run()
}

// server is one running `ruckus serve`.
type server struct {
	URL   string
	DBURL string
	Store *store.Store
}

const (
	adminEmail    = "admin@example.com"
	adminPassword = "admin-password-1"
)

// startServer runs ruckus serve on a fresh database, with env added to its
// environment, and waits until it is ready.
func startServer(t *testing.T, env ...string) *server {
	t.Helper()
	pool := pgtest.NewDB(t)
	dbURL := pgtest.URL(t, pool)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(ruckusBin, "serve")
	cmd.Env = append(os.Environ(),
		"DATABASE_URL="+dbURL, "RUCKUS_ADDR="+addr, "RUCKUS_PASSWORD_COST=4",
		"RUCKUS_ADMIN_EMAIL="+adminEmail, "RUCKUS_ADMIN_PASSWORD="+adminPassword,
		// A port of its own for /metrics: servers of other tests (and other
		// programs on this machine) may be listening on the default.
		"RUCKUS_METRICS_ADDR=127.0.0.1:0")
	cmd.Env = append(cmd.Env, env...)
	logFile, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("server log:\n%s", b)
		}
	})
	s := &server{URL: "http://" + addr, DBURL: dbURL, Store: store.New(pool)}
	testkit.WaitFor(t, "the server to become ready", func() bool {
		res, err := http.Get(s.URL + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	})
	return s
}

// newPage opens a page in a fresh browser context (its own cookies).
func newPage(t *testing.T, width, height int) playwright.Page {
	t.Helper()
	return newPageIn(t, width, height, "en-US")
}

// newPageIn is newPage in a browser whose language is locale ("de-DE"): it
// sends that Accept-Language.
func newPageIn(t *testing.T, width, height int, locale string) playwright.Page {
	t.Helper()
	ctx, err := browser.NewContext(playwright.BrowserNewContextOptions{
		Viewport: &playwright.Size{Width: width, Height: height},
		Locale:   playwright.String(locale),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ctx.Close() })
	ctx.SetDefaultTimeout(10000)
	page, err := ctx.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	return page
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func expect(t *testing.T) playwright.PlaywrightAssertions {
	return playwright.NewPlaywrightAssertions(10000)
}

func signIn(t *testing.T, page playwright.Page, base, email, password string) {
	t.Helper()
	signInIn(t, page, base, email, password, i18n.Default().Lang("en"))
}

// signInIn signs in on a page whose labels are in tr's language.
func signInIn(t *testing.T, page playwright.Page, base, email, password string, tr *i18n.Localizer) {
	t.Helper()
	_, err := page.Goto(base + "/signin")
	must(t, err)
	must(t, page.GetByLabel(tr.T("signin.email")).Fill(email))
	must(t, page.GetByLabel(tr.T("signin.password")).Fill(password))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: tr.T("signin.submit")}).Click())
}

// screenshot saves the whole page as name.png in the screenshots folder;
// a name with a folder ("de/home-desktop") goes into that subfolder.
func screenshot(t *testing.T, page playwright.Page, name string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(filepath.Join(screenshotDir, name)), 0o755))
	_, err := page.Screenshot(playwright.PageScreenshotOptions{
		Path:     playwright.String(filepath.Join(screenshotDir, name+".png")),
		FullPage: playwright.Bool(true),
	})
	must(t, err)
}

// docsImage copies the screenshot shot (as screenshot saved it) to
// docs/images/NAME.png when RUCKUS_DOCS_IMAGES names that folder (make
// docs-images), so the documentation's pictures are the browser tests'
// own and never drawn by hand.
func docsImage(t *testing.T, shot, name string) {
	t.Helper()
	dir := os.Getenv("RUCKUS_DOCS_IMAGES")
	if dir == "" {
		return
	}
	b, err := os.ReadFile(filepath.Join(screenshotDir, shot+".png"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644))
	t.Logf("docs image %s.png from %s.png", name, shot)
}

func TestSignInSettingsAndSignOut(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t)
	page := newPage(t, 1280, 800)
	ex := expect(t)

	// A visitor is sent to sign in and comes back where they were going.
	_, err := page.Goto(s.URL + "/settings")
	must(t, err)
	must(t, ex.Page(page).ToHaveURL(s.URL+"/signin?next=%2Fsettings"))
	must(t, page.GetByLabel("Email").Fill(adminEmail))
	must(t, page.GetByLabel("Password").Fill("wrong password"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Sign in"}).Click())
	must(t, ex.Locator(page.GetByTestId("signin-error")).ToHaveText("Wrong email or password, or the account is disabled."))
	must(t, page.GetByLabel("Password").Fill(adminPassword))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Sign in"}).Click())
	must(t, ex.Page(page).ToHaveURL(s.URL+"/settings"))

	// Create an API token through htmx; it is shown once and works.
	must(t, page.GetByLabel("Token name").Fill("ci"))
	must(t, page.GetByTestId("create-token").Click())
	tokenLoc := page.GetByTestId("new-token")
	must(t, ex.Locator(tokenLoc).ToContainText("rk_"))
	token, err := tokenLoc.TextContent()
	must(t, err)
	screenshot(t, page, "settings-desktop")
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(token))
	res, err := http.DefaultClient.Do(req)
	must(t, err)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("token made in the browser: API answered %d", res.StatusCode)
	}

	// Revoke it, confirming the dialog.
	page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Revoke"}).Click())
	must(t, ex.Locator(page.Locator(`table[data-testid="tokens"] tbody tr`)).ToContainText("revoked"))
	res, err = http.DefaultClient.Do(req)
	must(t, err)
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("revoked token: API answered %d, want 401", res.StatusCode)
	}

	// Home shows the (empty) fleet; signing out says so.
	must(t, page.GetByTestId("brand").Click())
	must(t, ex.Locator(page.GetByTestId("no-agents")).ToBeVisible())
	must(t, page.GetByTestId("signout").Click())
	must(t, ex.Page(page).ToHaveURL(s.URL+"/signin"))
	must(t, ex.Locator(page.GetByTestId("flash")).ToHaveText("You have been signed out."))
	_, err = page.Goto(s.URL + "/")
	must(t, err)
	must(t, ex.Page(page).ToHaveURL(s.URL+"/signin?next=%2F"))
}

func TestAdminCreatesUserWhoIsKeptOutOfAdmin(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t)
	admin := newPage(t, 1280, 800)
	ex := expect(t)
	signIn(t, admin, s.URL, adminEmail, adminPassword)
	must(t, admin.GetByTestId("nav-admin-users").Click())
	must(t, admin.GetByLabel("Email").Fill("grace@example.com"))
	must(t, admin.GetByLabel("Name").Fill("Grace"))
	must(t, admin.GetByLabel("Password (8 to 72 characters)").Fill("grace-password"))
	must(t, admin.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Create user"}).Click())
	must(t, ex.Locator(admin.GetByTestId("user-created")).ToHaveText("User grace@example.com created."))
	must(t, ex.Locator(admin.Locator(`table[data-testid="users"]`)).ToContainText("grace@example.com"))
	screenshot(t, admin, "admin-users-desktop")

	user := newPage(t, 390, 844)
	signIn(t, user, s.URL, "grace@example.com", "grace-password")
	must(t, ex.Locator(user.GetByRole("heading", playwright.PageGetByRoleOptions{Name: "Welcome, Grace"})).ToBeVisible())
	must(t, ex.Locator(user.GetByTestId("nav-admin-users")).ToHaveCount(0))
	screenshot(t, user, "home-mobile")
	_, err := user.Goto(s.URL + "/admin/users")
	must(t, err)
	must(t, ex.Locator(user.GetByTestId("error-page")).ToContainText("This page is for administrators."))

	// Disabling her signs her out at once.
	admin.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
	row := admin.Locator(`tr:has-text("grace@example.com")`)
	must(t, row.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Disable"}).Click())
	must(t, ex.Locator(row).ToContainText("disabled"))
	_, err = user.Goto(s.URL + "/settings")
	must(t, err)
	must(t, ex.Page(user).ToHaveURL(s.URL+"/signin?next=%2Fsettings"))
	screenshot(t, user, "signin-mobile")
}

func TestUploadDatasetByDragAndDrop(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t)
	page := newPage(t, 1280, 800)
	ex := expect(t)
	signIn(t, page, s.URL, adminEmail, adminPassword)
	must(t, page.GetByTestId("nav-datasets").Click())
	must(t, ex.Locator(page.GetByTestId("no-datasets")).ToBeVisible())

	// A file with an error first: the errors appear under the form, by line.
	drop(t, page, "broken.jsonl", "{\"prompt\":\"fine\"}\n{\"prompt\":\n")
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Upload"}).Click())
	must(t, ex.Locator(page.GetByTestId("upload-error")).ToHaveCount(1))
	must(t, ex.Locator(page.GetByTestId("upload-error").First()).ToContainText("2"))
	screenshot(t, page, "datasets-errors-desktop")

	content := ""
	for i := 1; i <= 30; i++ {
		content += fmt.Sprintf("{\"id\":\"q%d\",\"prompt\":\"Question %d?\",\"reference\":\"%d\"}\n", i, i, i)
	}
	must(t, page.GetByTestId("upload-form").GetByLabel("Name").Fill("Thirty questions"))
	drop(t, page, "thirty.jsonl", content)
	must(t, ex.Locator(page.Locator("#dropzone-text")).ToContainText("thirty.jsonl"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Upload"}).Click())
	must(t, ex.Locator(page.GetByTestId("dataset-name")).ToHaveText("Thirty questions"))
	must(t, ex.Locator(page.GetByTestId("dataset-count")).ToHaveText("30"))
	must(t, ex.Locator(page.Locator(`table[data-testid="preview"] tbody tr`)).ToHaveCount(20))
	must(t, ex.Locator(page.GetByTestId("flash")).ToContainText("30 items"))
	screenshot(t, page, "dataset-desktop")

	page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
	must(t, page.GetByTestId("delete-dataset").Click())
	must(t, ex.Page(page).ToHaveURL(s.URL+"/datasets"))
	must(t, ex.Locator(page.GetByTestId("no-datasets")).ToBeVisible())
}

// drop drops a file onto the upload zone as a person dragging it from
// their desktop would.
func drop(t *testing.T, page playwright.Page, name, content string) {
	t.Helper()
	dt, err := page.EvaluateHandle(`([name, content]) => {
		const dt = new DataTransfer();
		dt.items.add(new File([content], name, { type: "application/json" }));
		return dt;
	}`, []string{name, content})
	must(t, err)
	must(t, page.GetByTestId("dropzone").DispatchEvent("drop", map[string]any{"dataTransfer": dt}))
}

func TestAdminAddsModelWithEstimatedMemory(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t)
	page := newPage(t, 1280, 800)
	ex := expect(t)
	signIn(t, page, s.URL, adminEmail, adminPassword)
	must(t, page.GetByTestId("nav-admin-models").Click())
	must(t, page.GetByLabel("Name (Hugging Face id)").Fill("meta-llama/Llama-3.1-8B-Instruct"))
	must(t, page.GetByLabel("Parameters (billions)").Fill("8"))
	_, err := page.GetByLabel("Quantisation").SelectOption(playwright.SelectOptionValues{Values: &[]string{"fp8"}})
	must(t, err)
	must(t, page.GetByLabel("Context length (tokens)").Fill("131072"))
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Add model"}).Click())
	row := page.GetByTestId("model-meta-llama/Llama-3.1-8B-Instruct")
	must(t, ex.Locator(row.GetByTestId("model-memory")).ToHaveText("≈ 9.6 GB (estimated)"))
	screenshot(t, page, "admin-models-desktop")
	must(t, row.GetByRole("button", playwright.LocatorGetByRoleOptions{Name: "Retire"}).Click())
	must(t, ex.Locator(page.GetByTestId("model-meta-llama/Llama-3.1-8B-Instruct")).ToContainText("retired"))
}

func TestCreateBenchmarkWithPreview(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t)
	ctx := context.Background()
	page := newPage(t, 1280, 800)
	ex := expect(t)
	signIn(t, page, s.URL, adminEmail, adminPassword)
	testkit.Model(ctx, t, s.Store, &testkit.ModelOpts{Name: "Qwen/Qwen2.5-0.5B-Instruct", Quantization: "bf16", ContextLength: 32768})
	testkit.Agent(ctx, t, s.Store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	must(t, page.GetByTestId("nav-datasets").Click())
	drop(t, page, "three.jsonl", "{\"prompt\":\"a\"}\n{\"prompt\":\"b\"}\n{\"prompt\":\"c\"}\n")
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Upload"}).Click())
	must(t, ex.Locator(page.GetByTestId("dataset-count")).ToHaveText("3"))

	must(t, page.GetByTestId("nav-benchmarks").Click())
	must(t, page.GetByTestId("new-benchmark").Click())
	must(t, page.GetByLabel("Name", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill("Browser benchmark"))
	_, err := page.Locator(`select[name="dataset_id"]`).SelectOption(playwright.SelectOptionValues{Labels: &[]string{"three (3 items)"}})
	must(t, err)
	for i, rt := range []string{"sim", "vllm"} {
		sel := func(field, v string) {
			_, err := page.Locator(fmt.Sprintf(`select[name="target_%d_%s"]`, i, field)).SelectOption(playwright.SelectOptionValues{Values: &[]string{v}})
			must(t, err)
		}
		sel("model", "Qwen/Qwen2.5-0.5B-Instruct")
		sel("runtime", rt)
		sel("hardware", "cpu-2c")
	}
	must(t, page.GetByTestId("preview").Click())
	must(t, ex.Locator(page.GetByTestId("plan-run")).ToHaveCount(2))
	must(t, ex.Locator(page.GetByTestId("plan-run").Nth(1)).ToContainText("waiting for an agent"))
	screenshot(t, page, "benchmark-new-desktop")
	must(t, page.GetByTestId("launch").Click())
	must(t, ex.Locator(page.GetByTestId("benchmark-name")).ToHaveText("Browser benchmark"))
	must(t, ex.Locator(page.GetByTestId("run-waiting")).ToHaveCount(1))
	page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
	must(t, page.GetByTestId("cancel-benchmark").Click())
	must(t, ex.Locator(page.GetByTestId("run-state").First()).ToHaveText("cancelled"))
	must(t, ex.Locator(page.GetByTestId("run-state").Nth(1)).ToHaveText("cancelled"))
	screenshot(t, page, "benchmark-desktop")
}

func TestJobUIIsForAdminsOnly(t *testing.T) {
	t.Parallel() // its own server, database and browser context
	s := startServer(t)
	admin := newPage(t, 1280, 800)
	ex := expect(t)
	signIn(t, admin, s.URL, adminEmail, adminPassword)
	must(t, admin.GetByTestId("nav-admin-jobs").Click())
	// River's UI lists its queues; the server's own queue is there.
	must(t, admin.GetByText("Queues").First().Click())
	must(t, ex.Locator(admin.GetByText("server", playwright.PageGetByTextOptions{Exact: playwright.Bool(true)}).First()).ToBeVisible())
	screenshot(t, admin, "admin-jobs-desktop")

	if _, err := s.Store.CreateUser(context.Background(), store.NewUser{Email: "u@example.com", PasswordHash: mustHash(t, "user-password"), Role: store.RoleUser}); err != nil {
		t.Fatal(err)
	}
	user := newPage(t, 1280, 800)
	signIn(t, user, s.URL, "u@example.com", "user-password")
	res, err := user.Goto(s.URL + "/admin/jobs")
	must(t, err)
	if res.Status() != 403 {
		t.Fatalf("a user on the job UI: %d", res.Status())
	}
}

func mustHash(t *testing.T, pw string) string {
	t.Helper()
	p, err := auth.NewPasswords(4)
	must(t, err)
	h, err := p.Hash(pw)
	must(t, err)
	return h
}
