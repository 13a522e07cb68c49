package dataset

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/valyala/fastjson"
)

// The helpers below walk JSON that json.Valid has already accepted, so they
// need no error handling. They exist because decoding each line with
// encoding/json into a struct would scan it twice more and match keys
// case-insensitively ("Prompt" would count as "prompt"); here a line is
// validated once and split once, with exact key names, and values stay raw
// bytes that can be copied into the normalised request unchanged.
//
// Measured against github.com/valyala/fastjson v1.6.4 doing the same work
// (validate each line, take the fields the formats read: the short strings
// decoded, the rest as JSON), BenchmarkParse, 6 runs of each interleaved
// with the previous build, on a shared 2-core AMD EPYC under a load average
// of 13 to 49 (hence the spread), medians by benchstat:
//
//	go test -c -o new.test ./app/dataset   (and old.test from the previous commit)
//	new.test -test.run '^$' -test.bench BenchmarkParse -test.benchtime 1s -test.count 1   (×6, alternating)
//	go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da old.txt new.txt
//
//	input (bytes)              scanner                         fastjson
//	generated 20,000 lines     14.65 ms ±97 %   692 MiB/s      25.41 ms ±67 %   374 MiB/s
//	  (10.6 MB)                20,000 allocs, 312 KiB          0 allocs
//	GSM8K test (750 KB)        2.94 ms ±60 %    244 MiB/s      0.91 ms ±223 %   783 MiB/s
//	                           3,957 allocs, 901 KiB           0 allocs
//	HumanEval (214 KB)         0.47 ms ±159 %   445 MiB/s      0.31 ms ±182 %   668 MiB/s
//	                           327 allocs, 5 KiB               0 allocs
//
// Validation alone: the scanner 9.0 ms / 0.80 ms / 0.31 ms, fastjson's
// validator 10.4 ms / 0.53 ms / 0.18 ms. fastjson is not kept for the
// parse: its validator accepts invalid JSON (a raw control character in a
// string that also holds an escape; FuzzParser's seed 32494feded971655),
// which PostgreSQL would then refuse, and it hands out no value's raw
// bytes, so requests would be written out again; on the generated file,
// the shape of `make bench-ingest`, the scanner is faster anyway. What is
// kept from it is unescaping strings (decodeString): against the
// encoding/json call it replaced, the scanner's share on GSM8K fell from
// 8.89 ms to 2.94 ms (−67 %, p=0.002) and the whole Parser's from 14.6 ms
// to 6.8 ms (−53 %, p=0.026); the other inputs did not change (p > 0.4).

// skipWS returns the index of the first non-whitespace byte at or after i.
func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		i += j
		bs := 0
		for k := i - 1; b[k] == '\\'; k-- {
			bs++
		}
		i++
		if bs%2 == 0 {
			return i
		}
	}
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// eachField calls fn with each member of the object obj: the key as written
// between its quotes (escapes not decoded) and the raw value. fn returns
// false to stop.
func eachField(obj []byte, fn func(key, val []byte) bool) {
	i := skipWS(obj, 1)
	if i >= len(obj) || obj[i] == '}' {
		return
	}
	for i < len(obj) {
		ks := i
		i = skipString(obj, i)
		key := obj[ks+1 : i-1]
		i = skipWS(obj, i) + 1 // ':'
		i = skipWS(obj, i)
		vs := i
		i = skipValue(obj, i)
		if !fn(key, obj[vs:i]) {
			return
		}
		i = skipWS(obj, i)
		if i >= len(obj) || obj[i] != ',' {
			return
		}
		i = skipWS(obj, i+1)
	}
}

// eachElem calls fn with each raw element of the array arr; fn returns false
// to stop.
func eachElem(arr []byte, fn func(val []byte) bool) {
	i := skipWS(arr, 1)
	if i >= len(arr) || arr[i] == ']' {
		return
	}
	for i < len(arr) {
		vs := i
		i = skipValue(arr, i)
		if !fn(arr[vs:i]) {
			return
		}
		i = skipWS(arr, i)
		if i >= len(arr) || arr[i] != ',' {
			return
		}
		i = skipWS(arr, i+1)
	}
}

// keyName decodes a key written with escapes ("prom\u0070t"); plain keys,
// the usual case, are compared without it.
func keyName(key []byte) string {
	if bytes.IndexByte(key, '\\') < 0 {
		return string(key)
	}
	var s string
	q := make([]byte, 0, len(key)+2)
	q = append(append(append(q, '"'), key...), '"')
	if json.Unmarshal(q, &s) != nil {
		return string(key)
	}
	return s
}

// keyIs compares a key as written with a name, without allocating for the
// usual unescaped key.
func keyIs(key []byte, name string) bool {
	if bytes.IndexByte(key, '\\') < 0 {
		return string(key) == name
	}
	return keyName(key) == name
}

// decodeString returns the text of a raw JSON string value; ok is false
// when raw is not a string.
func decodeString(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	// fastjson unescapes as encoding/json does for every string that gets
	// here: the line is valid UTF-8, and a half surrogate pair (which
	// encoding/json would turn into U+FFFD) was refused as unstorable.
	v, err := fastjson.ParseBytes(raw)
	if err != nil || v.Type() != fastjson.TypeString {
		return "", false
	}
	return string(v.GetStringBytes()), true
}

// isString, isNull, isArray and isObject look at a raw value's first byte.
func isString(raw []byte) bool { return len(raw) > 0 && raw[0] == '"' }
func isNull(raw []byte) bool   { return len(raw) > 0 && raw[0] == 'n' }
func isArray(raw []byte) bool  { return len(raw) > 0 && raw[0] == '[' }
func isObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }

// isEmptyString reports a raw JSON string with no characters.
func isEmptyString(raw []byte) bool { return len(raw) == 2 && raw[0] == '"' }

// absent treats a missing value and an explicit null alike, for optional
// fields.
func absent(raw []byte) bool { return raw == nil || isNull(raw) }

// isIntegerLiteral reports a raw JSON number without fraction or exponent,
// of any size.
func isIntegerLiteral(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) && !bytes.ContainsAny(raw, ".eE")
}

// integer parses a raw JSON number written as an integer (no fraction or
// exponent), as an id or a label may be.
func integer(raw []byte) (int64, bool) {
	if !isIntegerLiteral(raw) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}

// kindOf names the JSON type of a raw value for error messages.
func kindOf(raw []byte) i18n.Message {
	if len(raw) == 0 {
		return i18n.M("dataset_err.kind_nothing")
	}
	switch raw[0] {
	case '{':
		return i18n.M("dataset_err.kind_object")
	case '[':
		return i18n.M("dataset_err.kind_array")
	case '"':
		return i18n.M("dataset_err.kind_string")
	case 't', 'f':
		return i18n.M("dataset_err.kind_boolean")
	case 'n':
		return i18n.M("dataset_err.kind_null")
	}
	return i18n.M("dataset_err.kind_number")
}

// firstInvalidUTF8 returns the offset of the first byte that is not part of
// valid UTF-8.
func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// trimWS drops JSON whitespace (and vertical tab/form feed, which some
// editors leave) from both ends, returning how many bytes went from the
// front so error offsets can refer to the line as written.
func trimWS(b []byte) ([]byte, int) {
	lead := 0
	for lead < len(b) && isSpace(b[lead]) {
		lead++
	}
	end := len(b)
	for end > lead && isSpace(b[end-1]) {
		end--
	}
	return b[lead:end], lead
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}
