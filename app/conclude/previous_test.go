package conclude

import (
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// A regression is drawn against the newest earlier run whose load is
// comparable: an earlier run under another load, or whose answers were
// more than jobs.LengthRatio longer, is passed over; the classes' exact
// equality the SQL once required is not needed (63.8 vs 64.0 tokens).
func TestPreviousComparableSkipsOtherLoads(t *testing.T) {
	run := func(id int64, params string, meanOut float64) store.RunFigures {
		r := store.RunFigures{Stat: &store.RunStat{Load: jobs.LoadIdentity{Profile: "concurrency", Params: params, DatasetID: 1, MeanIn: 10, MeanOut: meanOut}}}
		r.ID = id
		return r
	}
	cur := run(9, "c=4", 64)
	prevs := []store.RunFigures{run(8, "c=8", 64), run(7, "c=4", 200), run(6, "c=4", 63.8), run(5, "c=4", 64)}
	if p, ok := PreviousComparable(cur, prevs); !ok || p.ID != 6 {
		t.Errorf("previous comparable: %d %v, want run 6", p.ID, ok)
	}
	if _, ok := PreviousComparable(cur, prevs[:2]); ok {
		t.Error("no comparable run, one found")
	}
	if _, ok := PreviousComparable(store.RunFigures{}, prevs); ok {
		t.Error("a run without figures has a previous comparable run")
	}
}
