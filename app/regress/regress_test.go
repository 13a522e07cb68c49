package regress

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

func run(id int64, scorer string, tps, p95 float64) store.CompareRun {
	s, _ := json.Marshal(jobs.RunSummary{OutputTokensPerS: tps, E2E: jobs.Dist{P95: p95}})
	r := store.CompareRun{Summary: s}
	r.ID, r.Scorer, r.State = id, scorer, "completed"
	return r
}

func scores(n int, right func(int) bool) []store.ItemScore {
	out := make([]store.ItemScore, n)
	for i := range out {
		out[i].Idx = i
		if right(i) {
			out[i].Score = 1
		}
	}
	return out
}

func metrics(regs []store.Regression) string {
	var m []string
	for _, g := range regs {
		m = append(m, g.Metric)
	}
	return fmt.Sprint(m)
}

// TestFindDecidesAtTheNoiseAndSignificance checks each metric on both
// sides of its threshold.
func TestFindDecidesAtTheNoiseAndSignificance(t *testing.T) {
	t.Parallel()
	all := func(int) bool { return true }
	for _, tc := range []struct {
		name      string
		cur, prev store.CompareRun
		curS      []store.ItemScore
		prevS     []store.ItemScore
		e2e       map[int64]store.QuantileInterval
		want      string
	}{
		{"the same", run(2, "exact", 100, 200), run(1, "exact", 100, 200), scores(50, all), scores(50, all), nil, "[]"},
		{"1.9 % slower is noise", run(2, "", 98.1, 200), run(1, "", 100, 200), nil, nil, nil, "[]"},
		{"2.5 % slower", run(2, "", 97.5, 200), run(1, "", 100, 200), nil, nil, nil, "[throughput]"},
		{"faster is no regression", run(2, "", 150, 100), run(1, "", 100, 200), nil, nil, nil, "[]"},
		{"latency up, intervals apart", run(2, "", 100, 300), run(1, "", 100, 200), nil, nil,
			map[int64]store.QuantileInterval{1: {Lo: 190, Hi: 210}, 2: {Lo: 280, Hi: 320}}, "[latency_p95]"},
		{"latency up within the runs' spread", run(2, "", 100, 300), run(1, "", 100, 200), nil, nil,
			map[int64]store.QuantileInterval{1: {Lo: 150, Hi: 290}, 2: {Lo: 280, Hi: 320}}, "[]"},
		{"5 of 50 lost: McNemar exact p = 0.0625", run(2, "exact", 100, 200), run(1, "exact", 100, 200),
			scores(50, func(i int) bool { return i >= 5 }), scores(50, all), nil, "[]"},
		{"6 of 50 lost: p = 0.031", run(2, "exact", 100, 200), run(1, "exact", 100, 200),
			scores(50, func(i int) bool { return i >= 6 }), scores(50, all), nil, "[quality]"},
		{"another scorer is not compared", run(2, "exact", 100, 200), run(1, "f1", 100, 200),
			scores(50, func(i int) bool { return i >= 30 }), scores(50, all), nil, "[]"},
		{"better quality is no regression", run(2, "exact", 100, 200), run(1, "exact", 100, 200),
			scores(50, all), scores(50, func(i int) bool { return i >= 30 }), nil, "[]"},
	} {
		got := Find(tc.cur, tc.prev, map[int64][]store.ItemScore{tc.cur.ID: tc.curS, tc.prev.ID: tc.prevS}, tc.e2e)
		if metrics(got) != tc.want {
			t.Errorf("%s: %s, want %s (%+v)", tc.name, metrics(got), tc.want, got)
		}
		for _, g := range got {
			if g.AgainstRunID != tc.prev.ID || g.Delta >= 0 && g.Metric != store.RegressionLatency || g.Detail == "" {
				t.Errorf("%s: %+v", tc.name, g)
			}
		}
	}
}
