package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/sandbox"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/charts"
	"github.com/ruckus/ruckus/views/compare"
	"github.com/ruckus/ruckus/views/results"
)

// resultsPageSize is how many results one page shows.
const resultsPageSize = 50

// parseResultFilter reads the filter form; a value it cannot use is named
// in the returned message (in the reader's language) and left out of the
// filter.
func parseResultFilter(c *fiber.Ctx) (results.Filter, store.ResultFilter) {
	ctx := c.UserContext()
	f := results.Filter{
		CustomID: strings.TrimSpace(c.Query("custom_id")), Text: strings.TrimSpace(c.Query("q")), Status: c.Query("status"),
		MinScore: strings.TrimSpace(c.Query("min_score")), MaxScore: strings.TrimSpace(c.Query("max_score")),
		Sort: c.Query("sort", "idx"), Dir: c.Query("dir", "asc"),
	}
	out := store.ResultFilter{CustomID: f.CustomID, Text: f.Text, Sort: f.Sort, Desc: f.Dir == "desc", Limit: resultsPageSize}
	var problems []string
	for _, t := range []struct {
		name string
		val  *string
		dst  *string
	}{{"custom_id", &f.CustomID, &out.CustomID}, {"q", &f.Text, &out.Text}} {
		if err := checkQueryText(t.name, *t.val); err != nil {
			problems = append(problems, i18n.ErrorText(ctx, err))
			*t.val, *t.dst = "", ""
		}
	}
	switch f.Status {
	case "", jobs.StatusOK, jobs.StatusError:
		out.Status = f.Status
	default:
		problems = append(problems, i18n.T(ctx, "results.filter_status"))
	}
	switch f.Sort {
	case "idx", "e2e", "ttft", "score":
	default:
		problems = append(problems, i18n.T(ctx, "results.filter_sort"))
		out.Sort, f.Sort = "idx", "idx"
	}
	for _, b := range []struct {
		name, raw string
		dst       **float64
	}{{i18n.T(ctx, "results.score_min"), f.MinScore, &out.MinScore}, {i18n.T(ctx, "results.score_max"), f.MaxScore, &out.MaxScore}} {
		if b.raw == "" {
			continue
		}
		v, err := parseFinite(b.name, b.raw)
		if err != nil || v < 0 || v > 1 {
			problems = append(problems, i18n.T(ctx, "results.filter_score", "Name", b.name))
			continue
		}
		*b.dst = &v
	}
	if after := c.Query("after"); after != "" {
		cur, err := parseResultCursor(after)
		if err != nil {
			problems = append(problems, i18n.T(ctx, "results.filter_cursor", "Problem", i18n.ErrorText(ctx, err)))
		} else {
			out.After = &cur
		}
		if raw := c.Query("after_sample"); raw != "" {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 0 || n >= jobs.MaxSamples {
				problems = append(problems, i18n.T(ctx, "results.filter_after_sample", "Max", jobs.MaxSamples-1))
			} else if out.After != nil {
				out.After.Sample = n
			}
		}
	}
	f.Error = strings.Join(problems, "; ")
	return f, out
}

// parseResultCursor reads a results page's cursor, "KEY:IDX": the sort
// key of the page's last row (a number; ±Inf stands for a missing value,
// which sorts last) and its item index. (For a run of several answers per
// item the row's sample travels as after_sample.)
func parseResultCursor(raw string) (store.ResultCursor, error) {
	bad := badParam("after", raw, i18n.M("param.results_cursor"))
	k, i, ok := strings.Cut(raw, ":")
	if !ok {
		return store.ResultCursor{}, bad
	}
	key, err := strconv.ParseFloat(k, 64)
	if err != nil || math.IsNaN(key) {
		return store.ResultCursor{}, bad
	}
	idx, err := parseIdx("after", i)
	if err != nil {
		return store.ResultCursor{}, err
	}
	return store.ResultCursor{Key: key, Idx: idx}, nil
}

// showResultsPage is a run's results: summary, filters and one page.
func (s *server) showResultsPage(c *fiber.Ctx) error {
	b, run, err := s.runOf(c)
	if err != nil {
		return err
	}
	return s.renderResultsPage(c, b, run, fiber.StatusOK, nil, nil)
}

