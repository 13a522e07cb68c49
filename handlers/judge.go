package handlers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/judge"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/results"
)

// judgeStore is what the judge's pages read.
type judgeStore interface {
	JudgeRunsOf(ctx context.Context, v store.Viewer, runID int64) ([]store.JudgeRun, error)
	JudgeRunByID(ctx context.Context, runID int64) (store.JudgeRun, error)
	ItemJudgments(ctx context.Context, runID int64, idx int) ([]store.ItemJudgment, error)
	PairJudgings(ctx context.Context, runIDs []int64) ([]store.JudgeRun, error)
	PairVerdicts(ctx context.Context, judgeRunID int64, idx []int32) (map[int]store.Judgment, error)
	ServedTargets(ctx context.Context, protocol int, staleAfter time.Duration) ([]store.ServedTarget, error)
}

// judgeData is the judge section of run's page: its judgings, what it
// judges when it is a judge's run, and the form while it may be judged.
func (s *server) judgeData(c *fiber.Ctx, run store.Run, form *results.JudgeForm) (results.JudgeData, error) {
	ctx := c.UserContext()
	var d results.JudgeData
	var err error
	if d.Judgings, err = s.Store.JudgeRunsOf(ctx, viewer(c), run.ID); err != nil {
		return d, err
	}
	jr, err := s.Store.JudgeRunByID(ctx, run.ID)
	switch {
	case err == nil:
		d.JudgeOf = &jr
		return d, nil
	case !errors.Is(err, store.ErrNotFound):
		return d, err
	}
	if run.State == "queued" || run.State == "running" {
		return d, nil
	}
	if form == nil {
		form = &results.JudgeForm{ScaleMin: "1", ScaleMax: "10", MaxTokens: "512"}
	}
	form.Action, form.Mode = fmt.Sprintf("/runs/%d/judge", run.ID), judge.Single
	if err := s.judgeChoices(ctx, form); err != nil {
		return d, err
	}
	d.Form = form
	return d, nil
}

// judgeChoices fills the models and served targets a judge form offers.
func (s *server) judgeChoices(ctx context.Context, f *results.JudgeForm) error {
	ms, err := s.Store.ListModels(ctx)
	if err != nil {
		return err
	}
	f.Models = f.Models[:0]
	for _, m := range ms {
		if m.RetiredAt == nil {
			f.Models = append(f.Models, m.Name)
		}
	}
	f.Targets, err = s.Store.ServedTargets(ctx, jobs.ProtocolVersion, s.AgentStaleAfter)
	return err
}

