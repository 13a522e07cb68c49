package dataset_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ruckus/ruckus/app/dataset"
)

// parseAll drains a parser and checks the invariants every parse must keep.
func parseAll(t testing.TB, input []byte, lim dataset.Limits) ([]dataset.Item, *dataset.Parser) {
	t.Helper()
	p := dataset.NewParser(bytes.NewReader(input), lim)
	var items []dataset.Item
	for {
		it, ok := p.Next()
		if !ok {
			break
		}
		if it.Index != len(items) {
			t.Fatalf("item %d has Index %d", len(items), it.Index)
		}
		if !json.Valid(it.Request) || (it.Reference != nil && !json.Valid(it.Reference)) {
			t.Fatalf("line %d: invalid JSON out: %s / %s", it.Line, it.Request, it.Reference)
		}
		items = append(items, it)
	}
	if _, ok := p.Next(); ok {
		t.Fatal("Next returned an item after returning false")
	}
	if p.Count() != len(items) {
		t.Fatalf("Count() = %d, got %d items", p.Count(), len(items))
	}
	return items, p
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type wantItem struct{ id, req, ref string }

func TestFormats(t *testing.T) {
	const chat = `{"method":"POST","url":"/v1/chat/completions","body":`
	const compl = `{"method":"POST","url":"/v1/completions","body":`
	cases := []struct {
		name         string
		input        string
		format       dataset.Format
		scorer, kind string
		items        []wantItem
	}{
		{
			name: "simple prompt and reference",
			input: `{"id":"q1","prompt":"Is 1 < 2?","reference":"yes"}
{"prompt":"Capital of France?","answer":{"text":"Paris"}}
{"id":7,"prompt":"Say hi"}
`,
			format: dataset.FormatSimple, scorer: "", kind: "chat",
			items: []wantItem{
				{"q1", chat + `{"messages":[{"role":"user","content":"Is 1 < 2?"}]}}`, `{"answer":"yes"}`},
				{"item-2", chat + `{"messages":[{"role":"user","content":"Capital of France?"}]}}`, `{"answer":{"text":"Paris"}}`},
				{"7", chat + `{"messages":[{"role":"user","content":"Say hi"}]}}`, ""},
			},
		},
		{
			name: "simple all with answers",
			input: `{"prompt":"2+2?","answer":"4","reference":"four"}
{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"3+3?"}]}],"answer":6}
`,
			format: dataset.FormatSimple, scorer: "exact", kind: "qa",
			items: []wantItem{
				{"item-1", chat + `{"messages":[{"role":"user","content":"2+2?"}]}}`, `{"answer":"four"}`},
				{"item-2", chat + `{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"3+3?"}]}]}}`, `{"answer":6}`},
			},
		},
		{
			name: "simple multiple choice",
			input: `{"id":"m1","prompt":"Pick","choices":["a","b","c"],"label":2}
{"id":"m2","prompt":"Pick","choices":["a","b"],"label":"B","answer":"b"}
`,
			format: dataset.FormatSimple, scorer: "choice", kind: "multiple-choice",
			items: []wantItem{
				{"m1", chat + `{"messages":[{"role":"user","content":"Pick"}]}}`, `{"choices":["a","b","c"],"label":2}`},
				{"m2", chat + `{"messages":[{"role":"user","content":"Pick"}]}}`, `{"answer":"b","choices":["a","b"],"label":"B"}`},
			},
		},
		{
			name: "openai batch",
			input: `{"custom_id":"r1","method":"POST","url":"/v1/chat/completions","body":{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":5}}
{"custom_id":"r2","method":"POST","url":"/v1/completions","body":{"model":"m","prompt":"Once"},"reference":"upon"}
`,
			format: dataset.FormatOpenAIBatch, scorer: "", kind: "chat",
			items: []wantItem{
				{"r1", chat + `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":5}}`, ""},
				{"r2", compl + `{"model":"m","prompt":"Once"}}`, `{"answer":"upon"}`},
			},
		},
		{
			name: "openai batch completions with references",
			input: `{"custom_id":"r1","method":"POST","url":"/v1/completions","body":{"prompt":["a","b"]},"reference":1}
`,
			format: dataset.FormatOpenAIBatch, scorer: "exact", kind: "completion",
			items: []wantItem{{"r1", compl + `{"prompt":["a","b"]}}`, `{"answer":1}`}},
		},
		{
			name: "gsm8k",
			input: `{"question": "Q <one>?", "answer": "3 * 4 = <<3*4=12>>12\n#### 1,212"}
{"question": "Q2", "answer": "no marker, 5 "}
{"question": "Q3", "answer": 42}
`,
			format: dataset.FormatGSM8K, scorer: "numeric", kind: "math",
			items: []wantItem{
				{"gsm8k-1", chat + `{"messages":[{"role":"user","content":"Q <one>?"}]}}`, `{"answer":"3 * 4 = <<3*4=12>>12\n#### 1,212","final":"1212"}`},
				{"gsm8k-2", chat + `{"messages":[{"role":"user","content":"Q2"}]}}`, `{"answer":"no marker, 5 ","final":"no marker 5"}`},
				{"gsm8k-3", chat + `{"messages":[{"role":"user","content":"Q3"}]}}`, `{"answer":42,"final":"42"}`},
			},
		},
		{
			name: "gsm8k final keeps < unescaped",
			input: `{"question":"q","answer":"#### <5"}
`,
			format: dataset.FormatGSM8K, scorer: "numeric", kind: "math",
			items: []wantItem{{"gsm8k-1", chat + `{"messages":[{"role":"user","content":"q"}]}}`, `{"answer":"#### <5","final":"<5"}`}},
		},
		{
			name: "humaneval",
			input: `{"task_id":"HumanEval/0","prompt":"def f():\n","canonical_solution":"    return 1\n","test":"assert f() == 1","entry_point":"f"}
{"task_id":"HumanEval/1","prompt":"def g():\n","test":"","entry_point":"g"}
`,
			format: dataset.FormatHumanEval, scorer: "humaneval", kind: "code",
			items: []wantItem{
				{"HumanEval/0", compl + `{"prompt":"def f():\n"}}`, `{"task_id":"HumanEval/0","test":"assert f() == 1","entry_point":"f","canonical_solution":"    return 1\n"}`},
				{"HumanEval/1", compl + `{"prompt":"def g():\n"}}`, `{"task_id":"HumanEval/1","test":"","entry_point":"g"}`},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			items, p := parseAll(t, []byte(tc.input), dataset.DefaultLimits())
			if p.ErrorCount() != 0 || p.Err() != nil {
				t.Fatalf("errors: %+v %v", p.Errors(), p.Err())
			}
			if p.Format() != tc.format || p.SuggestedScorer() != tc.scorer || p.TaskKind() != tc.kind {
				t.Errorf("format, scorer, kind = %q, %q, %q; want %q, %q, %q", p.Format(), p.SuggestedScorer(), p.TaskKind(), tc.format, tc.scorer, tc.kind)
			}
			if len(items) != len(tc.items) {
				t.Fatalf("%d items, want %d", len(items), len(tc.items))
			}
			for i, w := range tc.items {
				it := items[i]
				if it.CustomID != w.id || string(it.Request) != w.req || string(it.Reference) != w.ref {
					t.Errorf("item %d:\n got %q %s %s\nwant %q %s %s", i, it.CustomID, it.Request, it.Reference, w.id, w.req, w.ref)
				}
				if w.ref == "" && it.Reference != nil {
					t.Errorf("item %d: Reference should be nil", i)
				}
				if it.Line != i+1 {
					t.Errorf("item %d: Line %d", i, it.Line)
				}
			}
		})
	}
}

func TestErrors(t *testing.T) {
	const okSimple = `{"prompt":"fine"}` + "\n"
	const okBatch = `{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"x"}]}}` + "\n"
	batch := func(id, method, url, body string) string {
		return fmt.Sprintf(`{"custom_id":%s,"method":%s,"url":%s,"body":%s}`, id, method, url, body) + "\n"
	}
	cases := []struct {
		name    string
		input   string
		lim     dataset.Limits
		line    int
		field   string
		msg     string
		count   int
		nErrors int // 0 means 1
	}{
		{name: "invalid JSON", input: okSimple + "not json\n", line: 2, msg: "invalid JSON at byte 2: invalid character 'o'", count: 1},
		{name: "truncated JSON", input: okSimple + `{"prompt":"x"` + "\n", line: 2, msg: "unexpected end of JSON input", count: 1},
		{name: "not an object", input: okSimple + "[1,2]\n", line: 2, msg: "must be a JSON object, not an array", count: 1},
		{name: "string line", input: `"hello"` + "\n" + okSimple, line: 1, msg: "not a string", count: 1},
		{name: "invalid UTF-8", input: okSimple + "{\"prompt\":\"a\xffb\"}\n", line: 2, msg: "not valid UTF-8 (at byte 13)", count: 1},
		{name: "line too long", input: `{"prompt":"` + strings.Repeat("x", 400) + `"}` + "\n" + okSimple, lim: dataset.Limits{MaxLineBytes: 300}, line: 1, msg: "longer than the limit of 300 bytes", count: 1},
		{name: "long final line", input: okSimple + strings.Repeat("x", 400), lim: dataset.Limits{MaxLineBytes: 300}, line: 2, msg: "limit of 300 bytes", count: 1},
		{name: "line too long across buffers", input: `{"prompt":"` + strings.Repeat("x", 300_000) + `"}` + "\n" + okSimple, lim: dataset.Limits{MaxLineBytes: 100_000}, line: 1, msg: "limit of 100000 bytes", count: 1},
		{name: "empty file", input: "", line: 0, msg: "the file has no items"},
		{name: "only blank lines", input: "\n  \r\n\t\n", line: 0, msg: "the file has no items"},
		{name: "too many items", input: okSimple + okSimple + okSimple + okSimple, lim: dataset.Limits{MaxItems: 2}, line: 0, msg: "more than the limit of 2 items", count: 2},
		{name: "file too large", input: strings.Repeat(okSimple, 200), lim: dataset.Limits{MaxFileBytes: 1024}, line: 0, msg: "the file is larger than the limit of 1024 bytes", count: 1024 / len(okSimple)},
		{name: "unknown shape", input: `{"foo":1}` + "\n", line: 1, msg: "cannot tell the format", nErrors: 1},
		{name: "duplicate custom_id", input: okBatch + batch(`"b"`, `"POST"`, `"/v1/completions"`, `{"prompt":"p"}`) + okBatch, line: 3, field: "custom_id", msg: `custom_id "a" is already used on line 1`, count: 2},
		{name: "duplicate simple id", input: `{"id":"x","prompt":"a"}` + "\n\n" + `{"id":"x","prompt":"b"}` + "\n", line: 3, field: "custom_id", msg: "already used on line 1", count: 1},
		{name: "duplicate integer and string id", input: `{"id":1,"prompt":"a"}` + "\n" + `{"id":"1","prompt":"b"}` + "\n", line: 2, field: "custom_id", msg: "line 1", count: 1},
		{name: "simple missing prompt", input: okSimple + `{"foo":1}` + "\n", line: 2, field: "prompt", msg: `neither "prompt" nor "messages"`, count: 1},
		{name: "prompt not a string", input: okSimple + `{"prompt":42}` + "\n", line: 2, field: "prompt", msg: "prompt must be a string, not a number", count: 1},
		{name: "prompt empty", input: okSimple + `{"prompt":""}` + "\n", line: 2, field: "prompt", msg: "must not be empty", count: 1},
		{name: "prompt and messages", input: `{"prompt":"a","messages":[]}` + "\n", line: 1, field: "messages", msg: "not both"},
		{name: "messages not an array", input: `{"messages":"hi"}` + "\n", line: 1, field: "messages", msg: "must be an array"},
		{name: "messages empty", input: `{"messages":[]}` + "\n", line: 1, field: "messages", msg: "must not be empty"},
		{name: "message not an object", input: `{"messages":["hi"]}` + "\n", line: 1, field: "messages[0]", msg: "not a string"},
		{name: "message bad role", input: `{"messages":[{"role":"robot","content":"x"}]}` + "\n", line: 1, field: "messages[0].role", msg: `role "robot" is not one of`},
		{name: "message role missing", input: `{"messages":[{"content":"x"}]}` + "\n", line: 1, field: "messages[0].role", msg: "missing"},
		{name: "message content wrong type", input: `{"messages":[{"role":"user","content":"x"},{"role":"user","content":5}]}` + "\n", line: 1, field: "messages[1].content", msg: "must be a string or an array"},
		{name: "message content null for user", input: `{"messages":[{"role":"user","content":null}]}` + "\n", line: 1, field: "messages[0].content", msg: "not null"},
		{name: "id float", input: `{"id":1.5,"prompt":"a"}` + "\n", line: 1, field: "id", msg: "string or an integer"},
		{name: "choices without label", input: `{"prompt":"a","choices":["x"]}` + "\n", line: 1, field: "label", msg: "needs a"},
		{name: "label without choices", input: `{"prompt":"a","label":0}` + "\n", line: 1, field: "choices", msg: "needs"},
		{name: "label out of range", input: `{"prompt":"a","choices":["x","y"],"label":2}` + "\n", line: 1, field: "label", msg: "out of range for 2 choices"},
		{name: "letter label out of range", input: `{"prompt":"a","choices":["x","y"],"label":"C"}` + "\n", line: 1, field: "label", msg: "out of range"},
		{name: "choice not a string", input: `{"prompt":"a","choices":["x",1],"label":0}` + "\n", line: 1, field: "choices[1]", msg: "must be a string"},
		{name: "batch missing custom_id", input: okBatch + `{"method":"POST","url":"/v1/completions","body":{"prompt":"p"}}` + "\n", line: 2, field: "custom_id", msg: "missing", count: 1},
		{name: "batch empty custom_id", input: batch(`""`, `"POST"`, `"/v1/completions"`, `{"prompt":"p"}`), line: 1, field: "custom_id", msg: "must not be empty"},
		{name: "batch custom_id not a string", input: batch(`5`, `"POST"`, `"/v1/completions"`, `{"prompt":"p"}`), line: 1, field: "custom_id", msg: "must be a string"},
		{name: "batch custom_id too long", input: batch(`"`+strings.Repeat("é", 257)+`"`, `"POST"`, `"/v1/completions"`, `{"prompt":"p"}`), line: 1, field: "custom_id", msg: "at most 256 characters"},
		{name: "batch method", input: okBatch + batch(`"b"`, `"GET"`, `"/v1/completions"`, `{"prompt":"p"}`), line: 2, field: "method", msg: `method must be "POST"`, count: 1},
		{name: "batch method missing", input: `{"custom_id":"a","url":"/v1/completions","body":{"prompt":"p"}}` + "\n", line: 1, field: "method", msg: `"POST"`},
		{name: "batch url", input: batch(`"b"`, `"POST"`, `"/v1/embeddings"`, `{"input":"p"}`), line: 1, field: "url", msg: `url must be "/v1/chat/completions" or "/v1/completions"`},
		{name: "batch body not an object", input: batch(`"b"`, `"POST"`, `"/v1/completions"`, `"p"`), line: 1, field: "body", msg: "body must be a JSON object, not a string"},
		{name: "batch chat without messages", input: batch(`"b"`, `"POST"`, `"/v1/chat/completions"`, `{"prompt":"p"}`), line: 1, field: "body.messages", msg: `needs a "messages" array`},
		{name: "batch chat messages not array", input: batch(`"b"`, `"POST"`, `"/v1/chat/completions"`, `{"messages":{}}`), line: 1, field: "body.messages", msg: "must be an array"},
		{name: "batch completions without prompt", input: batch(`"b"`, `"POST"`, `"/v1/completions"`, `{"messages":[]}`), line: 1, field: "body.prompt", msg: `needs a "prompt"`},
		{name: "format mismatch", input: okBatch + okSimple, line: 2, msg: "expected the openai-batch format detected on line 1", count: 1},
		{name: "format mismatch gsm8k", input: okSimple + `{"question":"q","answer":"a"}` + "\n", line: 2, msg: "looks like gsm8k", count: 1},
		{name: "gsm8k missing answer", input: `{"question":"q","answer":"#### 1"}` + "\n" + `{"question":"q"}` + "\n", line: 2, field: "answer", msg: "missing", count: 1},
		{name: "gsm8k answer wrong type", input: `{"question":"q","answer":true}` + "\n", line: 1, field: "answer", msg: "string or a number"},
		{name: "humaneval missing test", input: `{"task_id":"H/0","prompt":"p","test":"t","entry_point":"f"}` + "\n" + `{"task_id":"H/1","prompt":"p","entry_point":"f"}` + "\n", line: 2, field: "test", msg: "missing", count: 1},
		{name: "humaneval duplicate task", input: strings.Repeat(`{"task_id":"H/0","prompt":"p","test":"t","entry_point":"f"}`+"\n", 2), line: 2, field: "custom_id", msg: `task_id "H/0" is already used on line 1`, count: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, p := parseAll(t, []byte(tc.input), tc.lim)
			if p.Err() != nil {
				t.Fatalf("Err() = %v", p.Err())
			}
			want := max(tc.nErrors, 1)
			errs := p.Errors()
			if p.ErrorCount() != want || len(errs) != want {
				t.Fatalf("ErrorCount() = %d, Errors() = %+v; want %d", p.ErrorCount(), errs, want)
			}
			e := errs[0]
			if e.Line != tc.line || e.Field != tc.field || !strings.Contains(e.Message, tc.msg) {
				t.Errorf("error = %+v; want line %d, field %q, message containing %q", e, tc.line, tc.field, tc.msg)
			}
			if p.Count() != tc.count {
				t.Errorf("Count() = %d, want %d", p.Count(), tc.count)
			}
		})
	}
}

