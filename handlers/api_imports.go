package handlers

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/imports"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// apiImportResults takes results made elsewhere (multipart: file, name,
// model, optional scorer) against dataset :id and stores them as a run:
// 201 {"run_id","matched","unmatched","missing",…}.
func (s *server) apiImportResults(c *fiber.Ctx) error {
	out, problems, err := s.receiveImport(c)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return c.Status(fiber.StatusUnprocessableEntity).JSON(fiber.Map{"errors": problems})
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"run_id": out.RunID, "benchmark_id": out.BenchmarkID, "matched": out.Matched,
		"unmatched": out.Unmatched, "missing": out.Missing, "unmatched_ids": out.UnmatchedIDs,
		"results_url": fmt.Sprintf("/runs/%d", out.RunID)})
}

// importResults is the dataset page's import form: on success the
// imported run's page, else back to the dataset with the problems.
func (s *server) importResults(c *fiber.Ctx) error {
	datasetID, _ := strconv.ParseInt(c.Params("id"), 10, 64)
	out, problems, err := s.receiveImport(c)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		var msgs []string
		for _, p := range problems {
			if line, ok := p["line"]; ok {
				msgs = append(msgs, fmt.Sprintf("line %v, %v: %v", line, p["field"], p["message"]))
			} else {
				msgs = append(msgs, fmt.Sprintf("%v: %v", p["field"], p["message"]))
			}
		}
		if err := s.flash(c, "error", "Import refused — "+strings.Join(msgs, "; ")); err != nil {
			return err
		}
		return redirect(c, fmt.Sprintf("/datasets/%d", datasetID))
	}
	msg := fmt.Sprintf("Imported: %d results matched, %d unmatched, %d items missing; scoring is queued.", out.Matched, out.Unmatched, out.Missing)
	if len(out.UnmatchedIDs) > 0 {
		msg += " Unmatched: " + strings.Join(out.UnmatchedIDs, ", ")
	}
	if err := s.flash(c, "info", msg); err != nil {
		return err
	}
	return redirect(c, fmt.Sprintf("/runs/%d", out.RunID))
}

// receiveImport reads and stores an import; problems are the caller's
// to show (422), err is a server failure or a missing dataset (404).
func (s *server) receiveImport(c *fiber.Ctx) (store.ImportedRun, []fiber.Map, error) {
	var out store.ImportedRun
	datasetID, _ := strconv.ParseInt(c.Params("id"), 10, 64)
	mt, params, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return out, nil, fiber.NewError(fiber.StatusUnsupportedMediaType, `send multipart/form-data with the results in the field "file"`)
	}
	body := io.LimitReader(c.Context().RequestBodyStream(), s.DatasetLimits.MaxFileBytes+1<<20)
	mr := multipart.NewReader(body, params["boundary"])
	in := store.NewImport{DatasetID: datasetID}
	var recs []store.ResultRecord
	var parseErr *imports.Error
	gotFile := false
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, nil, fiber.NewError(fiber.StatusBadRequest, "the multipart body is broken: "+err.Error())
		}
		switch p.FormName() {
		case "file":
			gotFile = true
			err := imports.Parse(p, func(l imports.Line) error {
				recs = append(recs, store.ResultRecord{Result: jobs.Result{CustomID: l.CustomID, Status: l.Status, Output: l.Output,
					FinishReason: l.FinishReason, PromptTokens: l.PromptTokens, CompletionTokens: l.CompletionTokens,
					TokensEstimated: l.TokensEstimated, HTTPStatus: l.HTTPStatus, RequestID: l.RequestID, ErrorClass: l.ErrorClass, Error: l.Error}})
				return nil
			})
			if errors.As(err, &parseErr) {
				_, _ = io.Copy(io.Discard, p)
			} else if err != nil {
				return out, nil, err
			}
		case "name", "model", "scorer":
			b, _ := io.ReadAll(io.LimitReader(p, 1024))
			v := strings.TrimSpace(string(b))
			switch p.FormName() {
			case "name":
				in.Name = v
			case "model":
				in.Model = v
			case "scorer":
				in.Scorer = v
			}
		}
	}
	var problems []fiber.Map
	if parseErr != nil {
		problems = append(problems, fiber.Map{"line": parseErr.Line, "field": parseErr.Field, "message": parseErr.Message})
	}
	if !gotFile {
		problems = append(problems, fiber.Map{"field": "file", "message": `no file: send the results in the multipart field "file"`})
	}
	if in.Model == "" {
		problems = append(problems, fiber.Map{"field": "model", "message": "name the registry model that made these results"})
	}
	if len(in.Name) > 200 {
		problems = append(problems, fiber.Map{"field": "name", "message": "at most 200 characters"})
	}
	if len(problems) > 0 {
		return out, problems, nil
	}
	if in.Name == "" {
		in.Name = "Imported: " + in.Model
	}
	out, err = s.Benchmarks.ImportRun(c.UserContext(), viewer(c), in, recs)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return out, nil, fiber.NewError(fiber.StatusNotFound, "no such dataset")
	case errors.Is(err, store.ErrImportModel), errors.Is(err, bench.ErrScorer):
		field := "model"
		if errors.Is(err, bench.ErrScorer) {
			field = "scorer"
		}
		return out, []fiber.Map{{"field": field, "message": err.Error()}}, nil
	case err != nil:
		return out, nil, err
	}
	if out.UnmatchedIDs == nil {
		out.UnmatchedIDs = []string{}
	}
	s.Logger.Info("results imported", "by", currentUser(c).ID, "run", out.RunID, "matched", out.Matched, "unmatched", out.Unmatched)
	return out, nil, nil
}
