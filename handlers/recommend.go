package handlers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/recommend"
)

// maxWeight bounds each ranking weight.
const maxWeight = 1_000_000

// parseRecommendForm reads constraints and weights from the query; a value
// it cannot use is named in the form's error and ignored.
func parseRecommendForm(c *fiber.Ctx) (recommend.Form, conclude.Constraints, conclude.Weights) {
	f := recommend.Form{MinQuality: c.Query("min_quality"), MaxTTFT: c.Query("max_ttft_p95"), MaxE2E: c.Query("max_e2e_p95"),
		MaxCost: c.Query("max_cost"), MaxGPUMem: c.Query("max_gpu_mem"), Hardware: map[string]bool{},
		WQuality: c.Query("w_quality", "1"), WSpeed: c.Query("w_speed", "1"), WCost: c.Query("w_cost", "1")}
	var cons conclude.Constraints
	// Each problem in English for the API and in the reader's language
	// for the page.
	var problems, worded []string
	en, loc := i18n.Default().Lang("en"), i18n.From(c.UserContext())
	problem := func(key string, args ...any) {
		problems = append(problems, en.T(key, args...))
		worded = append(worded, loc.T(key, args...))
	}
	num := func(name, raw string, dst **float64) {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			return
		}
		v, err := parseFinite(name, raw)
		if err != nil || v < 0 {
			problem("recommend.error_number", "Name", name, "Got", strconv.Quote(raw))
			return
		}
		*dst = &v
	}
	num("min_quality", f.MinQuality, &cons.MinQuality)
	num("max_ttft_p95", f.MaxTTFT, &cons.MaxTTFTp95)
	num("max_e2e_p95", f.MaxE2E, &cons.MaxE2Ep95)
	num("max_cost", f.MaxCost, &cons.MaxCost)
	num("max_gpu_mem", f.MaxGPUMem, &cons.MaxGPUMem)
	for _, h := range c.Context().QueryArgs().PeekMulti("hardware") {
		for _, p := range strings.Split(string(h), ",") {
			if p = strings.TrimSpace(p); p != "" {
				cons.Hardware = append(cons.Hardware, p)
				f.Hardware[p] = true
			}
		}
	}
	var w conclude.Weights
	for _, x := range []struct {
		name, raw string
		dst       *float64
	}{{"w_quality", f.WQuality, &w.Quality}, {"w_speed", f.WSpeed, &w.Speed}, {"w_cost", f.WCost, &w.Cost}} {
		// Weights are relative; the bound keeps their sum and products
		// finite.
		v, err := parseFinite(x.name, x.raw)
		if err != nil || v < 0 || v > maxWeight {
			problem("recommend.error_weight", "Name", x.name, "Max", fmt.Sprint(maxWeight), "Got", strconv.Quote(x.raw))
			continue
		}
		*x.dst = v
	}
	f.Error, f.Message = strings.Join(problems, "; "), strings.Join(worded, "; ")
	return f, cons, w
}

// recommendation builds the benchmark's recommendation from the runs its
// verdict weighs (conclude.WeighBenchmark): the succeeded runs, a target
// repeated in the benchmark as one candidate, quality under the scorer
// identity the verdict ranks by; the runs that did not succeed are listed
// with their state, not ranked (docs/verdict.md#which-runs-and-which-scorer).
func (s *server) recommendation(c *fiber.Ctx) (recommend.Data, []conclude.Candidate, error) {
	b, err := s.benchmarkParam(c)
	if err != nil {
		return recommend.Data{}, nil, err
	}
	j, err := conclude.WeighBenchmark(c.UserContext(), s.Store, viewer(c), b, false)
	if err != nil {
		return recommend.Data{}, nil, err
	}
	// Paired comparisons of quality between every two once the runs have
	// finished (until then their scores still change): the ranking's
	// test of significance. WeighBenchmark read the status.
	st := j.Status
	var ev conclude.Evidence
	if !st.Pending && len(j.Cands) > 1 {
		if ev, err = conclude.GatherEvidence(c.UserContext(), s.Store, j.Cands); err != nil {
			return recommend.Data{}, nil, err
		}
	}
	form, cons, w := parseRecommendForm(c)
	rec := j.Recommend(cons, w, ev)
	d := recommend.Data{Benchmark: b, Profiles: hardwareProfiles(j.Runs), Form: form, Rec: rec, Charts: recommend.Charts(c.UserContext(), j.Cands, rec),
		Pending: notFinal(c.UserContext(), st)}
	return d, j.Cands, nil
}

