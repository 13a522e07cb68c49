package i18n_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ruckus/ruckus/app/i18n"
)

// root is the repository, where the sources that use the catalogue are.
const root = "../.."

// usedIn are the source trees that speak to people through the catalogue:
// the pages, the notifications, and the library packages whose validation
// and parse errors keep their message's key (app/valid).
var usedIn = []string{"views", "handlers", "app/notify",
	"app/valid", "app/conclude", "app/regress", "app/bench", "app/fleet", "app/dataset", "app/ingest", "app/sandbox", "app/score", "app/resultimport", "jobs"}

// keyCall finds a key passed to the catalogue: i18n.T(ctx, "key"),
// i18n.N(ctx, "key", n), loc.T("key") and loc.N("key", n); a message kept
// as data, i18n.M("key"), i18n.NewError("key"), valid.E(path, "key"),
// errs.Say(path, "key"); and a struct tag's message, msg:"key" or
// msg_min:"key" (a tag that is no key is a sentence of its own).
var keyCall = regexp.MustCompile(`\b(?:i18n\.[TN]\(\s*[\w.()]+,\s*|\.[TN]\(\s*|i18n\.(?:M|NewError)\(\s*|\b(?:valid\.)?E\([^,()]+,\s*|\.Say\([^,()]+,\s*|\bmsg(?:_\w+)?:)"([a-z0-9_]+(?:\.[a-z0-9_]+)+)"`)

// keyLiteral finds any string literal shaped like a key, for keys chosen in
// code (a status's message picked from a table) rather than named in a call.
var keyLiteral = regexp.MustCompile(`"([a-z0-9_]+(?:\.[a-z0-9_]+)+)"`)

func sources(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range usedIn {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || strings.HasSuffix(path, "_templ.go") || strings.HasSuffix(path, "_test.go") ||
				!(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".templ")) {
				return nil
			}
			b, err := os.ReadFile(path)
			out[path] = string(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestEveryLanguageHasEveryKey fails on a key one language has and another
// lacks, and on a message whose placeholders differ between languages.
func TestEveryLanguageHasEveryKey(t *testing.T) {
	c := i18n.Default()
	en := c.Keys("en")
	if len(en) == 0 {
		t.Fatal("the English catalogue is empty")
	}
	for _, l := range i18n.Languages[1:] {
		other := c.Keys(l.Code)
		for _, k := range en {
			if !slices.Contains(other, k) {
				t.Errorf("%s lacks %q", l.Code, k)
			}
		}
		for _, k := range other {
			if !slices.Contains(en, k) {
				t.Errorf("%s has %q, which English lacks", l.Code, k)
			}
		}
	}
}

var placeholder = regexp.MustCompile(`\{\{\s*\.(\w+)\s*\}\}`)

func TestPlaceholdersAgree(t *testing.T) {
	c := i18n.Default()
	for _, k := range c.Keys("en") {
		names := func(code string) []string {
			var out []string
			for _, m := range placeholder.FindAllStringSubmatch(c.Lang(code).N(k, 2), -1) {
				out = append(out, m[1])
			}
			sort.Strings(out)
			return slices.Compact(out)
		}
		// A rendered message holds no placeholder: a leftover one is a
		// template error (an unclosed {{ or a misspelt name).
		for _, l := range i18n.Languages {
			if got := names(l.Code); len(got) > 0 {
				t.Errorf("%s %q renders placeholders %v", l.Code, k, got)
			}
		}
	}
}

// TestEveryUsedKeyExistsAndEveryKeyIsUsed fails on a key the code asks for
// that the catalogue lacks, and on a catalogue key nothing uses.
func TestEveryUsedKeyExistsAndEveryKeyIsUsed(t *testing.T) {
	keys := i18n.Default().Keys("en")
	src := sources(t)
	literals := map[string]bool{}
	for path, text := range src {
		for _, m := range keyCall.FindAllStringSubmatch(text, -1) {
			if !slices.Contains(keys, m[1]) {
				t.Errorf("%s asks for %q, which the catalogue lacks", path, m[1])
			}
		}
		for _, m := range keyLiteral.FindAllStringSubmatch(text, -1) {
			literals[m[1]] = true
		}
	}
	for _, k := range keys {
		if !literals[k] {
			t.Errorf("catalogue key %q is used nowhere", k)
		}
	}
}

func TestLanguageChoice(t *testing.T) {
	c := i18n.Default()
	for _, tc := range []struct{ setting, accept, want string }{
		{"", "", "en"},
		{"", "de-DE,de;q=0.9,en;q=0.8", "de"},
		{"", "fr-FR,fr;q=0.9", "en"},
		{"", "fr;q=0.9,de;q=0.5", "de"},
		{"en", "de-DE", "en"},
		{"de", "en-US", "de"},
		{"", "garbage;;q=x", "en"},
	} {
		if got := c.For(tc.setting, tc.accept).Code(); got != tc.want {
			t.Errorf("For(%q, %q) = %s, want %s", tc.setting, tc.accept, got, tc.want)
		}
	}
}

func TestNumbersAndDates(t *testing.T) {
	c := i18n.Default()
	en, de := c.Lang("en"), c.Lang("de")
	for _, tc := range []struct {
		v      float64
		d      int
		en, de string
	}{
		{1234.5, 1, "1,234.5", "1.234,5"},
		{-1234567.891, 2, "-1,234,567.89", "-1.234.567,89"},
		{0.25, 3, "0.250", "0,250"},
		{999, 0, "999", "999"},
	} {
		if got := en.Num(tc.v, tc.d); got != tc.en {
			t.Errorf("en.Num(%v, %d) = %q, want %q", tc.v, tc.d, got, tc.en)
		}
		if got := de.Num(tc.v, tc.d); got != tc.de {
			t.Errorf("de.Num(%v, %d) = %q, want %q", tc.v, tc.d, got, tc.de)
		}
	}
	when := mustTime(t, "2026-03-07T14:05:00Z")
	if got := de.DateTime(when); got != "07.03.2026 14:05" {
		t.Errorf("de.DateTime = %q", got)
	}
	if got := en.Date(when); got != "2026-03-07" {
		t.Errorf("en.Date = %q", got)
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	when, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return when
}

// TestKeyDefinedTwiceIsRefused: two files of one language defining the same
// key would leave which one wins to file order; Load names both files.
func TestKeyDefinedTwiceIsRefused(t *testing.T) {
	fsys := fstest.MapFS{
		"locales/en/a.toml": {Data: []byte("[x]\ny = \"one\"\n")},
		"locales/en/b.toml": {Data: []byte("[x]\ny = \"two\"\n")},
		"locales/de/a.toml": {Data: []byte("[x]\ny = \"eins\"\n")},
	}
	_, err := i18n.Load(fsys)
	if err == nil || !strings.Contains(err.Error(), "locales/en/b.toml") || !strings.Contains(err.Error(), "locales/en/a.toml") {
		t.Fatalf("Load = %v, want an error naming both files", err)
	}
	delete(fsys, "locales/en/b.toml")
	c, err := i18n.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Lang("de").T("x.y"); got != "eins" {
		t.Errorf("de x.y = %q, want eins", got)
	}
}

func TestMark(t *testing.T) {
	c := i18n.Default()
	if got := c.Lang("de").Mark("-1234.50"); got != "-1234,50" {
		t.Errorf("de Mark = %q", got)
	}
	if got := c.Lang("en").Mark("1234.5"); got != "1234.5" {
		t.Errorf("en Mark = %q", got)
	}
}
