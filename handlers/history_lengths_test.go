package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// A model's history never joins runs the leaderboard refuses to rank
// together (conclude.LeaderboardLengths): under one load, a run whose
// answers are 20 tokens long after two of 5 tokens (more than 2× apart)
// is a speed, latency and cost line of its own, and the legend says why
// in the reader's language; the API puts its point on that line. Quality
// stays one line.
func TestHistoryKeepsLengthsApart(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	e := h.e
	_, r1 := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 0, right: below(30), tps: 100, e2e: 200})
	_, r2 := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 1, right: below(30), tps: 102, e2e: 200})
	_, long := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 2, right: below(30), tps: 300, e2e: 200, tokens: 20})

	res := e.api(http.MethodGet, fmt.Sprintf("/api/v1/datasets/%d/history?model=m/a&metric=throughput", h.ds), h.tok, nil, "")
	if res.status != 200 {
		t.Fatalf("history: %d %v", res.status, res.body)
	}
	line, load := map[int64]any{}, map[int64]string{}
	for _, p := range res.body["points"].([]any) {
		pt := p.(map[string]any)
		id := int64(pt["run_id"].(float64))
		line[id], load[id] = pt["line"], fmt.Sprint(pt["load"])
	}
	if load[r1] != load[long] {
		t.Fatalf("fixture: loads %v, want one load for every run", load)
	}
	if line[r1] != line[r2] || line[r1] == line[long] {
		t.Errorf("lines %v: want runs %d and %d on one line, run %d (answers 4× longer) on another", line, r1, r2, long)
	}

	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	for _, lang := range []string{"en", "de"} {
		for metric, lines := range map[string]int{"throughput": 2, "latency": 2, "cost": 2, "quality": 1} {
			page := c.getIn(fmt.Sprintf("/datasets/%d/history?model=m/a&metric=%s", h.ds, metric), lang)
			if page.status != 200 {
				t.Fatalf("%s %s page: %d", lang, metric, page.status)
			}
			var names []string
			page.doc.Find(`[data-testid="chart-history"] .legend-item`).Each(func(_ int, s *goquery.Selection) {
				names = append(names, strings.TrimSpace(s.Text()))
			})
			if n := page.doc.Find(`[data-testid="chart-history"] polyline`).Length(); n != lines {
				t.Errorf("%s %s: %d lines (legend %q), want %d", lang, metric, n, names, lines)
				continue
			}
			why := map[string]string{"en": "answers ~20 tokens: more than 2× from this load's other lengths", "de": "Antworten ~20 Tokens: mehr als 2×"}[lang]
			if lines == 2 && (len(names) != 2 || !strings.Contains(names[1], why)) {
				t.Errorf("%s %s: the legend %q does not say why the second line is apart (%q)", lang, metric, names, why)
			}
		}
	}
}
