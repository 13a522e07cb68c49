package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// A model's history draws speed, latency and cost one line per load
// identity (conclude.HistorySeries): a run at concurrency 8 after two
// sequential runs of the same target starts a line of its own, named
// with its load in the legend, instead of reading as the target getting
// four times faster; the API puts each point on its line with its load.
// Quality, compared whatever the load, stays one line.
func TestHistoryKeepsLoadsApart(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	e := h.e
	_, r1 := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 0, right: below(30), tps: 100, e2e: 200})
	_, r2 := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 1, right: below(30), tps: 102, e2e: 200})
	_, busy := h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 2, right: below(30), tps: 400, e2e: 200,
		load: `{"profile":"concurrency","concurrency":8}`})

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
	if line[r1] != line[r2] || line[r1] == line[busy] || !strings.HasPrefix(load[busy], "concurrency") || load[r1] == load[busy] {
		t.Errorf("lines %v under loads %v: want runs %d and %d on one line, run %d (concurrency 8) on another", line, load, r1, r2, busy)
	}

	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	for metric, lines := range map[string]int{"throughput": 2, "latency": 2, "cost": 2, "quality": 1} {
		page := c.get(fmt.Sprintf("/datasets/%d/history?model=m/a&metric=%s", h.ds, metric))
		if page.status != 200 {
			t.Fatalf("%s page: %d", metric, page.status)
		}
		var names []string
		page.doc.Find(`[data-testid="chart-history"] .legend-item`).Each(func(_ int, s *goquery.Selection) {
			names = append(names, strings.TrimSpace(s.Text()))
		})
		if n := page.doc.Find(`[data-testid="chart-history"] polyline`).Length(); n != lines {
			t.Errorf("%s: %d lines (legend %q), want %d", metric, n, names, lines)
			continue
		}
		if lines == 2 && (len(names) != 2 || !strings.Contains(names[1], "concurrency")) {
			t.Errorf("%s: the legend %q does not name the load of the second line", metric, names)
		}
	}
}
