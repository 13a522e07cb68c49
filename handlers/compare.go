package handlers

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/advise"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/compare"
)

type compareStore interface {
	CompareRuns(ctx context.Context, v store.Viewer, ids []int64) ([]store.CompareRun, error)
	CompareItems(ctx context.Context, datasetID int64, runIDs []int64, after, limit int, disagree bool) ([]store.CompareItem, error)
	RunItemScores(ctx context.Context, runIDs []int64) (map[int64][]store.ItemScore, error)
}

// comparePageSize is how many items one page of the comparison shows.
const comparePageSize = 25

// showComparePage compares runs of one dataset: /compare?runs=1,2,3
// [&baseline=2][&disagree=1][&after=IDX]. The URL is the comparison, so it
// can be shared.
func (s *server) showComparePage(c *fiber.Ctx) error {
	var ids []int64
	var problem string
	for _, part := range strings.Split(c.Query("runs"), ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		id, err := parseID("runs", part)
		if err != nil {
			problem = err.Error()
			break
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if problem == "" && (len(ids) < 2 || len(ids) > 8) {
		problem = "Choose 2 to 8 runs to compare (runs=1,2,…)."
	}
	var baseline int64
	if raw := c.Query("baseline"); problem == "" && raw != "" {
		b, err := parseID("baseline", raw)
		switch {
		case err != nil:
			problem = err.Error()
		case !slices.Contains(ids, b):
			problem = fmt.Sprintf("baseline must be one of the runs compared (got %d)", b)
		}
		baseline = b
	}
	after := -1
	if raw := c.Query("after"); problem == "" && raw != "" {
		a, err := parseIdx("after", raw)
		if err != nil {
			problem = err.Error()
		}
		after = a
	}
	d := compare.Data{}
	if problem != "" {
		d.Error = problem
		return render(c, fiber.StatusUnprocessableEntity, compare.Page(d))
	}
	runs, err := s.Store.CompareRuns(c.UserContext(), viewer(c), ids)
	if err != nil {
		return err
	}
	if len(runs) != len(ids) {
		return fiber.NewError(fiber.StatusNotFound, "One of these runs does not exist or is not yours.")
	}
	for _, r := range runs[1:] {
		if r.DatasetID != runs[0].DatasetID {
			d.Error = fmt.Sprintf("Run %d is on another dataset than run %d: only runs on the same dataset can be compared.", r.ID, runs[0].ID)
			return render(c, fiber.StatusUnprocessableEntity, compare.Page(d))
		}
	}
	d.Baseline = runs[0].ID
	if baseline != 0 {
		d.Baseline = baseline
	}
	d.Disagree = c.Query("disagree") == "1"
	// Each run against the baseline, item by item: a paired test where
	// they share scored items; the page falls back on interval overlap
	// (and says so) where they share none.
	scores, err := s.Store.RunItemScores(c.UserContext(), ids)
	if err != nil {
		return err
	}
	d.Paired = map[int64]advise.QualityDiff{}
	for _, r := range runs {
		if r.ID == d.Baseline {
			continue
		}
		if diff, ok := advise.PairRuns(r.ID, d.Baseline, itemScores(scores[r.ID]), itemScores(scores[d.Baseline])); ok {
			d.Paired[r.ID] = diff
		}
	}
	for _, r := range runs {
		f := compare.NewFigures(r)
		f.GridCO2 = s.GridCO2
		d.Runs = append(d.Runs, f)
	}
	d.Items, err = s.Store.CompareItems(c.UserContext(), runs[0].DatasetID, ids, after, comparePageSize, d.Disagree)
	if err != nil {
		return err
	}
	list := make([]string, len(ids))
	for i, id := range ids {
		list[i] = strconv.FormatInt(id, 10)
	}
	d.URL = func(baseline int64, disagree bool, after int) string {
		q := url.Values{"runs": {strings.Join(list, ",")}, "baseline": {strconv.FormatInt(baseline, 10)}}
		if disagree {
			q.Set("disagree", "1")
		}
		if after >= 0 {
			q.Set("after", strconv.Itoa(after))
		}
		return "/compare?" + q.Encode()
	}
	if len(d.Items) == comparePageSize {
		d.NextURL = d.URL(d.Baseline, d.Disagree, d.Items[len(d.Items)-1].Idx)
	}
	return render(c, fiber.StatusOK, compare.Page(d))
}
