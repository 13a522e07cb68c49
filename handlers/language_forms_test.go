package handlers_test

import (
	"net/url"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// The generate form's refusals beside their fields, in German for a German
// browser and as they always were in English: a maximum below the minimum
// (a step after the tags) and a count over the limit (a field's tag).
func TestGenerateFormErrorsInGerman(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createUser("ada@example.com", "correct horse", store.RoleUser)
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	c.getIn("/datasets", "de")
	form := url.Values{"kind": {"random"}, "count": {"200000"}, "seed": {"3"}, "endpoint": {"chat"},
		"input.dist": {"uniform"}, "input.min": {"20"}, "input.max": {"10"}, "output.dist": {"fixed"}, "output.value": {"16"}}
	de := c.postIn("/datasets/generate", "de-DE,de;q=0.9", form)
	if de.status != 422 {
		t.Fatalf("bad form in German: %d %.300s", de.status, de.body)
	}
	if got := de.text(`[data-testid="error-input.max"]`); got != "mindestens min (20) und höchstens 131072 (erhalten: 10)" {
		t.Errorf("German maximum below the minimum: %q", got)
	}
	if got := de.text(`[data-testid="error-count"]`); got != "die Zahl der Einträge, Gespräche oder Anfragen: zwischen 1 und 100000" {
		t.Errorf("German count over the limit: %q", got)
	}
	en := c.postIn("/datasets/generate", "en", form)
	if got := en.text(`[data-testid="error-input.max"]`); en.status != 422 || got != "at least min (20) and at most 131072 (got 10)" {
		t.Errorf("English maximum below the minimum: %d %q", en.status, got)
	}
	if got := en.text(`[data-testid="error-count"]`); got != "the number of items, conversations or requests: between 1 and 100000" {
		t.Errorf("English count over the limit: %q", got)
	}
}