func TestBOMCRLFAndBlankLines(t *testing.T) {
	input := "\xef\xbb\xbf" + `{"prompt":"a"}` + "\r\n\r\n   \r\n" + `{"prompt":"b"}` + "\r\n\t\n" + `{"prompt":"c"}`
	items, p := parseAll(t, []byte(input), dataset.Limits{})
	if p.ErrorCount() != 0 {
		t.Fatalf("errors: %+v", p.Errors())
	}
	if len(items) != 3 || items[0].Line != 1 || items[1].Line != 4 || items[2].Line != 6 || items[2].CustomID != "item-3" {
		t.Fatalf("items: %+v", items)
	}
	if p.Bytes() != int64(len(input)) {
		t.Errorf("Bytes() = %d, want %d", p.Bytes(), len(input))
	}
}

func TestGzip(t *testing.T) {
	plain := []byte(`{"prompt":"a"}` + "\n" + `{"prompt":"b"}` + "\n")
	compressed := gz(t, plain)
	items, p := parseAll(t, compressed, dataset.Limits{})
	if p.ErrorCount() != 0 || p.Err() != nil || len(items) != 2 {
		t.Fatalf("%d items, errors %+v, %v", len(items), p.Errors(), p.Err())
	}
	sum := sha256.Sum256(compressed)
	if p.SHA256() != hex.EncodeToString(sum[:]) || p.Bytes() != int64(len(compressed)) {
		t.Errorf("SHA256/Bytes describe the decompressed data: %s %d", p.SHA256(), p.Bytes())
	}

	// MaxFileBytes applies to the decompressed size.
	big := gz(t, bytes.Repeat(plain, 1000))
	_, p = parseAll(t, big, dataset.Limits{MaxFileBytes: 4096})
	if errs := p.Errors(); len(errs) != 1 || errs[0].Line != 0 || !strings.Contains(errs[0].Message, "larger than the limit of 4096 bytes") {
		t.Fatalf("errors: %+v", errs)
	}

	// A file of exactly the limit is fine.
	_, p = parseAll(t, gz(t, plain), dataset.Limits{MaxFileBytes: int64(len(plain))})
	if p.ErrorCount() != 0 || p.Count() != 2 {
		t.Fatalf("file at the limit: %+v", p.Errors())
	}
}

