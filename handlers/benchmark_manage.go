package handlers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/valid"
)

// benchmarkChange is a rename and/or a change of visibility, from the API's
// JSON body or a page's form; an absent field stays as it is.
type benchmarkChange struct {
	Name       *string `json:"name" form:"name" validate:"omitnil,min=1,max=200,text"`
	Visibility *string `json:"visibility" form:"visibility" validate:"omitnil,oneof=private shared"`
	// VerdictScorer is the scorer identity the verdict ranks quality by
	// ("" for the one most runs were scored under); it must be one the
	// benchmark's runs were scored under (checkVerdictScorer).
	VerdictScorer *string `json:"verdict_scorer" form:"verdict_scorer" validate:"omitnil,max=4000,text"`
}

// parseBenchmarkChange reads the API's JSON body (one object, no unknown
// field) and checks it.
func parseBenchmarkChange(v *valid.Validator, body []byte) (benchmarkChange, []fieldError) {
	var ch benchmarkChange
	if errs := valid.DecodeJSON(body, &ch); len(errs) > 0 {
		return ch, errs
	}
	return ch, checkBenchmarkChange(v, i18n.Default().Lang("en"), &ch)
}

// checkBenchmarkChange trims the name and validates the change; an empty
// change is an error too, said in l's language (English for the API).
func checkBenchmarkChange(v *valid.Validator, l *i18n.Localizer, ch *benchmarkChange) []fieldError {
	if ch.Name != nil {
		n := strings.TrimSpace(*ch.Name)
		ch.Name = &n
	}
	if ch.Name == nil && ch.Visibility == nil && ch.VerdictScorer == nil {
		return []fieldError{{Path: "name", Message: l.T("benchpage.change_nothing")}}
	}
	return v.Struct(ch)
}

// checkVerdictScorer refuses a verdict scorer that none of benchmark b's
// runs was scored under, saying so in l's language (English for the API).
func (s *server) checkVerdictScorer(ctx context.Context, l *i18n.Localizer, b store.Benchmark, ch benchmarkChange) ([]fieldError, error) {
	if ch.VerdictScorer == nil || *ch.VerdictScorer == "" {
		return nil, nil
	}
	ids := make([]int64, len(b.Runs))
	for i, r := range b.Runs {
		ids[i] = r.ID
	}
	qs, err := s.Store.RunQualities(ctx, ids)
	if err != nil {
		return nil, err
	}
	var known []string
	for _, id := range ids {
		for _, q := range qs[id] {
			if q.ScorerKey == *ch.VerdictScorer {
				return nil, nil
			}
			if !slices.Contains(known, q.ScorerKey) {
				known = append(known, q.ScorerKey)
			}
		}
	}
	return []fieldError{{Path: "verdict_scorer", Message: l.T("benchpage.verdict_scorer_unknown", "Known", strings.Join(known, ", "))}}, nil
}

// writableBenchmark finds benchmark :id for a change: 404 when the viewer
// may not read it, 403 when they may read it (it is shared) but not change
// it.
func (s *server) writableBenchmark(c *fiber.Ctx) (store.Benchmark, error) {
	b, err := s.benchmarkParam(c)
	if err != nil {
		return b, err
	}
	if !b.Writable(viewer(c)) {
		return b, catalogueErr(fiber.StatusForbidden, "benchpage.not_yours")
	}
	return b, nil
}