// renderResultsPage renders a run's page with status; judgeForm is the
// judge form as typed (with its messages), nil for a fresh one; rescore
// likewise the scorer form.
func (s *server) renderResultsPage(c *fiber.Ctx, b store.Benchmark, run store.Run, status int, judgeForm *results.JudgeForm, rescore *results.RescoreForm) error {
	form, filter := parseResultFilter(c)
	rows, err := s.Store.ListResults(c.UserContext(), run.ID, filter)
	if err != nil {
		return err
	}
	d := results.Data{Benchmark: b, Run: run, Rows: rows, Filter: form, ReadOnly: !b.Writable(viewer(c)), Rescore: rescore}
	if d.Judge, err = s.judgeData(c, run, judgeForm); err != nil {
		return err
	}
	if d.ReadOnly {
		// Judging queues runs on the benchmark: its owner's to start.
		d.Judge.Form = nil
	}
	// One read gives the stored summary, the GPU summary and the price.
	cr, err := s.Store.RunFiguresByID(c.UserContext(), viewer(c), []int64{run.ID})
	if err != nil {
		return err
	}
	if len(cr) == 1 {
		d.Qualities, d.Stat = cr[0].Qualities, cr[0].Stat
		if d.Stat != nil {
			d.TPS = conclude.KeptEstimate(d.Stat.TPS, d.Stat.Batches)
		}
		fig := compare.NewFigures(cr[0])
		d.Footprint, d.NodeLine = fig.Footprint(c.UserContext(), s.GridCO2), fig.NodeLine(c.UserContext())
		d.LoadTimeMs, d.RuntimeLog = cr[0].LoadTimeMs, cr[0].RuntimeLog
		if cr[0].Summary != nil {
			var sum jobs.RunSummary
			if json.Unmarshal(cr[0].Summary, &sum) == nil {
				d.Summary = &sum
			}
			if err := withRuntimeStates(c.UserContext(), s.Store, run.ID, d.Summary); err != nil {
				return err
			}
		}
	}
	cats, err := s.Store.RunCategoryScores(c.UserContext(), run.ID)
	if err != nil {
		return err
	}
	d.Categories = score.ByCategory(run.ID, cats)
	if filter.After == nil { // charts on the first page only
		samples, err := s.Store.RunSamples(c.UserContext(), run.ID, 300)
		if err != nil {
			return err
		}
		lat, err := s.Store.LatencyPoints(c.UserContext(), run.ID, 200)
		if err != nil {
			return err
		}
		d.Charts = charts.RunCharts(c.UserContext(), samples, lat)
	}
	if len(rows) == resultsPageSize {
		last := rows[len(rows)-1].Cursor
		q := url.Values{}
		for k, v := range map[string]string{"custom_id": form.CustomID, "q": form.Text, "status": form.Status,
			"min_score": form.MinScore, "max_score": form.MaxScore, "sort": form.Sort, "dir": form.Dir} {
			if v != "" {
				q.Set(k, v)
			}
		}
		q.Set("after", strconv.FormatFloat(last.Key, 'g', -1, 64)+":"+strconv.Itoa(last.Idx))
		if last.Sample > 0 {
			q.Set("after_sample", strconv.Itoa(last.Sample))
		}
		d.NextURL = fmt.Sprintf("/runs/%d?%s", run.ID, q.Encode())
	}
	if form.Error != "" {
		status = fiber.StatusUnprocessableEntity
	}
	return render(c, status, results.Page(d))
}

// showResultItemPage is one item of a run in full.
func (s *server) showResultItemPage(c *fiber.Ctx) error {
	b, run, err := s.runOf(c)
	if err != nil {
		return err
	}
	idx, err := idxParam(c, "idx", "item")
	if err != nil {
		return err
	}
	sample := 0
	if raw := c.Query("sample"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 || n >= jobs.MaxSamples {
			return catalogueErr(fiber.StatusBadRequest, "results.bad_sample", "Max", jobs.MaxSamples-1)
		}
		sample = n
	}
	it, err := s.Store.ResultBySample(c.UserContext(), run.ID, idx, sample)
	if err != nil {
		return lookup("result", err)
	}
	ex, err := s.itemProgram(c, run, it)
	if err != nil {
		return err
	}
	js, err := s.Store.ItemJudgments(c.UserContext(), run.ID, idx)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, results.ItemPage(b, run, it, ex, js, scoreWhy(c.UserContext(), run, it)))
}