func TestReadErrors(t *testing.T) {
	// Broken gzip data is the file's fault: a file-wide error (the upload
	// is refused with a 422), not a read error (a 500).
	plain := bytes.Repeat([]byte(`{"prompt":"a"}`+"\n"), 100)
	c := gz(t, plain)
	badCRC := bytes.Clone(c)
	badCRC[len(badCRC)-8] ^= 0xff // the CRC-32 in the gzip trailer
	corrupt := bytes.Clone(c)
	corrupt[len(corrupt)/2] ^= 0xff
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"not gzip after the magic bytes", []byte("\x1f\x8bnot really gzip at all"), "its gzip header is invalid"},
		{"truncated", c[:len(c)-6], "gzip: unexpected end of file (the file is truncated) at line "},
		{"truncated in the middle", c[:len(c)/2], "gzip: unexpected end of file (the file is truncated) at line "},
		{"bad CRC", badCRC, "gzip checksum error (the file is corrupt) after line 100"},
		{"corrupt", corrupt, "gzip"},
	} {
		_, p := parseAll(t, tc.data, dataset.Limits{})
		errs := p.Errors()
		if p.Err() != nil || len(errs) != 1 || errs[0].Line != 0 || !strings.Contains(errs[0].Message, tc.want) {
			t.Errorf("%s: Err() = %v, errors %+v; want one file error saying %q", tc.name, p.Err(), errs, tc.want)
		}
	}
	// The upload's reader fails in the middle of gzip data: a read error.
	boom := errors.New("connection reset")
	p := dataset.NewParser(io.MultiReader(bytes.NewReader(c[:len(c)/2]), iotest.ErrReader(boom)), dataset.Limits{})
	for _, ok := p.Next(); ok; _, ok = p.Next() {
	}
	if !errors.Is(p.Err(), boom) || p.ErrorCount() != 0 {
		t.Errorf("reader error in gzip data: Err() = %v, errors %+v", p.Err(), p.Errors())
	}
	// The upload's reader fails.
	p = dataset.NewParser(io.MultiReader(strings.NewReader(`{"prompt":"a"}`+"\n"+`{"prompt":`), iotest.ErrReader(boom)), dataset.Limits{})
	n := 0
	for _, ok := p.Next(); ok; _, ok = p.Next() {
		n++
	}
	if n != 1 || !errors.Is(p.Err(), boom) || p.ErrorCount() != 0 {
		t.Errorf("reader error: %d items, Err() = %v, errors %+v", n, p.Err(), p.Errors())
	}
	// An error before anything was read.
	p = dataset.NewParser(iotest.ErrReader(boom), dataset.Limits{})
	if _, ok := p.Next(); ok || !errors.Is(p.Err(), boom) {
		t.Errorf("immediate reader error: Err() = %v", p.Err())
	}
}

