package regress

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/said"
)

func run(id int64, scorer string, tps, p95 float64) store.RunFigures {
	s, _ := json.Marshal(jobs.RunSummary{OutputTokensPerS: tps, E2E: jobs.Dist{P95: p95}})
	r := store.RunFigures{Summary: s}
	r.ID, r.Scorer, r.State = id, scorer, "completed"
	if scorer != "" {
		r.Qualities = []store.Quality{{RunID: id, ScorerKey: scorer}}
	}
	return r
}

// measured gives r kept figures: output tokens/s with a standard error
// from 10 batches, and a p95 interval.
func measured(r store.RunFigures, se, lo, hi float64, load string) store.RunFigures {
	var s jobs.RunSummary
	_ = json.Unmarshal(r.Summary, &s)
	df := 9.0
	r.Stat = &store.RunStat{RunID: r.ID, Load: jobs.LoadIdentity{Profile: load}, Batches: 10,
		TPS:    &store.KeptRate{Mean: s.OutputTokensPerS, SE: &se, DF: &df},
		E2EP95: &store.QuantileInterval{P95: s.E2E.P95, Lo: lo, Hi: hi}}
	return r
}

func scores(n int, right func(int) bool) []conclude.ItemScore {
	out := make([]conclude.ItemScore, n)
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

// TestFindDecidesByTheTestsAndTheFalseDiscoveryRate checks each metric
// on both sides of its test, and that the metrics checked together keep
// only what Benjamini–Hochberg keeps.
func TestFindDecidesByTheTestsAndTheFalseDiscoveryRate(t *testing.T) {
	t.Parallel()
	all := func(int) bool { return true }
	m := func(r store.RunFigures) store.RunFigures { return measured(r, 1, 190, 210, "concurrency") }
	for _, tc := range []struct {
		name      string
		cur, prev store.RunFigures
		curS      []conclude.ItemScore
		prevS     []conclude.ItemScore
		want      string
	}{
		{"the same", m(run(2, "exact", 100, 200)), m(run(1, "exact", 100, 200)), scores(50, all), scores(50, all), "[]"},
		{"1.9 % slower within the runs' own noise", measured(run(2, "", 98.1, 200), 2, 190, 210, "c"), measured(run(1, "", 100, 200), 2, 190, 210, "c"), nil, nil, "[]"},
		{"10 % slower beyond it", measured(run(2, "", 90, 200), 1, 190, 210, "c"), measured(run(1, "", 100, 200), 1, 190, 210, "c"), nil, nil, "[throughput]"},
		{"another load is not compared", measured(run(2, "", 50, 200), 1, 190, 210, "sweep"), measured(run(1, "", 100, 200), 1, 190, 210, "c"), nil, nil, "[]"},
		{"no interval, no test", run(2, "", 50, 400), run(1, "", 100, 200), nil, nil, "[]"},
		{"faster is no regression", measured(run(2, "", 150, 100), 1, 90, 110, "c"), measured(run(1, "", 100, 200), 1, 190, 210, "c"), nil, nil, "[]"},
		{"latency up, intervals apart", measured(run(2, "", 100, 300), 1, 280, 320, "c"), measured(run(1, "", 100, 200), 1, 190, 210, "c"), nil, nil, "[latency_p95]"},
		{"latency up within the runs' spread", measured(run(2, "", 100, 300), 1, 150, 450, "c"), measured(run(1, "", 100, 200), 1, 100, 290, "c"), nil, nil, "[]"},
		{"5 of 50 lost: McNemar exact p = 0.0625", run(2, "exact", 100, 200), run(1, "exact", 100, 200),
			scores(50, func(i int) bool { return i >= 5 }), scores(50, all), "[]"},
		{"6 of 50 lost: p = 0.031, the only metric tested", run(2, "exact", 100, 200), run(1, "exact", 100, 200),
			scores(50, func(i int) bool { return i >= 6 }), scores(50, all), "[quality]"},
		{"6 of 50 lost among three metrics: above 0.05/3, not kept", m(run(2, "exact", 100, 200)), m(run(1, "exact", 100, 200)),
			scores(50, func(i int) bool { return i >= 6 }), scores(50, all), "[]"},
		{"another scorer is not compared", run(2, "exact", 100, 200), run(1, "f1", 100, 200),
			scores(50, func(i int) bool { return i >= 30 }), scores(50, all), "[]"},
		{"better quality is no regression", run(2, "exact", 100, 200), run(1, "exact", 100, 200),
			scores(50, all), scores(50, func(i int) bool { return i >= 30 }), "[]"},
	} {
		tc.cur.Quality, tc.prev.Quality = mean(tc.curS), mean(tc.prevS)
		// As the store reads a run: its quality is also its quality under
		// the scorer identity it was scored with.
		for _, r := range []*store.RunFigures{&tc.cur, &tc.prev} {
			if len(r.Qualities) > 0 {
				r.Qualities[0].Mean = r.Quality
			}
		}
		var ev conclude.Evidence
		if d, ok := conclude.PairRuns(tc.cur.ID, tc.prev.ID, tc.curS, tc.prevS); ok {
			ev.Paired = append(ev.Paired, d)
		}
		got := Find(tc.cur, tc.prev, ev)
		if metrics(got) != tc.want {
			t.Errorf("%s: %s, want %s (%+v)", tc.name, metrics(got), tc.want, got)
		}
		for _, g := range got {
			if g.AgainstRunID != tc.prev.ID || g.Delta >= 0 && g.Metric != store.RegressionLatency || g.Detail == "" || g.PValue == nil {
				t.Errorf("%s: %+v", tc.name, g)
			}
			// The stored sentence, worded by a page, reads as the API's
			// English, and in German otherwise.
			var s conclude.Said
			if err := json.Unmarshal(g.DetailSaid, &s); err != nil {
				t.Fatalf("%s: stored sentence %s: %v", tc.name, g.DetailSaid, err)
			}
			if en := said.Word(i18n.With(context.Background(), i18n.Default().Lang("en")), s); en != g.Detail {
				t.Errorf("%s: page English\n %q\nAPI English\n %q", tc.name, en, g.Detail)
			}
			if de := said.Word(i18n.With(context.Background(), i18n.Default().Lang("de")), s); !strings.Contains(de, "gegen Lauf") && !strings.Contains(de, "von Lauf") {
				t.Errorf("%s: German %q", tc.name, de)
			}
		}
	}
}

func mean(xs []conclude.ItemScore) *float64 {
	if len(xs) == 0 {
		return nil
	}
	sum := 0.0
	for _, x := range xs {
		sum += x.Score
	}
	m := sum / float64(len(xs))
	return &m
}
