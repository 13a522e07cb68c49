package handlers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// germanAdmin signs an administrator in without a language setting, so
// the browser's Accept-Language decides, and returns the client with a
// form poster that asks for German.
func germanAdmin(t *testing.T, e *env) (*client, func(path string, form url.Values) response) {
	t.Helper()
	e.createUser("root@example.com", "correct horse", store.RoleAdmin)
	c := e.client()
	c.signIn("root@example.com", "correct horse")
	post := func(path string, form url.Values) response {
		if form == nil {
			form = url.Values{}
		}
		form.Set("_csrf", c.csrf)
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept-Language", "de-DE,de;q=0.9")
		return c.do(req)
	}
	return c, post
}

func TestAdminAgentsAndHardwareInGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, post := germanAdmin(t, e)
	testkit.Agent(context.Background(), t, e.store, &testkit.AgentOpts{Name: "gpu-1", Host: "node1", Version: "v1", Runtimes: []string{"vllm"},
		Profile: store.HardwareProfile{Slug: "h100-80gb-x2", GPUName: "NVIDIA H100 80GB HBM3", GPUCount: 2, GPUMemoryBytes: 80e9, CPUCores: 32}})

	page := c.getIn("/admin/agents", "de")
	row := `[data-testid="agent-gpu-1"]`
	if page.text("h1") != "Agenten" || !strings.Contains(page.text("main"), "Ein entleerter Agent beendet seinen laufenden Lauf") {
		t.Fatalf("agents page in German: h1 %q, main %.300q", page.text("h1"), page.text("main"))
	}
	if got := page.text(row + ` td:nth-child(8)`); got != "frei" {
		t.Errorf("an idle agent's current run in German = %q, want frei", got)
	}
	if got := page.text(row + ` [data-testid="drain-gpu-1"]`); got != "Entleeren" {
		t.Errorf("drain button in German = %q", got)
	}
	if got := page.text(row + ` td:nth-child(7)`); !regexp.MustCompile(`^\d{2}\.\d{2}\.\d{4} \d{2}:\d{2}:\d{2}$`).MatchString(got) {
		t.Errorf("last heartbeat in German = %q, want dd.mm.yyyy hh:mm:ss", got)
	}
	if got := page.text("thead"); !strings.Contains(got, "Aktueller Lauf") || !strings.Contains(got, "Letztes Lebenszeichen") {
		t.Errorf("agents table head in German: %q", got)
	}
	if en := c.getIn("/admin/agents", "en"); en.text(row+` td:nth-child(8)`) != "idle" || en.text(row+` [data-testid="drain-gpu-1"]`) != "Drain" {
		t.Errorf("the same page in English: %q %q", en.text(row+` td:nth-child(8)`), en.text(row+` [data-testid="drain-gpu-1"]`))
	}

	hw := c.getIn("/admin/hardware", "de")
	hrow := `[data-testid="hardware-h100-80gb-x2"]`
	if got := hw.text("thead"); !strings.Contains(got, "GPU-Speicher") || !strings.Contains(got, "Preis pro Stunde (USD)") {
		t.Fatalf("hardware table head in German: %q", got)
	}
	if got, _ := hw.doc.Find(hrow + ` input[name="price"]`).Attr("aria-label"); got != "Preis pro Stunde für h100-80gb-x2" {
		t.Errorf("price field's label in German = %q", got)
	}
	if res := post("/admin/hardware/h100-80gb-x2/price", url.Values{"price": {"4.98"}}); res.status != 303 {
		t.Fatalf("set price: %d", res.status)
	}
	if got := c.getIn("/admin/hardware", "de").text(`[data-testid="flash"]`); got != "Preis für h100-80gb-x2 gespeichert." {
		t.Errorf("flash after setting a price in German = %q", got)
	}
}

func TestAdminModelsInGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, post := germanAdmin(t, e)

	page := c.getIn("/admin/models", "de")
	if page.text("h1") != "Modelle" || page.text("article h2") != "Ein Modell hinzufügen" {
		t.Fatalf("models page in German: h1 %q h2 %q", page.text("h1"), page.text("article h2"))
	}
	res := post("/admin/models", modelForm("Qwen/Qwen2.5-7B-Instruct", "7", "bf16", "32768", ""))
	if got := res.text(`[data-testid="model-saved"]`); res.status != 200 || got != "Modell Qwen/Qwen2.5-7B-Instruct hinzugefügt." {
		t.Fatalf("add model in German: %d %q", res.status, got)
	}
	row := `[data-testid="model-Qwen/Qwen2.5-7B-Instruct"]`
	if got := res.text(row + ` [data-testid="model-memory"]`); got != "≈ 16,8 GB (geschätzt)" {
		t.Errorf("estimated memory in German = %q", got)
	}
	if got := res.text(row + ` td:nth-child(5)`); got != "32.768" {
		t.Errorf("context length in German = %q, want 32.768", got)
	}
	if res := post("/admin/models", modelForm("Qwen/Qwen2.5-7B-Instruct", "7", "bf16", "32768", "")); res.status != 422 ||
		res.text(`[data-testid="error-name"]`) != "Ein Modell mit diesem Namen ist bereits registriert." {
		t.Fatalf("duplicate model in German: %d %q", res.status, res.text(`[data-testid="error-name"]`))
	}

	ms, err := e.store.ListModels(context.Background())
	if err != nil || len(ms) != 1 {
		t.Fatalf("models: %v %v", ms, err)
	}
	edit := c.getIn("/admin/models/"+itoa(ms[0].ID), "de")
	if got := edit.text("h1"); got != "Qwen/Qwen2.5-7B-Instruct bearbeiten" {
		t.Errorf("edit page's heading in German = %q", got)
	}
	if res := post("/admin/models/"+itoa(ms[0].ID), modelForm("Qwen/Qwen2.5-7B-Instruct", "7", "bf16", "32768", "")); res.status != 303 {
		t.Fatalf("save: %d %.300s", res.status, res.body)
	}
	if got := c.getIn("/admin/models", "de").text(`[data-testid="flash"]`); got != "Modell Qwen/Qwen2.5-7B-Instruct gespeichert." {
		t.Errorf("flash after saving in German = %q", got)
	}
}

func TestAdminProvidersInGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, post := germanAdmin(t, e)

	page := c.getIn("/admin/providers", "de")
	if page.text("h1") != "Entfernte Anbieter" || page.text(`[data-testid="no-provider-prices"]`) != "Es ist kein Preis gesetzt." {
		t.Fatalf("providers page in German: h1 %q, %q", page.text("h1"), page.text(`[data-testid="no-provider-prices"]`))
	}
	if res := post("/admin/providers/prices", url.Values{"provider": {"google"}, "model": {"gemini"},
		"input_per_1m": {"1"}, "output_per_1m": {"2"}}); res.status != 422 || res.text(`[data-testid="error-provider"]`) != "Wählen Sie einen Anbieter aus der Tabelle." {
		t.Fatalf("unknown provider in German: %d %q", res.status, res.text(`[data-testid="error-provider"]`))
	}
	if res := post("/admin/providers/prices", url.Values{"provider": {"anthropic"}, "model": {"claude-3-opus"},
		"input_per_1m": {"15"}, "output_per_1m": {"7.5"}}); res.status != 303 {
		t.Fatalf("set price: %d %.300s", res.status, res.body)
	}
	page = c.getIn("/admin/providers", "de")
	if got := page.text(`[data-testid="flash"]`); got != "Preis für anthropic:claude-3-opus gespeichert." {
		t.Errorf("flash after setting a price in German = %q", got)
	}
	if got := page.text(`[data-testid="price-anthropic-claude-3-opus"] [data-testid="price-output"]`); got != "7,5" {
		t.Errorf("output price in German = %q, want 7,5", got)
	}
	if got := c.getIn("/admin/providers", "en").text(`[data-testid="price-anthropic-claude-3-opus"] [data-testid="price-output"]`); got != "7.5" {
		t.Errorf("output price in English = %q, want 7.5", got)
	}
	if res := post("/admin/providers/prices/delete", url.Values{"provider": {"anthropic"}}); res.status != 400 ||
		!strings.Contains(res.text("main"), "Nennen Sie den zu entfernenden Preis") {
		t.Fatalf("removing a price without its model, in German: %d %q", res.status, res.text("main"))
	}
	if res := post("/admin/providers/prices/delete", url.Values{"provider": {"anthropic"}, "model": {"claude-3-opus"}}); res.status != 303 {
		t.Fatalf("remove price: %d", res.status)
	}
	if got := c.getIn("/admin/providers", "de").text(`[data-testid="flash"]`); got != "Preis für anthropic:claude-3-opus entfernt." {
		t.Errorf("flash after removing a price in German = %q", got)
	}
}

func TestAdminUsersErrorsInGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, post := germanAdmin(t, e)
	self, err := e.store.UserByEmail(context.Background(), "root@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if page := c.getIn("/admin/users", "de"); page.text("h1") != "Benutzer" {
		t.Fatalf("users page in German: h1 %q", page.text("h1"))
	}
	if res := post("/admin/users/"+itoa(self.ID)+"/disable", nil); res.status != 422 ||
		!strings.Contains(res.text("main"), "Das können Sie mit Ihrem eigenen Konto nicht tun.") {
		t.Fatalf("disabling oneself in German: %d %q", res.status, res.text("main"))
	}
	if res := post("/admin/users", url.Values{"email": {"root@example.com"}, "password": {"long enough"}}); res.status != 422 ||
		res.text(`[data-testid="error-email"]`) != "Ein Benutzer mit dieser E-Mail-Adresse existiert bereits." {
		t.Fatalf("an email taken, in German: %d %q", res.status, res.text(`[data-testid="error-email"]`))
	}
	if res := c.post("/admin/users/"+itoa(self.ID)+"/disable", nil); res.status != 422 ||
		!strings.Contains(res.text("main"), "You cannot do this to your own account.") {
		t.Fatalf("disabling oneself in English: %d %q", res.status, res.text("main"))
	}
}
