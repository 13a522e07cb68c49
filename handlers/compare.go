package handlers

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/judge"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/compare"
	"github.com/ruckus/ruckus/views/results"
	"github.com/ruckus/ruckus/views/said"
)

type compareStore interface {
	RunFiguresByID(ctx context.Context, v store.Viewer, ids []int64) ([]store.RunFigures, error)
	conclude.DriftSource
	CompareItems(ctx context.Context, datasetID int64, runIDs []int64, after, limit int, disagree bool) ([]store.CompareItem, error)
}

// comparePageSize is how many items one page of the comparison shows.
const comparePageSize = 25

// showComparePage compares runs of one dataset: /compare?runs=1,2,3
// [&baseline=2][&disagree=1][&after=IDX]. The URL is the comparison, so it
// can be shared.
func (s *server) showComparePage(c *fiber.Ctx) error {
	return s.renderComparePage(c, fiber.StatusOK, "", nil)
}

// renderComparePage renders the comparison the query names with status;
// judgeError and judgeForm carry a pairwise judging that was refused.
func (s *server) renderComparePage(c *fiber.Ctx, status int, judgeError string, judgeForm *results.JudgeForm) error {
	q, problem := readCompareQuery(c)
	d := compare.Data{}
	if problem != "" {
		d.Error = problem
		return render(c, fiber.StatusUnprocessableEntity, compare.Page(d))
	}
	runs, err := s.Store.RunFiguresByID(c.UserContext(), viewer(c), q.ids)
	if err != nil {
		return err
	}
	if len(runs) != len(q.ids) {
		return catalogueErr(fiber.StatusNotFound, "compare.error_missing")
	}
	if why, apart := conclude.DatasetsApart(runs); apart {
		d.Error = said.Word(c.UserContext(), why)
		return render(c, fiber.StatusUnprocessableEntity, compare.Page(d))
	}
	d.Baseline = cmp.Or(q.baseline, runs[0].ID)
	d.Disagree = c.Query("disagree") == "1"
	// Quality under the scorer identity the runs' verdict ranks by
	// (docs/verdict.md#which-runs-and-which-scorer), and each run's
	// figures with the quality its claims test.
	d.ScorerKey = conclude.ScorerFor(runs)
	cands, ev, err := conclude.WeighWithEvidence(c.UserContext(), s.Store, runs, d.ScorerKey)
	if err != nil {
		return err
	}
	d.Paired, d.Claims = conclude.AgainstBaseline(cands, ev, d.Baseline)
	for _, r := range runs {
		f := compare.NewFigures(r)
		f.Figures = f.AsWeighed(cands)
		f.GridCO2 = s.GridCO2
		d.Runs = append(d.Runs, f)
	}
	d.Items, err = s.Store.CompareItems(c.UserContext(), runs[0].DatasetID, q.ids, q.after, comparePageSize, d.Disagree)
	if err != nil {
		return err
	}
	d.URL = compareURL(q.ids)
	if len(d.Items) == comparePageSize {
		d.NextURL = d.URL(d.Baseline, d.Disagree, d.Items[len(d.Items)-1].Idx)
	}
	if d.Judge, err = s.pairJudge(c, runs, d.Items, d.URL(d.Baseline, d.Disagree, q.after), judgeForm); err != nil {
		return err
	}
	if judgeError != "" && d.Judge.Form != nil {
		d.Judge.Form.Errors[""] = judgeError
	}
	return render(c, status, compare.Page(d))
}

// compareQuery is what the compare page's URL asks for: the runs, the
// baseline among them (0: the first) and the item page (after -1: the
// first).
type compareQuery struct {
	ids      []int64
	baseline int64
	after    int
}

