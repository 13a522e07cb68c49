package handlers_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// TestVerdictSpeaksGerman: the verdict's lines, its margins' figures and
// the start page's summary of it in German; the same page in English is
// asserted by TestVerdictOnAFinishedBenchmark.
func TestVerdictSpeaksGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	price := 3.6
	b, _ := finishedBenchmark(t, e, tok, 30, &price, []fakeRun{
		smallFake,
		bigFake,
	})
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.getIn("/benchmarks/"+b, "de")
	v := page.doc.Find(`[data-testid="verdict"]`)
	line := func(id, part string) string {
		return squeeze(v.Find(`[data-testid="verdict-` + id + `"] [data-testid="verdict-` + part + `"]`).Text())
	}
	for _, tc := range []struct{ id, part, want string }{
		{"quality", "margin", "50 % höher als m/small (0,667), +0,333"},
		{"quality", "significance", "signifikant"},
		// The speed figure is the tested estimate: batch means over the
		// window from the first to the last send.
		{"speed", "value", "59,6 tokens/s"},
		{"speed", "margin", "98 % schneller als m/small (30,1 tokens/s), +29,5 tokens/s"},
		{"cost", "value", "$16,780 pro 1 Mio. Ausgabetokens"},
		{"latency", "significance", "nicht getestet"},
	} {
		if got := line(tc.id, tc.part); got != tc.want {
			t.Errorf("%s %s = %q, want %q", tc.id, tc.part, got, tc.want)
		}
	}
	if got := line("quality", "basis"); !strings.HasPrefix(got, "gepaarter Vergleich über 30 Einträge") {
		t.Errorf("the quality line's test is not named in German: %q", got)
	}
	if !strings.Contains(squeeze(v.Text()), "Am günstigsten pro 1 Mio. Ausgabetokens") {
		t.Errorf("the cost line's title is not German: %q", squeeze(v.Text()))
	}
	home := c.getIn("/", "de")
	got := squeeze(home.text(`[data-testid="recent-` + b + `"] [data-testid="recent-verdict"]`))
	if want := "Beste Qualität: m/big (50 % höher) · Am schnellsten: m/big (98 % schneller) · Am günstigsten: m/big (49 % günstiger)"; got != want {
		t.Errorf("home verdict line %q, want %q", got, want)
	}
}

// TestFirstStepsAndRefusalsSpeakGerman: the start page's first steps, the
// refusal to launch before they are done, a stale form and an
// administrators' page, for a German reader.
func TestFirstStepsAndRefusalsSpeakGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	first := c.getIn("/", "de").doc.Find(`[data-testid="first-steps"]`)
	for id, want := range map[string]string{
		"dataset": "Es gibt keinen Startdatensatz",
		"models":  "0 der zwei nötigen Modelle sind registriert: Bitten Sie einen Administrator",
		"runtime": "Kein aktiver Agent bedient die simulierte Laufzeit",
	} {
		if got := first.Find(`[data-testid="step-` + id + `"] [data-testid="step-fix"]`).Text(); !strings.Contains(got, want) {
			t.Errorf("step %s: %q lacks %q", id, got, want)
		}
	}
	if r := c.postIn("/first-benchmark", "de", url.Values{}); r.status != 303 {
		t.Fatalf("launching too early: %d", r.status)
	}
	if got := c.getIn("/", "de").text(`[data-testid="flash"]`); !strings.HasPrefix(got, "Der erste Benchmark kann noch nicht gestartet werden. Es gibt keinen Startdatensatz") {
		t.Errorf("flash %q", got)
	}
	if r := c.postIn("/first-benchmark", "de", url.Values{"_csrf": {"stale"}}); r.status != 403 ||
		!strings.Contains(r.text("main"), "Dieses Formular ist abgelaufen") {
		t.Errorf("a stale form: %d %q", r.status, r.text("main"))
	}
	if r := c.getIn("/admin/models", "de"); r.status != 403 || !strings.Contains(r.text("main"), "Diese Seite ist für Administratoren.") {
		t.Errorf("an administrators' page: %d %q", r.status, r.text("main"))
	}
}

// TestSignInAndWebhookFormsSpeakGerman: a failed sign-in and a refused
// webhook say what is wrong in German; the webhook API keeps English.
func TestSignInAndWebhookFormsSpeakGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	anon := e.client()
	anon.getIn("/signin", "de")
	if r := anon.postIn("/signin", "de", url.Values{"email": {"ada@example.com"}, "password": {"wrong"}}); !strings.Contains(r.text(`[data-testid="signin-error"]`), "Falsche E-Mail-Adresse oder falsches Passwort") {
		t.Errorf("failed sign-in in German: %d %q", r.status, r.text(`[data-testid="signin-error"]`))
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	c.getIn("/settings/webhooks", "de")
	r := c.postIn("/settings/webhooks", "de", url.Values{"url": {"https://example.com/hook"}, "secret": {"short"}, "events": {"benchmark.finished"}})
	if r.status != 422 || !strings.Contains(r.body, "Das Geheimnis muss 16 bis 256 Bytes Text sein") {
		t.Errorf("a refused webhook in German: %d %.400s", r.status, r.text("main"))
	}
	r = c.postIn("/settings/webhooks", "de", url.Values{"url": {"ftp://example.com/"}, "secret": {"sixteen-bytes-or-more"}, "events": {"benchmark.finished"}})
	if r.status != 422 || !strings.Contains(r.body, "Die URL: muss eine http://- oder https://-URL mit einem Host sein.") {
		t.Errorf("a refused webhook in German: %d %.400s", r.status, r.text("main"))
	}
	req := httptest.NewRequest(http.MethodPost, "/api/v1/webhooks",
		strings.NewReader(`{"url": "https://example.com/hook", "secret": "short", "events": ["benchmark.finished"]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Language", "de")
	req.Header.Set("Authorization", "Bearer "+e.token(u))
	res, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 422 || !strings.Contains(string(body), "The secret must be 16 to 256 bytes of text") {
		t.Errorf("the API for a German browser: %d %s", res.StatusCode, body)
	}
}
