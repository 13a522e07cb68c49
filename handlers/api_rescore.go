package handlers

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/valid"
)

// apiRescoreRequest is the results page's rescore form as JSON: a scorer
// and the options that form takes (a regex pattern, a JSON Schema).
type apiRescoreRequest struct {
	Scorer        string                `json:"scorer"`
	ScorerOptions *apiRescoreOptionsReq `json:"scorer_options"`
}

type apiRescoreOptionsReq struct {
	Pattern string        `json:"pattern"`
	Schema  bench.JSONDoc `json:"schema"`
}

// apiRescoreRun queues the run's scoring with another scorer, as the
// results page's rescore does (rescoreRun), and answers 202 with what was
// queued: the run, the scorer and the options it scores with.
func (s *server) apiRescoreRun(c *fiber.Ctx) error {
	b, run, err := s.runOf(c)
	if err != nil {
		return err
	}
	var req apiRescoreRequest
	if errs := valid.DecodeJSON(c.Body(), &req); errs != nil {
		return fieldErrors422(c, errs)
	}
	var opts *bench.ScorerOptions
	if o := req.ScorerOptions; o != nil {
		opts = &bench.ScorerOptions{Pattern: o.Pattern, Schema: o.Schema}
	}
	queued, err := s.Benchmarks.Rescore(c.UserContext(), viewer(c), b.ID, run.ID, req.Scorer, opts)
	var ferrs bench.Errors
	switch {
	case errors.Is(err, store.ErrNotFound):
		// A reader of a shared benchmark may not change it.
		return fiber.NewError(fiber.StatusForbidden, "Only the owner or an administrator may rescore this run.")
	case errors.Is(err, bench.ErrScorer):
		return fieldErrors422(c, valid.Errors{{Path: "scorer", Message: err.Error()}})
	case errors.As(err, &ferrs):
		return c.Status(fiber.StatusUnprocessableEntity).JSON(apiPathErrors{Errors: ferrs})
	case err != nil:
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(queued)
}