func TestErrorCap(t *testing.T) {
	var b strings.Builder
	for i := range 120 {
		if i%2 == 0 {
			b.WriteString(`{"prompt":"ok"}` + "\n")
		} else {
			b.WriteString(`{"prompt":1}` + "\n")
		}
	}
	_, p := parseAll(t, []byte(b.String()), dataset.Limits{})
	errs := p.Errors()
	if len(errs) != 50 || p.ErrorCount() != 60 || p.Count() != 60 {
		t.Fatalf("len(Errors()) = %d, ErrorCount() = %d, Count() = %d", len(errs), p.ErrorCount(), p.Count())
	}
	for i, e := range errs {
		if e.Line != 2*(i+1) || e.Field != "prompt" {
			t.Fatalf("error %d = %+v", i, e)
		}
	}

	// A file-wide error is kept even when 50 line errors are already kept.
	_, p = parseAll(t, []byte(strings.Repeat(`{"prompt":1}`+"\n", 100)+strings.Repeat(`{"prompt":"x"}`+"\n", 100)), dataset.Limits{MaxFileBytes: 2000})
	errs = p.Errors()
	if len(errs) != 50 || errs[0].Line != 0 || !strings.Contains(errs[0].Message, "larger than") || errs[1].Line != 1 {
		t.Fatalf("errors with file error: %d, %+v", len(errs), errs[:2])
	}
}

