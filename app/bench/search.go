package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Search asks for a budgeted search over the benchmark's configurations
// instead of running each in full: successive halving within BudgetRuns
// runs (docs/benchmarks.md#budgeted-search).
type Search struct {
	BudgetRuns int `json:"budget_runs" yaml:"budget_runs" validate:"min=2,max=1000" msg:"manifest.search_budget_range"`
	// Plan is the schedule the server fixed when it created the
	// benchmark, kept in its manifest so every later rung follows it; a
	// manifest cannot give one (it has no YAML name).
	Plan *conclude.SearchPlan `json:"plan,omitempty" yaml:"-" validate:"-"`
}

// searchLeast is the fewest requests a search's run gets: enough to fill
// the load's concurrency a few times over, so a rung's figure is not one
// wave of requests.
func searchLeast(l jobs.LoadProfile) int {
	return max(8, 2*l.Concurrency)
}

// validateSearch: a search needs configurations to choose between, one
// run of each per rung, a load whose requests can be budgeted, and runs
// enough for rung 0.
func (m Manifest) validateSearch() Errors {
	var errs Errors
	if m.Search == nil {
		return errs
	}
	n := m.countConfigurations()
	if n < 2 {
		errs.Say("search", "manifest.search_needs_configurations")
		return errs
	}
	if m.Repeats > 1 {
		errs.Say("repeats", "manifest.search_repeats")
	}
	if m.Load.Profile == jobs.LoadSweep || m.Load.Profile == jobs.LoadTrace {
		errs.Say("load.profile", "manifest.search_profile")
	}
	if _, ok := conclude.PlanSearch(n, m.Search.BudgetRuns, 1, 1); !ok && m.Search.BudgetRuns >= 2 && n <= MaxConfigurations {
		errs.Say("search.budget_runs", "manifest.search_budget", "N", n)
	}
	return errs
}

