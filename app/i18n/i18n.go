// Package i18n is the message catalogue of the pages, fragments and
// notification texts: every sentence a person reads goes through it, in
// English or German. The JSON API stays English: machines read it.
//
// Messages live in locales/<lang>/<part>.toml (go-i18n's format,
// text/template placeholders such as {{.Name}}), one file a part of the
// interface, the same file names in every language; keys are "area.name"
// and each is defined once per language. Templates reach the
// request's Localizer through the context: i18n.T(ctx, "home.title").
package i18n

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

//go:embed locales/*/*.toml
var locales embed.FS

// Languages are the languages the interface speaks, the first being the
// default; a user's setting is one of their codes or "" (follow the browser).
var Languages = []Language{
	{Code: "en", Tag: language.English, Name: "English"},
	{Code: "de", Tag: language.German, Name: "Deutsch"},
}

// Language is one language of the interface.
type Language struct {
	Code string // "en", the value stored as a user's setting
	Tag  language.Tag
	Name string // in the language itself, for the setting's choice list
}

// Valid reports whether code is a language setting a user may store: ""
// (follow the browser) or a supported language's code.
func Valid(code string) bool {
	if code == "" {
		return true
	}
	for _, l := range Languages {
		if l.Code == code {
			return true
		}
	}
	return false
}

// Catalogue holds the parsed messages of every language. It is built once
// from the embedded files and never changes afterwards.
type Catalogue struct {
	bundle  *goi18n.Bundle
	matcher language.Matcher
	byLang  map[string]*Localizer
}

// Default returns the catalogue of the embedded message files. It panics
// if they do not parse: a broken catalogue is a build defect, and the
// catalogue test catches it.
var Default = sync.OnceValue(func() *Catalogue {
	c, err := Load(locales)
	if err != nil {
		panic(err)
	}
	return c
})

// Load parses every locales/<lang>/*.toml in fsys into a catalogue. A key
// defined twice in one language is an error: go-i18n would let the last
// file win without a word.
func Load(fsys fs.FS) (*Catalogue, error) {
	b := goi18n.NewBundle(Languages[0].Tag)
	b.RegisterUnmarshalFunc("toml", toml.Unmarshal)
	tags := make([]language.Tag, 0, len(Languages))
	for _, l := range Languages {
		if _, err := keysOf(fsys, l.Code); err != nil {
			return nil, err
		}
		files, err := fs.Glob(fsys, "locales/"+l.Code+"/*.toml")
		if err != nil || len(files) == 0 {
			return nil, fmt.Errorf("read %s catalogue: no locales/%s/*.toml", l.Code, l.Code)
		}
		for _, f := range files {
			buf, err := fs.ReadFile(fsys, f)
			if err != nil {
				return nil, fmt.Errorf("read %s catalogue: %w", l.Code, err)
			}
			// go-i18n takes the language from the file name's last part
			// before the extension.
			if _, err := b.ParseMessageFileBytes(buf, path.Base(strings.TrimSuffix(f, ".toml"))+"."+l.Code+".toml"); err != nil {
				return nil, fmt.Errorf("parse %s: %w", f, err)
			}
		}
		tags = append(tags, l.Tag)
	}
	c := &Catalogue{bundle: b, matcher: language.NewMatcher(tags), byLang: map[string]*Localizer{}}
	for _, l := range Languages {
		c.byLang[l.Code] = &Localizer{lang: l, loc: goi18n.NewLocalizer(b, l.Code)}
	}
	return c, nil
}

// For returns the localizer of the user's setting when it names a language,
// else of the best match for the browser's Accept-Language header, else
// English.
func (c *Catalogue) For(setting, acceptLanguage string) *Localizer {
	if l, ok := c.byLang[setting]; ok {
		return l
	}
	tags, _, err := language.ParseAcceptLanguage(acceptLanguage)
	if err != nil || len(tags) == 0 {
		return c.byLang[Languages[0].Code]
	}
	_, i, conf := c.matcher.Match(tags...)
	if conf == language.No {
		return c.byLang[Languages[0].Code]
	}
	return c.byLang[Languages[i].Code]
}

// Lang returns the localizer of a language code ("en", "de"); English for
// an unknown code.
func (c *Catalogue) Lang(code string) *Localizer { return c.For(code, "") }

// Keys returns the message ids of a language, sorted.
func (c *Catalogue) Keys(code string) []string {
	keys, _ := keysOf(locales, code)
	return keys
}

