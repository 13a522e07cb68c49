package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/benchmarks"
	"github.com/ruckus/ruckus/views/charts"
)

func (s *server) showBenchmarksPage(c *fiber.Ctx) error {
	bs, err := s.Store.ListBenchmarks(c.UserContext(), viewer(c))
	if err != nil {
		return err
	}
	active, err := s.Store.ActiveRuns(c.UserContext(), viewer(c))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, benchmarks.ListPage(bs, active))
}

// showActiveRunsFragment is the live part of the benchmarks list. When the
// last active run has finished, the page is reloaded so the benchmark
// moves to Completed.
func (s *server) showActiveRunsFragment(c *fiber.Ctx) error {
	active, err := s.Store.ActiveRuns(c.UserContext(), viewer(c))
	if err != nil {
		return err
	}
	if len(active) == 0 && c.Get("HX-Request") == "true" {
		c.Set("HX-Refresh", "true")
	}
	return render(c, fiber.StatusOK, benchmarks.ActiveRuns(active))
}

func (s *server) benchmarkChoices(c *fiber.Ctx) (benchmarks.Choices, error) {
	var ch benchmarks.Choices
	var err error
	if ch.Datasets, err = s.Store.ListDatasets(c.UserContext(), viewer(c)); err != nil {
		return ch, err
	}
	if ch.Models, err = s.Store.ListModels(c.UserContext()); err != nil {
		return ch, err
	}
	ch.Hardware, err = s.Store.ListHardwareProfiles(c.UserContext(), s.AgentStaleAfter)
	return ch, err
}

func (s *server) newBenchmarkPage(c *fiber.Ctx, status int, d benchmarks.NewData) error {
	ch, err := s.benchmarkChoices(c)
	if err != nil {
		return err
	}
	d.Choices = ch
	for len(d.Form.Targets) < defaultTargetRows {
		d.Form.Targets = append(d.Form.Targets, benchmarks.TargetRow{Index: d.Form.NextTarget()})
	}
	return render(c, status, benchmarks.NewPage(d))
}

func (s *server) showNewBenchmarkPage(c *fiber.Ctx) error {
	f := benchmarks.Form{LoadKind: jobs.LoadSequential, MaxTokens: "256", Temperature: "0"}
	if id := c.Query("dataset"); id != "" {
		f.DatasetID = strings.Clone(id)
	}
	return s.newBenchmarkPage(c, fiber.StatusOK, benchmarks.NewData{Form: f})
}

