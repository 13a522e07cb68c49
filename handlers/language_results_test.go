package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// A German browser reads a run's results page, an item's page and the LLM
// judge's section in German, with the decimal comma; the same page in
// English is unchanged.
func TestResultsPagesInGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	_, runID := runWithResults(t, e, tok, 10, func(i int) string { return fmt.Sprintf("answer %d", i) })
	endRun(t, e, runID)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	path := fmt.Sprintf("/runs/%d", runID)

	de := c.getIn(path, "de-DE,de;q=0.9")
	if de.status != 200 || !strings.HasPrefix(de.text(`[data-testid="results-title"]`), fmt.Sprintf("Lauf %d: m/small auf sim / cpu-2c", runID)) {
		t.Fatalf("German title: %d %q", de.status, de.text(`[data-testid="results-title"]`))
	}
	if got := de.text(`[data-testid="run-quality"]`); got != "Nicht bewertet." {
		t.Errorf("German quality line = %q", got)
	}
	if got := de.text(`[data-testid="results-filter"] button[type="submit"]`); got != "Filtern" {
		t.Errorf("German filter button = %q", got)
	}
	if got := de.text(`[data-testid="judge-section"] h2`); got != "LLM-Judge" {
		t.Errorf("German judge heading = %q", got)
	}
	if got := de.text(`[data-testid="judge-start"] > summary`); got != "Diesen Lauf mit einem LLM bewerten" {
		t.Errorf("German judge form = %q", got)
	}
	if got := de.text(`select[name="rubric"] option[value="correctness"]`); got != "Korrektheit gegenüber der Referenz" {
		t.Errorf("German rubric title = %q", got)
	}
	// Item 0's TTFT is 1 ms: "1,0" in German, "1.0" in English.
	if got := de.text(`[data-testid="result-0"] td:nth-of-type(5)`); got != "1,0" {
		t.Errorf("German TTFT = %q, want 1,0", got)
	}
	en := c.getIn(path, "en")
	if got := en.text(`[data-testid="result-0"] td:nth-of-type(5)`); got != "1.0" || en.text(`[data-testid="run-quality"]`) != "Not scored." {
		t.Errorf("English TTFT %q, quality %q", got, en.text(`[data-testid="run-quality"]`))
	}

	bad := c.getIn(path+"?min_score=two", "de")
	if got := bad.text(`[data-testid="filter-error"]`); bad.status != 422 || got != "Bewertung ≥ muss eine Zahl von 0 bis 1 sein" {
		t.Errorf("German filter error: %d %q", bad.status, got)
	}

	item := c.getIn(path+"/items/3", "de")
	heads := item.doc.Find("main h2").Text()
	if item.status != 200 || !strings.Contains(heads, "Antwort") || !strings.Contains(heads, "Anfrage") || !strings.Contains(heads, "Referenz") {
		t.Fatalf("German item page: %d headings %q", item.status, heads)
	}
	if got := item.text(`[data-testid="item-itl"]`); !strings.HasPrefix(got, "Latenz zwischen den Token") {
		t.Errorf("German ITL line = %q", got)
	}
}

// Errors, form messages and flashes of the results and judge handlers
// speak the reader's language; the API's stay English.
func TestResultsErrorsAndFlashesInGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	_, runID := runWithResults(t, e, tok, 10, func(i int) string { return fmt.Sprint(i) })
	endRun(t, e, runID)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	path := fmt.Sprintf("/runs/%d", runID)
	c.getIn(path, "de") // the form's CSRF token
	postIn := func(p string, form url.Values, lang string) response {
		form.Set("_csrf", c.csrf)
		req := httptest.NewRequest(http.MethodPost, p, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept-Language", lang)
		return c.do(req)
	}

	if res := c.getIn(path+"/items/1?sample=-1", "de"); res.status != 400 || !strings.Contains(res.text("main"), "sample muss eine ganze Zahl von 0 bis") {
		t.Errorf("German bad sample: %d %q", res.status, res.text("main"))
	}
	if res := c.getIn(path+"/results?format=xml", "de"); res.status != 400 || !strings.Contains(res.text("main"), `Format "xml": verwenden Sie csv, jsonl oder categories`) {
		t.Errorf("German bad export format: %d %q", res.status, res.text("main"))
	}
	req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/v1/runs/%d/results?format=xml", runID), nil)
	req.Header.Set("Accept-Language", "de")
	req.Header.Set("Authorization", "Bearer "+tok)
	r, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	r.Body.Close()
	if r.StatusCode != 400 || body["error"] != `format "xml": use csv, jsonl or categories` {
		t.Errorf("API for a German browser: %d %v, want the English message", r.StatusCode, body)
	}

	// The judge form's messages.
	judged := postIn(path+"/judge", url.Values{"judge_model": {"m/small"}, "rubric": {"custom"}}, "de")
	if got := judged.text(`[data-testid="judge-error-template"]`); judged.status != 422 || got != "schreiben Sie die Vorlage, die die eigene Rubrik verwendet" {
		t.Errorf("German judge template message: %d %q", judged.status, got)
	}
	if got := judged.text(`[data-testid="judge-error-target"]`); got != "wählen Sie ein Hardwareprofil und eine Laufzeitumgebung, die ein Agent bedient" {
		t.Errorf("German judge target message: %q", got)
	}

	// Scoring again: the scorer form's message, then the flash.
	if res := postIn(path+"/score", url.Values{"scorer": {"nonsense"}}, "de"); res.status != 422 || res.text(`[data-testid="error-scorer"]`) != "Wählen Sie einen Scorer aus der Liste." {
		t.Errorf("German unknown scorer: %d %q", res.status, res.text(`[data-testid="error-scorer"]`))
	}
	if res := postIn(path+"/score", url.Values{"scorer": {"exact"}}, "de"); res.status != 303 {
		t.Fatalf("rescoring: %d %.300s", res.status, res.body)
	}
	want := fmt.Sprintf("Lauf %d wird mit exact bewertet; die Seite zeigt die neuen Bewertungen, sobald das fertig ist.", runID)
	if got := c.getIn(path, "de").text(`[data-testid="flash"]`); got != want {
		t.Errorf("German flash = %q, want %q", got, want)
	}
}

// The verification of a run whose row changed names the row in German.
func TestAttestationInGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	_, runID := runWithResults(t, e, tok, 20, func(i int) string { return fmt.Sprintf("answer %d", i) })
	endRun(t, e, runID)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.getIn(fmt.Sprintf("/runs/%d/attestation", runID), "de")
	if got := page.text(`[data-testid="attestation-state"]`); page.status != 200 || !strings.Contains(got, "unverändert") {
		t.Fatalf("German intact run: %d %q", page.status, got)
	}
	if _, err := e.store.Pool().Exec(context.Background(), `UPDATE results SET e2e_ms = e2e_ms - 1 WHERE run_id = $1 AND idx = 7`, runID); err != nil {
		t.Fatal(err)
	}
	page = c.getIn(fmt.Sprintf("/runs/%d/attestation", runID), "de")
	if got := page.text(`[data-testid="attestation-state"]`); !strings.Contains(got, "verändert") || !strings.Contains(got, `Ergebniszeile idx 7 sample 0 (custom_id "c007") weicht von der signierten ab`) {
		t.Errorf("German changed row: %q", got)
	}
}
