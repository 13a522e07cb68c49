package handlers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/handlers"
)

// The settings page's sentence on the API's limits is German on a German
// page (the 429 answer itself stays English, as the API's are).
func TestSettingsRateLimitsSpeakGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *handlers.Deps) {
		d.APIRatePerToken, d.APIRatePerUser, d.APIRateWindow = 600, 1200, time.Minute
	})
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	want := map[string]string{
		"de": "API-Anfragen sind auf höchstens 600 pro Token und 1200 pro Benutzer je 1m0s begrenzt; darüber hinaus antwortet die API mit 429 und Retry-After.",
		"en": "API requests are limited to at most 600 per token and 1200 per user every 1m0s; past that the API answers 429 with Retry-After.",
	}
	for lang, w := range want {
		page := c.getIn("/settings", lang)
		if got := page.text(`[data-testid="api-limits"]`); page.status != 200 || got != w {
			t.Errorf("%s settings page: %d %q, want %q", lang, page.status, got, w)
		}
	}
	e2 := newEnv(t, func(d *handlers.Deps) { d.APIRatePerToken, d.APIRatePerUser, d.APIRateWindow = 0, 7, 10*time.Second })
	e2.createUser("bo@example.com", "correct horse", store.RoleUser)
	c2 := e2.client()
	c2.signIn("bo@example.com", "correct horse")
	if got := c2.getIn("/settings", "de").text(`[data-testid="api-limits"]`); !strings.Contains(got, "höchstens 7 pro Benutzer je 10s") || strings.Contains(got, "Token") {
		t.Errorf("a per-user limit alone: %q", got)
	}
}
