package handlers

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/valid"
)

// testValidator is the server's validator as NewWithRoutes sets it up.
func testValidator() *valid.Validator { return newValidator() }

func TestParseLeaderboard(t *testing.T) {
	t.Parallel()
	v := testValidator()
	for _, tc := range []struct {
		query string
		bad   string // the parameter named, "" when valid
	}{
		{"", ""},
		{"model=m/a&runtime=sim&hardware=cpu-2c&from=2026-01-01&to=2026-01-31&sort=cost&limit=500", ""},
		{"sort=cheapest", "sort"},
		{"from=2026-02-30", "from"},
		{"from=1969-12-31", "from"},
		{"to=01/02/2026", "to"},
		{"from=2026-02-01&to=2026-01-01", "to"},
		{"limit=-1", "limit"},
		{"limit=abc", "limit"},
		{"limit=1000", "limit"},
		{"after=0~1.5", "after"},
		{"after=0~NaN~3", "after"},
		{"after=2~1~3", "after"},
		{"after=0~1~0", "after"},
		{"model=" + strings.Repeat("é", 201), "model"},
		{"hardware=%ff", "hardware"},
		{"metric=speed", "metric"},
	} {
		q, _ := url.ParseQuery(tc.query)
		_, lq, errs := parseLeaderboard(v, q.Get)
		switch {
		case tc.bad == "" && len(errs) > 0:
			t.Errorf("%s: %v", tc.query, errs)
		case tc.bad != "" && (len(errs) == 0 || errs[0].Path != tc.bad):
			t.Errorf("%s: %v, want an error naming %s", tc.query, errs, tc.bad)
		case tc.bad == "" && tc.query != "" && (lq.Sort != "cost" || lq.Limit != 500 || lq.To.Sub(*lq.From).Hours() != 31*24):
			t.Errorf("%s: %+v", tc.query, lq)
		}
	}
}

// FuzzParseLeaderboard: any query either names what is wrong or gives a
// query within bounds, and a page's cursor reads back as itself.
func FuzzParseLeaderboard(f *testing.F) {
	v := testValidator()
	f.Add("m/a", "sim", "cpu-2c", "2026-01-01", "2026-02-01", "quality", "10", "0~-0.5~12")
	f.Add("", "", "", "", "", "", "", "")
	f.Add("a\x00b", "\xff", "x", "2026-13-01", "1-1-1", "speed", "0", "1~1e309~1")
	f.Add("m", "r", "h", "9999-12-31", "9999-12-31", "date", "500", "1~0~9223372036854775807")
	f.Fuzz(func(t *testing.T, model, runtime, hardware, from, to, sort, limit, after string) {
		q := map[string]string{"model": model, "runtime": runtime, "hardware": hardware, "from": from, "to": to, "sort": sort,
			"limit": limit, "after": after}
		p, lq, errs := parseLeaderboard(v, func(k string) string { return q[k] })
		for _, e := range errs {
			if e.Path == "" || e.Message == "" || strings.Contains(e.Message, "validator") {
				t.Fatalf("an error without a path or in Go's words: %+v", e)
			}
		}
		if len(errs) > 0 {
			return
		}
		if lq.Limit < 1 || lq.Limit > store.MaxLeaderboardRows || !slices.Contains(store.LeaderboardSorts, lq.Sort) {
			t.Fatalf("out of bounds: %+v", lq)
		}
		for _, s := range []string{lq.Model, lq.Runtime, lq.Hardware} {
			if !utf8.ValidString(s) || strings.ContainsRune(s, 0) || len(s) > 4*200 {
				t.Fatalf("text PostgreSQL cannot take: %q", s)
			}
		}
		if lq.From != nil && lq.To != nil && !lq.From.Before(*lq.To) {
			t.Fatalf("from %v not before to %v", lq.From, lq.To)
		}
		if lq.After != nil {
			back, err := parseLeaderboardCursor(formatLeaderboardCursor(*lq.After))
			if err != nil || *back != *lq.After {
				t.Fatalf("cursor %q reads back as %+v (%v)", p.After, back, err)
			}
			if lq.After.RunID < 1 {
				t.Fatalf("cursor run id %d", lq.After.RunID)
			}
		}
	})
}

// FuzzParseBenchmarkChange: any body is either refused with a named
// problem or gives a change PostgreSQL can store.
func FuzzParseBenchmarkChange(f *testing.F) {
	v := testValidator()
	for _, s := range []string{`{"name":"Nightly"}`, `{"visibility":"shared"}`, `{"name":" x ","visibility":"private"}`, `{}`, `[]`,
		`{"name":1}`, `{"name":"a\u0000b"}`, `{"owner":"x"}`, `{"name":"a"} {"name":"b"}`, `null`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ch, errs := parseBenchmarkChange(v, body)
		if len(errs) > 0 {
			for _, e := range errs {
				if e.Message == "" {
					t.Fatalf("an error without a message: %+v", e)
				}
			}
			return
		}
		if ch.Name == nil && ch.Visibility == nil {
			t.Fatal("an empty change accepted")
		}
		if ch.Name != nil {
			n := *ch.Name
			if n == "" || utf8.RuneCountInString(n) > 200 || !utf8.ValidString(n) || strings.ContainsRune(n, 0) || strings.TrimSpace(n) != n {
				t.Fatalf("name %q accepted", n)
			}
		}
		if ch.Visibility != nil && *ch.Visibility != store.VisibilityPrivate && *ch.Visibility != store.VisibilityShared {
			t.Fatalf("visibility %q accepted", *ch.Visibility)
		}
	})
}