func TestLongValidLineAndStreaming(t *testing.T) {
	// A valid line longer than the read buffer is assembled and accepted.
	long := strings.Repeat("y", 200_000)
	items, p := parseAll(t, []byte(`{"prompt":"`+long+`"}`+"\n"+`{"prompt":"z"}`), dataset.Limits{})
	if p.ErrorCount() != 0 || len(items) != 2 || !strings.Contains(string(items[0].Request), long) {
		t.Fatalf("long valid line: %d items, %+v", len(items), p.Errors())
	}

	// An over-long line is skipped, not buffered: 64 MiB passes through with
	// little memory.
	const size = 64 << 20
	r := io.MultiReader(strings.NewReader(`{"prompt":"`), io.LimitReader(repeatReader('a'), size),
		strings.NewReader(`"}`+"\n"+`{"prompt":"ok"}`+"\n"))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p = dataset.NewParser(r, dataset.Limits{})
	n := 0
	for _, ok := p.Next(); ok; _, ok = p.Next() {
		n++
	}
	runtime.ReadMemStats(&after)
	if n != 1 || p.ErrorCount() != 1 || p.Errors()[0].Line != 1 {
		t.Fatalf("%d items, errors %+v", n, p.Errors())
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("allocated %d bytes to skip a %d-byte line", grew, size)
	}
}

