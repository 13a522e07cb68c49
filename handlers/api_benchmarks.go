package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/compare"
)

// Benchmarks plans and creates benchmarks; *bench.Service satisfies it.
type Benchmarks interface {
	Plan(ctx context.Context, v store.Viewer, m bench.Manifest) (bench.Plan, error)
	Create(ctx context.Context, v store.Viewer, m bench.Manifest) (bench.Created, error)
	CancelRun(ctx context.Context, v store.Viewer, benchmarkID, runID int64) error
	CancelBenchmark(ctx context.Context, v store.Viewer, benchmarkID int64) (int, error)
	RetryRun(ctx context.Context, v store.Viewer, benchmarkID, runID int64) error
	Rescore(ctx context.Context, v store.Viewer, benchmarkID, runID int64, scorer string, opts *bench.ScorerOptions) (bench.Rescoring, error)
	ImportRun(ctx context.Context, v store.Viewer, in store.NewImport, file io.Reader, rest func(*store.NewImport) error) (store.ImportedRun, error)
	StartJudge(ctx context.Context, v store.Viewer, req bench.JudgeRequest) (bench.JudgeStarted, error)
	QuickStart(ctx context.Context, v store.Viewer, qs bench.QuickStart) (bench.Manifest, error)
	SearchRecordOf(ctx context.Context, benchmarkID int64) (*bench.SearchRecord, error)
}

type benchmarkStore interface {
	BenchmarkByID(ctx context.Context, v store.Viewer, id int64) (store.Benchmark, error)
	EstimateOf(ctx context.Context, v store.Viewer, b store.Benchmark, staleAfter time.Duration) (store.BenchmarkEstimate, error)
	ListBenchmarks(ctx context.Context, v store.Viewer) ([]store.BenchmarkSummary, error)
	ActiveRuns(ctx context.Context, v store.Viewer) ([]store.ActiveRun, error)
	BenchmarkOfRun(ctx context.Context, runID int64) (int64, error)
	BenchmarkManifest(ctx context.Context, id int64) (json.RawMessage, int64, error)
}

// apiCreateBenchmark takes a manifest in JSON or YAML, or a quick start
// ({"model_id", "dataset_id"}: the benchmark service chooses the rest). With
// ?dry_run=true it validates and returns the plan without creating
// anything.
func (s *server) apiCreateBenchmark(c *fiber.Ctx) error {
	quick := bench.IsQuickStart(c.Body())
	m, err := s.apiManifest(c, quick)
	if err != nil {
		return manifestErrors(c, err)
	}
	if c.QueryBool("dry_run") {
		plan, err := s.Benchmarks.Plan(c.UserContext(), viewer(c), m)
		if err != nil {
			return manifestErrors(c, err)
		}
		out := apiBenchmarkDryRun{DryRun: true, DatasetID: plan.Dataset.ID, Runs: plan.Runs, Search: plan.Search}
		if quick {
			out.Manifest = &m
		}
		return c.JSON(out)
	}
	created, err := s.Benchmarks.Create(c.UserContext(), viewer(c), m)
	if err != nil {
		return manifestErrors(c, err)
	}
	return s.apiBenchmarkCreated(c, created, m, quick)
}

// apiBenchmarkDryRun is what a create with ?dry_run=true answers: the runs
// it would queue, and for a quick start the manifest made of it.
type apiBenchmarkDryRun struct {
	DryRun    bool               `json:"dry_run"`
	DatasetID int64              `json:"dataset_id"`
	Runs      []bench.PlannedRun `json:"runs"`
	Manifest  *bench.Manifest    `json:"manifest,omitempty"`
	// Search is a budgeted search's schedule; Runs is then its rung 0.
	Search *conclude.SearchPlan `json:"search,omitempty"`
}

// apiManifest is the manifest the request's body asks for: one as such,
// or the one the benchmark service makes of a quick start.
func (s *server) apiManifest(c *fiber.Ctx, quick bool) (bench.Manifest, error) {
	if !quick {
		return bench.Decode(bytes.NewReader(c.Body()))
	}
	qs, err := bench.DecodeQuickStart(bytes.NewReader(c.Body()))
	if err != nil {
		return bench.Manifest{}, err
	}
	return s.Benchmarks.QuickStart(c.UserContext(), viewer(c), qs)
}

// manifestErrors answers a manifest's field errors with 422 and their
// list; any other error goes on to handleError.
func manifestErrors(c *fiber.Ctx, err error) error {
	var ferrs bench.Errors
	if errors.As(err, &ferrs) {
		return c.Status(fiber.StatusUnprocessableEntity).JSON(apiPathErrors{Errors: ferrs})
	}
	return err
}