// readBenchmarkForm turns the form into a manifest; numbers that do not
// parse become errors at the manifest path they belong to.
func readBenchmarkForm(c *fiber.Ctx) (benchmarks.Form, bench.Manifest, bench.Errors) {
	v := func(k string) string { return strings.TrimSpace(c.FormValue(k)) }
	f := benchmarks.Form{
		Name: v("name"), DatasetID: v("dataset_id"), LoadKind: v("load_kind"), Concurrency: v("concurrency"),
		Rate: v("rate"), Steps: v("steps"), Warmup: v("warmup"), MaxRequests: v("max_requests"),
		MaxDuration: v("max_duration"), MaxErrors: v("max_errors"), Temperature: v("temperature"), TopP: v("top_p"),
		MaxTokens: v("max_tokens"), Seed: v("seed"), Stop: c.FormValue("stop"), Scorer: v("scorer"), Samples: v("n"),
		SLOTTFT: v("slo_ttft"), SLOTPOT: v("slo_tpot"), SLOE2E: v("slo_e2e"), Repeats: v("repeats"),
		FewShotK: v("fewshot_k"), FewShotSeed: v("fewshot_seed"),
	}
	m := bench.Manifest{Name: f.Name, Scorer: f.Scorer, Load: jobs.LoadProfile{Profile: f.LoadKind}}
	// Only the picked scorer's options are read: a field left from another
	// scorer is not an error.
	switch f.Scorer {
	case "regex":
		if f.ScorerPattern = strings.Clone(c.FormValue("scorer_pattern")); f.ScorerPattern != "" {
			m.ScorerOptions = &bench.ScorerOptions{Pattern: f.ScorerPattern}
		}
	case "json-schema":
		f.ScorerSchema = strings.Clone(strings.TrimSpace(c.FormValue("scorer_schema")))
		m.ScorerOptions = &bench.ScorerOptions{Schema: bench.JSONDoc(f.ScorerSchema)}
	}
	var errs bench.Errors
	bad := func(path, msg string) { errs = append(errs, bench.FieldError{Path: path, Message: msg}) }
	integer := func(s, path string, dst *int) {
		if s == "" {
			return
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			bad(path, fmt.Sprintf("%q is not a whole number", s))
		}
		*dst = n
	}
	decimal := func(s, path string) *float64 {
		if s == "" {
			return nil
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			bad(path, fmt.Sprintf("%q is not a number", s))
			return nil
		}
		return &x
	}
	duration := func(s, path string, dst *jobs.Duration) {
		if s == "" {
			return
		}
		if err := dst.UnmarshalText([]byte(s)); err != nil {
			bad(path, err.Error())
		}
	}
	if f.DatasetID != "" {
		id, err := parseID("dataset", f.DatasetID)
		if err != nil {
			bad("dataset", "choose a dataset")
		}
		m.Dataset.ID = id
	}
	f.Targets = readTargetRows(func(k string) string { return c.FormValue(k) }, func(k string) bool { return c.Request().PostArgs().Has(k) })
	for i, t := range f.Targets {
		if !t.Empty() {
			f.Targets[i].Path = fmt.Sprintf("targets[%d]", len(m.Targets))
			m.Targets = append(m.Targets, bench.Target{Model: t.Model, Runtime: t.Runtime, Hardware: t.Hardware})
		}
	}
	if fs, ferrs := bench.ParseFewShot(f.FewShotK, f.FewShotSeed); len(ferrs) > 0 {
		errs = append(errs, ferrs...)
	} else if len(fs) == 1 {
		m.FewShot = &fs[0]
	} else if len(fs) > 1 {
		// Every target once at each k, side by side in one benchmark.
		targets := m.Targets
		m.Targets = nil
		for _, t := range targets {
			for i := range fs {
				t.FewShot = &fs[i]
				m.Targets = append(m.Targets, t)
			}
		}
	}
	integer(f.Concurrency, "load.concurrency", &m.Load.Concurrency)
	if r := decimal(f.Rate, "load.rate"); r != nil {
		m.Load.Rate = *r
	}
	integer(f.Steps, "load.steps", &m.Load.Steps)
	integer(f.Warmup, "load.warmup", &m.Load.Warmup)
	integer(f.MaxRequests, "load.max_requests", &m.Load.MaxRequests)
	duration(f.MaxDuration, "load.max_duration", &m.Load.MaxDuration)
	integer(f.MaxErrors, "load.max_errors", &m.Load.MaxErrors)
	integer(f.Repeats, "repeats", &m.Repeats)
	m.Sampling.Temperature = decimal(f.Temperature, "sampling.temperature")
	m.Sampling.TopP = decimal(f.TopP, "sampling.top_p")
	integer(f.MaxTokens, "sampling.max_tokens", &m.Sampling.MaxTokens)
	integer(f.Samples, "sampling.n", &m.Sampling.N)
	if f.Seed != "" {
		seed, err := strconv.ParseInt(f.Seed, 10, 64)
		if err != nil {
			bad("sampling.seed", fmt.Sprintf("%q is not a whole number", f.Seed))
		}
		m.Sampling.Seed = &seed
	}
	for _, line := range strings.Split(strings.ReplaceAll(f.Stop, "\r\n", "\n"), "\n") {
		if line != "" {
			m.Sampling.Stop = append(m.Sampling.Stop, line)
		}
	}
	duration(f.SLOTTFT, "slo.ttft", &m.SLO.TTFT)
	duration(f.SLOTPOT, "slo.tpot", &m.SLO.TPOT)
	duration(f.SLOE2E, "slo.e2e", &m.SLO.E2E)
	return f, m, errs
}

// createBenchmark previews (action=preview) or launches a benchmark from
// the form.
func (s *server) createBenchmark(c *fiber.Ctx) error {
	f, m, errs := readBenchmarkForm(c)
	if f, ok := editBenchmarkForm(c, f); ok {
		// Rows added or removed, or a preset applied, without JavaScript.
		return s.newBenchmarkPage(c, fiber.StatusOK, benchmarks.NewData{Form: f})
	}
	return s.planOrLaunch(c, benchmarks.NewData{Form: f, Errors: errs}, m)
}

