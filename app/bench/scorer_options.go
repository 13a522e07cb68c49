package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/valid"
)

// JSONDoc is a JSON document kept as its JSON text, whether the manifest
// was YAML or JSON.
type JSONDoc json.RawMessage

// MarshalJSON writes the document as it is.
func (d JSONDoc) MarshalJSON() ([]byte, error) {
	if len(d) == 0 {
		return []byte("null"), nil
	}
	return json.RawMessage(d).MarshalJSON()
}

// UnmarshalJSON keeps the document's text.
func (d *JSONDoc) UnmarshalJSON(b []byte) error {
	*d = JSONDoc(bytes.Clone(b))
	return nil
}

// UnmarshalYAML turns a YAML value into JSON text; a string is taken as
// JSON text itself (what a form's textarea posts).
func (d *JSONDoc) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if !json.Valid([]byte(n.Value)) {
			return i18n.NewError("manifest.schema_string", "Line", n.Line)
		}
		*d = JSONDoc(n.Value)
		return nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("line %d: scorer_options.schema: not expressible as JSON (%v)", n.Line, err)
	}
	*d = JSONDoc(b)
	return nil
}

// empty reports whether no option of the regex and json-schema scorers
// is set.
func (o *ScorerOptions) empty() bool {
	return o == nil || (o.Pattern == "" && len(bytes.TrimSpace(o.Schema)) == 0)
}

// Score is the options in the scorers' terms.
func (o *ScorerOptions) Score() score.Options {
	if o == nil {
		return score.Options{}
	}
	return score.Options{Pattern: o.Pattern, Schema: json.RawMessage(o.Schema)}
}

// validate checks the options the scorer takes (compiling its pattern or
// schema), and that none is given to a scorer that would ignore it.
func (o *ScorerOptions) validate(scorer string) Errors {
	var errs Errors
	var opts score.Options
	if o != nil {
		opts = o.Score()
	}
	if opts.Pattern != "" {
		if scorer != "regex" {
			errs.Say("scorer_options.pattern", "manifest.pattern_regex_only", "Scorer", strconv.Quote(scorer))
		} else if _, err := score.CompilePattern(opts.Pattern); err != nil {
			errs = append(errs, valid.FromError("scorer_options.pattern", err))
		}
	}
	hasSchema := len(bytes.TrimSpace(opts.Schema)) > 0 && string(bytes.TrimSpace(opts.Schema)) != "null"
	switch {
	case scorer == "json-schema":
		if _, err := score.CompileSchema(opts.Schema); err != nil {
			errs = append(errs, valid.FromError("scorer_options.schema", err))
		}
	case hasSchema:
		errs.Say("scorer_options.schema", "manifest.schema_only", "Scorer", strconv.Quote(scorer))
	}
	return errs
}
