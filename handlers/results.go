package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/bench"
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
		v, err := strconv.ParseFloat(b.raw, 64)
		if err != nil || v < 0 || v > 1 {
			problems = append(problems, b.name+" must be a number from 0 to 1")
			continue
		}
		*b.dst = &v
	}
	if after := c.Query("after"); after != "" {
		k, i, ok := strings.Cut(after, ":")
		key, err1 := strconv.ParseFloat(k, 64)
		idx, err2 := strconv.Atoi(i)
		if !ok || err1 != nil || err2 != nil {
			problems = append(problems, "the page link is damaged; start again from the first page")
		} else {
			out.After = &store.ResultCursor{Key: key, Idx: idx}
		}
	}
	f.Error = strings.Join(problems, "; ")
	return f, out
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
	idx, _ := strconv.Atoi(c.Params("idx"))
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
