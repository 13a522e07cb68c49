package score

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MaxSchemaBytes bounds a json-schema scorer's schema document.
const MaxSchemaBytes = 64 << 10

// schemaURL names the user's schema inside the compiler; relative
// references resolve against it, and nothing is ever fetched from it.
const schemaURL = "https://ruckus.invalid/scorer-schema.json"

// Schema is a compiled json-schema scorer schema.
//
// The output, after a Markdown ```json fence is stripped (as the json
// scorer does), must parse as JSON and validate against the schema. The
// draft is the schema's $schema (draft-04, -06, -07, 2019-09, 2020-12);
// without one, 2020-12. "format" is an annotation, not an assertion, as
// 2020-12 says. References resolve only inside the document and to the
// drafts' own meta-schemas: a $ref to any other URL (http, https, file, …)
// is refused when the schema is compiled, so a schema cannot make the
// server fetch anything.
type Schema struct{ s *jsonschema.Schema }

// noRemote refuses to load any resource: only the schema itself and the
// meta-schemas the library carries are available.
type noRemote struct{}

func (noRemote) Load(url string) (any, error) {
	return nil, fmt.Errorf("remote references are not loaded (%s): keep every $ref inside the schema", url)
}

// CompileSchema compiles a json-schema scorer's schema, with errors a
// person can act on.
func CompileSchema(doc json.RawMessage) (*Schema, error) {
	doc = bytes.TrimSpace(doc)
	switch {
	case len(doc) == 0 || string(doc) == "null":
		return nil, fmt.Errorf("give a JSON Schema document")
	case len(doc) > MaxSchemaBytes:
		return nil, fmt.Errorf("at most %d bytes (got %d)", MaxSchemaBytes, len(doc))
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	switch v.(type) {
	case map[string]any, bool:
	default:
		return nil, fmt.Errorf("a JSON Schema is an object (or true or false)")
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noRemote{})
	if err := c.AddResource(schemaURL, v); err != nil {
		return nil, fmt.Errorf("not a usable schema: %v", err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("not a valid JSON Schema: %s", bounded(schemaError(err), 500))
	}
	return &Schema{s: s}, nil
}

// schemaError is a compile error without the library's noise.
func schemaError(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), schemaURL, "the schema")), " ")
}

// Check validates one output: "" when it is valid, else the first
// reason it is not.
func (s *Schema) Check(output string) string {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(stripFence(output)))
	if err != nil {
		return "not JSON: " + bounded(err.Error(), 200)
	}
	err = s.s.Validate(v)
	if err == nil {
		return ""
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return bounded(err.Error(), 300)
	}
	return bounded(firstCause(ve), 300)
}

// firstCause is the first leaf of a validation error's tree: where in the
// output and what is wrong there.
func firstCause(e *jsonschema.ValidationError) string {
	for len(e.Causes) > 0 {
		e = e.Causes[0]
	}
	at := "/" + strings.Join(e.InstanceLocation, "/")
	msg := strings.TrimSpace(e.Error())
	// The leaf's own text is its last line ("at '/x': …"), or the
	// whole message when it has one line.
	if i := strings.LastIndex(msg, "\n"); i >= 0 {
		msg = strings.TrimSpace(msg[i+1:])
	}
	msg = strings.TrimPrefix(msg, "- ")
	if strings.HasPrefix(msg, "at '") {
		return msg
	}
	return fmt.Sprintf("at '%s': %s", at, msg)
}

// bounded cuts s to at most n bytes on a rune boundary.
func bounded(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
