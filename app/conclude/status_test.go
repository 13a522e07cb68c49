package conclude

import (
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
)

// One rule says when a benchmark's conclusions are complete
// (docs/verdict.md#when-a-verdict-is-final): no time bounds the wait,
// only what is still to come; a run concluded is waited for no more,
// whatever River still says of its job; a failed scoring ends the wait
// and is said.
func TestStatusOfWaitsForWhatIsStillToCome(t *testing.T) {
	done := store.ConclusionRun{RunID: 1, State: "completed", Concluded: true, StatsKept: true, Scored: true}
	run := func(r store.ConclusionRun) store.ConclusionRun {
		r.RunID, r.State = 2, "completed"
		return r
	}
	en, de := i18n.Default().Lang("en"), i18n.Default().Lang("de")
	for _, c := range []struct {
		name    string
		facts   store.ConclusionFacts
		pending bool
		said    string
		failed  int
	}{
		{"every run concluded", store.ConclusionFacts{Runs: []store.ConclusionRun{done, run(store.ConclusionRun{Concluded: true})}}, false, "", 0},
		{"a run still running", store.ConclusionFacts{Runs: []store.ConclusionRun{done, {RunID: 2, State: "running"}}}, true, "queued or running", 0},
		{"a rung to cut", store.ConclusionFacts{Runs: []store.ConclusionRun{done}, UndecidedRungs: []int{0}}, true, "after rung 1", 0},
		{"figures to keep", store.ConclusionFacts{Runs: []store.ConclusionRun{done, run(store.ConclusionRun{LiveJobs: []string{"score_run"}})}}, true, "run 2's figures", 0},
		{"scores to come", store.ConclusionFacts{Runs: []store.ConclusionRun{done, run(store.ConclusionRun{StatsKept: true, LiveJobs: []string{"score_run"}})}}, true, "run 2 is being scored", 0},
		{"in the sandbox", store.ConclusionFacts{Runs: []store.ConclusionRun{done, run(store.ConclusionRun{StatsKept: true, ExecState: "running", LiveJobs: []string{"execute_run"}})}}, true, "sandbox", 0},
		{"being judged", store.ConclusionFacts{Runs: []store.ConclusionRun{done, run(store.ConclusionRun{StatsKept: true, Judging: true, JudgeState: "judging"})}}, true, "judged", 0},
		{"concluded while its job is still marked running", store.ConclusionFacts{Runs: []store.ConclusionRun{done, run(store.ConclusionRun{Concluded: true, LiveJobs: []string{"score_run"}})}}, false, "", 0},
		{"figures given up", store.ConclusionFacts{Runs: []store.ConclusionRun{done, run(store.ConclusionRun{LastJobFailed: true})}}, false, "scoring failed for run 2", 1},
		{"a scoring given up", store.ConclusionFacts{Runs: []store.ConclusionRun{done, run(store.ConclusionRun{StatsKept: true, LastJobFailed: true})}}, false, "scoring failed for run 2", 1},
		{"a judge run that ended unread", store.ConclusionFacts{Runs: []store.ConclusionRun{done, run(store.ConclusionRun{StatsKept: true, JudgeState: "judging"})}}, false, "scoring failed for run 2", 1},
		{"an execution that failed", store.ConclusionFacts{Runs: []store.ConclusionRun{done, run(store.ConclusionRun{Concluded: true, ExecState: "failed"})}}, false, "scoring failed for run 2", 1},
		{"a run never scored, nothing to come", store.ConclusionFacts{Runs: []store.ConclusionRun{done, run(store.ConclusionRun{})}}, false, "", 0},
		{"failed runs are no conclusion", store.ConclusionFacts{Runs: []store.ConclusionRun{done, {RunID: 2, State: "failed", LiveJobs: []string{"score_run"}}}}, false, "", 0},
	} {
		st := StatusOf(c.facts)
		said := st.Reason.In(en)
		if st.Pending != c.pending || len(st.Failed) != c.failed || !strings.Contains(said, c.said) || (c.said == "") != (st.Reason.Code == "") {
			t.Errorf("%s: pending %v, failed %v, %q", c.name, st.Pending, st.Failed, said)
		}
		if st.Reason.Code != "" && st.Reason.In(de) == said {
			t.Errorf("%s: the German reason is the English: %q", c.name, said)
		}
	}
}
