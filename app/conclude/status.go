package conclude

import (
	"context"
	"slices"
	"strconv"

	"github.com/ruckus/ruckus/app/store"
)

// StatusSource is what BenchmarkStatus reads (*store.Store).
type StatusSource interface {
	ConclusionFacts(ctx context.Context, benchmarkID int64) (store.ConclusionFacts, error)
}

// BenchmarkStatus is whether benchmark id's conclusions are complete
// (StatusOf over its facts).
func BenchmarkStatus(ctx context.Context, src StatusSource, id int64) (Status, error) {
	facts, err := src.ConclusionFacts(ctx, id)
	if err != nil {
		return Status{}, err
	}
	return StatusOf(facts), nil
}

// Status says whether a benchmark's conclusions are complete: the one
// rule the verdict page and API, the start page, the recommendations,
// the report, the configurations page and benchmark.finished share
// (docs/verdict.md#when-a-verdict-is-final).
type Status struct {
	// Pending: something is still to come that would change a
	// conclusion; Reason says what (the first thing found).
	Pending bool
	Reason  Said
	// Failed are the completed runs whose scoring, execution or judging
	// failed: the conclusions are drawn without what it would have given.
	Failed []int64
}

// StatusOf decides from a benchmark's facts whether its conclusions are
// complete. They are not while a run is queued or running, while a
// budgeted search's rung waits for its cut, or while a completed run is
// not concluded for its attempt and a job that would conclude it (its
// scoring, its execution in the sandbox, its conclusion, or its judge's
// run and that run's scoring) is still to run or running. No time
// bounds the wait; a run whose last such job failed is concluded
// without it and listed in Failed.
func StatusOf(f store.ConclusionFacts) Status {
	var st Status
	for _, r := range f.Runs {
		if r.State == "queued" || r.State == "running" {
			return Status{Pending: true, Reason: say("concluding.runs")}
		}
	}
	if len(f.UndecidedRungs) > 0 {
		return Status{Pending: true, Reason: say("concluding.search", "Rung", f.UndecidedRungs[0]+1)}
	}
	for _, r := range f.Runs {
		if r.State != "completed" {
			continue
		}
		if !r.Concluded {
			if why, ok := runPending(r); ok {
				return Status{Pending: true, Reason: why}
			}
		}
		if failedScoring(r) {
			st.Failed = append(st.Failed, r.RunID)
		}
	}
	if len(st.Failed) > 0 {
		st.Reason = say("concluding.failed", "Runs", runList(st.Failed))
	}
	return st
}

// runPending says what a completed run not concluded yet waits for, if a
// job that would conclude it is still to come.
func runPending(r store.ConclusionRun) (Said, bool) {
	switch {
	case r.Judging:
		return say("concluding.judging", "Run", r.RunID), true
	case slices.Contains(r.LiveJobs, "execute_run"):
		return say("concluding.executing", "Run", r.RunID), true
	case len(r.LiveJobs) > 0 && !r.StatsKept:
		return say("concluding.figures", "Run", r.RunID), true
	case len(r.LiveJobs) > 0:
		return say("concluding.scoring", "Run", r.RunID), true
	}
	return Said{}, false
}

// failedScoring says whether a completed run's scoring, execution or
// judging failed for good: its last job was given up, its execution or
// its benchmark's judging failed, or either stopped with nothing left to
// finish it.
func failedScoring(r store.ConclusionRun) bool {
	if r.ExecState == "failed" || r.JudgeState == "failed" {
		return true
	}
	if r.Concluded {
		return false
	}
	return r.LastJobFailed || r.ExecState == "queued" || r.ExecState == "running" || r.JudgeState == "judging"
}

// FiguresToCome says whether completed run r's figures (run_stats) are
// still to be kept: it has none for its attempt and a job that keeps them
// (its score job) is still to run or running. A run without them whose
// last such job was given up is unmeasured, not awaited: a search's rung
// is cut and its target's regressions decided without it
// (docs/verdict.md#when-a-verdict-is-final).
func FiguresToCome(r store.ConclusionRun) bool {
	return r.State == "completed" && !r.StatsKept && len(r.LiveJobs) > 0
}

// QualityToCome says whether completed run r of a benchmark scored by
// scorer (empty for none) has no quality yet but will: its scoring, its
// execution in the sandbox or its judging is still to run or running and
// has not failed. It keys on the run's quality, not on its jobs alone:
// a run being concluded is scored already, so two runs concluding at once
// never wait for each other (docs/verdict.md#regression-flags).
func QualityToCome(r store.ConclusionRun, scorer string) bool {
	if scorer == "" || r.State != "completed" || r.Scored || r.ExecState == "failed" || r.JudgeState == "failed" {
		return false
	}
	return len(r.LiveJobs) > 0 || r.Judging
}

// runList is run ids as the catalogue lists them ("12, 13").
func runList(ids []int64) string {
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ", "
		}
		out += strconv.FormatInt(id, 10)
	}
	return out
}
