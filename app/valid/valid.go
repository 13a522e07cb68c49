// Package valid is the one way Ruckus checks what it is given: forms, API
// bodies, manifests and settings. Rules are validator/v10 struct tags plus
// the custom rules registered here, and every failure, whether from a rule
// or from decoding (an unknown field, a string where a number belongs),
// becomes a FieldError: the field's path as the user wrote it
// ("targets[1].runtime", "load.concurrency") and a message for a person.
// No Go type name ever reaches a message.
//
// A field may say its own message: `msg:"..."` for any rule it fails,
// `msg_<rule>:"..."` (msg_required_if, msg_ltefield) for one rule. The tag
// holds a key of the catalogue (app/i18n), `msg:"valid.negative"`, or a
// sentence of its own, which stays English.
//
// Every message this package and its users make is a catalogue message:
// a FieldError keeps its key and arguments beside the English text, the
// JSON API answers the English text and a page words it in the reader's
// language (FieldError.Text, Errors.Text, Errors.MapText).
package valid

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/go-playground/validator/v10"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/jobs"
)

// FieldError names the field that is wrong, as a path such as
// "targets[1].runtime" or "load.rate" ("" for the whole input). Message is
// the English text, which the JSON API answers; Key and Args are the
// catalogue message it was worded from ("" when the text came from
// elsewhere, a library's error), for a page to word it in the reader's
// language. Build one with E, so the two cannot differ.
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
	Key     string `json:"-"`
	Args    []any  `json:"-"`
}

// E returns the error at path saying the catalogue message key, its
// arguments given as name/value pairs (an argument may itself be an
// i18n.Message, worded in the same language).
func E(path, key string, args ...any) FieldError {
	return FromMessage(path, i18n.M(key, args...))
}

// FromMessage returns the error at path saying m.
func FromMessage(path string, m i18n.Message) FieldError {
	return FieldError{Path: path, Message: m.English(), Key: m.Key, Args: m.Args}
}

// cleaned is the error without a path saying err's text, Go's type names
// taken out (Clean); its catalogue message when err holds a coded error
// (i18n.Coded: an *i18n.Error, a jobs.Error) whose text that is.
func cleaned(err error) FieldError {
	msg := Clean(err.Error())
	if c, ok := i18n.CodedIn(err); ok && c.Error() == msg {
		m, _ := i18n.MessageOf(c)
		return FromMessage("", m)
	}
	return FieldError{Message: msg}
}

// FromError returns the error at path saying what err says: its catalogue
// message when err is a coded error (i18n.Coded), else its text.
func FromError(path string, err error) FieldError {
	if m, ok := i18n.MessageOf(err); ok {
		return FromMessage(path, m)
	}
	return FromMessage(path, i18n.M("valid.as_is", "Text", err.Error()))
}

// Wording is the catalogue message fe was worded from; its key is "" when
// fe's text has none.
func (fe FieldError) Wording() i18n.Message { return i18n.Message{Key: fe.Key, Args: fe.Args} }

// Text is fe's message in the request's language (ctx carries it, see
// i18n.With); the English Message when it has no catalogue key.
func (fe FieldError) Text(ctx context.Context) string {
	if fe.Key == "" {
		return fe.Message
	}
	return fe.Wording().Text(ctx)
}

// Text words fe in the request's language: Text(ctx, fe) is fe.Text(ctx).
func Text(ctx context.Context, fe FieldError) string { return fe.Text(ctx) }

// Errors is a list of field errors; it is itself an error.
type Errors []FieldError

func (e Errors) Error() string {
	parts := make([]string, len(e))
	for i, fe := range e {
		if fe.Path == "" {
			parts[i] = fe.Message
			continue
		}
		parts[i] = fe.Path + ": " + fe.Message
	}
	return strings.Join(parts, "; ")
}

