package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// getIn is a GET with the browser's Accept-Language.
func (c *client) getIn(path, acceptLanguage string) response {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Accept-Language", acceptLanguage)
	return c.do(req)
}

func TestPagesFollowAcceptLanguage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.client()
	de := c.getIn("/signin", "de-DE,de;q=0.9,en;q=0.5")
	if lang, _ := de.doc.Find("html").Attr("lang"); lang != "de" || de.text("h1") != "Anmelden" {
		t.Fatalf("German browser: lang=%q h1=%q", lang, de.text("h1"))
	}
	en := c.getIn("/signin", "fr-FR,fr;q=0.9")
	if lang, _ := en.doc.Find("html").Attr("lang"); lang != "en" || en.text("h1") != "Sign in" {
		t.Fatalf("French browser (no French): lang=%q h1=%q, want English", lang, en.text("h1"))
	}
	// An error page before any session is in the browser's language too.
	if res := c.getIn("/no-such-page", "de"); res.status != 404 || !strings.Contains(res.text("h1"), "Seite nicht gefunden") {
		t.Fatalf("404 in German: %d %q", res.status, res.text("h1"))
	}
}

func TestUsersLanguageSettingWinsOverTheBrowser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	if res := c.getIn("/", "en-US"); res.text(`[data-testid="nav-datasets"]`) != "Datasets" {
		t.Fatalf("English browser, no setting: nav says %q", res.text(`[data-testid="nav-datasets"]`))
	}
	c.get("/settings")
	if res := c.post("/settings/language", url.Values{"language": {"de"}}); res.status != 303 {
		t.Fatalf("saving the language: %d %.300s", res.status, res.body)
	}
	res := c.getIn("/settings", "en-US")
	if res.text(`[data-testid="nav-datasets"]`) != "Datensätze" || res.text("h1") != "Einstellungen" {
		t.Fatalf("setting German beats the English browser: nav %q h1 %q", res.text(`[data-testid="nav-datasets"]`), res.text("h1"))
	}
	if got := res.text(`[data-testid="flash"]`); got != "Sprache gespeichert." {
		t.Errorf("flash after saving = %q", got)
	}
	if v, _ := res.doc.Find(`select[name="language"] option[selected]`).Attr("value"); v != "de" {
		t.Errorf("the form shows setting %q, want de", v)
	}
	if res := c.post("/settings/language", url.Values{"language": {"xx"}}); res.status != 422 {
		t.Fatalf("unknown language: %d, want 422", res.status)
	}
	// Back to following the browser.
	c.post("/settings/language", url.Values{"language": {""}})
	if res := c.getIn("/", "en-US"); res.text(`[data-testid="nav-datasets"]`) != "Datasets" {
		t.Fatalf("after choosing the browser's language: nav says %q", res.text(`[data-testid="nav-datasets"]`))
	}
	// The JSON API stays English whatever the browser asks.
	apiError := func(lang string) string {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/me", nil)
		req.Header.Set("Accept-Language", lang)
		r, err := e.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		msg, _ := body["error"].(string)
		return msg
	}
	if en, de := apiError("en"), apiError("de"); en == "" || en != de {
		t.Fatalf("API error in English %q, for a German browser %q: want the same English", en, de)
	}
}

// TestNumbersAndDatesFollowTheLanguage uploads 1,200 items and reads the
// count, the size and the date in English and in German.
func TestNumbersAndDatesFollowTheLanguage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get("/datasets")
	action, _ := page.doc.Find(`form[data-testid="upload-form"]`).Attr("action")
	var b strings.Builder
	for i := range 1200 {
		fmt.Fprintf(&b, "{\"prompt\":\"What is %d+%d?\",\"reference\":\"%d\"}\n", i, i, 2*i)
	}
	body, ct := multipartBody(t, "many.jsonl", []byte(b.String()), map[string]string{"_csrf": c.csrf, "name": "Many"})
	req := httptest.NewRequest(http.MethodPost, action, body)
	req.Header.Set("Content-Type", ct)
	res := c.do(req)
	if res.status != 303 {
		t.Fatalf("upload: %d %.300s", res.status, res.body)
	}
	loc := res.header.Get("Location")
	en := c.getIn(loc, "en")
	de := c.getIn(loc, "de")
	if got := en.text(`[data-testid="dataset-count"]`); got != "1,200" {
		t.Errorf("English count = %q, want 1,200", got)
	}
	if got := de.text(`[data-testid="dataset-count"]`); got != "1.200" {
		t.Errorf("German count = %q, want 1.200", got)
	}
	facts := func(r response) string { return r.text(`table[data-testid="dataset-facts"]`) }
	if !regexp.MustCompile(`\d+\.\d KiB`).MatchString(facts(en)) || !regexp.MustCompile(`\d+,\d KiB`).MatchString(facts(de)) {
		t.Errorf("sizes: English %q, German %q", facts(en), facts(de))
	}
	if !regexp.MustCompile(`\d{4}-\d{2}-\d{2} \d{2}:\d{2}`).MatchString(facts(en)) {
		t.Errorf("English date not yyyy-mm-dd hh:mm: %q", facts(en))
	}
	if !regexp.MustCompile(`\d{2}\.\d{2}\.\d{4} \d{2}:\d{2}`).MatchString(facts(de)) {
		t.Errorf("German date not dd.mm.yyyy hh:mm: %q", facts(de))
	}
}

// TestErrorsSpeakTheReadersLanguage: a page says what is missing in the
// reader's language; the API says it in English whatever the browser asks.
func TestErrorsSpeakTheReadersLanguage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ada := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	for lang, want := range map[string]string{"de": "Diesen Benchmark gibt es nicht.", "en": "There is no such benchmark."} {
		res := c.getIn("/benchmarks/99999999", lang)
		if res.status != 404 || !strings.Contains(res.text("main"), want) {
			t.Errorf("%s: %d %q, want 404 saying %q", lang, res.status, res.text("main"), want)
		}
	}
	res := c.getIn("/benchmarks/0", "de")
	if want := "Diesen Benchmark gibt es nicht. (id muss eine ganze Zahl von 1 bis 9223372036854775807 sein (erhalten: \"0\"))"; res.status != 404 || !strings.Contains(res.text("main"), want) {
		t.Errorf("a path that is no id, in German: %d %q, want %q and the reason", res.status, res.text("main"), want)
	}
	if res := c.getIn("/nowhere/at/all", "de"); !strings.Contains(res.text("main"), "Unter /nowhere/at/all gibt es nichts.") {
		t.Errorf("an unknown page in German: %q", res.text("main"))
	}
	req := httptest.NewRequest(http.MethodGet, "/api/v1/benchmarks/99999999", nil)
	req.Header.Set("Accept-Language", "de")
	req.Header.Set("Authorization", "Bearer "+e.token(ada))
	r, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != 404 || body["error"] != "no such benchmark" {
		t.Errorf("API for a German browser: %d %v, want 404 \"no such benchmark\"", r.StatusCode, body)
	}
}
