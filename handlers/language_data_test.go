package handlers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// postFormIn is a form POST, with the CSRF token the client last saw, from a
// browser asking for acceptLanguage, with further headers as name/value pairs.
func (c *client) postFormIn(path string, form url.Values, acceptLanguage string, header ...string) response {
	if form.Get("_csrf") == "" {
		form.Set("_csrf", c.csrf)
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept-Language", acceptLanguage)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return c.do(req)
}

// apiIn is an API GET from a browser asking for acceptLanguage: its error,
// if any, and status.
func apiIn(t *testing.T, e *env, path, token, acceptLanguage string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Accept-Language", acceptLanguage)
	req.Header.Set("Authorization", "Bearer "+token)
	r, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var body struct {
		Error string `json:"error"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	return r.StatusCode, body.Error
}

// The generate form in German: its heading, a number that does not parse
// said beside its field, and the flash of the dataset it made.
func TestGenerateFormInGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.getIn("/datasets", "de")
	if got := page.text(`#generate h2`); got != "Einen synthetischen Datensatz erzeugen" {
		t.Errorf("German heading of the generate form: %q", got)
	}
	if got := page.text(`[data-testid="generate-button"]`); got != "Erzeugen" {
		t.Errorf("German button: %q", got)
	}
	if got, _ := page.doc.Find(`form[data-testid="upload-form"]`).Attr("data-upload-failed"); !strings.Contains(got, "Verbindung ist abgebrochen") {
		t.Errorf("upload.js's message for a lost connection, in German: %q", got)
	}
	form := url.Values{"kind": {"random"}, "count": {"lots"}, "seed": {"3"}, "endpoint": {"chat"},
		"input.dist": {"fixed"}, "input.value": {"20"}, "output.dist": {"fixed"}, "output.value": {"16"}}
	res := c.postFormIn("/datasets/generate", form, "de", "HX-Request", "true")
	if got := res.text(`[data-testid="error-count"]`); res.status != 422 || got != "eine ganze Zahl ab 0" {
		t.Fatalf("a count that is no number, in German: %d %q", res.status, got)
	}
	if en := c.postFormIn("/datasets/generate", form, "en", "HX-Request", "true"); en.text(`[data-testid="error-count"]`) != "a whole number from 0" {
		t.Errorf("the same in English: %q", en.text(`[data-testid="error-count"]`))
	}
	form.Set("count", "12")
	form.Set("name", "Zwölf")
	res = c.postFormIn("/datasets/generate", form, "de")
	if res.status != 303 {
		t.Fatalf("generate: %d %.300s", res.status, res.body)
	}
	detail := c.getIn(res.header.Get("Location"), "de")
	if got := detail.text(`[data-testid="flash"]`); got != "Datensatz „Zwölf“ erzeugt: 12 Einträge." {
		t.Errorf("German flash after generating: %q", got)
	}
}

// The variants page in German: heading, a variant's kind and its
// difference with German decimals.
func TestVariantsPageInGerman(t *testing.T) {
	t.Parallel()
	w := newVariantsWorld(t)
	c := w.e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.getIn(fmt.Sprintf("/datasets/%d/variants", w.datasetID), "de")
	if page.status != 200 || !strings.HasPrefix(page.text("h1"), "Varianten auf ") {
		t.Fatalf("variants page in German: %d h1 %q", page.status, page.text("h1"))
	}
	row := func(run int64, cell string) string {
		return page.text(fmt.Sprintf(`[data-testid="variant-run-%d"] [data-testid="%s"]`, run, cell))
	}
	if got := row(w.ft, "variant-kind"); got != "Feinabstimmung von m/small" {
		t.Errorf("the fine-tune's kind in German: %q", got)
	}
	if got := row(w.base, "variant-kind"); got != "Basismodell" {
		t.Errorf("the base's kind in German: %q", got)
	}
	if got := row(w.ft, "variant-delta"); !strings.HasPrefix(got, "+0,250 [") || !strings.Contains(got, ", signifikant (mcnemar-exact, p = 0,") {
		t.Errorf("the fine-tune's difference in German: %q", got)
	}
}

// The fleet pages in German: the list, an error and a flash of the
// browser's submission, the report's words and numbers, and an error of
// the report's download that the API still says in English.
func TestFleetPagesInGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	f := newFleetFixture(t, e, tok)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	list := c.getIn("/fleets", "de")
	if list.text("h1") != "Flotten" || list.text(`[data-testid="no-fleets"]`) != "Noch keine Flotten." {
		t.Fatalf("fleets page in German: h1 %q, %q", list.text("h1"), list.text(`[data-testid="no-fleets"]`))
	}
	send := func(action, manifest string) response {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("_csrf", c.csrf)
		_ = mw.WriteField("action", action)
		if manifest != "" {
			fw, _ := mw.CreateFormFile("manifest", "fleet.json")
			_, _ = fw.Write([]byte(manifest))
		}
		_ = mw.Close()
		req := httptest.NewRequest(http.MethodPost, "/fleets", &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		req.Header.Set("Accept-Language", "de")
		return c.do(req)
	}
	if res := send("preview", ""); res.status != 422 || !strings.HasSuffix(res.text(`[data-testid="fleet-error"]`), ": Wählen Sie eine Flottenmanifest-Datei zum Hochladen.") {
		t.Errorf("no file, in German: %d %q", res.status, res.text(`[data-testid="fleet-errors"]`))
	}
	if res := send("preview", f.manifest("web")); res.status != 200 || res.text("h3") != "Es würde 4 Läufe anlegen" {
		t.Errorf("preview in German: %d %q", res.status, res.text("h3"))
	}
	res := send("launch", f.manifest("web"))
	if res.status != 303 {
		t.Fatalf("launch: %d %.300s", res.status, res.body)
	}
	loc := res.header.Get("Location")
	page := c.getIn(loc, "de")
	if got := page.text(`[data-testid="flash"]`); got != "Flotte web gestartet: 4 Läufe eingereiht." {
		t.Errorf("German flash after launching: %q", got)
	}
	if page.text(`[data-testid="fleet-name"]`) != "Flotte web" || page.text(`[data-testid="fleet-success-rate"]`) != "0,0 %" ||
		!strings.Contains(page.text(`[data-testid="fleet-totals"]`), "Erfolgsquote") {
		t.Errorf("fleet report in German: %q", page.text(`[data-testid="fleet-totals"]`))
	}
	if got := page.text(`[data-testid="summary-total_tests"] th`); got != "Tests" {
		t.Errorf("summary label in German: %q", got)
	}
	if got := page.text(`[data-testid="summary-success_rate"]`); got != "Erfolgsquote0,0 %" {
		t.Errorf("summary success rate in German: %q", got)
	}
	if en := c.getIn(loc, "en"); en.text(`[data-testid="summary-success_rate"]`) != "success rate0.0 %" {
		t.Errorf("summary success rate in English: %q", en.text(`[data-testid="summary-success_rate"]`))
	}
	bad := c.getIn(loc+"/report?format=xml", "de")
	if bad.status != 400 || !strings.Contains(bad.text("main"), "format: json, csv oder html verwenden") {
		t.Errorf("a wrong format on the page, in German: %d %q", bad.status, bad.text("main"))
	}
	if status, msg := apiIn(t, e, "/api/v1"+loc+"/report?format=xml", tok, "de"); status != 400 || msg != "format: use json, csv or html" {
		t.Errorf("a wrong format in the API for a German browser: %d %q, want English", status, msg)
	}
}

// The leaderboard and a model's history in German: headings, words and
// numbers.
func TestLeaderboardAndHistoryInGerman(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	_, r1 := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 0, right: below(36), tps: 100, e2e: 200})
	c := h.e.client()
	c.signIn("ada@example.com", "correct horse")
	lb := c.getIn(fmt.Sprintf("/datasets/%d/leaderboard", h.ds), "de")
	if lb.status != 200 || lb.text("h1") != "Rangliste: hist" {
		t.Fatalf("leaderboard in German: %d h1 %q", lb.status, lb.text("h1"))
	}
	if got := lb.text(`[data-testid="filter-sort"] option[value="speed"]`); got != "Geschwindigkeit (schnellste zuerst)" {
		t.Errorf("sort option in German: %q", got)
	}
	// The steady window's output tokens/s (about 100), in German digits.
	tps := strings.Replace(fmt.Sprintf("%.1f", keptTPS(t, h.e, r1, 100)), ".", ",", 1)
	if got := lb.text(fmt.Sprintf(`[data-testid="leaderboard-%d"] [data-testid="lb-speed"]`, r1)); got != tps {
		t.Errorf("tokens/s in German: %q, want %q", got, tps)
	}
	hist := c.getIn(fmt.Sprintf("/datasets/%d/history?model=m/a&metric=throughput", h.ds), "de")
	if hist.status != 200 || !strings.HasPrefix(hist.text("h1"), "Verlauf von m/a auf hist") {
		t.Fatalf("history in German: %d h1 %q", hist.status, hist.text("h1"))
	}
	if got := hist.text(fmt.Sprintf(`[data-testid="point-%d"] [data-testid="point-value"]`, r1)); got != tps+" Token/s" {
		t.Errorf("a point's value in German: %q", got)
	}
	if none := c.getIn(fmt.Sprintf("/datasets/%d/history", h.ds), "de"); !strings.HasPrefix(none.text(`[data-testid="history-choose"]`), "Wählen Sie ein Modell") {
		t.Errorf("history without a model, in German: %q", none.text(`[data-testid="history-choose"]`))
	}
}