// Text is Error() in the request's language: each error's path and
// message, joined by "; ".
func (e Errors) Text(ctx context.Context) string {
	parts := make([]string, len(e))
	for i, fe := range e {
		if fe.Path == "" {
			parts[i] = fe.Text(ctx)
			continue
		}
		parts[i] = fe.Path + ": " + fe.Text(ctx)
	}
	return strings.Join(parts, "; ")
}

// Map returns the errors keyed by path, the first message for each in
// English; forms show them beside their fields (MapText in the reader's
// language).
func (e Errors) Map() map[string]string {
	return e.mapOf(func(fe FieldError) string { return fe.Message })
}

// MapText is Map in the request's language.
func (e Errors) MapText(ctx context.Context) map[string]string {
	return e.mapOf(func(fe FieldError) string { return fe.Text(ctx) })
}

func (e Errors) mapOf(text func(FieldError) string) map[string]string {
	out := make(map[string]string, len(e))
	for _, fe := range e {
		if _, dup := out[fe.Path]; !dup {
			out[fe.Path] = text(fe)
		}
	}
	return out
}

// Add appends an error at path, its message formatted; the message has no
// translation, so prefer Say.
func (e *Errors) Add(path, format string, args ...any) {
	*e = append(*e, FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
}

// Say appends an error at path saying the catalogue message key, its
// arguments given as name/value pairs (see E).
func (e *Errors) Say(path, key string, args ...any) {
	*e = append(*e, E(path, key, args...))
}

// Prefix returns the errors with prefix put before each path
// ("scorer_options.judge" + "model").
func (e Errors) Prefix(prefix string) Errors {
	if prefix == "" {
		return e
	}
	out := make(Errors, len(e))
	for i, fe := range e {
		fe.Path = Join(prefix, fe.Path)
		out[i] = fe
	}
	return out
}

// Join joins two parts of a path with a dot, or none before an index.
func Join(prefix, path string) string {
	switch {
	case prefix == "":
		return path
	case path == "":
		return prefix
	case strings.HasPrefix(path, "["):
		return prefix + path
	}
	return prefix + "." + path
}

// Validator checks structs by their `validate` tags and reports failures
// under the names given by the tags in nameTags (the first a field has).
type Validator struct {
	v        *validator.Validate
	choices  map[string][]string
	messages map[string]i18n.Message
}

// Default is the validator for forms, API bodies and manifests: fields are
// named by their json tag, else yaml, else form. It is built once and
// never changed after, so sharing it is safe.
var Default = sync.OnceValue(func() *Validator { return New("json", "yaml", "form") })

// New builds a validator naming fields by the first of nameTags a field
// has (its Go name when none), with every custom rule registered.
func New(nameTags ...string) *Validator {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(sf reflect.StructField) string {
		for _, tag := range nameTags {
			name, _, _ := strings.Cut(sf.Tag.Get(tag), ",")
			if name != "" && name != "-" {
				return name
			}
		}
		return sf.Name
	})
	for name, fn := range rules {
		if err := v.RegisterValidation(name, fn); err != nil {
			panic(fmt.Sprintf("valid: registering %s: %v", name, err))
		}
	}
	return &Validator{v: v, choices: map[string][]string{}, messages: map[string]i18n.Message{}}
}

// RegisterChoice registers rule name, met by any of values; call it while
// setting the validator up, before it is shared.
func (v *Validator) RegisterChoice(name string, values []string) *Validator {
	list := append([]string(nil), values...)
	v.choices[name] = list
	if err := v.v.RegisterValidation(name, func(fl validator.FieldLevel) bool {
		s := fl.Field().String()
		for _, c := range list {
			if c == s {
				return true
			}
		}
		return false
	}, true); err != nil {
		panic(fmt.Sprintf("valid: registering %s: %v", name, err))
	}
	return v
}