// createBenchmarkFromManifest does the same from an uploaded manifest.
func (s *server) createBenchmarkFromManifest(c *fiber.Ctx) error {
	d := benchmarks.NewData{Form: benchmarks.Form{LoadKind: jobs.LoadSequential}}
	fh, err := c.FormFile("manifest")
	if err != nil {
		d.Errors = bench.Errors{{Message: "choose a manifest file to upload"}}
		return s.newBenchmarkPage(c, fiber.StatusUnprocessableEntity, d)
	}
	file, err := fh.Open()
	if err != nil {
		return err
	}
	defer file.Close()
	m, err := bench.Decode(file)
	if errors.As(err, &d.Errors) {
		return s.newBenchmarkPage(c, fiber.StatusUnprocessableEntity, d)
	}
	if err != nil {
		return err
	}
	return s.planOrLaunch(c, d, m)
}

func (s *server) planOrLaunch(c *fiber.Ctx, d benchmarks.NewData, m bench.Manifest) error {
	if len(d.Errors) > 0 {
		return s.newBenchmarkPage(c, fiber.StatusUnprocessableEntity, d)
	}
	var err error
	if c.FormValue("action") == "launch" {
		var created bench.Created
		created, err = s.Benchmarks.Create(c.UserContext(), viewer(c), m)
		if err == nil {
			if err := s.flash(c, "info", fmt.Sprintf("Benchmark launched: %d run(s) queued.", len(created.Runs))); err != nil {
				return err
			}
			return redirect(c, fmt.Sprintf("/benchmarks/%d", created.BenchmarkID))
		}
	} else {
		var plan bench.Plan
		plan, err = s.Benchmarks.Plan(c.UserContext(), viewer(c), m)
		if err == nil {
			d.Plan = plan.Runs
			d.Estimate = estimateRuns(m, plan.Runs)
			return s.newBenchmarkPage(c, fiber.StatusOK, d)
		}
	}
	if errors.As(err, &d.Errors) {
		return s.newBenchmarkPage(c, fiber.StatusUnprocessableEntity, d)
	}
	return err
}

func (s *server) showBenchmarkPage(c *fiber.Ctx) error {
	b, err := s.benchmarkParam(c)
	if err != nil {
		return err
	}
	raw, _, err := s.Store.BenchmarkManifest(c.UserContext(), b.ID)
	if err != nil {
		return err
	}
	var manifest bytes.Buffer
	if json.Indent(&manifest, raw, "", "  ") != nil {
		manifest.Reset()
		manifest.Write(raw)
	}
	cards := make([]benchmarks.Card, 0, len(b.Runs))
	for _, r := range b.Runs {
		card, err := s.runCard(c.UserContext(), r)
		if err != nil {
			return err
		}
		cards = append(cards, card)
	}
	verdict, err := s.benchmarkVerdict(c.UserContext(), viewer(c), b)
	if err != nil {
		return err
	}
	if err := s.addEstimate(c.UserContext(), viewer(c), &b); err != nil {
		return err
	}
	return render(c, fiber.StatusOK, benchmarks.DetailPage(b, manifest.String(), cards, verdict, b.Writable(viewer(c))))
}

// Points drawn on a run's card: fewer than on the run's own page, since a
// benchmark page shows a card for every run.
const (
	cardSamples = 120
	cardLatency = 150
)

// runCard reads what a run's live card shows.
func (s *server) runCard(ctx context.Context, r store.Run) (benchmarks.Card, error) {
	card := benchmarks.Card{Run: r}
	if r.State == "queued" && r.Completed == 0 {
		return card, nil
	}
	samples, err := s.Store.RunSamples(ctx, r.ID, cardSamples)
	if err != nil {
		return card, err
	}
	lat, err := s.Store.LatencyPoints(ctx, r.ID, cardLatency)
	if err != nil {
		return card, err
	}
	card.Charts = charts.RunCharts(samples, lat)
	if r.Errors > 0 {
		card.ErrorClasses, err = s.Store.RunErrorClasses(ctx, r.ID)
	}
	return card, err
}

// showRunCard is one run's live card, polled by the benchmark page while
// the run is queued or running.
func (s *server) showRunCard(c *fiber.Ctx) error {
	runID, err := idParam(c, "run", "run")
	if err != nil {
		return err
	}
	return s.serveLive(c, runID, func(b store.Benchmark, _ bool) (templ.Component, error) {
		for _, r := range b.Runs {
			if r.ID == runID {
				card, err := s.runCard(c.UserContext(), r)
				return benchmarks.RunCard(card), err
			}
		}
		return nil, fiber.NewError(fiber.StatusNotFound, "There is no such run.")
	})
}

// showRunsFragment is the runs table alone, polled by the benchmark page
// while runs are active.
func (s *server) showRunsFragment(c *fiber.Ctx) error {
	return s.serveLive(c, 0, func(b store.Benchmark, canEdit bool) (templ.Component, error) {
		err := s.addEstimate(c.UserContext(), viewer(c), &b)
		return benchmarks.RunsTable(b, canEdit), err
	})
}

