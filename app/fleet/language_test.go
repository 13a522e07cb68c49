package fleet

import (
	"context"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
)

// TestFleetErrorsInTheReadersLanguage: a fleet manifest's errors keep the
// English text the API answers and read in German on a page, a
// scenario's errors under its path.
func TestFleetErrorsInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	de := i18n.With(context.Background(), i18n.Default().Lang("de"))
	doc := strings.Replace(goodManifest, "  - openai:gpt-4o-mini\n", "  - openai:gpt-4o-mini\n  - openai:gpt-4o-mini\n", 1)
	doc = strings.Replace(doc, "concurrency: 8,", "concurrency: -1,", 1)
	m, err := Decode(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	errs := m.Validate()
	en, ger := errs.Map(), errs.MapText(de)
	for _, tc := range []struct{ path, en, de string }{
		{"targets[2]", "the same target as targets[1]", "dasselbe Ziel wie targets[1]"},
		{"scenarios[0].load.concurrency", "between 1 and 4096 requests in flight", "zwischen 1 und 4096 gleichzeitige Anfragen"},
	} {
		if en[tc.path] != tc.en {
			t.Errorf("%s: API text %q, want %q (all: %v)", tc.path, en[tc.path], tc.en, errs)
		}
		if ger[tc.path] != tc.de {
			t.Errorf("%s: German %q, want %q", tc.path, ger[tc.path], tc.de)
		}
	}
}
