package bench_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// fakeResults are n answered requests, each first token after ttft.
func fakeResults(n int, ttft time.Duration) []jobs.Result {
	out := make([]jobs.Result, n)
	for i := range out {
		out[i] = jobs.Result{Status: jobs.StatusOK, CompletionTokens: 16, TTFT: ttft, E2E: 2 * ttft, StartOffset: time.Duration(i) * ttft}
	}
	return out
}

// jobLoad is the load profile of the River job that works run r.
func jobLoad(t *testing.T, st *store.Store, r store.Run) jobs.LoadProfile {
	t.Helper()
	var args jobs.RunArgs
	var raw []byte
	if err := st.Pool().QueryRow(t.Context(), `SELECT args FROM river_job WHERE id = $1`, *r.RiverJobID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		t.Fatal(err)
	}
	return args.Load
}

// TestSearchRungIsDecidedOnce: a rung whose runs have all ended is cut
// once however many deciders race for it (two services, as after a
// restart, four calls at once): one cut kept with its evidence, one set
// of next-rung runs with the rung's requests; a cancelled run is cut as
// unmeasured; a rung with a run still queued is not decided; a retried
// run of the search keeps its rung's requests.
func TestSearchRungIsDecidedOnce(t *testing.T) {
	t.Parallel()
	st, svc, v, ds := plantedWorld(t)
	ctx := t.Context()
	created, err := svc.Create(ctx, v, plantedManifest(ds))
	if err != nil {
		t.Fatal(err)
	}
	rung0 := queuedSearchRuns(t, st, v, created.BenchmarkID)
	if len(rung0) != 6 || rung0[0].Total != 16 || jobLoad(t, st, rung0[0]).MaxRequests != 16 || *rung0[0].SearchRung != 0 {
		t.Fatalf("rung 0: %d runs, first %+v", len(rung0), rung0[0])
	}
	for i, r := range rung0[:5] {
		// Faster first tokens rank higher: the last worked run is best.
		storeRun(t, st, r.ID, fakeResults(r.Total, time.Duration(10-i)*time.Millisecond), time.Duration(10-i)*100*time.Millisecond)
	}
	if n, err := svc.DecideSearches(ctx); err != nil || n != 0 {
		t.Fatalf("a rung with a run queued decided: %d %v", n, err)
	}
	if err := svc.CancelRun(ctx, v, created.BenchmarkID, rung0[5].ID); err != nil {
		t.Fatal(err)
	}
	other := testkit.Service(ctx, t, st, nil)
	var wg sync.WaitGroup
	decided := make(chan bool, 4)
	for i := range 4 {
		s := svc
		if i%2 == 1 {
			s = other
		}
		wg.Go(func() {
			ok, err := s.DecideSearchRung(ctx, created.BenchmarkID, 0)
			if err != nil {
				t.Error(err)
			}
			decided <- ok
		})
	}
	wg.Wait()
	close(decided)
	n := 0
	for ok := range decided {
		if ok {
			n++
		}
	}
	rec, err := svc.SearchRecordOf(ctx, created.BenchmarkID)
	if err != nil || n != 1 || len(rec.Cuts) != 1 || rec.Done {
		t.Fatalf("decided %d times; record %+v %v", n, rec, err)
	}
	cut := rec.Cuts[0]
	if cut.Keep != 3 || cut.Verdicts[0].RunID != rung0[4].ID || !cut.Verdicts[2].Kept || cut.Verdicts[3].Kept ||
		cut.Verdicts[5].RunID != rung0[5].ID || cut.Verdicts[5].Reason != "unmeasured" || cut.Verdicts[3].Reason != "ranked" {
		t.Fatalf("cut %+v", cut)
	}
	if cut.Verdicts[0].Good != 16 || cut.Verdicts[0].PricePerHour == nil || *cut.Verdicts[0].PricePerHour != 2 || !cut.Verdicts[0].Priced {
		t.Fatalf("evidence %+v", cut.Verdicts[0])
	}
	rung1 := queuedSearchRuns(t, st, v, created.BenchmarkID)
	if len(rung1) != 3 || rung1[0].Total != 24 || jobLoad(t, st, rung1[0]).MaxRequests != 24 || *rung1[0].SearchRung != 1 {
		t.Fatalf("rung 1: %d runs %+v", len(rung1), rung1)
	}
	if n, err := other.DecideSearches(ctx); err != nil || n != 0 {
		t.Fatalf("decided again: %d %v", n, err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE runs SET state = 'failed', finished_at = now() WHERE id = $1`, rung1[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.RetryRun(ctx, v, created.BenchmarkID, rung1[0].ID); err != nil {
		t.Fatal(err)
	}
	again := queuedSearchRuns(t, st, v, created.BenchmarkID)
	if len(again) != 3 || jobLoad(t, st, again[0]).MaxRequests != 24 {
		t.Fatalf("retried run's load %+v", jobLoad(t, st, again[0]))
	}
}

// TestSearchPlanIsKeptWithTheBenchmark: the dry run's plan lists every
// configuration of rung 0 with its engine settings and estimate, and the
// created benchmark's manifest keeps the schedule a manifest cannot set.
func TestSearchPlanIsKeptWithTheBenchmark(t *testing.T) {
	t.Parallel()
	st, svc, v, ds := plantedWorld(t)
	plan, err := svc.Plan(t.Context(), v, plantedManifest(ds))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Runs) != 6 || plan.Search == nil || plan.Search.Runs != 11 || plan.Runs[5].Engine.Key() != "max_num_seqs=8 tensor_parallel_size=2" ||
		plan.Runs[0].EstimateLow <= 0 || plan.Runs[0].EstimateHigh < plan.Runs[0].EstimateLow {
		t.Fatalf("plan %+v search %+v", plan.Runs, plan.Search)
	}
	created, err := svc.Create(t.Context(), v, plantedManifest(ds))
	if err != nil {
		t.Fatal(err)
	}
	raw, _, err := st.BenchmarkManifest(t.Context(), created.BenchmarkID)
	if err != nil {
		t.Fatal(err)
	}
	var m bench.Manifest
	if err := json.Unmarshal(raw, &m); err != nil || m.Search == nil || m.Search.Plan == nil || m.Search.Plan.Rungs[2].Requests != 48 {
		t.Fatalf("kept manifest %s: %v", raw, err)
	}
	withPlan := `{"name":"p","dataset":1,"targets":[{"model":"m","runtime":"sim","hardware":"cpu","matrix":{"max_num_seqs":[1,2]}}],
		"load":{"profile":"sequential"},"sampling":{"max_tokens":4},"search":{"budget_runs":3,"plan":{"eta":9}}}`
	if _, err := bench.Decode(strings.NewReader(withPlan)); err == nil {
		t.Fatal("a manifest set the search's plan")
	}
}

// workRung0 creates the planted search and ends its rung 0 with fake
// results, the i-th run's first tokens after 10−i ms (the last run the
// fastest), and decides the rung; it returns the benchmark's id.
func workRung0(t *testing.T, st *store.Store, svc *bench.Service, v store.Viewer, ds int64) int64 {
	t.Helper()
	created, err := svc.Create(t.Context(), v, plantedManifest(ds))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range queuedSearchRuns(t, st, v, created.BenchmarkID) {
		storeRun(t, st, r.ID, fakeResults(r.Total, time.Duration(10-i)*time.Millisecond), time.Duration(10-i)*100*time.Millisecond)
	}
	if _, err := svc.DecideSearches(t.Context()); err != nil {
		t.Fatal(err)
	}
	return created.BenchmarkID
}

// TestSearchCutsAsTheConfigurationsPageRanks: a rung's cut is the
// configurations page's ranking of its runs (conclude.RankConfigurations
// over the benchmark as WeighBenchmark weighs it): the same order, the
// same goodput per dollar, its winner first.
func TestSearchCutsAsTheConfigurationsPageRanks(t *testing.T) {
	t.Parallel()
	st, svc, v, ds := plantedWorld(t)
	ctx := t.Context()
	id := workRung0(t, st, svc, v, ds)
	rec, err := svc.SearchRecordOf(ctx, id)
	if err != nil || len(rec.Cuts) != 1 {
		t.Fatalf("record %+v: %v", rec, err)
	}
	b, err := st.BenchmarkByID(ctx, v, id)
	if err != nil {
		t.Fatal(err)
	}
	j, err := conclude.WeighBenchmark(ctx, st, v, b, false)
	if err != nil {
		t.Fatal(err)
	}
	page := conclude.RankConfigurations(j.Cands, j.Left)
	if len(page.Ranked) != 6 {
		t.Fatalf("the page ranks %d configurations, want rung 0's 6", len(page.Ranked))
	}
	for i, c := range page.Ranked {
		got := rec.Cuts[0].Verdicts[i]
		if got.RunID != c.RunID || got.PerDollar == nil || *got.PerDollar != *c.GoodputPerDollar || got.Rank != c.Rank {
			t.Errorf("rank %d: the cut has run %d at %v per $, the page run %d at %v", i+1, got.RunID, got.PerDollar, c.RunID, *c.GoodputPerDollar)
		}
	}
}

// TestSearchOnAnUnpricedProfileSaysWhy: on a profile without a price the
// configurations page ranks nothing, and neither does the search: it ends
// after rung 0 without a choice, each configuration cut with the page's
// reason, instead of choosing one per GPU-hour.
func TestSearchOnAnUnpricedProfileSaysWhy(t *testing.T) {
	t.Parallel()
	st, svc, v, ds := plantedWorld(t)
	ctx := t.Context()
	if err := st.SetHardwarePrice(ctx, "sim-2gpu", nil); err != nil {
		t.Fatal(err)
	}
	id := workRung0(t, st, svc, v, ds)
	rec, err := svc.SearchRecordOf(ctx, id)
	if err != nil || len(rec.Cuts) != 1 {
		t.Fatalf("record %+v: %v", rec, err)
	}
	if !rec.Done || rec.Best != "" || !strings.Contains(rec.Unranked, "sim-2gpu has no price") {
		t.Fatalf("search on an unpriced profile: done %v, best %q, unranked %q", rec.Done, rec.Best, rec.Unranked)
	}
	for _, x := range rec.Cuts[0].Verdicts {
		if x.Kept || x.Reason != "not_ranked" || x.PerDollar != nil || !strings.Contains(x.Detail, "no price") {
			t.Errorf("verdict %+v", x)
		}
	}
	if left := queuedSearchRuns(t, st, v, id); len(left) != 0 {
		t.Errorf("rung 1 planned after a rung that ranked nothing: %d runs", len(left))
	}
}