// hardwareProfiles are the runs' hardware profiles, each once, in order:
// the recommendation form's choices.
func hardwareProfiles(runs []store.RunFigures) []string {
	var profiles []string
	for _, r := range runs {
		if !slices.Contains(profiles, r.HardwareProfile) {
			profiles = append(profiles, r.HardwareProfile)
		}
	}
	return profiles
}

// recommendOver ranks runs under the constraints and weights of the
// request's recommendation form, their quality under scorer identity key
// (each run keeps every quality it was scored with), with paired
// comparisons of quality when paired (their scores are final); with
// repeats, a target's runs of one benchmark are one candidate.
func (s *server) recommendOver(c *fiber.Ctx, runs []store.RunFigures, key string, paired, repeats bool) (recommend.Data, []conclude.Candidate, error) {
	cands, err := conclude.Weigh(c.UserContext(), s.Store, runs, key)
	if err != nil {
		return recommend.Data{}, nil, err
	}
	if repeats {
		cands = conclude.MergeRepeats(cands)
	}
	var ev conclude.Evidence
	if paired && len(cands) > 1 {
		var err error
		if ev, err = conclude.GatherEvidence(c.UserContext(), s.Store, cands); err != nil {
			return recommend.Data{}, nil, err
		}
	}
	form, cons, w := parseRecommendForm(c)
	rec := conclude.RecommendWith(cands, cons, w, ev)
	return recommend.Data{Profiles: hardwareProfiles(runs), Form: form, Rec: rec, Charts: recommend.Charts(c.UserContext(), cands, rec)}, cands, nil
}

func (s *server) showRecommendationPage(c *fiber.Ctx) error {
	d, _, err := s.recommendation(c)
	if err != nil {
		return err
	}
	return renderRecommendation(c, d)
}

func (s *server) apiRecommendation(c *fiber.Ctx) error {
	d, _, err := s.recommendation(c)
	if err != nil {
		return err
	}
	return answerRecommendation(c, d)
}

// renderRecommendation shows a recommendation's page: 422 when its form
// has a mistake.
func renderRecommendation(c *fiber.Ctx, d recommend.Data) error {
	status := fiber.StatusOK
	if d.Form.Error != "" {
		status = fiber.StatusUnprocessableEntity
	}
	return render(c, status, recommend.Page(d))
}

// answerRecommendation is a recommendation in the API: 422 with the form's
// mistake, else the recommendation as recommendationJSON gives it.
func answerRecommendation(c *fiber.Ctx, d recommend.Data) error {
	if d.Form.Error != "" {
		return c.Status(fiber.StatusUnprocessableEntity).JSON(apiError{Error: d.Form.Error})
	}
	return c.JSON(apiRecommendation{Recommendation: recommendationJSON(d.Rec), Pending: d.Pending != "", PendingReason: d.Pending})
}

// recommendationJSON is a recommendation as the API answers it: its lists
// are empty, never null.
func recommendationJSON(rec conclude.Recommendation) conclude.Recommendation {
	if rec.Feasible == nil {
		rec.Feasible = []conclude.Ranked{}
	}
	if rec.Excluded == nil {
		rec.Excluded = []conclude.Excluded{}
	}
	if rec.LeftOut == nil {
		rec.LeftOut = []conclude.LeftOut{}
	}
	return rec
}
