package conclude

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// datasetRun is a run of benchmark b (ids grow with time) of model m on
// sim/cpu under a sequential or concurrency-8 load, scored under keys
// in order.
func datasetRun(id, b int64, m string, busy bool, keys ...string) store.RunFigures {
	r := store.RunFigures{Stat: &store.RunStat{RunID: id, Load: jobs.LoadIdentity{Profile: "sequential", Sampling: "max_tokens=8", DatasetID: 1}}}
	if busy {
		r.Stat.Load.Profile, r.Stat.Load.Params = "concurrency", "(concurrency=8)"
	}
	r.ID, r.BenchmarkID, r.ModelName, r.Runtime, r.HardwareProfile = id, b, m, "sim", "cpu"
	for i, k := range keys {
		q := 0.5
		r.Qualities = append(r.Qualities, store.Quality{RunID: id, ScorerKey: k, Mean: &q, ScoredAt: time.Unix(id*10+int64(i), 0)})
	}
	return r
}

// A dataset's candidates: each target under each load from the newest
// benchmark that measured it (its repeats there kept together, oldest
// first, for MergeRepeats), every older run left out naming the run that
// is weighed instead; another load of the same target is another
// candidate, never left out for it.
func TestDatasetCandidatesWeighEachTargetUnderEachLoadOnce(t *testing.T) {
	newestFirst := []store.RunFigures{
		datasetRun(7, 4, "m/b", false, "exact"),
		datasetRun(6, 3, "m/a", false, "exact"), datasetRun(5, 3, "m/a", false, "exact"), // repeats of benchmark 3
		datasetRun(4, 2, "m/a", true, "exact"), // the same target under another load
		datasetRun(3, 2, "m/a", false, "exact"),
		datasetRun(2, 1, "m/a", false, "exact"),
		datasetRun(1, 1, "m/c", false, "contains"), // old, but the only run of m/c
	}
	set := DatasetCandidates(newestFirst)
	var kept []int64
	for _, r := range set.Runs {
		kept = append(kept, r.ID)
	}
	if fmt.Sprint(kept) != "[1 4 5 6 7]" {
		t.Errorf("weighed runs %v, want [1 4 5 6 7]", kept)
	}
	merged := MergeRepeats(Candidates(set.Runs))
	if len(merged) != 4 {
		t.Errorf("%d candidates, want 4 (m/c; m/a busy; m/a merged from runs 5 and 6; m/b)", len(merged))
	}
	for _, c := range merged {
		if c.Model == "m/a" && !OpenLoop(*c.Load) && c.Load.Profile == "sequential" && (c.RunID != 5 || c.Repeats != 2) {
			t.Errorf("m/a sequential as run %d of %d repeats, want run 5 of 2", c.RunID, c.Repeats)
		}
	}
	var left []string
	for _, l := range set.Left {
		left = append(left, fmt.Sprintf("%d:%s", l.RunID, l.Reason))
	}
	if len(left) != 2 || !strings.HasPrefix(left[0], "3:") || !strings.HasPrefix(left[1], "2:") ||
		!strings.Contains(left[0], "(run 5, benchmark 3)") || !strings.Contains(left[1], "(run 5, benchmark 3)") {
		t.Errorf("left out %q, want runs 3 and 2, each naming run 5 of benchmark 3", left)
	}
	if set.ScorerKey != "exact" || set.Truncated {
		t.Errorf("scorer %q, truncated %v", set.ScorerKey, set.Truncated)
	}
}

// The scorer identity a dataset's surfaces share is the one most of its
// runs were scored under, imports and superseded runs counted, on a tie
// the one first scored; the planner weighs its newest measured runs under
// it, and a dataset read to the limit says older runs were not read.
func TestDatasetScorerAndPlannerRuns(t *testing.T) {
	runs := []store.RunFigures{
		datasetRun(4, 4, "outside/x", false, "contains"),
		datasetRun(3, 3, "outside/y", false, "contains"),
		datasetRun(2, 2, "m/a", false, "exact", "contains"),
		datasetRun(1, 1, "m/a", false, "exact"),
	}
	// Runs 3 and 4 are imported: no summary, no speed to size from.
	runs[2].Summary, runs[3].Summary = []byte(`{}`), []byte(`{}`)
	if k := DatasetScorer(runs); k != "contains" {
		t.Errorf("dataset scorer %q, want contains (3 runs against 2)", k)
	}
	planned := PlannerRuns(runs, 1)
	var ids []int64
	for _, r := range planned.Runs {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, []int64{2, 3, 4}) || planned.ScorerKey != "contains" {
		t.Errorf("planner runs %v under %q, want runs 2, 3 and 4 under contains", ids, planned.ScorerKey)
	}
	if len(planned.Left) != 1 || planned.Left[0].Run.ID != 1 || planned.Left[0].Code != ExcludedMeasuredAgain {
		t.Errorf("left out %+v, want run 1, measured again later", planned.Left)
	}
	if tie := DatasetScorer(runs[2:]); tie != "exact" {
		t.Errorf("a tie goes to %q, want exact (scored first)", tie)
	}
	many := make([]store.RunFigures, DatasetRunsRead)
	for i := range many {
		many[i] = datasetRun(int64(DatasetRunsRead-i), int64(DatasetRunsRead-i), fmt.Sprintf("m/%d", i), false)
	}
	set := DatasetCandidates(many)
	var rec Recommendation
	set.Tell(&rec)
	if !set.Truncated || len(rec.Notes) != 1 || !strings.Contains(rec.Notes[0], fmt.Sprintf("Only the newest %d completed runs", DatasetRunsRead)) {
		t.Errorf("read to the limit: truncated %v, notes %q", set.Truncated, rec.Notes)
	}
}

// The planner sizes the newest limit targets measured here, a target's
// repeats together: an older target is listed as not sized with why,
// never dropped unsaid, and an import does not count towards the limit.
func TestPlannerRunsKeepsTheNewestTargetsWhole(t *testing.T) {
	runs := []store.RunFigures{
		datasetRun(5, 3, "m/c", false, "exact"),
		datasetRun(4, 2, "m/b", false, "exact"), datasetRun(3, 2, "m/b", false, "exact"), // repeats
		datasetRun(2, 9, "outside/x", false, "exact"), // imported
		datasetRun(1, 1, "m/a", false, "exact"),
	}
	for i := range runs {
		if runs[i].ModelName != "outside/x" {
			runs[i].Summary = []byte(`{}`)
		}
	}
	set := PlannerRuns(runs, 2)
	var ids []int64
	for _, r := range set.Runs {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, []int64{2, 3, 4, 5}) {
		t.Errorf("planner runs %v, want 2, 3, 4 and 5 (oldest first)", ids)
	}
	if len(set.Left) != 1 || set.Left[0].Run.ID != 1 || set.Left[0].Code != ExcludedNotNewest ||
		!strings.Contains(English(set.Left[0].Said), "newest 2 targets") {
		t.Errorf("left out %+v, want run 1, older than the newest 2 targets", set.Left)
	}
}