// apiUpdateBenchmark renames and/or shares a benchmark:
// PATCH /api/v1/benchmarks/{id} {"name": "…", "visibility": "shared"}.
func (s *server) apiUpdateBenchmark(c *fiber.Ctx) error {
	b, err := s.writableBenchmark(c)
	if err != nil {
		return err
	}
	ch, errs := parseBenchmarkChange(s.validate, c.Body())
	if len(errs) == 0 {
		if errs, err = s.checkVerdictScorer(c.UserContext(), i18n.Default().Lang("en"), b, ch); err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		return c.Status(fiber.StatusUnprocessableEntity).JSON(apiPathErrors{Errors: errs})
	}
	if err := s.Store.UpdateBenchmark(c.UserContext(), viewer(c), b.ID, store.BenchmarkChange{Name: ch.Name, Visibility: ch.Visibility,
		VerdictScorer: ch.VerdictScorer}); err != nil {
		return err
	}
	b, err = s.benchmarkParam(c)
	if err != nil {
		return err
	}
	return c.JSON(apiBenchmarkChanged{BenchmarkID: b.ID, Name: b.Name, Visibility: b.Visibility, VerdictScorer: b.VerdictScorerKey})
}

// apiDeleteBenchmark deletes a benchmark softly: DELETE /api/v1/benchmarks/{id}.
func (s *server) apiDeleteBenchmark(c *fiber.Ctx) error {
	b, err := s.writableBenchmark(c)
	if err != nil {
		return err
	}
	err = s.Store.DeleteBenchmark(c.UserContext(), viewer(c), b.ID)
	if errors.Is(err, store.ErrBenchmarkActive) {
		return fiber.NewError(fiber.StatusConflict, store.ErrBenchmarkActive.Error())
	}
	if err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// changeBenchmark is the benchmark page's rename and share forms.
func (s *server) changeBenchmark(c *fiber.Ctx) error {
	b, err := s.writableBenchmark(c)
	if err != nil {
		return err
	}
	var ch benchmarkChange
	if v := c.FormValue("name"); c.Request().PostArgs().Has("name") {
		v = strings.Clone(v)
		ch.Name = &v
	}
	if v := c.FormValue("visibility"); c.Request().PostArgs().Has("visibility") {
		v = strings.Clone(v)
		ch.Visibility = &v
	}
	if v := c.FormValue("verdict_scorer"); c.Request().PostArgs().Has("verdict_scorer") {
		v = strings.Clone(v)
		ch.VerdictScorer = &v
	}
	l := i18n.From(c.UserContext())
	errs := checkBenchmarkChange(s.validate, l, &ch)
	if len(errs) == 0 {
		if errs, err = s.checkVerdictScorer(c.UserContext(), l, b, ch); err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Path + " " + e.Text(c.UserContext())
		}
		return catalogueErr(fiber.StatusUnprocessableEntity, "benchpage.not_changed", "Errors", strings.Join(msgs, "; "))
	}
	if err := s.Store.UpdateBenchmark(c.UserContext(), viewer(c), b.ID, store.BenchmarkChange{Name: ch.Name, Visibility: ch.Visibility,
		VerdictScorer: ch.VerdictScorer}); err != nil {
		return err
	}
	key, args := "benchpage.renamed", []any(nil)
	if ch.VerdictScorer != nil {
		key, args = "benchpage.verdict_scorer", []any{"Scorer", *ch.VerdictScorer}
	}
	if ch.Visibility != nil {
		key, args = "benchpage.now_private", nil
		if *ch.Visibility == store.VisibilityShared {
			key = "benchpage.now_shared"
		}
	}
	if err := s.flashKey(c, "info", key, args...); err != nil {
		return err
	}
	return redirect(c, fmt.Sprintf("/benchmarks/%d", b.ID))
}

// deleteBenchmark is the benchmark page's delete button.
func (s *server) deleteBenchmark(c *fiber.Ctx) error {
	b, err := s.writableBenchmark(c)
	if err != nil {
		return err
	}
	err = s.Store.DeleteBenchmark(c.UserContext(), viewer(c), b.ID)
	if errors.Is(err, store.ErrBenchmarkActive) {
		return catalogueErr(fiber.StatusConflict, "benchpage.still_active")
	}
	if err != nil {
		return err
	}
	if err := s.flashKey(c, "info", "benchpage.deleted", "Name", b.Name); err != nil {
		return err
	}
	return redirect(c, "/benchmarks")
}
