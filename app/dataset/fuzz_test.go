package dataset_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ruckus/ruckus/app/dataset"
)

// FuzzParser checks what must hold for any upload: no panic, every item's
// request is valid JSON, errors are well formed and capped, and no line is
// counted both as an item and an error.
func FuzzParser(f *testing.F) {
	for _, s := range []string{
		"",
		"\xef\xbb\xbf{\"prompt\":\"a\"}\r\n\r\n{\"messages\":[{\"role\":\"user\",\"content\":\"b\"}],\"id\":3}",
		`{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"x"}]},"reference":"y"}` + "\n" +
			`{"custom_id":"a","method":"POST","url":"/v1/completions","body":{"prompt":"p"}}`,
		`{"question":"q","answer":"x\n#### 1,000"}` + "\n" + `{"prompt":"x"}`,
		`{"task_id":"H/0","prompt":"def f():\n","test":"t","entry_point":"f","canonical_solution":null}`,
		`{"prompt":"a","choices":["x","y"],"label":"b","answer":null}` + "\n" + `{"prompt":"a","choices":[],"label":-1}`,
		`{"pro\u006dpt":"\u003c\"\\"}` + "\n[1]\n\"s\"\nnull\n{\"prompt\":\"\xff\"}\n{\"prompt\":\"x\"",
		"{\"prompt\":\"x\"}\n\x1f\x8b",
		`[-0.5e+10,1E2,0,-0,true,false,null,{},[],"\u00e9\ud83d\"\\\/\b\f\n\r\t"]`,
		"[01]\n[1.]\n[.5]\n[1e]\n[\"\\x\"]\n[\"\\u12\"]\n[\"\x01\"]\n{\"a\" 1}\n{,}\n[1,]\n[tru]\n 1 2",
		`{"prompt":"a\u0000"}` + "\n" + `{"prompt":"\\u0000","id":"\ud83d\ude00"}` + "\n" + `{"messages":[{"role":"user","content":"\udc00\ud800"}]}`,
		`{"prompt":"p","reference":{"k\u0000":"\\\u0000"}}` + "\n" + `{"custom_id":"\u0000","body":{}}`,
		// The standard suites, and lines that fit two formats.
		`{"question":" q ","subject":"a_b","choices":["1","2","3","4"],"answer":3}` + "\n" + `{"question":"r","subject":"a_b","choices":["1","2","3","4"],"answer":0}` + "\n" + `{"question":"s","subject":"c","choices":["1","2","3","4"],"answer":1}`,
		`{"question":"q","choices":["1","2","3","4"],"answer":1}` + "\n" + `{"question":"q","answer":"4","answerKey":"A"}`,
		`{"id":"x","question":{"stem":"s","choices":[{"text":"a","label":"1"},{"text":"b","label":"2"}]},"answerKey":"2"}` + "\n" + `{"question":"q","choices":{"text":["a","b"],"label":["A","B"]},"answerKey":"B"}`,
		`{"activity_label":"A [x]","ctx_a":"c [title] d","ctx_b":"éTÉ  x","endings":["[a]b","c  d"," e ","f"],"label":"2"}` + "\n" + `{"ctx":"c","endings":["a","b","c","d"],"label":1,"category":"k"}`,
		`{"question":"q","mc1_targets":{"choices":["a","b","c"],"labels":[0,1,0]},"category":"Misc"}`,
		`{"task_id":2,"text":"t","code":"c\r\n","test_list":["a","b"],"test_setup_code":null}` + "\n" + `{"task_id":"2","text":"t","code":"c","test_list":[],"challenge_test_list":["x"]}`,
		`{"sentence":" a _b.","option1":"x","option2":"y","answer":2}` + "\n" + `{"sentence":"_","option1":"x","option2":"y","answer":"1"}`,
		`{"id":3,"question_stem":"q","choices":{"text":["a","b"],"label":["1","2"]},"answerKey":" 2"}`,
		`{"question":"q","question_id":"i","answer":{"aliases":["A"],"normalized_aliases":null,"value":"A"}}` + "\n" + `{"question":"q","answer":["a","b"]}`,
		`{"question":"q","answer":["a"]}` + "\n" + `{"question":"q","answer":"#### 1"}`,
		`{"code_tokens":["def","\n"],"docstring_tokens":["x\n","y"],"language":"go"}`,
		// The suites' release files, and the shapes they share with others.
		`{"Answer":{"Aliases":["A"],"NormalizedAliases":["a"],"Value":"A"},"Question":"q","QuestionId":"tc_1"}` + "\n" + `{"Question":"q","Answer":{"Aliases":[]}}`,
		`{"Data":[{"Question":"q"}],"Version":1.0}` + "\n" + `{"Question":"q","question":"r","answer":{"aliases":["a"]},"Answer":{"Aliases":["b"]}}`,
		`{"id":"8-343","question":{"stem":"s","choices":[{"text":"a","label":"A"}]},"answerKey":"A"}` + "\n" + `{"id":"Mercury_1","question":{"stem":"s","choices":[]},"answerKey":"A","fact1":"f"}`,
		`{"qID":"x-1","sentence":"a _ b","option1":"x","option2":"y","answer":"1"}` + "\n" + `{"qID":"","sentence":"a _ b","option1":"x","option2":"y"}`,
	} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"winogrande.jsonl", "openbookqa.jsonl", "triviaqa.jsonl", "nq_open.jsonl", "codexglue_python.jsonl"} {
		if b, err := os.ReadFile("testdata/" + name); err == nil {
			f.Add(b)
		}
	}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte(`{"prompt":"a"}` + "\n" + `{"prompt":"a","id":"item-1"}` + "\n"))
	zw.Close()
	f.Add(zb.Bytes())

	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := dataset.ValidJSON(data), json.Valid(data); got != want {
			t.Fatalf("ValidJSON(%q) = %v, json.Valid says %v", data, got, want)
		}
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			if got, want := dataset.ValidJSON(line), json.Valid(line); got != want {
				t.Fatalf("ValidJSON(%q) = %v, json.Valid says %v", line, got, want)
			}
		}
		lines := countLines(data)
		for _, lim := range []dataset.Limits{
			{},
			{MaxFileBytes: 512, MaxLineBytes: 64, MaxItems: 3},
		} {
			p := dataset.NewParser(bytes.NewReader(data), lim)
			seen := map[string]bool{}
			last := 0
			for {
				it, ok := p.Next()
				if !ok {
					break
				}
				if !json.Valid(it.Request) {
					t.Fatalf("line %d: request is not JSON: %q", it.Line, it.Request)
				}
				if it.Reference != nil && !json.Valid(it.Reference) {
					t.Fatalf("line %d: reference is not JSON: %q", it.Line, it.Reference)
				}
				// PostgreSQL's text and jsonb hold no NUL character.
				if strings.ContainsRune(it.CustomID, 0) || hasNUL(t, it.Request) || (it.Reference != nil && hasNUL(t, it.Reference)) {
					t.Fatalf("line %d: an item with a NUL character: %q %s %s", it.Line, it.CustomID, it.Request, it.Reference)
				}
				if it.Line <= last || it.CustomID == "" || seen[it.CustomID] {
					t.Fatalf("item %+v after line %d (seen %v)", it, last, seen[it.CustomID])
				}
				seen[it.CustomID], last = true, it.Line
			}
			if _, ok := p.Next(); ok {
				t.Fatal("Next returned an item after the end")
			}
			errs := p.Errors()
			if len(errs) > 50 || p.ErrorCount() < len(errs) {
				t.Fatalf("len(Errors()) = %d, ErrorCount() = %d", len(errs), p.ErrorCount())
			}
			errLines := map[int]bool{}
			prev := 0
			for _, e := range errs {
				if e.Line < 0 || e.Message == "" || e.Line < prev {
					t.Fatalf("bad or unordered error %+v", e)
				}
				prev = e.Line
				if e.Line > 0 {
					if errLines[e.Line] {
						t.Fatalf("two errors for line %d", e.Line)
					}
					errLines[e.Line] = true
				}
			}
			if lines >= 0 && p.Count()+len(errLines) > lines {
				t.Fatalf("%d items + %d lines with errors > %d lines", p.Count(), len(errLines), lines)
			}
			if p.Bytes() > int64(len(data)) {
				t.Fatalf("Bytes() = %d > %d", p.Bytes(), len(data))
			}
		}
		// With k-shot prompts items may come out of order, each once, with
		// the same ids and references as without.
		plain := map[int]dataset.Item{}
		p0 := dataset.NewParser(bytes.NewReader(data), dataset.Limits{})
		for it, ok := p0.Next(); ok; it, ok = p0.Next() {
			plain[it.Index] = it
		}
		p2 := dataset.NewParserWith(bytes.NewReader(data), dataset.Limits{}, dataset.Options{Shots: 2})
		got := map[int]bool{}
		for it, ok := p2.Next(); ok; it, ok = p2.Next() {
			if got[it.Index] || !json.Valid(it.Request) || hasNUL(t, it.Request) {
				t.Fatalf("2-shot item %d twice or invalid: %q", it.Index, it.Request)
			}
			got[it.Index] = true
			if q, ok := plain[it.Index]; !ok || q.CustomID != it.CustomID || !bytes.Equal(q.Reference, it.Reference) || q.Category != it.Category {
				t.Fatalf("2-shot item %+v differs from the plain parse's %+v", it, q)
			}
		}
		if p2.ErrorCount() == 0 && len(got) != len(plain) {
			t.Fatalf("2-shot parse gave %d items without an error, the plain one %d", len(got), len(plain))
		}
	})
}

