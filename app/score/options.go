package score

import (
	"encoding/json"
	"fmt"

	"github.com/ruckus/ruckus/app/i18n"
)

// Options are the settings a scorer takes (a benchmark's scorer_options):
// each scorer reads only its own and ignores the others.
type Options struct {
	// Pattern is the regex scorer's regular expression (RE2 syntax).
	Pattern string `json:"pattern,omitempty"`
	// Schema is the json-schema scorer's JSON Schema document.
	Schema json.RawMessage `json:"schema,omitempty"`
}

// ParseOptions reads stored scorer options (nil or JSON null: none).
func ParseOptions(raw json.RawMessage) (Options, error) {
	var o Options
	if len(raw) == 0 || string(raw) == "null" {
		return o, nil
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return o, fmt.Errorf("scorer_options: %w", err)
	}
	return o, nil
}

// New returns the scorer name with its options; the options a scorer does
// not take are ignored. A regex scorer without a pattern is the choice
// scorer (what regex meant before it took a pattern).
func New(name string, o Options) (Scorer, error) {
	switch name {
	case "regex":
		if o.Pattern == "" {
			return ByName("choice")
		}
		re, err := CompilePattern(o.Pattern)
		if err != nil {
			return nil, err
		}
		return re.Score, nil
	case "json-schema":
		sch, err := CompileSchema(o.Schema)
		if err != nil {
			return nil, err
		}
		return func(out string, _ []string) float64 { return bool01(sch.Check(out) == "") }, nil
	case "bleu":
		return func(out string, refs []string) float64 {
			s, _ := SentenceBLEU(out, refs)
			return s
		}, nil
	}
	return ByName(name)
}

// NeedsReference reports whether the scorer compares the output with the
// item's reference: items without one are left unscored by those. json,
// json-schema, refusal and a regex pattern without a capture group judge
// the output alone.
func NeedsReference(name string, o Options) bool {
	switch name {
	case "json", "json-schema", "refusal":
		return false
	case "regex":
		if o.Pattern == "" {
			return true
		}
		re, err := CompilePattern(o.Pattern)
		return err != nil || re.Groups() > 0
	}
	return true
}

// Explain says in a line why the scorer gave an output its score, where
// the scorer has more to say than the number: what a regex pattern
// extracted, or the first reason an output failed its JSON Schema (the
// schema library's own words, quoted as they are). A message with no key
// when there is nothing to add; pages word it in their reader's language.
func Explain(name string, o Options, output string) i18n.Message {
	switch name {
	case "regex":
		if o.Pattern == "" {
			if c := Choice(output); c != "" {
				return i18n.M("score_why.choice", "Letter", fmt.Sprintf("%q", c))
			}
			return i18n.M("score_why.no_choice")
		}
		re, err := CompilePattern(o.Pattern)
		if err != nil {
			return i18n.Message{}
		}
		return re.Explain(output)
	case "json-schema":
		sch, err := CompileSchema(o.Schema)
		if err != nil {
			return i18n.Message{}
		}
		if why := sch.Check(output); why != "" {
			return i18n.M("score_why.schema_invalid", "Why", why)
		}
		return i18n.M("score_why.schema_valid")
	}
	return i18n.Message{}
}