// RegisterRule registers rule name, met by the strings ok accepts, with
// the message shown when it is not (a catalogue key, or a sentence that
// stays English); call it while setting the validator up, before it is
// shared.
func (v *Validator) RegisterRule(name, message string, ok func(string) bool) *Validator {
	v.messages[name] = keyOrText(message)
	if err := v.v.RegisterValidation(name, func(fl validator.FieldLevel) bool {
		return fl.Field().Kind() == reflect.String && ok(fl.Field().String())
	}); err != nil {
		panic(fmt.Sprintf("valid: registering %s: %v", name, err))
	}
	return v
}

// RegisterCustomType has values of types checked as what fn returns for
// them (a Ref as its id or its name); call it while setting the validator
// up, before it is shared.
func (v *Validator) RegisterCustomType(fn func(reflect.Value) any, types ...any) *Validator {
	v.v.RegisterCustomTypeFunc(fn, types...)
	return v
}

// RegisterValueRule registers rule name, met by the values ok accepts
// (any kind), with the message shown when it is not (as RegisterRule).
func (v *Validator) RegisterValueRule(name, message string, ok func(reflect.Value) bool) *Validator {
	v.messages[name] = keyOrText(message)
	if err := v.v.RegisterValidation(name, func(fl validator.FieldLevel) bool { return ok(fl.Field()) }); err != nil {
		panic(fmt.Sprintf("valid: registering %s: %v", name, err))
	}
	return v
}

// Struct checks s (a struct or a pointer to one) and returns its errors,
// nil when there are none.
func (v *Validator) Struct(s any) Errors {
	err := v.v.Struct(s)
	if err == nil {
		return nil
	}
	return v.translate(err, reflect.TypeOf(s))
}

// Var checks one value against tag, reporting under path.
func (v *Validator) Var(path string, x any, tag string) Errors {
	err := v.v.Var(x, tag)
	if err == nil {
		return nil
	}
	errs := v.translate(err, nil)
	for i := range errs {
		errs[i].Path = path
	}
	return errs
}

// Translate turns any error from validating or decoding into field
// errors: validator/v10's, JSON's and YAML's (see DecodeJSON, DecodeYAML)
// and Errors themselves. Anything else becomes one error without a path.
func Translate(err error) Errors {
	return Default().translate(err, nil)
}

func (v *Validator) translate(err error, root reflect.Type) Errors {
	if err == nil {
		return nil
	}
	var errs Errors
	if errors.As(err, &errs) {
		return errs
	}
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) {
		if fe, ok := decodeError(err); ok {
			return Errors{fe}
		}
		return Errors{cleaned(err)}
	}
	out := make(Errors, 0, len(verrs))
	for _, fe := range verrs {
		var msg i18n.Message
		if sf, ok := structField(root, fe.StructNamespace()); ok {
			if tag := cmp.Or(sf.Tag.Get("msg_"+fe.Tag()), sf.Tag.Get("msg")); tag != "" {
				msg = keyOrText(tag)
			}
		}
		if msg.Key == "" {
			msg = v.message(fe)
		}
		ns := fe.Namespace()
		if root != nil && anonymous(root) {
			// An anonymous struct's namespace has no root name.
			ns = "." + ns
		}
		out = append(out, FromMessage(path(ns), msg))
	}
	return out
}

// keyOrText is a message given as a catalogue key or as a sentence of its
// own: a sentence becomes the message valid.as_is, which says it as it is
// in every language.
func keyOrText(s string) i18n.Message {
	if i18n.Has(s) {
		return i18n.M(s)
	}
	return i18n.M("valid.as_is", "Text", s)
}

// path drops the root struct's name from a validator namespace:
// "Manifest.targets[1].runtime" → "targets[1].runtime".
func path(ns string) string {
	_, rest, ok := strings.Cut(ns, ".")
	if !ok {
		return ""
	}
	rest = strings.ReplaceAll(rest, "..", ".")
	return mapKey.ReplaceAllStringFunc(strings.Trim(rest, "."), func(k string) string {
		k = k[1 : len(k)-1]
		if _, err := strconv.Atoi(k); err == nil {
			return "[" + k + "]"
		}
		return "[" + strconv.Quote(k) + "]"
	})
}