// addEstimate reads the benchmark's status, progress and ETA as the API
// gives them, for its page to show.
func (s *server) addEstimate(ctx context.Context, v store.Viewer, b *store.Benchmark) error {
	st, err := s.Store.BenchmarkStatusByID(ctx, v, b.ID, s.AgentStaleAfter)
	if err != nil {
		return err
	}
	b.Estimate = &st.Estimate
	return nil
}

// serveLive answers a poll for one of benchmark :id's live fragments (run
// 0: the runs table): the shared copy while it is fresh and the viewer may
// see it, else build's component rendered for no one in particular and
// kept for the next viewers. Only the owner's and administrators' copy
// (with the run controls: canEdit) is kept; a reader of a shared
// benchmark gets one without them, rendered for each poll.
func (s *server) serveLive(c *fiber.Ctx, run int64, build func(b store.Benchmark, canEdit bool) (templ.Component, error)) error {
	id, err := idParam(c, "id", "benchmark")
	if err != nil {
		return err
	}
	key := liveKey{benchmark: id, run: run}
	if e, ok := s.live.get(key, viewer(c)); ok {
		return sendLive(c, e)
	}
	b, err := s.benchmarkParam(c)
	if err != nil {
		return err
	}
	canEdit := b.Writable(viewer(c))
	component, err := build(b, canEdit)
	if err != nil {
		return err
	}
	body, err := renderShared(c.UserContext(), component)
	if err != nil {
		return err
	}
	e := liveFragment{owner: b.OwnerID, body: body}
	if canEdit {
		s.live.put(key, e)
	}
	return sendLive(c, e)
}

func (s *server) benchmarkParam(c *fiber.Ctx) (store.Benchmark, error) {
	id, err := idParam(c, "id", "benchmark")
	if err != nil {
		return store.Benchmark{}, err
	}
	b, err := s.Store.BenchmarkByID(c.UserContext(), viewer(c), id)
	if errors.Is(err, store.ErrNotFound) {
		return b, fiber.NewError(fiber.StatusNotFound, "There is no such benchmark.")
	}
	return b, err
}

// controlRuns carries out a run action for both the pages and the API:
// "cancel-benchmark" (every unfinished run), "cancel" or "retry" (one run).
// It returns how many runs changed.
func (s *server) controlRuns(c *fiber.Ctx, action string, benchmarkID, runID int64) (int, error) {
	defer s.live.forget(benchmarkID)
	switch action {
	case "cancel-benchmark":
		return s.Benchmarks.CancelBenchmark(c.UserContext(), viewer(c), benchmarkID)
	case "cancel":
		return 1, s.Benchmarks.CancelRun(c.UserContext(), viewer(c), benchmarkID, runID)
	case "retry":
		return 1, s.Benchmarks.RetryRun(c.UserContext(), viewer(c), benchmarkID, runID)
	}
	return 0, fmt.Errorf("unknown run action %q", action)
}

// runAction cancels or retries a run (or cancels the whole benchmark
// when there is no :run), then shows the benchmark again.
func (s *server) runAction(action string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := idParam(c, "id", "benchmark")
		if err != nil {
			return err
		}
		var runID int64
		if action != "cancel-benchmark" {
			if runID, err = idParam(c, "run", "run"); err != nil {
				return err
			}
		}
		n, err := s.controlRuns(c, action, id, runID)
		msg := map[string]string{
			"cancel-benchmark": fmt.Sprintf("%d run(s) cancelled.", n),
			"cancel":           fmt.Sprintf("Run %d cancelled.", runID),
			"retry":            fmt.Sprintf("Run %d queued again.", runID),
		}[action]
		switch {
		case errors.Is(err, store.ErrNotFound):
			return fiber.NewError(fiber.StatusNotFound, "There is no such benchmark or run.")
		case errors.Is(err, bench.ErrRunState):
			refusal := "That run cannot be " + map[string]string{"cancel": "cancelled", "retry": "retried"}[action] + " in its present state."
			if c.Get("HX-Request") == "" {
				return fiber.NewError(fiber.StatusConflict, refusal)
			}
			// htmx swaps no error response: say it on the page instead
			// (the run has most likely just finished).
			if err := s.flash(c, "error", refusal); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			if err := s.flash(c, "info", msg); err != nil {
				return err
			}
		}
		return redirect(c, fmt.Sprintf("/benchmarks/%d", id))
	}
}
