package handlers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/home"
	"github.com/ruckus/ruckus/views/said"
)

// agentListStore lists the agents (the agents table of the start page and
// the admin page).
type agentListStore interface {
	ListAgents(ctx context.Context) ([]store.Agent, error)
}

// homeStore is what the start page reads.
type homeStore interface {
	HomeCounts(ctx context.Context, v store.Viewer) (store.HomeCounts, error)
	RecentBenchmarks(ctx context.Context, v store.Viewer, limit int) ([]store.Benchmark, error)
	StarterDatasets(ctx context.Context, v store.Viewer) ([]store.Dataset, error)
	SmallestModels(ctx context.Context, n int) ([]store.Model, error)
	AgentsServing(ctx context.Context, runtime string, protocol int, staleAfter time.Duration) ([]store.ServingAgent, error)
	QueueDepths(ctx context.Context) ([]store.QueueDepth, error)
	OldestWaitingRun(ctx context.Context) (store.WaitingRun, error)
}

// recentBenchmarks is how many finished benchmarks the start page lists.
const recentBenchmarks = 5

func (s *server) agentRows(ctx context.Context) ([]home.AgentRow, error) {
	agents, err := s.Store.ListAgents(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	rows := make([]home.AgentRow, len(agents))
	for i, a := range agents {
		rows[i] = home.AgentRow{Agent: a, Status: a.Status(now, s.AgentStaleAfter, jobs.ProtocolVersion), Ago: now.Sub(a.LastHeartbeatAt)}
	}
	return rows, nil
}

func (s *server) showHomePage(c *fiber.Ctx) error {
	ctx, v, u := c.UserContext(), viewer(c), currentUser(c)
	d := home.Data{Name: u.Name, Admin: v.Admin}
	var err error
	if d.Counts, err = s.Store.HomeCounts(ctx, v); err != nil {
		return err
	}
	if d.Running, err = s.Store.ActiveRuns(ctx, v); err != nil {
		return err
	}
	recent, err := s.Store.RecentBenchmarks(ctx, v, recentBenchmarks)
	if err != nil {
		return err
	}
	for _, b := range recent {
		// A benchmark whose conclusions are still being computed says so
		// (conclude.Weighed.Summary), as its verdict does.
		j, err := conclude.WeighBenchmark(ctx, s.Store, v, b, true)
		if err != nil {
			return err
		}
		d.Recent = append(d.Recent, home.Recent{ID: b.ID, Name: b.Name, Dataset: b.DatasetName, Runs: len(b.Runs),
			Failed: len(j.Left), CreatedAt: b.CreatedAt, Verdict: said.Word(ctx, j.Summary())})
	}
	if d.Counts.Benchmarks == 0 {
		f, err := s.firstSteps(ctx, v)
		if err != nil {
			return err
		}
		d.First = &f.steps
	}
	if d.Agents, err = s.agentRows(ctx); err != nil {
		return err
	}
	if v.Admin {
		f := home.AgentHealth{}
		for _, r := range d.Agents {
			switch r.Status {
			case store.AgentOnline:
				f.Online++
			case store.AgentStale:
				f.Stale++
			default:
				f.Other++
			}
		}
		if f.Queues, err = s.Store.QueueDepths(ctx); err != nil {
			return err
		}
		w, err := s.Store.OldestWaitingRun(ctx)
		switch {
		case err == nil:
			f.Oldest = &w
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		d.AgentHealth = &f
	}
	return render(c, fiber.StatusOK, home.Page(d))
}

func (s *server) agentsFragment(c *fiber.Ctx) error {
	rows, err := s.agentRows(c.UserContext())
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, home.Agents(rows))
}

// runningFragment is the start page's live "Running now", polled every 2 s
// while anything runs. When the last run has finished, the page is
// reloaded so the benchmark shows among the recent ones with its verdict.
func (s *server) runningFragment(c *fiber.Ctx) error {
	active, err := s.Store.ActiveRuns(c.UserContext(), viewer(c))
	if err != nil {
		return err
	}
	if len(active) == 0 && c.Get("HX-Request") == "true" {
		c.Set("HX-Refresh", "true")
	}
	return render(c, fiber.StatusOK, home.Running(active))
}

// firstBenchmark is what the one-click first benchmark would launch, and
// the three steps as the start page shows them.
type firstBenchmark struct {
	steps   home.FirstSteps
	dataset store.Dataset
	models  []store.Model
	agent   store.ServingAgent
}

// firstSteps finds a starter dataset, two models and a live agent serving
// the simulated runtime; each step missing says what and where to fix it.
func (s *server) firstSteps(ctx context.Context, v store.Viewer) (firstBenchmark, error) {
	var f firstBenchmark
	loc := i18n.From(ctx)
	ds, err := s.Store.StarterDatasets(ctx, v)
	if err != nil {
		return f, err
	}
	if len(ds) > 0 {
		f.dataset = ds[0]
		text := loc.N("home_steps.dataset", f.dataset.ItemCount, "Name", f.dataset.Name)
		if f.dataset.DefaultScorer != "" {
			text = loc.N("home_steps.dataset_scored", f.dataset.ItemCount, "Name", f.dataset.Name, "Scorer", f.dataset.DefaultScorer)
		}
		f.steps.Dataset = home.Step{Done: true, Text: text}
	} else {
		f.steps.Dataset = home.Step{Fix: loc.T("home_steps.no_dataset"), FixURL: "/datasets", FixLabel: loc.T("home_steps.upload_dataset")}
	}
	if f.models, err = s.Store.SmallestModels(ctx, 2); err != nil {
		return f, err
	}
	switch {
	case len(f.models) == 2:
		f.steps.Models = home.Step{Done: true, Text: loc.T("home_steps.models", "A", f.models[0].Name, "B", f.models[1].Name)}
	case v.Admin:
		f.steps.Models = home.Step{Fix: loc.N("home_steps.models_missing", len(f.models)),
			FixURL: "/admin/models", FixLabel: loc.T("home_steps.add_model")}
	default:
		f.steps.Models = home.Step{Fix: loc.N("home_steps.models_missing_ask", len(f.models))}
	}
	agents, err := s.Store.AgentsServing(ctx, "sim", jobs.ProtocolVersion, s.AgentStaleAfter)
	if err != nil {
		return f, err
	}
	if len(agents) > 0 {
		f.agent = agents[0]
		f.steps.Runtime = home.Step{Done: true, Text: loc.T("home_steps.agent", "Name", f.agent.Name, "Profile", f.agent.Profile)}
	} else {
		f.steps.Runtime = home.Step{Fix: loc.T("home_steps.no_agent")}
		if v.Admin {
			f.steps.Runtime.FixURL, f.steps.Runtime.FixLabel = "/admin/agents", loc.T("home_steps.see_agents")
		}
	}
	f.steps.Ready = f.steps.Dataset.Done && f.steps.Models.Done && f.steps.Runtime.Done
	if f.steps.Ready {
		f.steps.Summary = fmt.Sprintf("%s vs %s", shortModel(f.models[0].Name), shortModel(f.models[1].Name))
	}
	return f, nil
}

// shortModel drops a model name's organisation: "Qwen2.5-0.5B-Instruct".
func shortModel(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 && i < len(name)-1 {
		return name[i+1:]
	}
	return name
}

// firstManifest is the first benchmark: both models on the simulated
// runtime over the starter dataset, four requests at a time, short
// answers, scored as the dataset suggests — about two minutes. Each
// model runs twice, in the order A B B A (bench's counterbalance), so
// its speed is weighed on the spread between runs, which holds the drift
// of the machine between them (docs/concepts.md#drift), not on one run's
// own spread.
func firstManifest(f firstBenchmark) bench.Manifest {
	zero := 0.0
	scorer := f.dataset.DefaultScorer
	if !slices.Contains(bench.Scorers, scorer) {
		scorer = ""
	}
	m := bench.Manifest{
		Name:     fmt.Sprintf("First benchmark: %s vs %s", shortModel(f.models[0].Name), shortModel(f.models[1].Name)),
		Dataset:  bench.DatasetRef{ID: f.dataset.ID},
		Load:     jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 4},
		Sampling: jobs.Sampling{Temperature: &zero, MaxTokens: 128},
		Scorer:   scorer,
		Repeats:  2,
	}
	for _, model := range f.models {
		m.Targets = append(m.Targets, bench.Target{Model: model.Name, Runtime: "sim", Hardware: f.agent.Profile})
	}
	return m
}

