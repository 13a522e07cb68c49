package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/dataset/synth"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/jobs"
)

// PlannedRun is one run a manifest will create.
type PlannedRun struct {
	// RunID and State are set once the run exists.
	RunID      int64   `json:"run_id,omitempty"`
	State      string  `json:"state,omitempty"`
	Model      string  `json:"model"`
	Runtime    string  `json:"runtime"`
	Hardware   string  `json:"hardware"`
	Queue      string  `json:"queue"`
	MemoryGB   float64 `json:"memory_gb"`
	CapacityGB float64 `json:"capacity_gb"` // 0 for CPU-only profiles
	Items      int     `json:"items"`
	// WaitingForAgent: no live agent serves this profile and runtime now;
	// the run is queued and starts when one does.
	WaitingForAgent bool `json:"waiting_for_agent"`
	// Repeat is which run of its target this is (0 for the first; the
	// manifest's repeats).
	Repeat int `json:"repeat,omitempty"`
	// FewShotK and FewShotSeed are the run's few-shot setting (k 0: the
	// dataset's own prompts).
	FewShotK    int   `json:"fewshot_k,omitempty"`
	FewShotSeed int64 `json:"fewshot_seed,omitempty"`
	// FewShotExemplars names the fixed set of examples the run asks with
	// ("" for drawn ones).
	FewShotExemplars string `json:"fewshot_exemplars,omitempty"`
	// Engine is the target's checked engine settings (none: the
	// runtime's defaults).
	Engine jobs.Engine `json:"engine,omitempty"`
	// Target is the manifest's target the run comes from (a matrix makes
	// several configurations of one target).
	Target int `json:"target"`
	// SearchRung is the search's rung the run belongs to (nil outside a
	// search); its Items are then the rung's requests per run.
	SearchRung *int `json:"search_rung,omitempty"`
	// EstimateLow and EstimateHigh bound how long the run takes, in
	// seconds (EstimateRun).
	EstimateLow  float64 `json:"estimated_seconds_low"`
	EstimateHigh float64 `json:"estimated_seconds_high"`

	modelID int64
	// adapterOf is the base model when the model is a LoRA adapter.
	adapterOf string
}

// Plan is what a manifest becomes.
type Plan struct {
	Manifest Manifest
	Dataset  store.Dataset
	Runs     []PlannedRun
	// Search is the budgeted search's schedule (nil without one); Runs
	// then holds its rung 0.
	Search *conclude.SearchPlan

	fewShot *fewShotPlan // the few-shot runs' prompt pieces and examples
}

// Service checks a manifest against what exists and creates benchmarks.
type Service struct {
	Store      *store.Store
	River      Queue
	StaleAfter time.Duration
	// SimAccuracy is the default accuracy of each model on the simulated
	// runtime, for benchmarks whose manifest sets none (ruckus serve
	// --sim-accuracy).
	SimAccuracy map[string]float64
	// Notifier, when set, is told when a budgeted search's last rung is
	// cut: no score job ends after that, and only then are the
	// benchmark's conclusions complete (docs/operations.md#webhooks).
	Notifier jobs.RunNotifier
}

// Queue is the part of the River client that queues and cancels runs;
// *river.Client[pgx.Tx] satisfies it.
type Queue interface {
	InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	JobCancelTx(ctx context.Context, tx pgx.Tx, jobID int64) (*rivertype.JobRow, error)
}

// Plan validates m for viewer and lists the runs it would create.
func (p *Service) Plan(ctx context.Context, v store.Viewer, m Manifest) (Plan, error) {
	plan := Plan{Manifest: m}
	if errs := m.Validate(); len(errs) > 0 {
		return plan, errs
	}
	ds, errs, err := p.planDataset(ctx, v, m)
	if err != nil {
		return plan, err
	}
	plan.Dataset = ds
	items := ds.ItemCount
	if m.Load.MaxRequests > 0 && m.Load.MaxRequests < items {
		items = m.Load.MaxRequests
	}
	items, search, serr := planSearch(m, items)
	errs = append(errs, serr...)
	if plan.Search = search; search != nil {
		s := *m.Search
		s.Plan = search
		plan.Manifest.Search = &s
	}
	for _, c := range m.Configurations() {
		runs, ferr, err := p.planTarget(ctx, m, c, items)
		if err != nil {
			return plan, err
		}
		if ferr != nil {
			errs = append(errs, *ferr)
			continue
		}
		plan.Runs = append(plan.Runs, runs...)
	}
	plan.Runs = counterbalance(plan.Runs, m.Runs())
	if len(errs) == 0 {
		fp, ferrs, err := p.planFewShot(ctx, m, ds, items)
		if err != nil {
			return plan, err
		}
		errs = append(errs, ferrs...)
		plan.fewShot = fp
	}
	if m.Scorer == ScorerJudge && m.ScorerOptions != nil && m.ScorerOptions.Judge != nil {
		jerrs, err := p.checkJudgeTarget(ctx, "scorer_options.judge", *m.ScorerOptions.Judge)
		if err != nil {
			return plan, err
		}
		errs = append(errs, jerrs...)
	}
	if len(errs) > 0 {
		return plan, errs
	}
	return plan, nil
}