// mapKey is an index or a map's key in a validator namespace; a key (not
// a number) is quoted in a path: sim.accuracy["acme/b"].
var mapKey = regexp.MustCompile(`\[[^\]]*\]`)

// structField finds the struct field a validator struct namespace
// ("Manifest.Targets[1].Runtime") is about, to read its msg tag.
func structField(root reflect.Type, ns string) (reflect.StructField, bool) {
	if root == nil {
		return reflect.StructField{}, false
	}
	if anonymous(root) {
		ns = "." + ns
	}
	parts := strings.Split(ns, ".")
	t := root
	var sf reflect.StructField
	for _, p := range parts[1:] {
		if i := strings.IndexByte(p, '['); i >= 0 {
			p = p[:i]
		}
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return sf, false
		}
		f, ok := t.FieldByName(p)
		if !ok {
			return sf, false
		}
		sf, t = f, f.Type
	}
	return sf, len(parts) > 1
}

// anonymous reports whether t (or what it points to) is a struct type
// without a name.
func anonymous(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name() == ""
}

// secret reports whether a field's value must never be echoed in a
// message: its name says PASSWORD, KEY, TOKEN or SECRET.
func secret(fe validator.FieldError) bool {
	n := strings.ToUpper(fe.Field())
	return strings.Contains(n, "PASSWORD") || strings.Contains(n, "KEY") || strings.Contains(n, "TOKEN") || strings.Contains(n, "SECRET")
}

// message is the human message for a failed rule.
func (v *Validator) message(fe validator.FieldError) i18n.Message {
	var got any = ""
	if !secret(fe) {
		got = Got(fe.Value())
	}
	if msg, ok := v.messages[fe.Tag()]; ok {
		return i18n.M("valid.rule", "Rule", msg, "Got", got)
	}
	if msg, ok := formatMessage(fe, got); ok {
		return msg
	}
	if msg, ok := boundMessage(fe, got); ok {
		return msg
	}
	if list, ok := v.choices[fe.Tag()]; ok {
		return i18n.M("valid.oneof", "List", strings.Join(nonEmpty(list), ", "), "Got", got)
	}
	return i18n.M("valid.fails_check", "Check", strconv.Quote(fe.Tag()), "Got", got)
}

// Got is the " (got …)" a message ends with, the value as shown: strings
// quoted and cut short, pointers followed, never a Go type.
func Got(x any) i18n.Message { return i18n.M("valid.got", "Value", shown(x)) }

// formatMessage is the message of a rule on a value's presence or form;
// got is the value as shown, when it may be.
func formatMessage(fe validator.FieldError, got any) (i18n.Message, bool) {
	switch fe.Tag() {
	case "required", "notblank", "required_if", "required_with", "required_unless":
		return i18n.M("valid.required"), true
	case "finite":
		return i18n.M("valid.finite", "Got", got), true
	case "text":
		return i18n.M("valid.text"), true
	case "model_name":
		if err := jobs.CheckModelName(fmt.Sprint(fe.Value())); err != nil {
			return FromError("", err).Wording(), true
		}
		return i18n.M("valid.model_name"), true
	case "hardware":
		return i18n.M("valid.hardware", "Got", got), true
	case "postgres_url":
		return i18n.M("valid.postgres_url", "Got", got), true
	case "listen_addr":
		return i18n.M("valid.listen_addr", "Got", got), true
	case "listen_addr_or_off":
		return i18n.M("valid.listen_addr_or_off", "Got", got), true
	case "base64_32":
		return i18n.M("valid.base64_32", "Got", got), true
	case "ip_list":
		return i18n.M("valid.ip_list", "Got", got), true
	case "http_url":
		return i18n.M("valid.http_url", "Got", got), true
	case "email":
		return i18n.M("valid.email", "Got", got), true
	case "unique":
		return i18n.M("valid.unique"), true
	}
	return i18n.Message{}, false
}

