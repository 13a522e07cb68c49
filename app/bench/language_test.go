package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
)

// TestManifestErrorsInTheReadersLanguage: a manifest's errors keep the
// English text the API answers and read in German on a page, numbers
// carried over.
func TestManifestErrorsInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	de := i18n.With(context.Background(), i18n.Default().Lang("de"))
	m, err := Decode(strings.NewReader(strings.Replace(goodYAML, "concurrency: 8", "concurrency: 5000", 1) +
		"  \n" + `scorer_options: {pattern: "x"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	errs := m.Validate()
	en, ger := errs.Map(), errs.MapText(de)
	for _, tc := range []struct{ path, en, de string }{
		{"load.concurrency", "between 1 and 4096 requests in flight", "zwischen 1 und 4096 gleichzeitige Anfragen"},
		{"scorer_options.pattern", `only the regex scorer takes a pattern (the scorer is "numeric")`, `nur der Bewerter regex nimmt ein Muster (der Bewerter ist "numeric")`},
	} {
		if en[tc.path] != tc.en {
			t.Errorf("%s: API text %q, want %q (all: %v)", tc.path, en[tc.path], tc.en, errs)
		}
		if ger[tc.path] != tc.de {
			t.Errorf("%s: German %q, want %q", tc.path, ger[tc.path], tc.de)
		}
	}

	// Decoding errors: the document named by its key, worded in each language.
	_, err = Decode(strings.NewReader("  \n"))
	var derrs Errors
	if !asErrors(err, &derrs) || len(derrs) != 1 || derrs[0].Message != "the manifest is empty" || derrs[0].Text(de) != "das Manifest ist leer" {
		t.Fatalf("empty manifest: %v", err)
	}
}

func asErrors(err error, out *Errors) bool {
	e, ok := err.(Errors)
	*out = e
	return ok
}
