package conclude

import (
	"fmt"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// A model's history lines: speed, latency and cost one per target and
// load identity (a run whose load was not kept alone), quality one per
// target whatever the load.
func TestHistorySeriesKeepLoadsApart(t *testing.T) {
	rows := []store.LeaderboardRow{
		{RunID: 1, Runtime: "sim", Hardware: "cpu", Load: "sequential"},
		{RunID: 2, Runtime: "sim", Hardware: "cpu", Load: "concurrency (c=64)"},
		{RunID: 3, Runtime: "sim", Hardware: "cpu", Load: "sequential"},
		{RunID: 4, Runtime: "sim", Hardware: "gpu", Load: "sequential"},
		{RunID: 5, Runtime: "sim", Hardware: "cpu", Engine: "max_num_seqs=16", Load: "sequential"},
		{RunID: 6, Runtime: "sim", Hardware: "cpu"},
		{RunID: 7, Runtime: "sim", Hardware: "cpu"},
	}
	lines := func(c Criterion) string {
		var out []string
		for _, l := range HistorySeries(rows, c) {
			var ids []int64
			for _, r := range l.Rows {
				ids = append(ids, r.RunID)
			}
			out = append(out, fmt.Sprintf("%s/%s %s %q %v", l.Runtime, l.Hardware, l.Engine, l.Load, ids))
		}
		return fmt.Sprint(out)
	}
	want := `[sim/cpu  "sequential" [1 3] sim/cpu  "concurrency (c=64)" [2] sim/gpu  "sequential" [4] sim/cpu max_num_seqs=16 "sequential" [5] sim/cpu  "" [6] sim/cpu  "" [7]]`
	for _, c := range []Criterion{Speed, Latency, Cost} {
		if got := lines(c); got != want {
			t.Errorf("%s: %s\nwant %s", c, got, want)
		}
	}
	if got, want := lines(Quality), `[sim/cpu  "" [1 2 3 6 7] sim/gpu  "" [4] sim/cpu max_num_seqs=16 "" [5]]`; got != want {
		t.Errorf("quality: %s\nwant %s", got, want)
	}
}
