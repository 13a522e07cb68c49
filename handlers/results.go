package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/bench"
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
// in the returned message and left out of the filter.
func parseResultFilter(c *fiber.Ctx) (results.Filter, store.ResultFilter) {
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
			problems = append(problems, err.Error())
			*t.val, *t.dst = "", ""
		}
	}
	switch f.Status {
	case "", jobs.StatusOK, jobs.StatusError:
		out.Status = f.Status
	default:
		problems = append(problems, "status must be ok or error")
	}
	switch f.Sort {
	case "idx", "e2e", "ttft", "score":
	default:
		problems = append(problems, "sort must be item, E2E latency, TTFT or score")
		out.Sort, f.Sort = "idx", "idx"
	}
	for _, b := range []struct {
		name, raw string
		dst       **float64
	}{{"Score ≥", f.MinScore, &out.MinScore}, {"Score ≤", f.MaxScore, &out.MaxScore}} {
		if b.raw == "" {
			continue
		}
		v, err := parseFinite(b.name, b.raw)
		if err != nil || v < 0 || v > 1 {
			problems = append(problems, b.name+" must be a number from 0 to 1")
			continue
		}
		*b.dst = &v
	}
	if after := c.Query("after"); after != "" {
		cur, err := parseResultCursor(after)
		if err != nil {
			problems = append(problems, err.Error()+"; the page link is damaged, start again from the first page")
		} else {
			out.After = &cur
		}
	}
	f.Error = strings.Join(problems, "; ")
	return f, out
}

// parseResultCursor reads a results page's cursor, "KEY:IDX": the sort
// key of the page's last row (a number; ±Inf stands for a missing value,
// which sorts last) and its item index.
func parseResultCursor(raw string) (store.ResultCursor, error) {
	bad := &paramError{Name: "after", Value: raw, Want: "a cursor KEY:IDX from a page link"}
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
	form, filter := parseResultFilter(c)
	rows, err := s.Store.ListResults(c.UserContext(), run.ID, filter)
	if err != nil {
		return err
	}
	d := results.Data{Benchmark: b, Run: run, Rows: rows, Filter: form}
	// One read gives the stored summary, the GPU summary and the price.
	cr, err := s.Store.CompareRuns(c.UserContext(), viewer(c), []int64{run.ID})
	if err != nil {
		return err
	}
	if len(cr) == 1 {
		d.Footprint = compare.NewFigures(cr[0]).Footprint(s.GridCO2)
		d.LoadTimeMs, d.RuntimeLog = cr[0].LoadTimeMs, cr[0].RuntimeLog
		if cr[0].Summary != nil {
			var sum jobs.RunSummary
			if json.Unmarshal(cr[0].Summary, &sum) == nil {
				d.Summary = &sum
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
		d.Charts = charts.RunCharts(samples, lat)
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
		d.NextURL = fmt.Sprintf("/runs/%d?%s", run.ID, q.Encode())
	}
	status := fiber.StatusOK
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
	it, err := s.Store.ResultByIdx(c.UserContext(), run.ID, idx)
	if errors.Is(err, store.ErrNotFound) {
		return fiber.NewError(fiber.StatusNotFound, "This run has no result for that item.")
	}
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, results.ItemPage(b, run, it))
}

// rescoreRun queues the run's scoring with the scorer picked on its page.
func (s *server) rescoreRun(c *fiber.Ctx) error {
	b, run, err := s.runOf(c)
	if err != nil {
		return err
	}
	scorer := strings.Clone(c.FormValue("scorer"))
	err = s.Benchmarks.Rescore(c.UserContext(), viewer(c), b.ID, run.ID, scorer)
	if errors.Is(err, bench.ErrScorer) {
		return fiber.NewError(fiber.StatusUnprocessableEntity, "Choose a scorer from the list.")
	}
	if err != nil {
		return err
	}
	if err := s.flash(c, "info", fmt.Sprintf("Run %d is being scored with %s; the page shows the new scores when it is done.", run.ID, scorer)); err != nil {
		return err
	}
	return redirect(c, fmt.Sprintf("/runs/%d", run.ID))
}
