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

// PlannerRuns are, of a dataset's runs as read for its surfaces (newest
// first, imported ones among them), those the capacity planner sizes
// replicas from — the newest limit measured here, as an import has no
// speed — and the scorer identity it weighs their quality under: the one
// every surface of the dataset ranks quality by (DatasetScorer over all
// the runs read, imports included), not one of its own.
func PlannerRuns(runs []store.RunFigures, limit int) ([]store.RunFigures, string) {
	var measured []store.RunFigures
	for _, r := range runs {
		if r.Summary != nil && len(measured) < limit {
			measured = append(measured, r)
		}
	}
	return measured, DatasetScorer(runs)
}
