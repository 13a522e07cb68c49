package handlers_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// A .jsonl.gz upload whose gzip data is truncated or fails its checksum is
// refused with 422 saying so (it used to be a 500: the parser called it a
// read error); a line with a string PostgreSQL cannot store is refused
// naming its line and field (it used to be one file-wide message from
// PostgreSQL, with no line). Nothing is stored.
func TestBrokenGzipAndNULUploadsAreRefusedNamingTheProblem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	var plain strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&plain, `{"id":"q%d","prompt":"question number %d, with some words to compress"}`+"\n", i, i)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(plain.String()))
	_ = zw.Close()
	whole := buf.Bytes()
	badCRC := bytes.Clone(whole)
	badCRC[len(badCRC)-8] ^= 0xff

	for _, tc := range []struct {
		name  string
		file  []byte
		line  float64
		field string
		want  string
	}{
		{"truncated", whole[:len(whole)*2/3], 0, "", "gzip: unexpected end of file (the file is truncated) at line "},
		{"bad CRC", badCRC, 0, "", "gzip checksum error (the file is corrupt) after line 2000"},
		{"NUL in a prompt", []byte(`{"prompt":"ok"}` + "\n" + `{"prompt":"a\u0000b"}` + "\n"), 2, "prompt", `contains \u0000 (a NUL character)`},
		{"NUL deep in a batch line", []byte(`{"custom_id":"c","method":"POST","url":"/v1/chat/completions","body":{"messages":[{"role":"user","content":"\u0000"}]}}` + "\n"),
			1, "body.messages[0].content", `\u0000`},
		{"lone surrogate", []byte(`{"prompt":"ok"}` + "\n\n" + `{"prompt":"x","reference":"\ud800"}` + "\n"), 3, "reference", `\ud800`},
	} {
		name := "d.jsonl"
		if tc.file[0] == 0x1f {
			name = "d.jsonl.gz"
		}
		r := e.upload(tok, name, tc.file, nil)
		errs := asList(r.body["errors"])
		if r.status != 422 || len(errs) != 1 {
			t.Errorf("%s: %d %v; want 422 with one error", tc.name, r.status, r.body)
			continue
		}
		got := errs[0].(map[string]any)
		if got["line"] != tc.line || got["field"] != tc.field || !strings.Contains(fmt.Sprint(got["message"]), tc.want) {
			t.Errorf("%s: error %v; want line %v, field %q, saying %q", tc.name, got, tc.line, tc.field, tc.want)
		}
	}
	if n := e.countRows("datasets") + e.countRows("dataset_items"); n != 0 {
		t.Fatalf("%d rows stored after refused uploads", n)
	}
	// The same file whole is stored.
	if r := e.upload(tok, "d.jsonl.gz", whole, nil); r.status != 201 || r.body["count"] != float64(2000) {
		t.Fatalf("the whole file: %d %v", r.status, r.body)
	}

	// An upload cut short in transit (the multipart body ends inside the
	// file) is the client's: 400, not a server error.
	body, ct := multipartBody(t, "d.jsonl", []byte(plain.String()), nil)
	raw, _ := io.ReadAll(body)
	req := httptest.NewRequest(http.MethodPost, "/api/v1/datasets", bytes.NewReader(raw[:len(raw)/2]))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", ct)
	res, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 400 || !strings.Contains(string(msg), "could not be read") {
		t.Fatalf("cut-short upload: %d %s", res.StatusCode, msg)
	}
	if n := e.countRows("datasets"); n != 1 {
		t.Fatalf("%d datasets after a cut-short upload", n)
	}
}