type repeatReader byte

func (r repeatReader) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = byte(r)
	}
	return len(b), nil
}

func TestEscapedKeysAndDuplicateKeys(t *testing.T) {
	// Keys are matched exactly (after unescaping); the last duplicate wins.
	input := `{"prom\u0070t":"a","Prompt":"ignored"}` + "\n" + `{"prompt":"x","prompt":"y"}` + "\n" + `{"PROMPT":"z"}` + "\n"
	items, p := parseAll(t, []byte(input), dataset.Limits{})
	if len(items) != 2 || !strings.Contains(string(items[1].Request), `"y"`) {
		t.Fatalf("items %+v", items)
	}
	if errs := p.Errors(); len(errs) != 1 || errs[0].Line != 3 || errs[0].Field != "prompt" {
		t.Fatalf("errors %+v", errs)
	}
}

// sharedDataset opens a starter dataset kept beside the repository.
func sharedDataset(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../../shared/datasets/" + rel)
	if err != nil {
		t.Fatalf("the public test datasets live in ../shared beside the repository: %v", err)
	}
	return b
}

func TestGSM8K(t *testing.T) {
	items, p := parseAll(t, sharedDataset(t, "gsm8k/test.jsonl"), dataset.DefaultLimits())
	if p.ErrorCount() != 0 || p.Err() != nil {
		t.Fatalf("errors: %+v %v", p.Errors(), p.Err())
	}
	if len(items) != 1319 || p.Format() != dataset.FormatGSM8K || p.SuggestedScorer() != "numeric" || p.TaskKind() != "math" {
		t.Fatalf("%d items, format %q, scorer %q, kind %q", len(items), p.Format(), p.SuggestedScorer(), p.TaskKind())
	}
	var ref struct{ Answer, Final string }
	if err := json.Unmarshal(items[0].Reference, &ref); err != nil {
		t.Fatal(err)
	}
	// The first line's answer ends "… market.\n#### 18".
	if ref.Final != "18" || !strings.HasSuffix(ref.Answer, "#### 18") || items[0].CustomID != "gsm8k-1" {
		t.Errorf("first item: %q %s", items[0].CustomID, items[0].Reference)
	}
	var req struct {
		URL  string
		Body struct {
			Messages []struct{ Role, Content string }
		}
	}
	if err := json.Unmarshal(items[0].Request, &req); err != nil {
		t.Fatal(err)
	}
	if req.URL != "/v1/chat/completions" || !strings.HasPrefix(req.Body.Messages[0].Content, "Janet\u2019s ducks") {
		t.Errorf("first request: %s", items[0].Request)
	}
	for _, it := range items {
		if err := json.Unmarshal(it.Reference, &ref); err != nil || ref.Final == "" || strings.Contains(ref.Final, ",") {
			t.Fatalf("line %d: final %q (%v)", it.Line, ref.Final, err)
		}
	}
}