// apiBenchmarkCreated answers a create: the benchmark's id, its status,
// when it started and was created, its runs and their ids; for a quick
// start also the manifest the benchmark service made of it.
func (s *server) apiBenchmarkCreated(c *fiber.Ctx, created bench.Created, m bench.Manifest, quick bool) error {
	b, err := s.Store.BenchmarkStatusByID(c.UserContext(), viewer(c), created.BenchmarkID, s.AgentStaleAfter)
	if err != nil {
		return err
	}
	ids := make([]int64, len(created.Runs))
	for i, r := range created.Runs {
		ids[i] = r.RunID
	}
	out := apiCreatedBenchmark{BenchmarkID: created.BenchmarkID, Name: b.Name, Status: b.Status, StartedAt: b.StartedAt,
		CreatedAt: b.CreatedAt, RunIDs: ids, Runs: created.Runs, DatasetID: b.DatasetID, DatasetName: b.DatasetName}
	if quick {
		out.Manifest = &m
	}
	return c.Status(fiber.StatusCreated).JSON(out)
}

type apiRun struct {
	// Categories is the quality per category of the dataset's items
	// (GET /runs/:id only; absent when the items have none).
	Categories []score.CategoryFigure `json:"categories,omitempty"`
	ID         int64                  `json:"run_id"`
	// FleetRunID is the run's id in its fleet ({fleet}-{submitted}-{hash});
	// absent for runs outside fleets.
	FleetRunID string `json:"fleet_run_id,omitempty"`
	// FewShotK and FewShotSeed are the run's few-shot setting (absent: the
	// dataset's own prompts).
	FewShotK    int   `json:"fewshot_k,omitempty"`
	FewShotSeed int64 `json:"fewshot_seed,omitempty"`
	// FewShotExemplars names the fixed example set the run asks with
	// (absent for drawn examples).
	FewShotExemplars string `json:"fewshot_exemplars,omitempty"`
	// Engine is the target's engine settings (absent: the runtime's
	// defaults; docs/benchmarks.md#engine-settings).
	Engine          jobs.Engine `json:"engine,omitempty"`
	Model           string      `json:"model"`
	Runtime         string      `json:"runtime"`
	Hardware        string      `json:"hardware"`
	Mode            string      `json:"mode"`
	State           string      `json:"state"`
	WaitingForAgent bool        `json:"waiting_for_agent"`
	Agent           string      `json:"agent"`
	// Progress is the per cent of the run's requests done, rounded down.
	Progress     int   `json:"progress"`
	Total        int   `json:"total"`
	Completed    int   `json:"completed"`
	Errors       int   `json:"errors"`
	OutputTokens int64 `json:"output_tokens"`
	// Throughput is output tokens/s: live while running, over the whole
	// measured window once finished.
	Throughput   float64 `json:"throughput"`
	RequestsPerS float64 `json:"requests_per_s"`
	// ETASeconds is a running run's time left, rounded up to whole
	// seconds; null when it is not running or has no estimate yet.
	ETASeconds *int64     `json:"eta_seconds"`
	Resumed    int        `json:"resumed"`
	StoppedBy  string     `json:"stopped_by,omitempty"`
	Error      string     `json:"error,omitempty"`
	Attempt    int        `json:"attempt"`
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	// The finished run's figures (docs/metrics.md#definitions): null
	// until it finishes, and null where not measured (no GPU readings, no
	// price, no launched runtime).
	// Execution is the code execution of a run scored by humaneval, mbpp
	// or exec: its state, pass@k by k and answers by class; absent for
	// other runs.
	Execution *apiExecution `json:"execution,omitempty"`
	// Samples is the answers asked for each item.
	Samples    int              `json:"samples"`
	Summary    *jobs.RunSummary `json:"summary"`
	GPUSummary json.RawMessage  `json:"gpu_summary"`
	// NodeSummary is the node's CPU and memory and the runtime's process
	// tree (jobs.NodeSummary); null when not measured.
	NodeSummary     json.RawMessage `json:"node_summary"`
	CostPer1MTokens *float64        `json:"cost_per_1m_tokens"`
	LoadTimeMs      *float64        `json:"load_time_ms"`
	RuntimeLog      string          `json:"runtime_log"`
	// Quality: the scorer and the options it ran with, how many items it
	// scored, the mean item score with its 95 % bootstrap interval (null
	// until scored) and, for bleu, the corpus BLEU (sacreBLEU's
	// corpus_score / 100; null for other scorers).
	Scorer        string          `json:"scorer"`
	ScorerOptions json.RawMessage `json:"scorer_options,omitempty"`
	Scored        int             `json:"scored"`
	Quality       *float64        `json:"quality"`
	QualityLo     *float64        `json:"quality_lo"`
	QualityHi     *float64        `json:"quality_hi"`
	CorpusBLEU    *float64        `json:"corpus_bleu"`
	// Regression is null unless the run is significantly worse than the
	// previous completed run of its target (the most telling way it is;
	// Regressions lists every way).
	Regression  *store.Regression  `json:"regression"`
	Regressions []store.Regression `json:"regressions,omitempty"`
}

