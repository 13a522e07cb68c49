package score

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ruckus/ruckus/app/i18n"
)

// MaxPatternBytes bounds a regex scorer's pattern.
const MaxPatternBytes = 1024

// Pattern is a compiled regex scorer pattern.
//
// Semantics: the pattern (Go's RE2 syntax: no backreferences or
// lookaround, linear time in the output's length) is searched for in the
// output, leftmost match first. With a capture group, the first group's
// text, trimmed of surrounding whitespace, must equal one of the item's
// references, trimmed the same way; the comparison is exact (case and
// punctuation count, no further normalisation) and an empty capture
// matches nothing. Without a capture group the item scores 1 when the
// pattern matches anywhere in the output, and the references are not
// used. Write (?i) in the pattern for a case-insensitive search.
type Pattern struct{ re *regexp.Regexp }

// CompilePattern compiles a regex scorer's pattern, with errors a person
// can act on.
func CompilePattern(p string) (*Pattern, error) {
	switch {
	case p == "":
		return nil, fmt.Errorf("give a pattern")
	case len(p) > MaxPatternBytes:
		return nil, fmt.Errorf("at most %d bytes (got %d)", MaxPatternBytes, len(p))
	case !utf8.ValidString(p) || strings.ContainsRune(p, 0):
		return nil, fmt.Errorf("must be UTF-8 text without NUL characters")
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("not a valid RE2 regular expression: %v", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return &Pattern{re: re}, nil
}

// Groups is how many capture groups the pattern has.
func (p *Pattern) Groups() int { return p.re.NumSubexp() }

// extract returns the trimmed first group of the first match, and
// whether the pattern matched.
func (p *Pattern) extract(output string) (string, bool) {
	m := p.re.FindStringSubmatch(output)
	if m == nil {
		return "", false
	}
	if len(m) < 2 {
		return m[0], true
	}
	return strings.TrimSpace(m[1]), true
}

// Score scores one output against the references.
func (p *Pattern) Score(output string, refs []string) float64 {
	got, ok := p.extract(output)
	if !ok {
		return 0
	}
	if p.Groups() == 0 {
		return 1
	}
	if got == "" {
		return 0
	}
	for _, r := range refs {
		if got == strings.TrimSpace(r) {
			return 1
		}
	}
	return 0
}

// Explain says what the pattern found in the output.
func (p *Pattern) Explain(output string) i18n.Message {
	got, ok := p.extract(output)
	switch {
	case !ok:
		return i18n.M("score_why.no_match")
	case p.Groups() == 0:
		return i18n.M("score_why.match")
	case got == "":
		return i18n.M("score_why.empty_group")
	}
	return i18n.M("score_why.captured", "Got", quoteBounded(got, 200))
}

// quoteBounded quotes s, cut to at most n runes.
func quoteBounded(s string, n int) string {
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
