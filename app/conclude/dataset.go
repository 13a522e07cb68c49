package conclude

import (
	"slices"

	"github.com/ruckus/ruckus/app/store"
)

// DatasetRunsRead is how many of a dataset's newest completed runs its
// surfaces (the dataset's recommendation, the capacity planner) read to
// choose candidates and the scorer identity from; a dataset with more says
// that older ones were not read (docs/history.md#recommendation-across-a-dataset).
const DatasetRunsRead = 500

// DatasetScorer is the scorer identity every surface of a dataset ranks
// quality under when none is asked: the one most of the dataset's runs
// (measured here and imported, of every benchmark, as the store returns
// them) were scored under, on a tie the one first scored — SharedScorer
// over one set of runs. The leaderboard's scorer facet orders the same
// runs by the same rule (store.LeaderboardFacets: most runs first, then
// the earliest scored), so its first is this identity and the leaderboard,
// the history, the dataset's recommendation and the capacity planner
// rank quality alike (docs/history.md#which-scorer).
func DatasetScorer(runs []store.RunFigures) string { return SharedScorer(runs) }

// DatasetSet is what a dataset's recommendation weighs: the runs chosen
// (DatasetCandidates), the runs left out with why, and the scorer
// identity quality is ranked under (DatasetScorer over every run read).
type DatasetSet struct {
	Runs      []store.RunFigures
	Left      []LeftOut
	ScorerKey string
	// Truncated: the dataset has more completed runs than DatasetRunsRead;
	// the older ones were not read.
	Truncated bool
}

// DatasetCandidates chooses, of a dataset's completed runs (newest first,
// as store.DatasetRuns returns them, at most DatasetRunsRead), the runs
// its recommendation weighs: for each target under each load its
// benchmark set (model, runtime, hardware, engine settings and
// repeatKey: MergeRepeats' grouping), the runs of the newest benchmark
// that measured it. Those are that benchmark's repeats of the target,
// which MergeRepeats then folds into one candidate tested on the spread
// between them, as the benchmark's own verdict does; repeats are never
// ranked against each other. Every other run is left out with why: the
// same target under the same load was measured again later, in a
// benchmark named by its run. A target is never dropped for being old.
func DatasetCandidates(runs []store.RunFigures) DatasetSet {
	set := DatasetSet{ScorerKey: DatasetScorer(runs), Truncated: len(runs) >= DatasetRunsRead}
	cands := Candidates(runs)
	// The newest benchmark of each group, and its first run, which names
	// the merged candidate (runs come newest first, so the last seen).
	type newest struct{ benchmark, first int64 }
	chosen := map[repeatGroup]*newest{}
	var left []int
	for i, r := range runs {
		g := repeatGroupOf(cands[i])
		n, seen := chosen[g]
		switch {
		case !seen:
			chosen[g] = &newest{r.BenchmarkID, r.ID}
		case n.benchmark == r.BenchmarkID:
			n.first = r.ID
		default:
			left = append(left, i)
			continue
		}
		set.Runs = append(set.Runs, r)
	}
	for _, i := range left {
		r, n := runs[i], chosen[repeatGroupOf(cands[i])]
		why := say("recommend.said.left_out_measured_again", "Run", n.first, "Benchmark", n.benchmark)
		set.Left = append(set.Left, LeftOut{RunID: r.ID, BenchmarkID: r.BenchmarkID, Model: r.ModelName, Runtime: r.Runtime,
			Hardware: r.HardwareProfile, Engine: r.Engine.Key(), Reason: English(why), ReasonSaid: why})
	}
	// Oldest first, as a benchmark lists its runs: a merged target is
	// named by its first run, as in its benchmark's verdict.
	slices.Reverse(set.Runs)
	return set
}

// Tell puts on rec what the set left out: the runs, each with why, and a
// note when older runs were not read.
func (set DatasetSet) Tell(rec *Recommendation) {
	rec.LeftOut = set.Left
	if set.Truncated {
		rec.note(say("recommend.said.note_dataset_truncated", "N", DatasetRunsRead))
	}
}

// PlannerSet is what the capacity planner weighs of a dataset: the runs
// its recommendation weighs (DatasetCandidates: each target under each
// load from the newest benchmark that measured it, a benchmark's repeats
// of it all kept, for MergeRepeats to fold into one), those of the newest
// targets, oldest first; the runs it lists as not sized with why; and the
// scorer identity it weighs quality under (DatasetScorer over every run
// read, imports included), so the planner and the dataset's
// recommendation weigh one set of candidates alike
// (docs/benchmarks.md#capacity-planner).
type PlannerSet struct {
	Runs      []store.RunFigures
	Left      []PlannerLeft
	ScorerKey string
}

// PlannerLeft is a run the planner lists as not sized, with the code and
// words of why.
type PlannerLeft struct {
	Run  store.RunFigures
	Code Exclusion
	Said Said
}

// PlannerRuns chooses, of a dataset's runs as read for its surfaces
// (newest first, imported ones among them), the planner's set: the runs
// DatasetCandidates chooses, of its newest limit measured targets (repeat
// groups, MergeRepeats' grouping, so a target's repeats are never split)
// and every import among them. A run
// measured again later is left out with DatasetCandidates' reason
// (ExcludedMeasuredAgain), one of an older target with
// ExcludedNotNewest.
func PlannerRuns(runs []store.RunFigures, limit int) PlannerSet {
	set := DatasetCandidates(runs)
	out := PlannerSet{ScorerKey: set.ScorerKey}
	byID := make(map[int64]store.RunFigures, len(runs))
	for _, r := range runs {
		byID[r.ID] = r
	}
	for _, l := range set.Left {
		out.Left = append(out.Left, PlannerLeft{Run: byID[l.RunID], Code: ExcludedMeasuredAgain, Said: l.ReasonSaid})
	}
	cands := Candidates(set.Runs)
	groups := map[repeatGroup]bool{}
	var older []PlannerLeft
	for i := len(set.Runs) - 1; i >= 0; i-- { // newest first
		g := repeatGroupOf(cands[i])
		// Only a measured target is sized, at the cost of reading its
		// figures; an import (no summary) is listed as such.
		if set.Runs[i].Summary != nil && !groups[g] && len(groups) >= limit {
			older = append(older, PlannerLeft{Run: set.Runs[i], Code: ExcludedNotNewest, Said: say("capacity.said.not_newest", "N", limit)})
			continue
		}
		if set.Runs[i].Summary != nil {
			groups[g] = true
		}
		out.Runs = append(out.Runs, set.Runs[i])
	}
	slices.Reverse(out.Runs)
	out.Left = append(out.Left, older...)
	return out
}