// counterbalance orders a benchmark's repeats across its targets in
// alternating blocks — A B C | C B A | A B C … — instead of each target's
// repeats back to back (docs/concepts.md#drift). A server that speeds up
// or slows down steadily while the benchmark runs then shifts every
// target alike: in each pair of blocks a target's mean position is the
// same, so a linear drift cancels out of the comparison (the ABBA
// counterbalancing of repeated-measures designs; Kirk, Experimental
// Design, 4th ed., § 3.4), where back to back it would be read as a
// difference between the targets. runs holds each target's repeats
// consecutively, repeats of them.
func counterbalance(runs []PlannedRun, repeats int) []PlannedRun {
	if repeats < 2 || len(runs)%repeats != 0 {
		return runs
	}
	targets := len(runs) / repeats
	out := make([]PlannedRun, 0, len(runs))
	for rep := range repeats {
		for j := range targets {
			t := j
			if rep%2 == 1 {
				t = targets - 1 - j
			}
			out = append(out, runs[t*repeats+rep])
		}
	}
	return out
}

// planDataset finds the dataset m names (or describes the synthetic one
// it generates); an error for the manifest when the viewer has no such
// dataset.
func (p *Service) planDataset(ctx context.Context, v store.Viewer, m Manifest) (store.Dataset, Errors, error) {
	var ds store.Dataset
	var err error
	if m.Synthetic != nil {
		// Generated with the benchmark, in Create's transaction.
		ds = store.Dataset{Name: m.Name, Format: synth.Format, ItemCount: syntheticItems(*m.Synthetic)}
	} else if m.Dataset.ID > 0 {
		ds, err = p.Store.DatasetByID(ctx, v, m.Dataset.ID)
	} else {
		ds, err = p.Store.DatasetByName(ctx, v, m.Dataset.Name)
	}
	switch {
	case errors.Is(err, store.ErrNotFound) || (err == nil && ds.DeletedAt != nil):
		ref := fmt.Sprintf("%q", m.Dataset.Name)
		if m.Dataset.ID > 0 {
			ref = fmt.Sprint(m.Dataset.ID)
		}
		return ds, Errors{valid.E("dataset", "manifest.no_dataset", "Ref", ref)}, nil
	case err != nil:
		return ds, nil, err
	}
	return ds, nil, nil
}