// keysOf reads the message ids of a language's files in fsys, sorted; an
// id defined in two places is an error naming both files.
func keysOf(fsys fs.FS, code string) ([]string, error) {
	files, err := fs.Glob(fsys, "locales/"+code+"/*.toml")
	if err != nil {
		return nil, err
	}
	where := map[string]string{}
	var keys []string
	for _, f := range files {
		raw, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := toml.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("parse %s: %w", f, err)
		}
		var fileKeys []string
		collectKeys(m, "", &fileKeys)
		for _, k := range fileKeys {
			if prev, ok := where[k]; ok {
				return nil, fmt.Errorf("%s: key %q is defined in %s already", f, k, prev)
			}
			where[k] = f
		}
		keys = append(keys, fileKeys...)
	}
	sort.Strings(keys)
	return keys, nil
}

// pluralForms are the table keys that make a table one plural message
// rather than a group of messages.
var pluralForms = map[string]bool{"zero": true, "one": true, "two": true, "few": true, "many": true, "other": true}

func collectKeys(m map[string]any, prefix string, keys *[]string) {
	for k, v := range m {
		id := k
		if prefix != "" {
			id = prefix + "." + k
		}
		sub, ok := v.(map[string]any)
		if !ok {
			*keys = append(*keys, id)
			continue
		}
		plural := len(sub) > 0
		for sk := range sub {
			if !pluralForms[sk] {
				plural = false
			}
		}
		if plural {
			*keys = append(*keys, id)
			continue
		}
		collectKeys(sub, id, keys)
	}
}

// Localizer speaks one language: messages, numbers and dates.
type Localizer struct {
	lang Language
	loc  *goi18n.Localizer
}

// Code is the language's code, "en" or "de"; the value of <html lang>.
func (l *Localizer) Code() string { return l.lang.Code }

// T returns the message key with its placeholders filled from args, given
// as name/value pairs: T("runs.count", "Name", name). A missing key shows
// as the key itself, so a gap is visible on the page (the catalogue test
// fails on it before that).
func (l *Localizer) T(key string, args ...any) string {
	return l.localize(key, nil, args)
}

// N is T for a message with plural forms: count chooses the form and is
// available to the message as {{.Count}}, formatted for the language.
func (l *Localizer) N(key string, count int, args ...any) string {
	return l.localize(key, count, args)
}

func (l *Localizer) localize(key string, count any, args []any) string {
	var data map[string]any
	if len(args) > 0 || count != nil {
		data = make(map[string]any, len(args)/2+1)
		for i := 0; i+1 < len(args); i += 2 {
			name, _ := args[i].(string)
			data[name] = args[i+1]
		}
		if n, ok := count.(int); ok {
			data["Count"] = l.Int(int64(n))
		}
	}
	s, err := l.loc.Localize(&goi18n.LocalizeConfig{MessageID: key, TemplateData: data, PluralCount: count})
	if err != nil && s == "" {
		return key
	}
	return s
}

type ctxKey struct{}

// With returns ctx carrying l, the request's language.
func With(ctx context.Context, l *Localizer) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// From returns the localizer in ctx; English when there is none.
func From(ctx context.Context) *Localizer {
	if l, ok := ctx.Value(ctxKey{}).(*Localizer); ok {
		return l
	}
	return Default().Lang(Languages[0].Code)
}

// T is From(ctx).T: the message key in the request's language.
func T(ctx context.Context, key string, args ...any) string { return From(ctx).T(key, args...) }

// N is From(ctx).N: a message with plural forms in the request's language.
func N(ctx context.Context, key string, count int, args ...any) string {
	return From(ctx).N(key, count, args...)
}

// separators are each language's decimal and thousands separators.
func (l *Localizer) separators() (dec, thou string) {
	if l.lang.Code == "de" {
		return ",", "."
	}
	return ".", ","
}

// Num formats v with the given number of decimals and the language's
// separators: 1,234.5 in English, 1.234,5 in German.
func (l *Localizer) Num(v float64, decimals int) string {
	s := fmt.Sprintf("%.*f", decimals, v)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	dec, thou := l.separators()
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteString(thou)
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteString(dec)
		b.WriteString(frac)
	}
	return b.String()
}

// Int formats n with the language's thousands separator.
func (l *Localizer) Int(n int64) string { return l.Num(float64(n), 0) }

// Num formats v in the request's language; see Localizer.Num.
func Num(ctx context.Context, v float64, decimals int) string { return From(ctx).Num(v, decimals) }

// Int formats n in the request's language; see Localizer.Int.
func Int(ctx context.Context, n int64) string { return From(ctx).Int(n) }

// Mark puts the language's decimal mark into s, a number formatted with a
// point ("%.3f", "%g"), without grouping its thousands: "1234.5" stays in
// English and reads "1234,5" in German. For figures in sentences whose
// English form other tools and tests read as written.
func (l *Localizer) Mark(s string) string {
	if dec, _ := l.separators(); dec != "." {
		return strings.Replace(s, ".", dec, 1)
	}
	return s
}

// Mark is From(ctx).Mark.
func Mark(ctx context.Context, s string) string { return From(ctx).Mark(s) }