func TestHumanEval(t *testing.T) {
	raw := sharedDataset(t, "humaneval/HumanEval.jsonl.gz")
	items, p := parseAll(t, raw, dataset.DefaultLimits())
	if p.ErrorCount() != 0 || p.Err() != nil {
		t.Fatalf("errors: %+v %v", p.Errors(), p.Err())
	}
	if len(items) != 164 || p.Format() != dataset.FormatHumanEval || items[0].CustomID != "HumanEval/0" || items[163].CustomID != "HumanEval/163" {
		t.Fatalf("%d items, format %q, first %q", len(items), p.Format(), items[0].CustomID)
	}
	if p.Bytes() != int64(len(raw)) || p.TaskKind() != "code" {
		t.Errorf("Bytes() = %d, want %d; TaskKind %q", p.Bytes(), len(raw), p.TaskKind())
	}
	var ref struct {
		TaskID            string `json:"task_id"`
		Test              string `json:"test"`
		EntryPoint        string `json:"entry_point"`
		CanonicalSolution string `json:"canonical_solution"`
	}
	if err := json.Unmarshal(items[0].Reference, &ref); err != nil || ref.EntryPoint != "has_close_elements" || ref.CanonicalSolution == "" || ref.Test == "" {
		t.Errorf("reference: %s (%v)", items[0].Reference, err)
	}
}

// simpleLines makes n simple-format lines of about 500 bytes, like the
// benchmark file of 1,000,000 lines and 500 MB.
func simpleLines(n int) []byte {
	var b bytes.Buffer
	filler := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 9)
	for i := range n {
		fmt.Fprintf(&b, `{"id":"item-%07d","prompt":"Question %d: %s What is %d + %d?","reference":"%d"}`+"\n", i, i, filler, i, i, 2*i)
	}
	return b.Bytes()
}

// BenchmarkParse reads a generated file (simple format, 20,000 lines of
// about 500 bytes), GSM8K's test split and HumanEval: "parser" is the whole
// Parser; "scanner" and "fastjson" are only its JSON share (validate each
// line and take the fields the formats read), done by the package's
// scanner and by github.com/valyala/fastjson; the "-validate" rows are the
// validation alone. The figures and what was kept are in jsonscan.go.
func BenchmarkParse(b *testing.B) {
	gz, err := gzip.NewReader(bytes.NewReader(sharedDataset(b, "humaneval/HumanEval.jsonl.gz")))
	if err != nil {
		b.Fatal(err)
	}
	humanEval, err := io.ReadAll(gz)
	if err != nil {
		b.Fatal(err)
	}
	for _, in := range []struct {
		name  string
		data  []byte
		items int
	}{
		{"generated", simpleLines(20_000), 20_000},
		{"gsm8k", sharedDataset(b, "gsm8k/test.jsonl"), 1319},
		{"humaneval", humanEval, 164},
	} {
		var lines [][]byte
		for line := range bytes.SplitSeq(in.data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) > 0 {
				lines = append(lines, line)
			}
		}
		var ff dataset.FastJSONFields
		var scanned, fast [2]int
		for _, line := range lines {
			n, d := dataset.ScanFields(line)
			scanned[0], scanned[1] = scanned[0]+n, scanned[1]+d
			n, d = ff.Scan(line)
			fast[0], fast[1] = fast[0]+n, fast[1]+d
		}
		if len(lines) != in.items || scanned != fast || scanned[0] < 2*in.items || scanned[1] <= 0 {
			b.Fatalf("%s: %d lines; the scanner took %v (fields, decoded bytes), fastjson %v", in.name, len(lines), scanned, fast)
		}
		b.Run(in.name+"/parser", func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			b.ReportAllocs()
			for b.Loop() {
				p := dataset.NewParser(bytes.NewReader(in.data), dataset.DefaultLimits())
				for _, ok := p.Next(); ok; _, ok = p.Next() {
				}
				if p.Count() != in.items || p.ErrorCount() != 0 {
					b.Fatalf("count %d, errors %+v", p.Count(), p.Errors())
				}
			}
		})
		b.Run(in.name+"/scanner", func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			b.ReportAllocs()
			for b.Loop() {
				var got [2]int
				for _, line := range lines {
					n, d := dataset.ScanFields(line)
					got[0], got[1] = got[0]+n, got[1]+d
				}
				if got != scanned {
					b.Fatalf("took %v, want %v", got, scanned)
				}
			}
		})
		// Validation alone, the first step of both.
		b.Run(in.name+"/scanner-validate", func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			b.ReportAllocs()
			for b.Loop() {
				for _, line := range lines {
					if !dataset.ValidJSON(line) {
						b.Fatal("invalid line")
					}
				}
			}
		})
		b.Run(in.name+"/fastjson-validate", func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			b.ReportAllocs()
			for b.Loop() {
				for _, line := range lines {
					if !dataset.FastJSONValid(line) {
						b.Fatal("invalid line")
					}
				}
			}
		})
		b.Run(in.name+"/fastjson", func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			b.ReportAllocs()
			var ff dataset.FastJSONFields
			for b.Loop() {
				var got [2]int
				for _, line := range lines {
					n, d := ff.Scan(line)
					got[0], got[1] = got[0]+n, got[1]+d
				}
				if got != fast {
					b.Fatalf("took %v, want %v", got, fast)
				}
			}
		})
	}
}

