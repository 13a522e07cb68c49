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

// A target waits for a repeat only while something that would change its
// decision is still to come, keyed on the repeat's figures and quality:
// a repeat's execution or judging under way holds it; one that failed, a
// scoring given up, or a benchmark without a scorer does not; a repeat
// without figures is awaited while its score job is to run, and left out
// unmeasured once that job is given up.
func TestRepeatAwaitedOnlyWhileSomethingIsToCome(t *testing.T) {
	t.Parallel()
	kept := store.RunFigures{Stat: &store.RunStat{}, Summary: []byte(`{}`)}
	kept.State = "completed"
	bare := store.RunFigures{Summary: []byte(`{}`)}
	bare.State = "completed"
	running := store.RunFigures{}
	running.State = "running"
	fact := func(f store.ConclusionRun) store.ConclusionRun {
		f.State = "completed"
		return f
	}
	for _, c := range []struct {
		name   string
		r      store.RunFigures
		f      store.ConclusionRun
		scorer string
		want   bool
	}{
		{"still running", running, store.ConclusionRun{State: "running"}, "exact", true},
		{"scored", kept, fact(store.ConclusionRun{StatsKept: true, Scored: true}), "exact", false},
		{"being scored", kept, fact(store.ConclusionRun{StatsKept: true, LiveJobs: []string{"score_run"}}), "exact", true},
		{"in the sandbox", kept, fact(store.ConclusionRun{StatsKept: true, ExecState: "running", LiveJobs: []string{"execute_run"}}), "humaneval", true},
		{"execution failed", kept, fact(store.ConclusionRun{StatsKept: true, ExecState: "failed", LiveJobs: []string{"conclude_run"}}), "humaneval", false},
		{"execution given up", kept, fact(store.ConclusionRun{StatsKept: true, ExecState: "running", LastJobFailed: true}), "humaneval", false},
		{"being judged", kept, fact(store.ConclusionRun{StatsKept: true, Judging: true, JudgeState: "judging"}), "judge", true},
		{"judging failed", kept, fact(store.ConclusionRun{StatsKept: true, JudgeState: "failed"}), "judge", false},
		{"no scorer, still concluding", kept, fact(store.ConclusionRun{StatsKept: true, LiveJobs: []string{"score_run"}}), "", false},
		{"figures to come", bare, fact(store.ConclusionRun{LiveJobs: []string{"score_run"}}), "exact", true},
		{"figures given up", bare, fact(store.ConclusionRun{LastJobFailed: true}), "exact", false},
	} {
		if got := repeatAwaited(c.r, c.f, c.scorer); got != c.want {
			t.Errorf("%s: awaited %v, want %v", c.name, got, c.want)
		}
	}
}