// hasNUL decodes raw and reports whether any key or string in it holds a
// NUL character.
func hasNUL(t *testing.T, raw []byte) bool {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case string:
			return strings.ContainsRune(x, 0)
		case []any:
			return slices.ContainsFunc(x, walk)
		case map[string]any:
			for k, e := range x {
				if strings.ContainsRune(k, 0) || walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// countLines counts the lines of the (decompressed) input, or returns -1
// when gzip data cannot be decompressed to the end.
func countLines(data []byte) int {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return -1
		}
		b, err := io.ReadAll(io.LimitReader(zr, 1<<24))
		if err != nil {
			return -1
		}
		data = b
	}
	return bytes.Count(data, []byte("\n")) + 1
}

// FuzzDecodeString: a JSON string the parser reads decodes as
// encoding/json decodes it. Half surrogate pairs, which encoding/json
// turns into U+FFFD, are left out: the parser refuses those lines first.
func FuzzDecodeString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb\t\"q\"\\ \/"`, `"\u00e9\ud83d\ude00\u2028"`, `"\u0041\u00"`, `"x\ud800"`, "\"\xff\"", `"\uD83D\uDE00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The parser hands over a value as written, without the blanks
		// around it.
		for _, raw := range [][]byte{bytes.Trim(data, " \t\r\n"), mustMarshal(t, string(data))} {
			var want string
			if !utf8.Valid(raw) || !json.Valid(raw) || json.Unmarshal(raw, &want) != nil {
				continue
			}
			if strings.ContainsRune(want, utf8.RuneError) && !bytes.ContainsRune(raw, utf8.RuneError) {
				continue // a half surrogate pair
			}
			got, ok := dataset.DecodeString(raw)
			if !ok || got != want {
				t.Fatalf("DecodeString(%q) = %q, %v; encoding/json gives %q", raw, got, ok, want)
			}
		}
	})
}

func mustMarshal(t *testing.T, s string) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzShotOf: reading a stored item's few-shot pieces back never panics,
// and what it reads is in the documented "Question: …\nAnswer:" form.
func FuzzShotOf(f *testing.F) {
	f.Add([]byte(`{"method":"POST","url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"q"}]}}`), []byte(`{"answer":"x\n#### 4","final":"4"}`))
	f.Add([]byte(`{"url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"q"}]}}`), []byte(`{"answer":4,"choices":["a"],"label":0}`))
	f.Add([]byte(`{"url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":[{"type":"text"}]}]}}`), []byte(`{"answer":null}`))
	f.Fuzz(func(t *testing.T, request, reference []byte) {
		for _, fm := range []dataset.Format{dataset.FormatGSM8K, dataset.FormatSimple, dataset.FormatMMLU} {
			s := dataset.ShotOf(fm, request, reference)
			if s == nil {
				continue
			}
			if fm == dataset.FormatMMLU || !strings.HasPrefix(s.Query, "Question: ") || !strings.HasSuffix(s.Query, "\nAnswer:") || !strings.HasPrefix(s.Answer, " ") {
				t.Fatalf("%s: pieces %+v of %s / %s", fm, s, request, reference)
			}
		}
	})
}
