package conclude

import (
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// A regression is drawn against the newest earlier benchmark's same
// target whose load is comparable: another configuration, another load,
// or answers more than jobs.LengthRatio longer are passed over; the
// classes' exact equality the SQL once required is not needed (63.8 vs
// 64.0 tokens); an earlier target's repeats come as one group.
func TestPreviousTargetSkipsOtherTargetsAndLoads(t *testing.T) {
	run := func(id, bench int64, engine, params string, meanOut float64) store.RunFigures {
		r := store.RunFigures{Stat: &store.RunStat{Load: jobs.LoadIdentity{Profile: "concurrency", Params: params, DatasetID: 1, MeanIn: 10, MeanOut: meanOut}}}
		r.ID, r.BenchmarkID, r.ModelName, r.Runtime, r.HardwareProfile, r.State = id, bench, "m", "sim", "cpu", "completed"
		if engine != "" {
			r.Engine = jobs.Engine{"max_num_seqs": engine}
		}
		return r
	}
	cur := []store.RunFigures{run(20, 9, "", "c=4", 64)}
	earlier := [][]store.RunFigures{
		{run(18, 8, "", "c=8", 64), run(19, 8, "8", "c=4", 64)},
		{run(16, 7, "", "c=4", 200)},
		{run(13, 6, "", "c=4", 63.8), run(14, 6, "", "c=4", 64), run(15, 6, "", "c=4", 64.2)},
		{run(12, 5, "", "c=4", 64)},
	}
	p, ok := previousTarget(cur, earlier)
	if !ok || len(p) != 3 || p[0].ID != 13 {
		t.Errorf("previous target: %v %v, want runs 13–15", ids(p), ok)
	}
	if _, ok := previousTarget(cur, earlier[:2]); ok {
		t.Error("no comparable target, one found")
	}
	noStat := cur[0]
	noStat.Stat = nil
	if _, ok := previousTarget([]store.RunFigures{noStat}, earlier); ok {
		t.Error("a run without figures has a previous comparable target")
	}
}

func ids(rs []store.RunFigures) []int64 {
	var out []int64
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}