// launchFirstBenchmark creates the first benchmark through the benchmark service,
// as the form would, and shows it; when a step is missing it says which.
func (s *server) launchFirstBenchmark(c *fiber.Ctx) error {
	ctx, v := c.UserContext(), viewer(c)
	f, err := s.firstSteps(ctx, v)
	if err != nil {
		return err
	}
	if !f.steps.Ready {
		var missing []string
		for _, st := range []home.Step{f.steps.Dataset, f.steps.Models, f.steps.Runtime} {
			if !st.Done {
				missing = append(missing, st.Fix)
			}
		}
		if err := s.flashKey(c, "error", "home_steps.not_yet", "Missing", strings.Join(missing, " ")); err != nil {
			return err
		}
		return redirect(c, "/")
	}
	created, err := s.Benchmarks.Create(ctx, v, firstManifest(f))
	var errs bench.Errors
	if errors.As(err, &errs) {
		if err := s.flashKey(c, "error", "home_steps.refused", "Reasons", errs.Text(ctx)); err != nil {
			return err
		}
		return redirect(c, "/")
	}
	if err != nil {
		return err
	}
	if err := s.flash(c, "info", i18n.From(ctx).N("home_steps.launched", len(created.Runs))); err != nil {
		return err
	}
	return redirect(c, fmt.Sprintf("/benchmarks/%d", created.BenchmarkID))
}
