package score

import (
	"encoding/json"
	"github.com/ruckus/ruckus/app/i18n"
	"strings"
	"testing"
)

func TestRegexScorerSemantics(t *testing.T) {
	for _, tc := range []struct {
		name, pattern, output string
		refs                  []string
		want                  float64
	}{
		{"group equals the reference", `#### (\S+)`, "so 6 × 7\n#### 42", []string{"42"}, 1},
		{"group differs", `#### (\S+)`, "#### 41", []string{"42"}, 0},
		{"group trimmed, reference trimmed", `Answer:(.*)`, "Answer:   Paris  ", []string{" Paris\n"}, 1},
		{"exact: case counts", `Answer: (\w+)`, "Answer: paris", []string{"Paris"}, 0},
		{"exact: no normalisation of punctuation", `Answer: (.+)`, "Answer: Paris.", []string{"Paris"}, 0},
		{"(?i) makes the search, not the comparison, case-insensitive", `(?i)answer: (\w+)`, "ANSWER: Paris", []string{"Paris"}, 1},
		{"any of several references", `\((\w)\)`, "I pick (B).", []string{"A", "B"}, 1},
		{"leftmost match only", `\((\w)\)`, "(A) or (B)", []string{"B"}, 0},
		{"first group, not the second", `(\d+)-(\d+)`, "10-20", []string{"20"}, 0},
		{"an empty capture matches nothing", `x(\d*)`, "x", []string{""}, 0},
		{"an optional group that did not take part", `a(b)?`, "a", []string{""}, 0},
		{"no match", `#### (\S+)`, "forty-two", []string{"42"}, 0},
		{"no group: a match scores 1, references unused", `^\s*\{`, " {\"a\":1}", nil, 1},
		{"no group: no match scores 0", `^\s*\{`, "[1]", []string{"[1]"}, 0},
		{"non-capturing group counts as no group", `(?:yes|no)`, "well, no", []string{"maybe"}, 1},
		{"Unicode", `答案[:：]\s*(\p{Han}+)`, "答案：北京", []string{"北京"}, 1},
	} {
		p, err := CompilePattern(tc.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		f, err := New("regex", Options{Pattern: tc.pattern})
		if err != nil {
			t.Fatal(err)
		}
		if got := f(tc.output, tc.refs); got != tc.want || p.Score(tc.output, tc.refs) != tc.want {
			t.Errorf("%s: %q on %q vs %q = %v, want %v", tc.name, tc.pattern, tc.output, tc.refs, got, tc.want)
		}
	}
}

// A regex scorer without a pattern is the choice scorer, so benchmarks
// made before regex took a pattern score as they did.
func TestRegexWithoutPatternIsChoice(t *testing.T) {
	regex, _ := New("regex", Options{})
	byName, _ := ByName("regex")
	choice, _ := ByName("choice")
	for _, tc := range []struct{ out, ref string }{{"The answer is (C)", "C"}, {"Answer: b", "B"}, {"C) yes", "D"}, {"no letter", "A"}} {
		want := choice(tc.out, []string{tc.ref})
		if regex(tc.out, []string{tc.ref}) != want || byName(tc.out, []string{tc.ref}) != want {
			t.Errorf("%q vs %q: regex without a pattern differs from choice", tc.out, tc.ref)
		}
	}
	if !NeedsReference("regex", Options{}) || !NeedsReference("regex", Options{Pattern: `(\d)`}) || NeedsReference("regex", Options{Pattern: `\d`}) {
		t.Error("NeedsReference: a pattern with a group compares with the reference, one without does not")
	}
}

func TestCompilePatternErrors(t *testing.T) {
	for _, tc := range []struct{ pattern, want string }{
		{"", "give a pattern"},
		{strings.Repeat("a", MaxPatternBytes+1), "at most 1024 bytes"},
		{"(unclosed", "missing closing )"},
		{`(?<=a)b`, "not a valid RE2 regular expression"},
		{`\1`, "invalid escape"},
		{"a\x00", "NUL"},
		{"\xff", "UTF-8"},
		{`a{1001}`, "invalid repeat count"},
	} {
		_, err := CompilePattern(tc.pattern)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: %v, want an error saying %q", tc.pattern, err, tc.want)
		}
	}
	if _, err := CompilePattern(strings.Repeat("a", MaxPatternBytes)); err != nil {
		t.Errorf("a pattern of exactly the limit: %v", err)
	}
}

const personSchema = `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0},
	"tags":{"type":"array","items":{"type":"string"}}},"required":["name","age"],"additionalProperties":false}`