// DecideSearches decides every search rung whose runs have all ended and
// that is not decided yet (store.UndecidedSearchRungs): the reaper calls
// it periodically, so a rung is decided however its last run ended and
// after a server restart. It returns how many rungs it decided.
func (p *Service) DecideSearches(ctx context.Context) (int, error) {
	rungs, err := p.Store.UndecidedSearchRungs(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, r := range rungs {
		decided, err := p.DecideSearchRung(ctx, r.BenchmarkID, r.Rung)
		if err != nil {
			errs = append(errs, fmt.Errorf("search of benchmark %d, rung %d: %w", r.BenchmarkID, r.Rung, err))
		}
		if decided {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// DecideSearchRung cuts rung of benchmarkID's search, keeps the cut with
// its evidence and queues the survivors' runs of the next rung. The cut
// and the next rung's plan are worked out first; then, in one
// transaction under the benchmark's row lock, the cut is kept only if the
// rung has none yet, and the next rung's runs are inserted with it: a
// rung is decided once (a second decider finds its cut and drops its
// own) and its next rung exists exactly when its cut does; a search
// over is told to the Notifier. Nothing
// inside the transaction needs another connection, so deciders waiting
// for the lock cannot starve the one holding it. False when there was
// nothing to decide.
func (p *Service) DecideSearchRung(ctx context.Context, benchmarkID int64, rung int) (bool, error) {
	q := p.Store.Queries
	m, err := benchmarkManifest(ctx, q, benchmarkID)
	if err != nil || m.Search == nil || m.Search.Plan == nil {
		return false, err
	}
	runs, err := q.SearchRungRuns(ctx, benchmarkID, rung)
	if err != nil || len(runs) == 0 || !allEnded(runs) {
		return false, err
	}
	sp := *m.Search.Plan
	cut, ok, err := cutRung(ctx, q, benchmarkID, sp, rung, runs)
	if err != nil || !ok {
		return false, err
	}
	raw, err := json.Marshal(cut)
	if err != nil {
		return false, err
	}
	var next *Plan
	keep := survivors(cut, runs)
	// With none measured the search ends here: nothing is left to run.
	if rung+1 < len(sp.Rungs) && len(keep) > 0 {
		if next, err = p.planRung(ctx, m, benchmarkID, sp.Rungs[rung+1], keep); err != nil {
			return false, err
		}
	}
	decided := false
	err = p.Store.InTxWith(ctx, func(tx pgx.Tx, q *store.Queries) error {
		if err := q.LockBenchmark(ctx, benchmarkID); err != nil {
			return err
		}
		if decided, err = q.AddSearchCut(ctx, benchmarkID, rung, raw); err != nil || !decided || next == nil {
			return err
		}
		var refs []simRef
		for _, r := range next.Runs {
			if _, err := p.insertRun(ctx, tx, q, *next, benchmarkID, r, &refs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || !decided || next != nil || p.Notifier == nil {
		return decided, err
	}
	// The search is over: its benchmark may be concluded now.
	return decided, p.Notifier.RunEnded(ctx, runs[len(runs)-1].ID)
}

// benchmarkManifest is benchmarkID's manifest as it was created, naming
// the dataset its runs ask (a generated one included) by id.
func benchmarkManifest(ctx context.Context, q *store.Queries, benchmarkID int64) (Manifest, error) {
	var m Manifest
	raw, datasetID, err := q.BenchmarkManifest(ctx, benchmarkID)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("read benchmark %d's manifest: %w", benchmarkID, err)
	}
	m.Dataset, m.Synthetic = DatasetRef{ID: datasetID}, nil
	return m, nil
}

// fewShotOfRun is run r's few-shot setting as a target's (k 0: none,
// whatever the benchmark's).
func fewShotOfRun(r store.Run) *FewShot {
	switch {
	case r.FewShotExemplars != "":
		return &FewShot{Exemplars: r.FewShotExemplars}
	case r.FewShotK > 0:
		seed := r.FewShotSeed
		return &FewShot{K: r.FewShotK, Seed: &seed}
	}
	return &FewShot{}
}

func allEnded(runs []store.SearchRun) bool {
	for _, r := range runs {
		if r.State == "queued" || r.State == "running" {
			return false
		}
	}
	return true
}

// cutRung weighs rung's runs as the configurations page weighs a
// benchmark's (conclude.CutRung over conclude.Candidates: goodput per
// dollar from the figures the score job keeps) and cuts them as the plan
// says: the next rung's configurations go on (one, the winner, after the
// last rung). ok is false while a completed run's figures are still to
// be kept (conclude.FiguresToCome): the rung is decided on a later call.
// A completed run whose score job was given up before keeping them is
// unmeasured and cut as a failed run is; waiting for it would leave the
// search, and its benchmark's verdict, pending for ever.
func cutRung(ctx context.Context, q *store.Queries, benchmarkID int64, sp conclude.SearchPlan, rung int, runs []store.SearchRun) (cut conclude.SearchCut, ok bool, err error) {
	keep := 1
	if rung+1 < len(sp.Rungs) {
		keep = sp.Rungs[rung+1].Configurations
	}
	owner, err := q.BenchmarkOwner(ctx, benchmarkID)
	if err != nil {
		return cut, false, err
	}
	facts, err := q.ConclusionFacts(ctx, benchmarkID)
	if err != nil {
		return cut, false, err
	}
	byRun := make(map[int64]store.ConclusionRun, len(facts.Runs))
	for _, f := range facts.Runs {
		byRun[f.RunID] = f
	}
	var ids []int64
	var failed []store.Run
	gpus := map[int64]int{}
	for _, r := range runs {
		// A replica holds the GPUs its tensor parallelism takes
		// (conclude.ReplicaGPUs), the whole profile without the setting.
		gpus[r.ID] = max(conclude.ReplicaGPUs(r.GPUCount, r.Engine), 1)
		if r.State == "completed" {
			ids = append(ids, r.ID)
		} else {
			failed = append(failed, r.Run)
		}
	}
	figs, err := q.RunFiguresByID(ctx, owner, ids)
	if err != nil {
		return cut, false, err
	}
	measured := figs[:0:0]
	for _, f := range figs {
		switch {
		case f.Stat != nil || f.Summary == nil:
			measured = append(measured, f)
		case conclude.FiguresToCome(byRun[f.ID]):
			return cut, false, nil
		default:
			failed = append(failed, runOf(runs, f.ID))
		}
	}
	return conclude.CutRung(rung, keep, conclude.Candidates(measured), failed, gpus), true, nil
}

// runOf is run id among runs.
func runOf(runs []store.SearchRun, id int64) store.Run {
	for _, r := range runs {
		if r.ID == id {
			return r.Run
		}
	}
	return store.Run{}
}

// survivors are the runs whose configurations the cut kept.
func survivors(cut conclude.SearchCut, runs []store.SearchRun) []store.Run {
	kept := map[int64]bool{}
	for _, v := range cut.Verdicts {
		kept[v.RunID] = v.Kept
	}
	var out []store.Run
	for _, r := range runs {
		if kept[r.ID] {
			out = append(out, r.Run)
		}
	}
	return out
}

// planRung plans the next rung's runs: one per surviving configuration,
// with the rung's requests, planned as the benchmark's own runs were (for
// its owner, against what exists now).
func (p *Service) planRung(ctx context.Context, m Manifest, benchmarkID int64, next conclude.SearchRung, keep []store.Run) (*Plan, error) {
	owner, err := p.Store.BenchmarkOwner(ctx, benchmarkID)
	if err != nil {
		return nil, err
	}
	m.Search, m.Repeats = nil, 0
	m.Load.MaxRequests = next.Requests
	m.Targets = nil
	for _, r := range keep {
		engine := map[string]any{}
		for n, v := range r.Engine {
			engine[n] = v
		}
		m.Targets = append(m.Targets, Target{Model: r.ModelName, Runtime: r.Runtime, Hardware: r.HardwareProfile,
			FewShot: fewShotOfRun(r), Engine: engine})
	}
	plan, err := p.Plan(ctx, owner, m)
	if err != nil {
		return nil, fmt.Errorf("plan rung %d: %w", next.Rung, err)
	}
	for i := range plan.Runs {
		plan.Runs[i].SearchRung = &next.Rung
	}
	return &plan, nil
}

// SearchRecord is what a benchmark's search did so far: its plan, each
// decided rung's cut with the evidence, and the configuration it chose
// once its last rung is decided.
type SearchRecord struct {
	BudgetRuns int                 `json:"budget_runs"`
	Plan       conclude.SearchPlan `json:"plan"`
	Cuts       []SearchDecision    `json:"cuts"`
	// Best is the chosen configuration ("" until the last rung is
	// decided, or when a rung's runs all ended unmeasured, which ends the
	// search without a choice).
	Best string `json:"best,omitempty"`
	Done bool   `json:"done"`
	// Unranked says why a search that ended without a choice could not
	// rank its last rung as the configurations page ranks (no SLO, no
	// price: conclude.CutRung); "" otherwise.
	Unranked     string         `json:"unranked,omitempty"`
	UnrankedSaid *conclude.Said `json:"-"`
}

// SearchDecision is one decided rung.
type SearchDecision struct {
	conclude.SearchCut
	DecidedAt time.Time `json:"decided_at"`
}

// SearchRecordOf is benchmarkID's search record, nil when it ran no
// search.
func (p *Service) SearchRecordOf(ctx context.Context, benchmarkID int64) (*SearchRecord, error) {
	m, err := benchmarkManifest(ctx, p.Store.Queries, benchmarkID)
	if err != nil || m.Search == nil || m.Search.Plan == nil {
		return nil, err
	}
	cuts, err := p.Store.SearchCuts(ctx, benchmarkID)
	if err != nil {
		return nil, err
	}
	rec := &SearchRecord{BudgetRuns: m.Search.BudgetRuns, Plan: *m.Search.Plan, Cuts: []SearchDecision{}}
	for _, c := range cuts {
		d := SearchDecision{DecidedAt: c.DecidedAt}
		if err := json.Unmarshal(c.Cut, &d.SearchCut); err != nil {
			return nil, fmt.Errorf("search cut of benchmark %d, rung %d: %w", benchmarkID, c.Rung, err)
		}
		rec.Cuts = append(rec.Cuts, d)
	}
	if n := len(rec.Cuts); n > 0 && (n == len(rec.Plan.Rungs) || rec.Cuts[n-1].Best() == "") {
		// Done after the last rung, or when a rung kept nothing (none of
		// its runs was measured).
		last := rec.Cuts[n-1]
		rec.Done, rec.Best = true, last.Best()
		if rec.Best == "" {
			rec.Unranked, rec.UnrankedSaid = last.Unranked, last.UnrankedSaid
		}
	}
	return rec, nil
}

// GivenUpWithin is how long after River gave a run's concluding job up
// the run is still concluded for it: long enough for a server that was
// down to catch up, short enough that each look reads little.
const GivenUpWithin = 24 * time.Hour

// ConcludeGivenUp queues the conclusion (jobs.ConcludeRunArgs) of each run
// whose concluding job River gave up for good (a score, an execution, a
// judging's scoring; store.GivenUpUnconcluded): River runs nothing when it
// gives a job up, so without it the run's target would never be checked
// for regressions and its owner never told. The conclusion decides the
// target as conclude.StatusOf and conclude.Regressions see the run (its
// figures or quality given up), marks the run concluded, then lets the
// notifier decide whether the benchmark is finished
// (docs/verdict.md#when-a-verdict-is-final). It returns how many it
// queued.
func (p *Service) ConcludeGivenUp(ctx context.Context) (int, error) {
	runs, err := p.Store.GivenUpUnconcluded(ctx, GivenUpWithin, jobs.GivenUpTag)
	if err != nil || len(runs) == 0 {
		return 0, err
	}
	runs = slices.Compact(slices.Sorted(slices.Values(runs)))
	err = p.Store.InTxWith(ctx, func(tx pgx.Tx, _ *store.Queries) error {
		for _, id := range runs {
			if _, err := p.River.InsertTx(ctx, tx, jobs.ConcludeRunArgs{RunID: id}, &river.InsertOpts{Tags: []string{jobs.GivenUpTag}}); err != nil {
				return fmt.Errorf("conclude run %d given up: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return len(runs), nil
}
