package dataset

import (
	"slices"

	"github.com/valyala/fastjson"
)

// ValidJSON exposes the line validator so FuzzParser can check it against
// json.Valid.
var ValidJSON = validJSON

// ScanFields is the JSON share of reading one line with the scanner:
// validate it, split its top-level members and take those a format reads,
// as the Parser takes them: the short strings it looks into (ids, method,
// url, GSM8K's answer, HumanEval's entry point, a label) decoded, the rest
// (prompts, messages, bodies, references, tests) as the raw JSON that goes
// into the normalised request. It returns the fields taken and the decoded
// bytes, or -1 for a line that is not a JSON object.
func ScanFields(line []byte) (fields, decoded int) {
	b, _ := trimWS(line)
	if len(b) == 0 || !validJSON(b) || b[0] != '{' {
		return -1, 0
	}
	var f fieldSet
	eachField(b, func(k, v []byte) bool {
		f.set(k, v)
		return true
	})
	for _, raw := range [][]byte{f.customID, f.method, f.url, f.id, f.answer, f.taskID, f.entryPoint, f.label} {
		if raw != nil {
			fields++
			if s, ok := decodeString(raw); ok {
				decoded += len(s)
			}
		}
	}
	for _, raw := range [][]byte{f.body, f.prompt, f.messages, f.reference, f.choices, f.question, f.test, f.canonicalSolution} {
		if raw != nil {
			fields++
		}
	}
	return fields, decoded
}

type fieldSet = fields

// FastJSONValid is fastjson's validator, for BenchmarkParse. It is not
// json.Valid: it accepts a raw control character in a string that also
// holds an escape (FuzzParser found "\u000a00\x10\b\b"), which is why the
// parser keeps its own.
func FastJSONValid(line []byte) bool { return fastjson.ValidateBytes(line) == nil }

var (
	decodedKeys = []string{"custom_id", "method", "url", "id", "answer", "task_id", "entry_point", "label"}
	rawKeys     = []string{"body", "prompt", "messages", "reference", "choices", "question", "test", "canonical_solution"}
)

// FastJSONFields does ScanFields' work with github.com/valyala/fastjson,
// for BenchmarkParse: validate (see FastJSONValid) and parse the line,
// visit its members
// and take the same ones, the short strings unescaped and the rest written
// out again as JSON, since fastjson keeps no value's raw bytes.
type FastJSONFields struct {
	p   fastjson.Parser
	buf []byte
}

// Scan returns what ScanFields returns for line.
func (ff *FastJSONFields) Scan(line []byte) (fields, decoded int) {
	// Parse alone leaves strings unchecked until they are read (control
	// characters, escapes); validating is the scanner's first step too.
	if fastjson.ValidateBytes(line) != nil {
		return -1, 0
	}
	v, err := ff.p.ParseBytes(line)
	if err != nil {
		return -1, 0
	}
	o, err := v.Object()
	if err != nil {
		return -1, 0
	}
	var seen uint16
	take := func(bit int) {
		if seen&(1<<bit) == 0 {
			seen |= 1 << bit
			fields++
		}
	}
	o.Visit(func(k []byte, v *fastjson.Value) {
		switch string(k) {
		case "custom_id", "method", "url", "id", "answer", "task_id", "entry_point", "label":
			take(slices.Index(decodedKeys, string(k)))
			if v.Type() == fastjson.TypeString {
				decoded += len(v.GetStringBytes())
			}
		case "body", "prompt", "messages", "reference", "choices", "question", "test", "canonical_solution":
			take(8 + slices.Index(rawKeys, string(k)))
			ff.buf = v.MarshalTo(ff.buf[:0])
		}
	})
	return fields, decoded
}

// DecodeString exposes the string decoder so FuzzDecodeString can check it
// against encoding/json.
var DecodeString = decodeString
