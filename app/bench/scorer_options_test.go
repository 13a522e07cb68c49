package bench

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/score"
)

const optionsBase = "name: n\ndataset: 1\ntargets: [{model: m, runtime: sim, hardware: cpu}]\nload: {profile: sequential}\nsampling: {max_tokens: 8}\n"

func TestScorerOptionsDecode(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"YAML mapping":        optionsBase + "scorer: json-schema\nscorer_options:\n  schema:\n    type: object\n    required: [answer]\n    properties: {answer: {type: integer}}\n",
		"YAML string of JSON": optionsBase + "scorer: json-schema\nscorer_options:\n  schema: '{\"type\":\"object\",\"required\":[\"answer\"],\"properties\":{\"answer\":{\"type\":\"integer\"}}}'\n",
		"JSON": `{"name":"n","dataset":1,"targets":[{"model":"m","runtime":"sim","hardware":"cpu"}],"load":{"profile":"sequential"},
			"sampling":{"max_tokens":8},"scorer":"json-schema","scorer_options":{"schema":{"type":"object","required":["answer"],"properties":{"answer":{"type":"integer"}}}}}`,
	} {
		m, err := Decode(strings.NewReader(in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if errs := m.Validate(); len(errs) > 0 {
			t.Fatalf("%s: %v", name, errs)
		}
		// What the server stores and reads back scores the same.
		b, _ := json.Marshal(m)
		again, err := Decode(strings.NewReader(string(b)))
		if err != nil || len(again.Validate()) > 0 {
			t.Fatalf("%s: the stored manifest %s does not decode: %v", name, b, err)
		}
		for _, mm := range []Manifest{m, again} {
			f, err := score.New(mm.Scorer, mm.ScorerOptions.Score())
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if f(`{"answer": 4}`, nil) != 1 || f(`{"answer": "four"}`, nil) != 0 {
				t.Fatalf("%s: the schema does not score as written (%s)", name, mm.ScorerOptions.Schema)
			}
		}
	}
	m, err := Decode(strings.NewReader(optionsBase + "scorer: regex\nscorer_options: {pattern: '#### (\\S+)'}\n"))
	if err != nil || len(m.Validate()) > 0 || m.ScorerOptions.Pattern != `#### (\S+)` {
		t.Fatalf("regex pattern: %+v %v", m.ScorerOptions, err)
	}
	if _, err := Decode(strings.NewReader(optionsBase + "scorer_options: {schema: 'not json'}\n")); err == nil ||
		!strings.Contains(err.Error(), "scorer_options.schema") {
		t.Fatalf("a schema string that is not JSON: %v", err)
	}
	if _, err := Decode(strings.NewReader(optionsBase + "scorer_options: {patern: x}\n")); err == nil {
		t.Fatal("an unknown option was accepted")
	}
}

func TestScorerOptionsValidationNamesTheField(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ in, path, want string }{
		"bad pattern":            {"scorer: regex\nscorer_options: {pattern: '(unclosed'}\n", "scorer_options.pattern", "not a valid RE2 regular expression"},
		"lookbehind":             {"scorer: regex\nscorer_options: {pattern: '(?<=a)b'}\n", "scorer_options.pattern", "not a valid RE2"},
		"pattern too long":       {"scorer: regex\nscorer_options: {pattern: '" + strings.Repeat("a", 1025) + "'}\n", "scorer_options.pattern", "at most 1024 bytes"},
		"pattern, not regex":     {"scorer: exact\nscorer_options: {pattern: 'x'}\n", "scorer_options.pattern", "only the regex scorer"},
		"no schema":              {"scorer: json-schema\n", "scorer_options.schema", "give a JSON Schema document"},
		"bad schema":             {"scorer: json-schema\nscorer_options: {schema: {type: nope}}\n", "scorer_options.schema", "not a valid JSON Schema"},
		"remote ref":             {"scorer: json-schema\nscorer_options: {schema: {$ref: 'https://example.com/s.json'}}\n", "scorer_options.schema", "remote references are not loaded"},
		"file ref":               {"scorer: json-schema\nscorer_options: {schema: {$ref: 'file:///etc/passwd'}}\n", "scorer_options.schema", "remote references are not loaded"},
		"schema too large":       {"scorer: json-schema\nscorer_options: {schema: {description: '" + strings.Repeat("x", 70000) + "'}}\n", "scorer_options.schema", "at most 65536 bytes"},
		"schema, not its scorer": {"scorer: json\nscorer_options: {schema: {type: object}}\n", "scorer_options.schema", "only the json-schema scorer"},
	} {
		m, err := Decode(strings.NewReader(optionsBase + tc.in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		errs := m.Validate()
		if len(errs) != 1 || errs[0].Path != tc.path || !strings.Contains(errs[0].Message, tc.want) {
			t.Errorf("%s: %v, want one error at %s saying %q", name, errs, tc.path, tc.want)
		}
	}
	// regex without a pattern stays valid: it scores as choice.
	m, _ := Decode(strings.NewReader(optionsBase + "scorer: regex\n"))
	if errs := m.Validate(); len(errs) > 0 {
		t.Fatalf("regex without a pattern: %v", errs)
	}
}

// FuzzScorerOptions: scorer options in any form decode and validate with
// messages, and options that validate make a scorer (what validation
// accepts, scoring can use).
func FuzzScorerOptions(f *testing.F) {
	f.Add("regex", "scorer_options: {pattern: '#### (\\S+)'}\n")
	f.Add("json-schema", "scorer_options: {schema: {type: object, properties: {a: {$ref: '#/$defs/x'}}, $defs: {x: {type: string}}}}\n")
	f.Add("json-schema", "scorer_options: {schema: '{\"$ref\": \"http://x\"}'}\n")
	f.Add("json-schema", "scorer_options: {schema: {1: 2}}\n")
	f.Add("regex", "scorer_options: {pattern: '[', schema: true}\n")
	f.Fuzz(func(t *testing.T, scorer, options string) {
		m, err := Decode(strings.NewReader(optionsBase + "scorer: " + jsonString(scorer) + "\n" + options))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		errs := m.Validate()
		for _, fe := range errs {
			if fe.Message == "" {
				t.Fatalf("an error without a message at %q", fe.Path)
			}
		}
		if len(errs) > 0 || m.Scorer == "" {
			return
		}
		if _, err := score.New(m.Scorer, m.ScorerOptions.Score()); err != nil {
			t.Fatalf("validated options make no scorer: %v", err)
		}
	})
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