// boundMessage is the message of a rule that bounds a value, its length
// or its number of items, or ties it to another field.
func boundMessage(fe validator.FieldError, got any) (i18n.Message, bool) {
	kind := fe.Kind()
	counted := kind == reflect.Slice || kind == reflect.Array || kind == reflect.Map
	p := fe.Param()
	switch fe.Tag() {
	case "oneof":
		return i18n.M("valid.oneof", "List", strings.ReplaceAll(p, " ", ", "), "Got", got), true
	case "ltfield":
		return i18n.M("valid.ltfield", "Field", p, "Got", got), true
	case "ltefield":
		return i18n.M("valid.ltefield", "Field", p, "Got", got), true
	case "eqfield":
		return i18n.M("valid.eqfield", "Field", p), true
	case "minbytes":
		return i18n.M("valid.minbytes", "N", p), true
	case "maxbytes":
		return i18n.M("valid.maxbytes", "N", p), true
	case "min", "gte":
		switch {
		case kind == reflect.String:
			return i18n.M("valid.min_chars", "N", p, "Unit", chars(p)), true
		case counted:
			return i18n.M("valid.min_items", "N", p, "Unit", items(p)), true
		}
		return i18n.M("valid.min", "N", p, "Got", got), true
	case "max", "lte":
		switch {
		case kind == reflect.String:
			return i18n.M("valid.max_chars", "N", p, "Unit", chars(p)), true
		case counted:
			return i18n.M("valid.max_items", "N", p, "Unit", items(p)), true
		}
		return i18n.M("valid.max", "N", p, "Got", got), true
	case "gt":
		return i18n.M("valid.gt", "N", p, "Got", got), true
	case "lt":
		return i18n.M("valid.lt", "N", p, "Got", got), true
	case "len":
		if kind == reflect.String {
			return i18n.M("valid.len_chars", "N", p, "Unit", chars(p)), true
		}
		return i18n.M("valid.len_items", "N", p, "Unit", items(p)), true
	}
	return i18n.Message{}, false
}

func chars(n string) i18n.Message {
	if n == "1" {
		return i18n.M("valid.character")
	}
	return i18n.M("valid.characters")
}

func items(n string) i18n.Message {
	if n == "1" {
		return i18n.M("valid.item")
	}
	return i18n.M("valid.items")
}

func nonEmpty(list []string) []string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// shown writes a value for a message: strings quoted and cut short,
// pointers followed, never a Go type.
func shown(x any) any {
	rv := reflect.ValueOf(x)
	for rv.IsValid() && rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return i18n.M("valid.nothing")
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return i18n.M("valid.nothing")
	}
	switch rv.Kind() {
	case reflect.String:
		s := rv.String()
		if len(s) > 60 {
			s = strings.ToValidUTF8(s[:60], "") + "…"
		}
		return strconv.Quote(s)
	case reflect.Slice, reflect.Array, reflect.Map:
		return i18n.M("valid.n_items", "N", rv.Len())
	case reflect.Struct:
		return i18n.M("valid.an_object")
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(rv.Float(), 'g', -1, 64)
	}
	return fmt.Sprint(rv.Interface())
}

// Finite reports whether x is a number JSON and PostgreSQL can carry: not
// NaN (YAML's .nan) nor infinite (.inf), which would pass every range
// check written as "x < lo || x > hi".
func Finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// IsHardware reports whether s can name a hardware profile: 1 to 64
// characters of text.
func IsHardware(s string) bool { return s != "" && len(s) <= 64 && dataset.IsText(s) }

// IsListenAddr reports whether s is host:port or :port.
func IsListenAddr(s string) bool {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 0 && n <= 65535
}