// withFigures adds a run's stored summaries to its API form.
func (a apiRun) withFigures(r store.RunFigures) apiRun {
	f := compare.NewFigures(r)
	if f.HasSummary {
		var s jobs.RunSummary
		if json.Unmarshal(r.Summary, &s) == nil {
			a.Summary = &s
		}
	}
	if len(r.GPUSummary) > 0 {
		a.GPUSummary = r.GPUSummary
	}
	if len(r.NodeSummary) > 0 {
		a.NodeSummary = r.NodeSummary
	}
	// The run's cost is the one its conclusions and the fleet report give
	// it (conclude.RunCostPer1M).
	a.CostPer1MTokens, a.LoadTimeMs, a.RuntimeLog = conclude.RunCostPer1M(r), r.LoadTimeMs, r.RuntimeLog
	return a
}

// apiRunsWithFigures is a benchmark's runs in their API form with their
// figures, read in one query.
func (s *server) apiRunsWithFigures(c *fiber.Ctx, runs []store.Run) ([]apiRun, error) {
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	crs, err := s.Store.RunFiguresByID(c.UserContext(), viewer(c), ids)
	if err != nil {
		return nil, err
	}
	if err := runFiguresWithRuntimeStates(c.UserContext(), s.Store, crs); err != nil {
		return nil, err
	}
	out := make([]apiRun, len(crs))
	for i, r := range crs {
		out[i] = toAPIRun(r.Run).withFigures(r)
	}
	return out, nil
}

// apiRunSteps is a sweep's steps, each summarised on its own, and its
// saturation point (a length sweep's: where its runtime began to queue
// and to preempt); no steps for other load profiles or an unfinished run.
func (s *server) apiRunSteps(c *fiber.Ctx) error {
	_, run, err := s.runOf(c)
	if err != nil {
		return err
	}
	runs, err := s.apiRunsWithFigures(c, []store.Run{run})
	if err != nil {
		return err
	}
	out := apiRunSteps{RunID: run.ID, State: run.State, Steps: []jobs.StepSummary{}}
	if len(runs) == 1 && runs[0].Summary != nil && runs[0].Summary.Steps != nil {
		out.Steps, out.Saturation, out.LengthLimits = runs[0].Summary.Steps, runs[0].Summary.Saturation, runs[0].Summary.LengthLimits
	}
	return c.JSON(out)
}

// apiGetRun is one run with its figures.
func (s *server) apiGetRun(c *fiber.Ctx) error {
	_, run, err := s.runOf(c)
	if err != nil {
		return err
	}
	runs, err := s.apiRunsWithFigures(c, []store.Run{run})
	if err != nil {
		return err
	}
	if len(runs) != 1 {
		return noSuch("run", nil)
	}
	cats, err := s.Store.RunCategoryScores(c.UserContext(), run.ID)
	if err != nil {
		return err
	}
	if len(cats) > 0 {
		runs[0].Categories = score.ByCategory(run.ID, cats)
	}
	return c.JSON(runs[0])
}

// apiExecution is a run's code execution in the API.
type apiExecution struct {
	State  string             `json:"state"`
	Error  string             `json:"error,omitempty"`
	PassAt map[string]float64 `json:"pass_at"`
	Counts map[string]int     `json:"counts"`
}

func toAPIRun(r store.Run) apiRun {
	a := toAPIRunBase(r)
	a.Samples = max(r.Samples, 1)
	if r.Exec.State != "" {
		a.Execution = &apiExecution{State: r.Exec.State, Error: r.Exec.Error, PassAt: r.Exec.PassAt, Counts: r.Exec.Counts}
	}
	return a
}

