package dataset

import (
	"bytes"
	"github.com/ruckus/ruckus/app/i18n"
	"strconv"
	"strings"
	"unicode/utf8"
)

// PostgreSQL's jsonb and text hold every string JSON can write except two
// kinds of escape: \u0000 (text cannot hold a NUL character) and a UTF-16
// surrogate escape without its other half (\ud800 alone, which names no
// character). A line with one would pass every other check and then fail
// the whole upload's COPY with an error that names no line, so the parser
// refuses it with its line and the field it is in.

// IsText reports whether s can be stored in a PostgreSQL text column as it
// is: valid UTF-8 without NUL characters. Names, settings and form values
// are checked with it before they reach SQL.
func IsText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// unstorable finds the first string (key or value) in the valid JSON b
// that PostgreSQL cannot store, returning where it is as a path such as
// "body.messages[1].content" and what is wrong with it.
func unstorable(b []byte) (path string, problem i18n.Message, found bool) {
	if !bytes.Contains(b, []byte(`\u`)) {
		return "", i18n.Message{}, false // the usual line: no \u escape at all
	}
	if _, bad := badEscape(b); !bad {
		return "", i18n.Message{}, false
	}
	var walk func(v []byte, at string) bool
	walk = func(v []byte, at string) bool {
		switch {
		case isString(v):
			if esc, bad := badEscape(v); bad {
				path, problem = at, escapeProblem(esc)
				return true
			}
		case isObject(v):
			stop := false
			eachField(v, func(key, val []byte) bool {
				name := keyName(key)
				child := name
				if at != "" {
					child = at + "." + name
				}
				if esc, bad := badEscape(append(append([]byte{'"'}, key...), '"')); bad {
					// The key as written: decoded, it would hold what is wrong.
					path, problem, stop = strings.TrimSuffix(child, name)+string(key), i18n.M("dataset_err.the_key", "Problem", escapeProblem(esc)), true
					return false
				}
				stop = walk(val, child)
				return !stop
			})
			return stop
		case isArray(v):
			stop, i := false, 0
			eachElem(v, func(val []byte) bool {
				stop = walk(val, at+"["+strconv.Itoa(i)+"]")
				i++
				return !stop
			})
			return stop
		}
		return false
	}
	walk(b, "")
	// A path is always found when badEscape found the escape; "" would
	// mean the line as a whole, which is still right.
	return strings.ToValidUTF8(path, "?"), problem, true
}

// escapeProblem says what is wrong with one escape badEscape found.
func escapeProblem(esc string) i18n.Message {
	if esc == `\u0000` {
		return i18n.M("dataset_err.nul")
	}
	return i18n.M("dataset_err.half_surrogate", "Escape", esc)
}

// badEscape scans the JSON text b (a whole value, or one string with its
// quotes) for a \u escape inside a string that PostgreSQL refuses, and
// returns it as written.
func badEscape(b []byte) (string, bool) {
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !in {
			in = c == '"'
			continue
		}
		switch c {
		case '"':
			in = false
		case '\\':
			if i+1 < len(b) && b[i+1] != 'u' {
				i++ // a two-character escape such as \" or \\
				continue
			}
			if i+6 > len(b) {
				return "", false // not valid JSON; never reached after validJSON
			}
			u, ok := hex4(b[i+2 : i+6])
			switch {
			case !ok:
			case u == 0:
				return `\u0000`, true
			case u >= 0xd800 && u <= 0xdbff: // high surrogate: a low one must follow
				if i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					if lo, ok := hex4(b[i+8 : i+12]); ok && lo >= 0xdc00 && lo <= 0xdfff {
						i += 11
						continue
					}
				}
				return string(b[i : i+6]), true
			case u >= 0xdc00 && u <= 0xdfff: // a low surrogate on its own
				return string(b[i : i+6]), true
			}
			i += 5
		}
	}
	return "", false
}

func hex4(h []byte) (rune, bool) {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