// readCompareQuery reads the compare page's URL; problem says what is
// wrong with it, "" when nothing is.
func readCompareQuery(c *fiber.Ctx) (q compareQuery, problem string) {
	q.after = -1
	q.ids, problem = parseCompareRuns(c.UserContext(), c.Query("runs"))
	if problem != "" && q.ids == nil && runsParse(c.Query("runs")) {
		// Every id reads: what is wrong is how many there are.
		problem = i18n.T(c.UserContext(), "compare.error_choose")
	}
	if raw := c.Query("baseline"); problem == "" && raw != "" {
		b, err := parseID("baseline", raw)
		switch {
		case err != nil:
			problem = i18n.ErrorText(c.UserContext(), err)
		case !slices.Contains(q.ids, b):
			problem = i18n.T(c.UserContext(), "compare.error_baseline", "Baseline", b)
		}
		q.baseline = b
	}
	if raw := c.Query("after"); problem == "" && raw != "" {
		a, err := parseIdx("after", raw)
		if err != nil {
			problem = i18n.ErrorText(c.UserContext(), err)
		}
		q.after = a
	}
	return q, problem
}

// runsParse says whether every id in a runs= list reads as one.
func runsParse(raw string) bool {
	for _, part := range strings.Split(raw, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		if _, err := parseID("runs", part); err != nil {
			return false
		}
	}
	return true
}

// compareURL makes the compare page's links for runs ids.
func compareURL(ids []int64) func(baseline int64, disagree bool, after int) string {
	list := make([]string, len(ids))
	for i, id := range ids {
		list[i] = strconv.FormatInt(id, 10)
	}
	return func(baseline int64, disagree bool, after int) string {
		q := url.Values{"runs": {strings.Join(list, ",")}, "baseline": {strconv.FormatInt(baseline, 10)}}
		if disagree {
			q.Set("disagree", "1")
		}
		if after >= 0 {
			q.Set("after", strconv.Itoa(after))
		}
		return "/compare?" + q.Encode()
	}
}

// pairJudge is the comparison's pairwise judge section: the judgings
// between the compared runs, the newest judged one's verdicts on the
// items shown, and the form to judge a pair of them.
func (s *server) pairJudge(c *fiber.Ctx, runs []store.RunFigures, items []store.CompareItem, back string, form *results.JudgeForm) (compare.PairJudge, error) {
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	var pj compare.PairJudge
	var err error
	if pj.Judgings, err = s.Store.PairJudgings(c.UserContext(), ids); err != nil {
		return pj, err
	}
	for i := range pj.Judgings {
		if pj.Judgings[i].State == "judged" {
			pj.Shown = &pj.Judgings[i]
			break
		}
	}
	if pj.Shown != nil && len(items) > 0 {
		idx := make([]int32, len(items))
		for i, it := range items {
			idx[i] = int32(it.Idx)
		}
		if pj.Verdicts, err = s.Store.PairVerdicts(c.UserContext(), pj.Shown.RunID, idx); err != nil {
			return pj, err
		}
	}
	var finished []store.RunFigures
	for _, r := range runs {
		if r.State != "queued" && r.State != "running" {
			finished = append(finished, r)
		}
	}
	if len(finished) < 2 {
		return pj, nil
	}
	if form == nil {
		form = &results.JudgeForm{MaxTokens: "512"}
	}
	if form.Pair == "" {
		form.Pair = fmt.Sprintf("%d,%d", finished[0].ID, finished[1].ID)
	}
	if form.Errors == nil {
		form.Errors = map[string]string{}
	}
	// The comparison's own query goes along, so a refused judging comes
	// back on the same comparison.
	form.Action, form.Mode = "/compare/judge"+strings.TrimPrefix(back, "/compare"), judge.Pairwise
	form.Pairs = nil
	for i, a := range finished {
		for _, b := range finished[i+1:] {
			form.Pairs = append(form.Pairs, results.Choice{Value: fmt.Sprintf("%d,%d", a.ID, b.ID),
				Label: i18n.T(c.UserContext(), "compare.judge_pair_label", "A", a.ID, "ModelA", a.ModelName, "B", b.ID, "ModelB", b.ModelName)})
		}
	}
	if err := s.judgeChoices(c.UserContext(), form); err != nil {
		return pj, err
	}
	pj.Form = form
	return pj, nil
}