// planTarget lists the runs of one target (one per repeat) of items
// each; a field error instead when its model, hardware or queue will not
// do.
func (p *Service) planTarget(ctx context.Context, m Manifest, c Configuration, items int) ([]PlannedRun, *FieldError, error) {
	t, path := c.Target, c.Path
	model, err := p.Store.ModelByName(ctx, t.Model)
	if errors.Is(err, store.ErrNotFound) || (err == nil && model.RetiredAt != nil) {
		fe := valid.E(path+".model", "manifest.no_model", "Model", strconv.Quote(t.Model))
		return nil, &fe, nil
	}
	if err != nil {
		return nil, nil, err
	}
	hw, err := p.Store.HardwareProfileBySlug(ctx, t.Hardware)
	if errors.Is(err, store.ErrNotFound) {
		fe := valid.E(path+".hardware", "manifest.no_hardware", "Hardware", strconv.Quote(t.Hardware))
		return nil, &fe, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if err := jobs.CheckQueue(jobs.Queue(t.Hardware, t.Runtime)); err != nil {
		return nil, &FieldError{Path: path, Message: err.Error()}, nil
	}
	need := conclude.EstimateMemoryGB(model.ParamsB, model.Quantization)
	if model.MemoryGB != nil {
		need = *model.MemoryGB
	}
	capacity := float64(hw.GPUCount) * float64(hw.GPUMemoryBytes) / 1e9
	// The simulated runtime loads nothing, and a remote provider's
	// model runs elsewhere, so memory does not limit them.
	if t.Runtime != "sim" && !t.Remote && hw.GPUCount > 0 && need > capacity {
		fe := valid.E(path, "manifest.too_little_memory", "Model", t.Model, "Need", fmt.Sprintf("%.1f", need), "Hardware", t.Hardware, "Has", fmt.Sprintf("%.1f", capacity))
		return nil, &fe, nil
	}
	engine, faults := t.EngineSettings(hw.GPUCount)
	if len(faults) > 0 {
		fe := c.settingErrors(faults)[0]
		return nil, &fe, nil
	}
	n, err := p.Store.CountServingAgents(ctx, t.Hardware, t.Runtime, jobs.ProtocolVersion, p.StaleAfter)
	if err != nil {
		return nil, nil, err
	}
	k, seed, exemplars := fewShotOf(m, t)
	var rung *int
	if m.Search != nil {
		rung = new(int)
	}
	low, high := EstimateRun(m, items)
	var runs []PlannedRun
	for rep := range m.Runs() {
		runs = append(runs, PlannedRun{Model: t.Model, Runtime: t.Runtime, Hardware: t.Hardware,
			Queue: jobs.Queue(t.Hardware, t.Runtime), MemoryGB: need, CapacityGB: capacity, Items: items,
			WaitingForAgent: n == 0, Repeat: rep, FewShotK: k, FewShotSeed: seed, FewShotExemplars: exemplars, Engine: engine,
			Target: c.Index, SearchRung: rung, EstimateLow: low.Seconds(), EstimateHigh: high.Seconds(),
			modelID: model.ID, adapterOf: adapterBase(model)})
	}
	return runs, nil, nil
}

// Created is a benchmark just created.
type Created struct {
	BenchmarkID int64        `json:"benchmark_id"`
	Runs        []PlannedRun `json:"runs"`
}

// Create plans m and, in one transaction, inserts the benchmark, its runs
// and their River jobs: all of it or nothing.
func (p *Service) Create(ctx context.Context, v store.Viewer, m Manifest) (Created, error) {
	plan, err := p.Plan(ctx, v, m)
	if err != nil {
		return Created{}, err
	}
	var out Created
	err = p.Store.InTxWith(ctx, func(tx pgx.Tx, q *store.Queries) error {
		out, err = p.CreateTx(ctx, tx, q, v, plan)
		return err
	})
	return out, err
}

// CreateTx inserts a planned benchmark, its runs and their River jobs in
// the caller's transaction (a fleet creates several benchmarks in one).
func (p *Service) CreateTx(ctx context.Context, tx pgx.Tx, q *store.Queries, v store.Viewer, plan Plan) (Created, error) {
	m := plan.Manifest
	snapshot, err := json.Marshal(m)
	if err != nil {
		return Created{}, err
	}
	out := Created{Runs: make([]PlannedRun, 0, len(plan.Runs))}
	err = func() error {
		if m.Synthetic != nil {
			up, err := (&ingest.Uploader{Store: p.Store}).UploadTx(ctx, tx, q, ingest.Source{},
				ingest.Request{Kind: ingest.Generated, Viewer: v, Name: "synthetic for " + m.Name, Spec: *m.Synthetic})
			if err != nil {
				return err
			}
			plan.Dataset = up.Dataset
		}
		id, err := q.CreateBenchmark(ctx, v.UserID, m.Name, plan.Dataset.ID, snapshot)
		if err != nil {
			return err
		}
		out.BenchmarkID = id
		var refs []simRef // read once, for the first sim run that needs them
		for _, r := range plan.Runs {
			r, err := p.insertRun(ctx, tx, q, plan, id, r, &refs)
			if err != nil {
				return err
			}
			out.Runs = append(out.Runs, r)
		}
		return nil
	}()
	return out, err
}

// insertRun inserts planned run r of benchmark id, its few-shot prompts,
// its River job and its simulated answers, and returns it with its id.
func (p *Service) insertRun(ctx context.Context, tx pgx.Tx, q *store.Queries, plan Plan, id int64, r PlannedRun, refs *[]simRef) (PlannedRun, error) {
	m := plan.Manifest
	runID, err := q.CreateRun(ctx, store.NewRun{BenchmarkID: id, ModelID: r.modelID, Runtime: r.Runtime,
		HardwareProfile: r.Hardware, WaitingForAgent: r.WaitingForAgent, Total: r.Items * m.Sampling.Samples(),
		Samples: m.Sampling.Samples(), Repeat: r.Repeat, FewShotK: r.FewShotK, FewShotSeed: r.FewShotSeed,
		FewShotExemplars: r.FewShotExemplars, Engine: r.Engine, SearchRung: r.SearchRung})
	if err != nil {
		return r, err
	}
	// A target on a remote API's runtime is the provider's model, paid
	// by the token: the run keeps the provider's price as a fleet's
	// "provider:model" run does (the fleet records those itself), so every
	// surface costs it from its token prices (docs/fleets.md#remote-providers).
	if slices.Contains(jobs.Dialects, r.Runtime) && (r.Target >= len(m.Targets) || !m.Targets[r.Target].Remote) {
		if _, err := q.RecordRunProvider(ctx, runID, r.Runtime, r.Model); err != nil {
			return r, fmt.Errorf("provider of run %d: %w", runID, err)
		}
	}
	if r.FewShotK > 0 {
		if plan.fewShot == nil {
			return r, fmt.Errorf("run %d: %d-shot prompts were not planned", runID, r.FewShotK)
		}
		if _, err := q.CopyRunPrompts(ctx, runID, plan.fewShot.prompts(r.FewShotK, r.FewShotSeed, r.FewShotExemplars, r.Items)); err != nil {
			return r, fmt.Errorf("few-shot prompts of run %d: %w", runID, err)
		}
	}
	res, err := p.River.InsertTx(ctx, tx, jobs.RunArgs{
		ProtocolVersion: jobs.ProtocolVersion, RunID: runID, BenchmarkID: id, DatasetID: plan.Dataset.ID,
		Model: r.Model, AdapterOf: r.adapterOf, Runtime: r.Runtime, HardwareProfile: r.Hardware,
		Load: r.load(m.Load), Sampling: m.Sampling, SLO: m.SLO, Engine: r.Engine,
	}, nil)
	if err != nil {
		return r, fmt.Errorf("queue run %d: %w", runID, err)
	}
	if err := q.SetRunJob(ctx, runID, res.Job.ID); err != nil {
		return r, err
	}
	if err := p.writeSimAnswers(ctx, q, m, plan, r, id, runID, refs); err != nil {
		return r, err
	}
	r.RunID, r.State = runID, "queued"
	return r, nil
}

// load is the run's load profile: the benchmark's, its requests capped
// at the rung's in a search.
func (r PlannedRun) load(l jobs.LoadProfile) jobs.LoadProfile {
	if r.SearchRung != nil {
		l.MaxRequests = r.Items
	}
	return l
}

// planSearch is the search's schedule over m's configurations, full being
// a configuration's requests in the full grid, and the requests of rung
// 0's runs (full without a search).
func planSearch(m Manifest, full int) (int, *conclude.SearchPlan, Errors) {
	if m.Search == nil {
		return full, nil, nil
	}
	sp, ok := conclude.PlanSearch(m.countConfigurations(), m.Search.BudgetRuns, full, searchLeast(m.Load))
	if !ok {
		return full, nil, Errors{valid.E("search.budget_runs", "manifest.search_budget", "N", m.countConfigurations())}
	}
	return sp.Rungs[0].Requests, &sp, nil
}

// syntheticItems is how many items a valid spec generates.
func syntheticItems(s synth.Spec) int {
	s.Normalize()
	lines, errs := s.Validate()
	if len(errs) > 0 {
		return 0
	}
	switch {
	case s.Kind == synth.KindSharedPrefix:
		return s.Prefixes * s.SuffixesPerPrefix
	case s.Kind == synth.KindTrace && s.Trace != "":
		return len(lines)
	case s.Kind == synth.KindMultiTurn && s.Turns.Kind != synth.DistFixed:
		n := 0
		for range s.Items(nil) {
			n++
		}
		return n
	case s.Kind == synth.KindMultiTurn:
		return s.Count * s.Turns.Value
	}
	return s.Count
}

// adapterBase is the base model a LoRA adapter is served on, "" for a
// full model (a fine-tune included: it is launched as itself).
func adapterBase(m store.Model) string {
	if !m.Adapter {
		return ""
	}
	return m.BaseModelName
}