// Deleting a dataset from a German browser: the flash, then the error of
// deleting it again; an upload that is no multipart form is refused in
// German on the page and in English by the API.
func TestDatasetErrorsAndFlashesInGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	up := e.upload(tok, "sums.jsonl", []byte("{\"prompt\":\"What is 2+2?\",\"reference\":\"4\"}\n"), map[string]string{"name": "Summen"})
	if up.status != 201 {
		t.Fatalf("upload: %d %v", up.status, up.body)
	}
	id := int64(up.body["dataset_id"].(float64))
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	c.get(fmt.Sprintf("/datasets/%d", id))
	res := c.postFormIn(fmt.Sprintf("/datasets/%d/delete", id), url.Values{}, "de")
	if res.status != 303 {
		t.Fatalf("delete: %d %.300s", res.status, res.body)
	}
	if got := c.getIn("/datasets", "de").text(`[data-testid="flash"]`); got != "Datensatz „Summen“ gelöscht." {
		t.Errorf("German flash after deleting: %q", got)
	}

	req := httptest.NewRequest(http.MethodPost, "/datasets", strings.NewReader("not a form"))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Accept-Language", "de")
	res = c.do(req)
	if got := res.text(`[data-testid="upload-message"]`); res.status != 415 || got != "Senden Sie die Datei als multipart/form-data im Feld „file“." {
		t.Errorf("no multipart form, in German: %d %q", res.status, got)
	}
	api := e.api(http.MethodPost, "/api/v1/datasets", tok, strings.NewReader("not a form"), "text/plain")
	if api.status != 415 || api.body["error"] != `send the file as multipart/form-data in the field "file"` {
		t.Errorf("no multipart form in the API: %d %v", api.status, api.body)
	}
}