// IsIPList reports whether s is addresses or CIDR ranges separated by
// commas (empty entries allowed).
func IsIPList(s string) bool {
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if _, err := netip.ParsePrefix(f); err == nil {
			continue
		}
		if _, err := netip.ParseAddr(f); f != "" && err != nil {
			return false
		}
	}
	return true
}

// rules are the custom rules every validator has. Each takes the field's
// value (following pointers, which validator/v10 does for us).
var rules = map[string]validator.Func{
	// notblank: a string with something besides white space.
	"notblank": func(fl validator.FieldLevel) bool { return strings.TrimSpace(fl.Field().String()) != "" },
	// text: fits a PostgreSQL text column.
	"text": func(fl validator.FieldLevel) bool {
		f := fl.Field()
		if f.Kind() != reflect.String {
			return false
		}
		return dataset.IsText(f.String())
	},
	// finite: a float that is neither NaN nor infinite.
	"finite": func(fl validator.FieldLevel) bool {
		f := fl.Field()
		switch f.Kind() {
		case reflect.Float32, reflect.Float64:
			return Finite(f.Float())
		}
		return true
	},
	// model_name: a model id a runtime may be given on its command line.
	"model_name": func(fl validator.FieldLevel) bool { return jobs.CheckModelName(fl.Field().String()) == nil },
	// hardware: a hardware profile's slug, 1 to 64 characters of text.
	"hardware": func(fl validator.FieldLevel) bool { return IsHardware(fl.Field().String()) },
	// postgres_url: a postgres:// or postgresql:// URL.
	"postgres_url": func(fl validator.FieldLevel) bool {
		s := fl.Field().String()
		return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
	},
	// listen_addr: host:port or :port.
	"listen_addr": func(fl validator.FieldLevel) bool { return IsListenAddr(fl.Field().String()) },
	// listen_addr_or_off: a listen address, or "off" for none.
	"listen_addr_or_off": func(fl validator.FieldLevel) bool {
		return fl.Field().String() == "off" || IsListenAddr(fl.Field().String())
	},
	// base64_32: 32 bytes in standard base64 (a key's seed).
	"base64_32": func(fl validator.FieldLevel) bool {
		b, err := base64.StdEncoding.DecodeString(fl.Field().String())
		return err == nil && len(b) == 32
	},
	// ip_list: addresses or CIDR ranges, comma-separated.
	"ip_list": func(fl validator.FieldLevel) bool { return IsIPList(fl.Field().String()) },
	// maxbytes=N: a string of at most N bytes (max counts characters;
	// bcrypt and some columns count bytes).
	"maxbytes": func(fl validator.FieldLevel) bool {
		n, err := strconv.Atoi(fl.Param())
		return err == nil && fl.Field().Kind() == reflect.String && len(fl.Field().String()) <= n
	},
	// minbytes=N: a string of at least N bytes.
	"minbytes": func(fl validator.FieldLevel) bool {
		n, err := strconv.Atoi(fl.Param())
		return err == nil && fl.Field().Kind() == reflect.String && len(fl.Field().String()) >= n
	},
	// http_url: an http or https URL with a host and nothing odd in it.
	"http_url": func(fl validator.FieldLevel) bool { return IsHTTPURL(fl.Field().String()) },
}

// IsHTTPURL reports whether s is an absolute http or https URL with a
// host and no user information.
func IsHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil && dataset.IsText(s)
}

var goTypeName = regexp.MustCompile(`[a-z0-9]+\.[A-Z][A-Za-z0-9]*`)

// Clean takes Go's type names out of an error message from a library
// ("... into Go value of type bench.Manifest"), so it can be shown.
func Clean(msg string) string {
	for _, cut := range []string{" into Go struct field ", " into Go value of type ", " in type "} {
		if i := strings.Index(msg, cut); i >= 0 {
			msg = msg[:i]
		}
	}
	msg = strings.TrimPrefix(msg, "json: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	return goTypeName.ReplaceAllString(msg, "value")
}