// readJudgeForm reads a judge form into the options it asks for; a value
// it cannot use is named beside its field, in the reader's language.
func readJudgeForm(c *fiber.Ctx, mode string) (results.JudgeForm, bench.JudgeOptions) {
	ctx := c.UserContext()
	f := results.JudgeForm{
		Model: valid.Field(strings.TrimSpace(c.FormValue("judge_model"))), Target: valid.Field(c.FormValue("judge_target")),
		Rubric: valid.Field(strings.TrimSpace(c.FormValue("rubric"))), ScaleMin: valid.Field(strings.TrimSpace(c.FormValue("scale_min"))),
		ScaleMax: valid.Field(strings.TrimSpace(c.FormValue("scale_max"))), MaxTokens: valid.Field(strings.TrimSpace(c.FormValue("max_tokens"))),
		Errors: map[string]string{},
	}
	o := bench.JudgeOptions{Model: f.Model, Rubric: f.Rubric}
	if t := c.FormValue("template"); len(t) > judge.MaxTemplateBytes {
		f.Errors["template"] = i18n.T(ctx, "judge.template_too_long", "Max", judge.MaxTemplateBytes, "Got", len(t))
	} else {
		f.Template = strings.Clone(strings.ReplaceAll(t, "\r\n", "\n"))
		o.Template = strings.TrimSpace(f.Template)
	}
	if o.Template != "" && o.Rubric == "" {
		o.Rubric = judge.Custom
	}
	if o.Rubric == judge.Custom && o.Template == "" && f.Errors["template"] == "" {
		f.Errors["template"] = i18n.T(ctx, "judge.template_missing")
	}
	hw, rt, ok := strings.Cut(f.Target, "|")
	if !ok {
		f.Errors["target"] = i18n.T(ctx, "judge.target_missing")
	}
	o.Hardware, o.Runtime = hw, rt
	num := func(field, raw string, lo, hi int) int {
		if raw == "" {
			return 0
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < lo || n > hi {
			f.Errors[field] = i18n.T(ctx, "judge.whole_number", "Lo", lo, "Hi", hi)
			return 0
		}
		return n
	}
	if mode == judge.Single && (f.ScaleMin != "" || f.ScaleMax != "") {
		lo := num("scale", f.ScaleMin, judge.MinScale, judge.MaxScale)
		hi := num("scale", f.ScaleMax, judge.MinScale, judge.MaxScale)
		o.Scale = &bench.JudgeScale{Min: lo, Max: hi}
	}
	o.MaxTokens = num("max_tokens", f.MaxTokens, 1, 8192)
	return f, o
}

// placeJudgeErrors puts a judging's field errors beside the form's fields.
func placeJudgeErrors(ctx context.Context, f *results.JudgeForm, err error) bool {
	var errs bench.Errors
	if !errors.As(err, &errs) {
		return false
	}
	for _, e := range errs {
		field := e.Path[strings.LastIndex(e.Path, ".")+1:]
		switch field {
		case "runtime", "hardware":
			field = "target"
		case "model", "rubric", "template", "scale", "max_tokens":
		default:
			field = ""
		}
		if f.Errors[field] == "" {
			f.Errors[field] = e.Text(ctx)
		}
	}
	return true
}

// startJudging starts the judging of a run from its page: 303 to the page
// with a flash, or 422 with the page and the form's messages.
func (s *server) startJudging(c *fiber.Ctx) error {
	b, run, err := s.runOf(c)
	if err != nil {
		return err
	}
	form, o := readJudgeForm(c, judge.Single)
	if len(form.Errors) == 0 {
		var started bench.JudgeStarted
		started, err = s.Benchmarks.StartJudge(c.UserContext(), viewer(c), bench.JudgeRequest{Options: o, RunA: run.ID})
		if err == nil {
			ctx := c.UserContext()
			msg := i18n.T(ctx, "judge.queued", "ID", started.JudgeRunID, "N", started.Items, "Rubric", started.Rubric)
			if started.WaitingForAgent {
				msg += " " + i18n.T(ctx, "judge.waits_for_agent")
			}
			if err := s.flash(c, "info", msg); err != nil {
				return err
			}
			return redirect(c, fmt.Sprintf("/runs/%d#judge", run.ID))
		}
		if !placeJudgeErrors(c.UserContext(), &form, err) {
			return err
		}
	}
	return s.renderResultsPage(c, b, run, fiber.StatusUnprocessableEntity, &form, nil)
}

// startPairJudging starts a pairwise judging of two compared runs (both
// orders), from the comparison page.
func (s *server) startPairJudging(c *fiber.Ctx) error {
	back := "/compare?" + string(c.Request().URI().QueryString())
	form, o := readJudgeForm(c, judge.Pairwise)
	form.Pair = valid.Field(c.FormValue("pair"))
	var a, b int64
	ra, rb, ok := strings.Cut(form.Pair, ",")
	if ok {
		var err1, err2 error
		a, err1 = parseID("pair", ra)
		b, err2 = parseID("pair", rb)
		ok = err1 == nil && err2 == nil
	}
	if !ok {
		form.Errors["pair"] = i18n.T(c.UserContext(), "judge.pair_missing")
	}
	if len(form.Errors) == 0 {
		started, err := s.Benchmarks.StartJudge(c.UserContext(), viewer(c), bench.JudgeRequest{Options: o, RunA: a, RunB: b})
		if err == nil {
			ctx := c.UserContext()
			msg := i18n.T(ctx, "judge.queued_pair", "ID", started.JudgeRunID, "N", started.Items, "A", a, "B", b)
			if started.WaitingForAgent {
				msg += " " + i18n.T(ctx, "judge.waits_for_agent")
			}
			if err := s.flash(c, "info", msg); err != nil {
				return err
			}
			return redirect(c, back)
		}
		var errs bench.Errors
		if errors.As(err, &errs) {
			for _, e := range errs {
				if e.Key == "manifest.no_run" {
					return catalogueErr(fiber.StatusNotFound, "judge.pair_not_found")
				}
				if e.Path == "run" || e.Path == "against" {
					form.Errors["pair"] = e.Text(c.UserContext())
				}
			}
		}
		if !placeJudgeErrors(c.UserContext(), &form, err) {
			return err
		}
	}
	return s.renderComparePage(c, fiber.StatusUnprocessableEntity, i18n.T(c.UserContext(), "judge.pair_not_judged"), &form)
}

// apiJudgeRequest is the body of POST /api/v1/runs/{id}/judge.
type apiJudgeRequest struct {
	Judge   *bench.JudgeOptions `json:"judge" validate:"required" msg_required:"valid.judge_needed"`
	Against int64               `json:"against,omitempty" validate:"min=0" msg:"valid.run_id"`
}

// apiStartJudging starts a judging of a run through the API: graded
// alone, or against another run of the same dataset (pairwise).
func (s *server) apiStartJudging(c *fiber.Ctx) error {
	_, run, err := s.runOf(c)
	if err != nil {
		return err
	}
	var req apiJudgeRequest
	if errs := valid.DecodeJSON(c.Body(), &req); errs != nil {
		return fieldErrors422(c, errs)
	}
	// Rubric, template and scale are weighed against the judging's mode
	// when it starts.
	if errs := s.validate.Struct(req); errs != nil {
		return fieldErrors422(c, errs)
	}
	started, err := s.Benchmarks.StartJudge(c.UserContext(), viewer(c), bench.JudgeRequest{Options: *req.Judge, RunA: run.ID, RunB: req.Against})
	var ferrs bench.Errors
	if errors.As(err, &ferrs) {
		return c.Status(fiber.StatusUnprocessableEntity).JSON(apiPathErrors{Errors: ferrs})
	}
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(started)
}
