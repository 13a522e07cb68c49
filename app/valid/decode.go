package valid

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/app/i18n"
)

// DecodeJSON decodes body, one JSON object, into v. Unknown fields are
// errors, so a typo does not silently fall back to a default; every error
// names the field's path and says what the field takes.
func DecodeJSON(body []byte, v any) Errors {
	if len(bytes.TrimSpace(body)) == 0 {
		return Errors{E("", "valid.body_empty")}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if dec.More() {
			return Errors{E("", "valid.json_trailing", "Offset", dec.InputOffset())}
		}
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		p := jsonPathAt(body, te.Offset)
		if p == "" {
			p = te.Field
		}
		return Errors{FromMessage(p, kindMessage(te.Type.Kind(), te.Type.String(), jsonGot(te.Value)))}
	}
	if name, ok := unknownJSONField(err); ok {
		return Errors{E(Join(jsonKeyParent(body, name), name), "valid.unknown_field", "Name", strconv.Quote(name))}
	}
	fe, _ := decodeError(err)
	return Errors{fe}
}

// decodeError translates a JSON decoding error without its input (the
// path is what the error itself says).
func decodeError(err error) (FieldError, bool) {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		return FromMessage(te.Field, kindMessage(te.Type.Kind(), te.Type.String(), jsonGot(te.Value))), true
	case errors.As(err, &se):
		return E("", "valid.json_syntax", "Detail", Clean(se.Error()), "Offset", se.Offset), true
	case errors.Is(err, io.ErrUnexpectedEOF):
		return E("", "valid.json_truncated"), true
	case errors.Is(err, io.EOF):
		return E("", "valid.body_empty"), true
	}
	if name, ok := unknownJSONField(err); ok {
		return E(name, "valid.unknown_field", "Name", strconv.Quote(name)), true
	}
	return cleaned(err), false
}

func unknownJSONField(err error) (string, bool) {
	rest, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return "", false
	}
	name, uerr := strconv.Unquote(rest)
	if uerr != nil {
		name = strings.Trim(rest, `"`)
	}
	return name, true
}

// jsonGot says what JSON held, from UnmarshalTypeError.Value ("string",
// "number 1.5", "array").
func jsonGot(v string) any {
	switch {
	case v == "array":
		return i18n.M("valid.a_list")
	case v == "object":
		return i18n.M("valid.an_object")
	case v == "string":
		return i18n.M("valid.some_text")
	case v == "bool":
		return i18n.M("valid.true_or_false")
	case strings.HasPrefix(v, "number "):
		return strings.TrimPrefix(v, "number ")
	case v == "number":
		return i18n.M("valid.a_number")
	}
	return v
}

// kindMessage says what a field of this kind takes; typeName is only
// looked at, never shown.
func kindMessage(k reflect.Kind, typeName string, got any) i18n.Message {
	what := "valid.kind_other"
	switch {
	case typeName == "time.Duration" || strings.HasSuffix(typeName, ".Duration"):
		what = "valid.kind_duration"
	case k >= reflect.Int && k <= reflect.Int64:
		what = "valid.kind_int"
	case k >= reflect.Uint && k <= reflect.Uintptr:
		what = "valid.kind_uint"
	case k == reflect.Float32 || k == reflect.Float64:
		what = "valid.kind_number"
	case k == reflect.String:
		what = "valid.kind_text"
	case k == reflect.Bool:
		what = "valid.kind_bool"
	case k == reflect.Slice || k == reflect.Array:
		what = "valid.kind_list"
	case k == reflect.Map || k == reflect.Struct:
		what = "valid.kind_object"
	}
	if got == "" {
		return i18n.M(what, "Got", "")
	}
	return i18n.M(what, "Got", i18n.M("valid.got", "Value", got))
}

// jsonWalk calls fn for every value in body with its path and the offset
// just after it ends; for an object's key it calls key instead.
func jsonWalk(body []byte, value func(path string, end int64) bool, key func(parent, name string) bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		path    string
		array   bool
		index   int
		wantKey bool
		key     string
	}
	var stack []frame
	here := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.array {
			return fmt.Sprintf("%s[%d]", f.path, f.index)
		}
		return Join(f.path, f.key)
	}
	// after moves the enclosing container on past one value.
	after := func() {
		if len(stack) == 0 {
			return
		}
		f := &stack[len(stack)-1]
		if f.array {
			f.index++
		} else {
			f.wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		if len(stack) > 0 && !stack[len(stack)-1].array && stack[len(stack)-1].wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if value(here(), dec.InputOffset()) {
					return
				}
				after()
				continue
			}
			f := &stack[len(stack)-1]
			f.key, _ = tok.(string)
			f.wantKey = false
			if key != nil && key(f.path, f.key) {
				return
			}
			continue
		}
		if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') && value(here(), dec.InputOffset()) {
			return
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{path: here(), wantKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, frame{path: here(), array: true})
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if value(here(), dec.InputOffset()) {
			return
		}
		after()
	}
}

// jsonPathAt is the path of the value in body that ends at or after
// offset: where a type error happened.
func jsonPathAt(body []byte, offset int64) string {
	found := ""
	jsonWalk(body, func(p string, end int64) bool {
		if end >= offset {
			found = p
			return true
		}
		return false
	}, nil)
	return found
}

