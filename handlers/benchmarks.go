package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/i18n"
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

// readBenchmarkForm reads the create form and the manifest it asks for.
func readBenchmarkForm(c *fiber.Ctx) (benchmarks.Form, bench.Manifest, bench.Errors) {
	f := benchmarks.ReadForm(func(k string) string { return c.FormValue(k) }, func(k string) bool { return c.Request().PostArgs().Has(k) })
	m, errs := f.Manifest()
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
		d.Errors = bench.Errors{{Message: i18n.T(c.UserContext(), "benchpage.choose_manifest")}}
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
	if c.FormValue("action") != "launch" {
		plan, err := s.Benchmarks.Plan(c.UserContext(), viewer(c), m)
		if err != nil {
			return s.manifestRefused(c, d, err)
		}
		d.Plan = plan.Runs
		d.Estimate = estimateRuns(i18n.From(c.UserContext()), m, plan.Runs)
		d.Search = plan.Search
		return s.newBenchmarkPage(c, fiber.StatusOK, d)
	}
	created, err := s.Benchmarks.Create(c.UserContext(), viewer(c), m)
	if err != nil {
		return s.manifestRefused(c, d, err)
	}
	if err := s.flash(c, "info", i18n.N(c.UserContext(), "benchpage.launched", len(created.Runs))); err != nil {
		return err
	}
	return redirect(c, fmt.Sprintf("/benchmarks/%d", created.BenchmarkID))
}

// manifestRefused shows the form again with the manifest's field errors
// (422); any other error goes on to handleError.
func (s *server) manifestRefused(c *fiber.Ctx, d benchmarks.NewData, err error) error {
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
	search, err := s.Benchmarks.SearchRecordOf(c.UserContext(), b.ID)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, benchmarks.DetailPage(b, manifest.String(), cards, verdict, search, b.Writable(viewer(c))))
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
	card.Charts = charts.RunCharts(ctx, samples, lat)
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
		return nil, noSuch("run", nil)
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
// gives them, for its page to show: from the runs already read while they
// all run with an ETA (store.EstimateOf), as the runs table polls them.
func (s *server) addEstimate(ctx context.Context, v store.Viewer, b *store.Benchmark) error {
	e, err := s.Store.EstimateOf(ctx, v, *b, s.AgentStaleAfter)
	if err != nil {
		return err
	}
	b.Estimate = &e
	return nil
}

// serveLive answers a poll for one of benchmark :id's live fragments (run
// 0: the runs table): the shared copy while it is fresh and the viewer may
// see it, else build's component rendered for no one in particular (once
// for everyone who polls it meanwhile: liveFragments.fetch) and kept for
// the next viewers. Only the owner's and administrators' copy
// (with the run controls: canEdit) is kept; a reader of a shared
// benchmark gets one without them, rendered for each poll.
func (s *server) serveLive(c *fiber.Ctx, run int64, build func(b store.Benchmark, canEdit bool) (templ.Component, error)) error {
	id, err := idParam(c, "id", "benchmark")
	if err != nil {
		return err
	}
	key := liveKey{benchmark: id, run: run, lang: i18n.From(c.UserContext()).Code()}
	e, err := s.live.fetch(key, viewer(c), func() (liveFragment, bool, error) {
		b, err := s.benchmarkParam(c)
		if err != nil {
			return liveFragment{}, false, err
		}
		canEdit := b.Writable(viewer(c))
		component, err := build(b, canEdit)
		if err != nil {
			return liveFragment{}, false, err
		}
		body, err := renderShared(c.UserContext(), component)
		return liveFragment{owner: b.OwnerID, body: body}, canEdit, err
	})
	if err != nil {
		return err
	}
	return sendLive(c, e)
}

func (s *server) benchmarkParam(c *fiber.Ctx) (store.Benchmark, error) {
	id, err := idParam(c, "id", "benchmark")
	if err != nil {
		return store.Benchmark{}, err
	}
	b, err := s.Store.BenchmarkByID(c.UserContext(), viewer(c), id)
	return b, lookup("benchmark", err)
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
		ctx := c.UserContext()
		switch {
		case errors.Is(err, bench.ErrRunState):
			refusal := map[string]string{"cancel": "benchpage.cannot_cancel", "retry": "benchpage.cannot_retry"}[action]
			if c.Get("HX-Request") == "" {
				return catalogueErr(fiber.StatusConflict, refusal)
			}
			// htmx swaps no error response: say it on the page instead
			// (the run has most likely just finished).
			if err := s.flashKey(c, "error", refusal); err != nil {
				return err
			}
		case err != nil:
			return lookup("benchmark or run", err)
		default:
			msg := map[string]string{
				"cancel-benchmark": i18n.N(ctx, "benchpage.runs_cancelled", n),
				"cancel":           i18n.T(ctx, "benchpage.run_cancelled", "ID", runID),
				"retry":            i18n.T(ctx, "benchpage.run_queued_again", "ID", runID),
			}[action]
			if err := s.flash(c, "info", msg); err != nil {
				return err
			}
		}
		return redirect(c, fmt.Sprintf("/benchmarks/%d", id))
	}
}
