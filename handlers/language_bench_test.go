package handlers_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// postIn posts a form, with the CSRF token the client last saw, from a
// browser asking for acceptLanguage.
func (c *client) postIn(path, acceptLanguage string, form url.Values) response {
	if form.Get("_csrf") == "" && c.csrf != "" {
		form.Set("_csrf", c.csrf)
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept-Language", acceptLanguage)
	return c.do(req)
}

// squeeze is s with its runs of white space made one space.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }

// The create form and its preview speak German to a German browser,
// numbers included, and English to an English one; so do the refusals of
// its fragments.
func TestNewBenchmarkPageInGerman(t *testing.T) {
	t.Parallel()
	_, c, ds := formEnv(t)
	de := c.getIn("/benchmarks/new", "de-DE,de;q=0.9")
	if de.status != 200 || de.text("h1") != "Neuer Benchmark" {
		t.Fatalf("German form: %d h1 %q", de.status, de.text("h1"))
	}
	if got := de.text(`select[name="target_0_model"] option[value="acme/large-70b"]`); got != "acme/large-70b (70B bf16, braucht ~168,0 GB)" {
		t.Errorf("German model option %q", got)
	}
	if got := de.text(`[data-testid="preview"]`); got != "Vorschau der Läufe" {
		t.Errorf("German preview button %q", got)
	}
	if got := de.text(`[data-testid="preset-quick"]`); got != "Schnelltest" {
		t.Errorf("German preset %q", got)
	}
	if got := de.text(`select[name="dataset_id"] option[value="` + ds + `"]`); !strings.HasSuffix(got, "Einträge)") {
		t.Errorf("German dataset option %q", got)
	}
	form := url.Values{"name": {"Zwei"}, "dataset_id": {ds}, "max_tokens": {"64"}, "load_kind": {"sequential"}, "action": {"preview"},
		"target_0_model": {"acme/small-1b"}, "target_0_runtime": {"sim"}, "target_0_hardware": {"cpu-2c"},
		"target_1_model": {"acme/large-70b"}, "target_1_runtime": {"sim"}, "target_1_hardware": {"cpu-2c"}}
	preview := c.postIn("/benchmarks/new", "de", form)
	if got := preview.text(`[data-testid="plan"] h2`); preview.status != 200 || got != "Vorschau: 2 Läufe" {
		t.Fatalf("German preview: %d %q %s", preview.status, got, preview.text(`[data-testid="benchmark-errors"]`))
	}
	if got := squeeze(preview.text(`[data-testid="plan-estimate"]`)); !strings.Contains(got, "Anfragen") || !strings.Contains(got, "pro Lauf); jeder Lauf dauert etwa") ||
		!strings.Contains(got, "Angenommen werden") {
		t.Errorf("German estimate %q", got)
	}
	en := c.postIn("/benchmarks/new", "en", form)
	if got := en.text(`[data-testid="plan"] h2`); got != "Preview: 2 runs" || !strings.Contains(en.text(`[data-testid="plan-estimate"]`), "Assuming") {
		t.Errorf("English preview: %q / %q", got, en.text(`[data-testid="plan-estimate"]`))
	}
	// A fragment's refusal, beside its field or as the error page.
	frag := c.getIn("/benchmarks/new/load?preset=nope", "de")
	if got := frag.text(`[data-testid="field-error"]`); frag.status != 422 || !strings.HasPrefix(got, "diese Vorlage gibt es nicht; die Vorlagen sind quick") {
		t.Errorf("German unknown preset: %d %q", frag.status, got)
	}
	if row := c.getIn("/benchmarks/new/target?i=50", "de"); row.status != 422 || !strings.Contains(row.body, "ein Zeilenindex von 0 bis 49") {
		t.Errorf("German bad row index: %d %.300s", row.status, row.body)
	}
}

// A finished benchmark's verdict speaks German to a German browser; its
// changes are refused and confirmed in the reader's language.
func TestVerdictAndBenchmarkChangesInGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	b, _ := finishedBenchmark(t, e, tok, 20, nil, []fakeRun{
		smallFake,
		bigFake,
	})
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	de := c.getIn("/benchmarks/"+b, "de")
	v := de.doc.Find(`[data-testid="verdict"]`)
	if de.status != 200 || v.Length() != 1 {
		t.Fatalf("German benchmark page: %d, %d verdicts", de.status, v.Length())
	}
	if got := squeeze(v.Find("h2").Text()); got != "Urteil" {
		t.Errorf("German verdict title %q", got)
	}
	if got := squeeze(v.Text()); !strings.Contains(got, "Vergleich von 2 abgeschlossenen Läufen.") ||
		!strings.Contains(got, "Die Qualität wird geordnet nach der Scorer-Identität exact") {
		t.Errorf("German verdict %q", got)
	}
	if got := squeeze(v.Find(`[data-testid="verdict-compare"]`).Text()); got != "Nebeneinander vergleichen" {
		t.Errorf("German compare link %q", got)
	}
	if got := squeeze(c.getIn("/benchmarks/"+b, "en").text(`[data-testid="verdict"]`)); !strings.Contains(got, "Comparing 2 finished runs.") {
		t.Errorf("English verdict %q", got)
	}

	// Refusals: another user's change, an empty change, deleting while
	// nothing is active works and says so.
	e.createUser("bob@example.com", "correct horse", store.RoleUser)
	if r := c.post("/benchmarks/"+b+"/visibility", url.Values{"visibility": {"shared"}}); r.status != 303 {
		t.Fatalf("share: %d", r.status)
	}
	bob := e.client()
	bob.signIn("bob@example.com", "correct horse")
	bob.get("/benchmarks/" + b)
	if r := bob.postIn("/benchmarks/"+b+"/rename", "de", url.Values{"name": {"Meins"}}); r.status != 403 ||
		!strings.Contains(r.text("main"), "Nur der Eigentümer oder ein Administrator darf diesen Benchmark ändern.") {
		t.Errorf("German refusal to a reader: %d %q", r.status, r.text("main"))
	}
	c.get("/benchmarks/" + b)
	if r := c.postIn("/benchmarks/"+b+"/rename", "de", url.Values{}); r.status != 422 ||
		!strings.Contains(r.text("main"), "Der Benchmark wurde nicht geändert: name geben Sie einen neuen Namen") {
		t.Errorf("German empty change: %d %q", r.status, r.text("main"))
	}
	if r := c.postIn("/benchmarks/"+b+"/rename", "de", url.Values{"name": {"Neu"}}); r.status != 303 {
		t.Fatalf("rename: %d", r.status)
	}
	if got := c.getIn("/benchmarks/"+b, "de").text(`[data-testid="flash"]`); got != "Benchmark umbenannt." {
		t.Errorf("German rename flash %q", got)
	}
	if r := c.postIn("/benchmarks/"+b+"/delete", "de", url.Values{}); r.status != 303 {
		t.Fatalf("delete: %d", r.status)
	}
	if got := c.getIn("/benchmarks", "de").text(`[data-testid="flash"]`); got != "Benchmark „Neu“ gelöscht. Seine Läufe und Ergebnisse bleiben erhalten." {
		t.Errorf("German delete flash %q", got)
	}
}