// jsonKeyParent is the path of the first object in body with key name.
func jsonKeyParent(body []byte, name string) string {
	found := ""
	jsonWalk(body, func(string, int64) bool { return false }, func(parent, k string) bool {
		if k == name {
			found = parent
			return true
		}
		return false
	})
	return found
}

// ReadYAML reads one document of at most limit bytes from r and decodes it
// into v as DecodeYAML does; what names the document in the errors for one
// too large or empty ("the manifest"). A read error is returned as it is.
func ReadYAML(r io.Reader, limit int, what string, v any) error {
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return err
	}
	if len(b) > limit {
		return Errors{E("", "valid.doc_too_large", "What", keyOrText(what), "Limit", limit)}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return Errors{E("", "valid.doc_empty", "What", keyOrText(what))}
	}
	if errs := DecodeYAML(b, v); errs != nil {
		return errs
	}
	return nil
}

// DecodeYAML decodes b, YAML or JSON, into v. Unknown fields are errors;
// every error names the field's path and line and says what the field
// takes.
func DecodeYAML(b []byte, v any) Errors {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	err := dec.Decode(v)
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		if rest, ok := strings.CutPrefix(err.Error(), "yaml: "); ok {
			return Errors{E("", "valid.yaml_syntax", "Detail", Clean(rest))}
		}
		// An UnmarshalYAML or UnmarshalText of ours said what is wrong.
		return Errors{cleaned(err)}
	}
	var root yaml.Node
	_ = yaml.Unmarshal(b, &root)
	out := make(Errors, 0, len(te.Errors))
	for _, e := range te.Errors {
		out = append(out, yamlError(&root, e))
	}
	return out
}

var (
	yamlUnknown  = regexp.MustCompile(`^line (\d+): field (.*) not found in type \S+$`)
	yamlMismatch = regexp.MustCompile("^line (\\d+): cannot unmarshal (!!\\w+)(?: `(.*)`)? into (\\S+)$")
)

// yamlError translates one of yaml.TypeError's messages, finding the path
// of the field it is about in the document's node tree by its line.
func yamlError(root *yaml.Node, msg string) FieldError {
	if m := yamlUnknown.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		parent, _ := yamlFind(root, "", func(n *yaml.Node, key *yaml.Node) bool {
			return key != nil && key.Line == line && key.Value == m[2]
		})
		return E(Join(parent, m[2]), "valid.unknown_field_line", "Name", strconv.Quote(m[2]), "Line", line)
	}
	if m := yamlMismatch.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		tag, val, into := m[2], m[3], m[4]
		prefix, _, cut := strings.Cut(val, "...")
		p, found := "", false
		// A scalar is told apart by its value; of lists and mappings on
		// one line, the innermost is the one that did not fit.
		yamlFind(root, "", func(n *yaml.Node, _ *yaml.Node) bool {
			return false
		}, func(n *yaml.Node, np string) {
			if n.Line != line || n.ShortTag() != tag || (found && n.Kind == yaml.ScalarNode) {
				return
			}
			if n.Kind != yaml.ScalarNode || n.Value == val || (cut && strings.HasPrefix(n.Value, prefix)) {
				p, found = np, true
			}
		})
		return E(p, "valid.at_line", "Message", kindMessage(goKind(into), into, yamlGot(tag, val)), "Line", line)
	}
	return FieldError{Message: Clean(msg)}
}

// yamlFind walks the tree depth first, calling visit with every node and
// its path, and returns, for the first node match accepts, the path of the
// mapping holding it and its own path.
func yamlFind(n *yaml.Node, p string, match func(n, key *yaml.Node) bool, visit ...func(n *yaml.Node, path string)) (parent, path string) {
	var walk func(n *yaml.Node, p string) (string, string, bool)
	walk = func(n *yaml.Node, p string) (string, string, bool) {
		for _, fn := range visit {
			fn(n, p)
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				if a, b, ok := walk(c, p); ok {
					return a, b, true
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				cp := Join(p, k.Value)
				if match(v, k) {
					return p, cp, true
				}
				if a, b, ok := walk(v, cp); ok {
					return a, b, true
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				cp := fmt.Sprintf("%s[%d]", p, i)
				if match(c, nil) {
					return p, cp, true
				}
				if a, b, ok := walk(c, cp); ok {
					return a, b, true
				}
			}
		}
		return "", "", false
	}
	parent, path, _ = walk(n, p)
	return parent, path
}

func yamlGot(tag, val string) any {
	switch tag {
	case "!!seq":
		return i18n.M("valid.a_list")
	case "!!map":
		return i18n.M("valid.a_mapping")
	case "!!str":
		return strconv.Quote(val)
	case "!!null":
		return i18n.M("valid.nothing")
	}
	return val
}

// goKind reads the kind from the type name yaml reports ("int",
// "[]string", "map[string]string"); a named type's kind is not known.
func goKind(name string) reflect.Kind {
	switch {
	case strings.HasPrefix(name, "[]"):
		return reflect.Slice
	case strings.HasPrefix(name, "map["):
		return reflect.Map
	case strings.HasPrefix(name, "*"):
		return goKind(name[1:])
	}
	switch name {
	case "int", "int8", "int16", "int32", "int64":
		return reflect.Int
	case "uint", "uint8", "uint16", "uint32", "uint64":
		return reflect.Uint
	case "float32", "float64":
		return reflect.Float64
	case "string":
		return reflect.String
	case "bool":
		return reflect.Bool
	}
	return reflect.Invalid
}