// itemProgram assembles the program the sandbox runs for an answer of a
// run scored by execution, as the suite's harness does.
func (s *server) itemProgram(c *fiber.Ctx, run store.Run, it store.ResultItem) (results.ItemExec, error) {
	if !score.IsExecution(run.Scorer) {
		return results.ItemExec{}, nil
	}
	var req struct {
		Body struct {
			Prompt string `json:"prompt"`
		} `json:"body"`
	}
	_ = json.Unmarshal(it.Request, &req)
	task, err := sandbox.ParseTask(it.Reference, req.Body.Prompt, "")
	if err != nil {
		return results.ItemExec{}, nil // not a code item
	}
	var opts sandbox.ExecOptions
	raw, err := s.Store.RunExecOptions(c.UserContext(), run.ID)
	if err != nil {
		return results.ItemExec{}, err
	}
	_ = json.Unmarshal(raw, &opts)
	return results.ItemExec{Program: task.Program(sandbox.Truncate(task.Suite, opts.Truncate, it.Output))}, nil
}

// scoreWhy says why the item got its score, for the scorers that can say
// more than the number (a regex pattern's capture, the first reason an
// output failed its JSON Schema); "" for the others and unscored items.
func scoreWhy(ctx context.Context, run store.Run, it store.ResultItem) string {
	if it.Score == nil || it.Status != jobs.StatusOK {
		return ""
	}
	opts, err := score.ParseOptions(run.ScorerOptions)
	if err != nil {
		return ""
	}
	return score.Explain(run.Scorer, opts, it.Output).Text(ctx)
}

// rescoreRun queues the run's scoring with the scorer picked on its page,
// and the pattern or schema typed for it (empty: the benchmark's own when
// the scorer is the benchmark's).
func (s *server) rescoreRun(c *fiber.Ctx) error {
	b, run, err := s.runOf(c)
	if err != nil {
		return err
	}
	form := results.RescoreForm{Scorer: strings.Clone(c.FormValue("scorer")), Pattern: strings.Clone(c.FormValue("pattern")),
		Schema: strings.Clone(c.FormValue("schema")), Errors: map[string]string{}}
	scorer := form.Scorer
	var opts *bench.ScorerOptions
	switch scorer {
	case "regex":
		if form.Pattern != "" {
			opts = &bench.ScorerOptions{Pattern: form.Pattern}
		}
	case "json-schema":
		if sch := strings.TrimSpace(form.Schema); sch != "" {
			opts = &bench.ScorerOptions{Schema: bench.JSONDoc(sch)}
		}
	}
	_, err = s.Benchmarks.Rescore(c.UserContext(), viewer(c), b.ID, run.ID, scorer, opts)
	if errors.Is(err, store.ErrNotFound) {
		// A reader of a shared benchmark may not change it.
		return catalogueErr(fiber.StatusForbidden, "results.rescore_forbidden")
	}
	var ferrs bench.Errors
	switch {
	case errors.Is(err, bench.ErrScorer):
		form.Errors["scorer"] = i18n.T(c.UserContext(), "results.choose_scorer")
	case errors.As(err, &ferrs):
		for _, fe := range ferrs {
			field := map[string]string{"scorer_options.pattern": "pattern", "scorer_options.schema": "schema"}[fe.Path]
			if field == "" {
				field = "scorer"
			}
			if form.Errors[field] == "" {
				form.Errors[field] = fe.Text(c.UserContext())
			}
		}
	case err != nil:
		return err
	}
	if len(form.Errors) > 0 {
		if c.Get("HX-Request") != "" {
			return render(c, fiber.StatusUnprocessableEntity, results.RescoreSection(run, &form))
		}
		return s.renderResultsPage(c, b, run, fiber.StatusUnprocessableEntity, nil, &form)
	}
	if err := s.flashKey(c, "info", "results.rescoring", "ID", run.ID, "Scorer", scorer); err != nil {
		return err
	}
	return redirect(c, fmt.Sprintf("/runs/%d", run.ID))
}
