package bench_test

import (
	"slices"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// TestSearchRungIsCutWhenAScoringIsGivenUp: a rung waits for a completed
// run's figures while its score job is still to run, and no longer once
// River gave that job up: the run is cut as unmeasured, the next rung is
// planned, and the benchmark's status lists the run as failed scoring
// instead of waiting for the rung for ever (docs/verdict.md#when-a-verdict-is-final).
func TestSearchRungIsCutWhenAScoringIsGivenUp(t *testing.T) {
	t.Parallel()
	st, svc, v, ds := plantedWorld(t)
	ctx := t.Context()
	created, err := svc.Create(ctx, v, plantedManifest(ds))
	if err != nil {
		t.Fatal(err)
	}
	rung0 := queuedSearchRuns(t, st, v, created.BenchmarkID)
	for i, r := range rung0[:5] {
		storeRun(t, st, r.ID, fakeResults(r.Total, time.Duration(10-i)*time.Millisecond), time.Duration(10-i)*100*time.Millisecond)
	}
	// The last run ended with its summary; its score job, queued with its
	// end, has not kept its figures yet.
	unscored := rung0[5].ID
	storeRun(t, st, unscored, fakeResults(rung0[5].Total, time.Millisecond), 100*time.Millisecond)
	if _, err := st.Pool().Exec(ctx, `DELETE FROM run_stats WHERE run_id = $1`, unscored); err != nil {
		t.Fatal(err)
	}
	rc := testkit.RiverClient(ctx, t, st.Pool(), nil)
	job, err := rc.Insert(ctx, jobs.ScoreRunArgs{RunID: unscored}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := svc.DecideSearches(ctx); err != nil || n != 0 {
		t.Fatalf("decided while a run's figures are still to come: %d %v", n, err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = now() WHERE id = $1`, job.Job.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := svc.DecideSearches(ctx); err != nil || n != 1 {
		t.Fatalf("after the scoring was given up: %d decided, %v", n, err)
	}
	rec, err := svc.SearchRecordOf(ctx, created.BenchmarkID)
	if err != nil || len(rec.Cuts) != 1 {
		t.Fatalf("record %+v: %v", rec, err)
	}
	i := slices.IndexFunc(rec.Cuts[0].Verdicts, func(x conclude.SearchVerdict) bool { return x.RunID == unscored })
	if i < 0 || rec.Cuts[0].Verdicts[i].Kept || rec.Cuts[0].Verdicts[i].Reason != "unmeasured" {
		t.Fatalf("the given-up run in the cut: %+v", rec.Cuts[0].Verdicts)
	}
	if next := queuedSearchRuns(t, st, v, created.BenchmarkID); len(next) != 3 {
		t.Fatalf("rung 1: %d runs", len(next))
	}
	facts, err := st.ConclusionFacts(ctx, created.BenchmarkID)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(facts.UndecidedRungs, 0) {
		t.Fatalf("rung 0 still undecided: %v", facts.UndecidedRungs)
	}
	// Rung 1's runs are to run; without them, only the given-up run is a
	// failed scoring.
	facts.Runs = slices.DeleteFunc(facts.Runs, func(r store.ConclusionRun) bool { return r.State == "queued" })
	facts.UndecidedRungs = nil
	if s := conclude.StatusOf(facts); s.Pending || !slices.Equal(s.Failed, []int64{unscored}) {
		t.Fatalf("status %+v, want run %d failed", s, unscored)
	}
}