func TestValidJSONAgreesWithEncodingJSON(t *testing.T) {
	cases := []string{
		``, ` `, `{}`, ` {} `, `{"a":1}`, `{"a" : [1, 2.5, -0, 1e5, 1E-5, 0.1e+2]}`, `[]`, `[ ]`, `[1,]`, `{,}`, `{"a":1,}`,
		`{"a"}`, `{"a":}`, `{1:2}`, `"\u00e9\uD83D"`, `"\u12"`, `"\x"`, "\"\x01\"", "\"\x7f\xff\"", `"a\"b\\"`, `"abcdefgh\"`,
		`01`, `-`, `-a`, `1.`, `.5`, `1e`, `1e+`, `true`, `tru`, `truex`, `nul`, `null null`, `[true,false,null]`,
		`"` + strings.Repeat("x", 37) + `\n` + strings.Repeat("y", 19) + `"`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
		strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
	}
	for _, c := range cases {
		if got, want := dataset.ValidJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("ValidJSON(%.60q) = %v, json.Valid says %v", c, got, want)
		}
	}
}

// Strings PostgreSQL cannot store — \u0000 (NUL) and a surrogate escape
// without its other half — are line errors naming the line and the field,
// wherever they are; escapes that look alike but are not are accepted.
func TestStringsPostgreSQLCannotStoreAreLineErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line, field, want string
	}{
		{`{"prompt":"a\u0000b"}`, "prompt", `contains \u0000 (a NUL character)`},
		{`{"id":"x\u0000","prompt":"p"}`, "id", `\u0000`},
		{`{"prompt":"p","reference":["ok","\u0000"]}`, "reference[1]", `\u0000`},
		{`{"messages":[{"role":"user","content":"hi"},{"role":"user","content":"a\ud800b"}]}`, "messages[1].content", `contains \ud800, half of a UTF-16 surrogate pair`},
		{`{"prompt":"\uDC00"}`, "prompt", `\uDC00`},
		{`{"prompt":"\ud83d"}`, "prompt", `\ud83d`},
		{`{"custom_id":"c","method":"POST","url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"x"}],"metadata":{"k":"\u0000"}}}`, "body.metadata.k", `\u0000`},
		{`{"prompt":"p","extra":{"a\u0000":1}}`, `extra.a\u0000`, `the key contains \u0000`},
		{`{"question":"q\u0000","answer":"#### 1"}`, "question", `\u0000`},
	} {
		_, p := parseAll(t, []byte(`{"prompt":"first"}`+"\n"+tc.line+"\n"), dataset.Limits{})
		errs := p.Errors()
		if p.Count() != 1 || len(errs) != 1 || errs[0].Line != 2 || errs[0].Field != strings.ToValidUTF8(tc.field, "?") || !strings.Contains(errs[0].Message, tc.want) {
			t.Errorf("%s: %d items, errors %+v; want line 2, field %q, saying %q", tc.line, p.Count(), errs, tc.field, tc.want)
		}
	}
	for _, ok := range []string{
		`{"prompt":"\\u0000 is how JSON writes NUL"}`,
		`{"prompt":"\ud83d\ude00 \u00e9 \u0001"}`,
		`{"prompt":"\\\ud83d\ude00"}`,
		`{"prompt":"\\ud800"}`,
	} {
		if _, p := parseAll(t, []byte(ok), dataset.Limits{}); p.Count() != 1 || p.ErrorCount() != 0 {
			t.Errorf("%s: errors %+v", ok, p.Errors())
		}
	}
}

// A simple line may carry a category (per-category scores); one that is
// not a string is refused with its field named.
func TestSimpleLinesTakeACategory(t *testing.T) {
	t.Parallel()
	items, p := parseAll(t, []byte(`{"prompt":"a","category":"harmful"}`+"\n"+`{"prompt":"b"}`+"\n"), dataset.Limits{})
	if len(p.Errors()) != 0 || len(items) != 2 || items[0].Category != "harmful" || items[1].Category != "" {
		t.Fatalf("items %+v, errors %v", items, p.Errors())
	}
	_, p = parseAll(t, []byte(`{"prompt":"a","category":7}`+"\n"), dataset.Limits{})
	if errs := p.Errors(); len(errs) != 1 || errs[0].Field != "category" {
		t.Fatalf("a numeric category: %v", errs)
	}
}
