package views

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/a-h/templ/parser/v2"
	"github.com/a-h/templ/parser/v2/visitor"
)

// notLanguage are the words a template may write directly because no
// language translates them: the product's name, units and metric symbols
// that read the same in every language of the interface. Everything else
// with a letter in it goes through the catalogue (app/i18n).
var notLanguage = map[string]bool{
	"Ruckus": true,                                                         // the product's name
	"SHA":    true, "CSV": true, "JSONL": true, "HTML": true, "JSON": true, // SHA-256
	"API": true,                                                             // the footer's link to the API docs
	"ms":  true, "s": true, "GB": true, "GiB": true, "MB": true, "KB": true, // units
	"p50": true, "p90": true, "p95": true, "p99": true, // percentiles
	"TTFT": true, "TPOT": true, "ITL": true, "USD": true, "tok": true,
}

// codeElements hold code, commands and headers, which are not language.
var codeElements = map[string]bool{"code": true, "kbd": true, "pre": true, "samp": true}

// userFacingAttrs are the attributes a person reads (or hears).
var userFacingAttrs = map[string]bool{
	"title": true, "placeholder": true, "aria-label": true, "alt": true, "hx-confirm": true,
}

var entity = regexp.MustCompile(`&[#a-zA-Z0-9]+;`)

// writtenDirectly reports the words of s that are language: s with entities
// removed, split at anything that is not a letter, digit or '/', minus the
// notLanguage words.
func writtenDirectly(s string) []string {
	s = entity.ReplaceAllString(s, " ")
	var bad []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '/'
	}) {
		if notLanguage[w] || !strings.ContainsFunc(w, unicode.IsLetter) {
			continue
		}
		if a, b, ok := strings.Cut(w, "/"); ok && notLanguage[a] && notLanguage[b] { // tok/s
			continue
		}
		bad = append(bad, w)
	}
	return bad
}

// TestTemplatesWriteNoText fails on any text node or user-facing attribute
// of a template that holds language written into the template instead of
// taken from the catalogue, naming file and line. The rule: a word with a
// letter is language unless it is in notLanguage, stands inside a code
// element (code, kbd, pre, samp), or is an attribute value without a space
// (an example value such as a URL or a model's name).
func TestTemplatesWriteNoText(t *testing.T) {
	files, err := filepath.Glob("*/*.templ")
	if err != nil || len(files) == 0 {
		t.Fatalf("no templates found: %v", err)
	}
	for _, name := range files {
		tf, err := parser.Parse(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var found []string
		v := visitor.New()
		visitElement := v.Element
		v.Element = func(n *parser.Element) error {
			if codeElements[n.Name] {
				return nil
			}
			return visitElement(n)
		}
		v.Text = func(n *parser.Text) error {
			if bad := writtenDirectly(n.Value); len(bad) > 0 {
				found = append(found, fmt.Sprintf("%s:%d: text %q", name, n.Range.From.Line+1, strings.Join(bad, " ")))
			}
			return nil
		}
		v.ConstantAttribute = func(n *parser.ConstantAttribute) error {
			// An attribute value without a space is an example of a value
			// (a URL, a model's name), not a sentence.
			if !userFacingAttrs[n.Key.String()] || !strings.ContainsFunc(n.Value, unicode.IsSpace) {
				return nil
			}
			if bad := writtenDirectly(n.Value); len(bad) > 0 {
				found = append(found, fmt.Sprintf("%s:%d: attribute %s=%q", name, n.Range.From.Line+1, n.Key, n.Value))
			}
			return nil
		}
		if err := tf.Visit(v); err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			t.Error(f + " is written into the template: use i18n.T(ctx, key)")
		}
	}
}

func TestWrittenDirectly(t *testing.T) {
	for s, want := range map[string]int{
		"Sign in":          2,
		" · ":              0,
		"ms":               0,
		"&nbsp;—&nbsp;":    0,
		"p95 (ms)":         0,
		"tok/s":            0,
		"42 %":             0,
		"Ruckus":           0,
		"Überblick":        1,
		"Runs: 3 pending.": 2,
	} {
		if got := len(writtenDirectly(s)); got != want {
			t.Errorf("writtenDirectly(%q) found %d words, want %d", s, got, want)
		}
	}
}