func TestJSONSchemaScorer(t *testing.T) {
	for _, tc := range []struct {
		name, schema, output string
		want                 float64
		why                  string
	}{
		{"valid", personSchema, `{"name":"Ada","age":36}`, 1, ""},
		{"valid in a ```json fence", personSchema, "```json\n{\"name\":\"Ada\",\"age\":36,\"tags\":[\"x\"]}\n```", 1, ""},
		{"valid in a bare ``` fence", personSchema, "```\n{\"name\":\"Ada\",\"age\":1}\n```", 1, ""},
		{"missing property", personSchema, `{"name":"Ada"}`, 0, "missing property 'age'"},
		{"wrong type, deep", personSchema, `{"name":"Ada","age":1,"tags":["a",2]}`, 0, "at '/tags/1'"},
		{"below minimum", personSchema, `{"name":"Ada","age":-1}`, 0, "at '/age'"},
		{"extra property", personSchema, `{"name":"Ada","age":1,"x":0}`, 0, "additional properties 'x'"},
		{"not JSON", personSchema, `name: Ada`, 0, "not JSON"},
		{"prose around JSON is not JSON", personSchema, `Here you go: {"name":"Ada","age":1}`, 0, "not JSON"},
		{"two documents are not one", personSchema, `{"name":"Ada","age":1} {}`, 0, "not JSON"},
		{"empty output", personSchema, ``, 0, "not JSON"},
		{"draft-07 by $schema", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"integer"}],"additionalItems":false}`, `[1]`, 1, ""},
		{"draft-07 tuple items refuse a second item", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"integer"}],"additionalItems":false}`, `[1,2]`, 0, "additionalItem(s) not allowed"},
		{"2020-12 prefixItems", `{"$schema":"https://json-schema.org/draft/2020-12/schema","prefixItems":[{"type":"integer"}],"items":false}`, `[1,2]`, 0, "at '/1': false schema"},
		{"local $ref", `{"$defs":{"n":{"type":"number"}},"type":"array","items":{"$ref":"#/$defs/n"}}`, `[1, 2.5]`, 1, ""},
		{"local $ref fails", `{"$defs":{"n":{"type":"number"}},"type":"array","items":{"$ref":"#/$defs/n"}}`, `[1, "x"]`, 0, "at '/1'"},
		{"true accepts any JSON", `true`, `"anything"`, 1, ""},
		{"false accepts nothing", `false`, `1`, 0, "false"},
	} {
		o := Options{Schema: json.RawMessage(tc.schema)}
		f, err := New("json-schema", o)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := f(tc.output, nil); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		why := Explain("json-schema", o, tc.output).English()
		if tc.want == 1 && why != "valid against the schema" || tc.want == 0 && !strings.Contains(why, tc.why) {
			t.Errorf("%s: explained as %q, want it to say %q", tc.name, why, tc.why)
		}
	}
	if NeedsReference("json-schema", Options{}) {
		t.Error("json-schema needs no reference")
	}
}

func TestCompileSchemaErrors(t *testing.T) {
	for _, tc := range []struct{ name, schema, want string }{
		{"none", ``, "give a JSON Schema document"},
		{"null", `null`, "give a JSON Schema document"},
		{"not JSON", `{type: object}`, "not valid JSON"},
		{"not an object", `[1]`, "is an object"},
		{"a number", `3`, "is an object"},
		{"bad keyword value", `{"type":"nope"}`, "not a valid JSON Schema"},
		{"bad regex in pattern", `{"pattern":"(?<=a)"}`, "not a valid JSON Schema"},
		{"too large", `{"description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`, "at most 65536 bytes"},
		{"remote http $ref", `{"$ref":"http://example.com/schema.json"}`, "remote references are not loaded"},
		{"remote https $ref", `{"properties":{"a":{"$ref":"https://example.com/s.json#/x"}}}`, "remote references are not loaded"},
		{"file $ref", `{"$ref":"file:///etc/passwd"}`, "remote references are not loaded"},
		{"relative $ref to another document", `{"$ref":"other.json"}`, "remote references are not loaded"},
		{"absolute path $ref", `{"items":{"$ref":"/etc/passwd"}}`, "remote references are not loaded"},
		{"$id moves the base elsewhere", `{"$id":"http://example.com/a.json","$ref":"b.json"}`, "remote references are not loaded"},
		{"unknown $schema", `{"$schema":"http://example.com/my-meta"}`, "remote references are not loaded"},
	} {
		_, err := CompileSchema(json.RawMessage(tc.schema))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
		if _, err := New("json-schema", Options{Schema: json.RawMessage(tc.schema)}); err == nil {
			t.Errorf("%s: New accepted it", tc.name)
		}
	}
}

// FuzzScorerOptions: any pattern or schema text compiles or is refused
// with a message, never a panic; what compiles scores 0 or 1.
func FuzzScorerOptions(f *testing.F) {
	f.Add(`#### (\S+)`, personSchema, "#### 42", "42")
	f.Add(`(?i)(yes|no)`, `{"$ref":"#/$defs/a","$defs":{"a":{"type":"string"}}}`, `"x"`, "yes")
	f.Add(`(`, `{"$ref":"http://x/y"}`, "{}", "")
	f.Add(`a{2,1001}`, `{"$schema":"http://json-schema.org/draft-07/schema#","type":["string","null"]}`, "null", "a")
	f.Fuzz(func(t *testing.T, pattern, schema, output, ref string) {
		if p, err := CompilePattern(pattern); err == nil {
			if s := p.Score(output, []string{ref}); s != 0 && s != 1 {
				t.Fatalf("pattern %q scored %v", pattern, s)
			}
			_ = p.Explain(output)
		} else if err.Error() == "" {
			t.Fatal("an empty error")
		}
		if s, err := CompileSchema(json.RawMessage(schema)); err == nil {
			why := s.Check(output)
			if len(why) > 400 {
				t.Fatalf("explanation not bounded: %d bytes", len(why))
			}
		} else if err.Error() == "" {
			t.Fatal("an empty error")
		}
	})
}

// TestExplainSpeaksTheReadersLanguage: why a score was given, in English
// as before and in German for a German reader.
func TestExplainSpeaksTheReadersLanguage(t *testing.T) {
	why := Explain("regex", Options{Pattern: `#### (\d+)`}, "so #### 42")
	if got := why.English(); got != `the pattern's first group captured "42"` {
		t.Errorf("English: %q", got)
	}
	if got := why.In(i18n.Default().Lang("de")); got != `die erste Gruppe des Musters hat "42" erfasst` {
		t.Errorf("German: %q", got)
	}
	if got := Explain("exact", Options{}, "x").English(); got != "" {
		t.Errorf("a scorer with nothing to add says %q", got)
	}
}