func toAPIRunBase(r store.Run) apiRun {
	return apiRun{ID: r.ID, FleetRunID: r.FleetRunID, FewShotK: r.FewShotK, FewShotSeed: r.FewShotSeed, FewShotExemplars: r.FewShotExemplars, Engine: r.Engine, Model: r.ModelName, Runtime: r.Runtime, Hardware: r.HardwareProfile, Mode: r.Mode, State: r.State,
		WaitingForAgent: r.WaitingForAgent, Agent: r.AgentName, Progress: r.Progress(), Total: r.Total, Completed: r.Completed,
		Errors: r.Errors, OutputTokens: r.OutputTokens, Throughput: r.Throughput, RequestsPerS: r.RequestsPerS,
		ETASeconds: r.ETA(), Resumed: r.Resumed, StoppedBy: r.StoppedBy, Error: r.Error, Attempt: r.Attempt + 1,
		CreatedAt: r.CreatedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		Scorer: r.Scorer, ScorerOptions: r.ScorerOptions, Scored: r.Scored, Quality: r.Quality, QualityLo: r.QualityLo,
		QualityHi: r.QualityHi, CorpusBLEU: r.CorpusBLEU, Regression: r.Regression(), Regressions: r.Regressions}
}

func (s *server) apiGetBenchmark(c *fiber.Ctx) error {
	id, err := idParam(c, "id", "benchmark")
	if err != nil {
		return err
	}
	b, err := s.Store.BenchmarkByID(c.UserContext(), viewer(c), id)
	if err != nil {
		return lookup("benchmark", err)
	}
	st, err := s.Store.BenchmarkStatusByID(c.UserContext(), viewer(c), id, s.AgentStaleAfter)
	if err != nil {
		return err
	}
	runs, err := s.apiRunsWithFigures(c, b.Runs)
	if err != nil {
		return err
	}
	out := apiBenchmark{BenchmarkID: b.ID, Name: b.Name, DatasetID: b.DatasetID, Dataset: b.DatasetName,
		CreatedAt: b.CreatedAt, Visibility: b.Visibility, Owner: b.OwnerEmail, Writable: b.Writable(viewer(c)),
		Completed: st.Completed, Total: st.Total, Errors: st.Errors, StartedAt: st.StartedAt, FinishedAt: st.FinishedAt,
		Runs: runs}
	out.apiBenchmarkProgress = toAPIBenchmarkProgress(st.Estimate)
	if out.Search, err = s.Benchmarks.SearchRecordOf(c.UserContext(), id); err != nil {
		return err
	}
	return c.JSON(out)
}

// apiRunAction is cancel/retry of one run, or cancel of a benchmark.
func (s *server) apiRunAction(action string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		// :id is the benchmark for "cancel-benchmark", else the run, whose
		// benchmark is looked up.
		id, err := idParam(c, "id", "benchmark or run")
		if err != nil {
			return err
		}
		benchmarkID, runID := id, int64(0)
		if action != "cancel-benchmark" {
			runID = id
			if benchmarkID, err = s.Store.BenchmarkOfRun(c.UserContext(), runID); err != nil {
				return lookup("run", err)
			}
		}
		n, err := s.controlRuns(c, action, benchmarkID, runID)
		switch {
		case errors.Is(err, bench.ErrRunState):
			return fiber.NewError(fiber.StatusConflict, err.Error())
		case err != nil:
			return lookup("benchmark or run", err)
		}
		return c.JSON(apiChanged{Changed: n})
	}
}

func (s *server) apiListModels(c *fiber.Ctx) error {
	ms, err := s.Store.ListModels(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]apiModel, len(ms))
	for i, m := range ms {
		mem := conclude.EstimateMemoryGB(m.ParamsB, m.Quantization)
		if m.MemoryGB != nil {
			mem = *m.MemoryGB
		}
		out[i] = apiModel{ModelID: m.ID, Name: m.Name, DisplayName: m.DisplayName, Family: m.Family,
			ParamsB: m.ParamsB, Quantization: m.Quantization, ContextLength: m.ContextLength, License: m.License,
			MemoryGB: mem, MemoryEstimated: m.MemoryGB == nil, BaseModelID: m.BaseModelID, Adapter: m.Adapter,
			Retired: m.RetiredAt != nil}
	}
	return c.JSON(apiModels{Models: out})
}

func (s *server) apiListAgents(c *fiber.Ctx) error {
	rows, err := s.agentRows(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]apiAgent, len(rows))
	for i, r := range rows {
		out[i] = apiAgent{AgentID: r.Agent.ID, Name: r.Agent.Name, Host: r.Agent.Host, Version: r.Agent.Version,
			ProtocolVersion: r.Agent.ProtocolVersion, Hardware: r.Agent.Profile, Runtimes: r.Agent.Runtimes,
			State: r.Status, LastHeartbeatAt: r.Agent.LastHeartbeatAt, CurrentRun: r.Agent.CurrentRun}
	}
	return c.JSON(apiAgents{Agents: out})
}
