package handlers

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/resultimport"
	"github.com/ruckus/ruckus/app/store"
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
	datasetID, err := idParam(c, "id", "dataset")
	if err != nil {
		return err
	}
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

// receiveImport streams an import (multipart: file, name, model, scorer,
// in any order) into the planner, which copies it into PostgreSQL as it
// arrives; problems are the caller's to show (422), err is a server
// failure, a missing dataset (404) or a body that cannot be read (400).
func (s *server) receiveImport(c *fiber.Ctx) (store.ImportedRun, []fiber.Map, error) {
	var out store.ImportedRun
	// Whether the caller may see the dataset comes first: anyone else is
	// told it does not exist, whatever they sent.
	ds, err := s.apiDatasetParam(c)
	if err != nil {
		return out, nil, err
	}
	datasetID := ds.ID
	mt, params, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return out, nil, fiber.NewError(fiber.StatusUnsupportedMediaType, `send multipart/form-data with the results in the field "file"`)
	}
	body := io.LimitReader(c.Context().RequestBodyStream(), s.DatasetLimits.MaxFileBytes+1<<20)
	// Whatever is left when the import ends early (a refused line) is
	// read and dropped, so the client gets the answer rather than a
	// connection reset in the middle of its upload.
	defer io.Copy(io.Discard, body) //nolint:errcheck // best effort
	mr := multipart.NewReader(body, params["boundary"])
	if err := checkUploadCSRF(c, mr); err != nil {
		return out, nil, err
	}
	readField := func(p *multipart.Part, in *store.NewImport) error {
		b, err := io.ReadAll(io.LimitReader(p, 1024))
		if err != nil {
			return err
		}
		v := strings.TrimSpace(string(b))
		switch p.FormName() {
		case "name":
			in.Name = v
		case "model":
			in.Model = v
		case "scorer":
			in.Scorer = v
		}
		return nil
	}
	in := store.NewImport{DatasetID: datasetID}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return out, []fiber.Map{{"field": "file", "message": `no file: send the results in the multipart field "file"`}}, nil
		}
		if err != nil {
			return out, nil, fiber.NewError(fiber.StatusBadRequest, "the multipart body is broken: "+err.Error())
		}
		if p.FormName() != "file" {
			if err := readField(p, &in); err != nil {
				return out, nil, fiber.NewError(fiber.StatusBadRequest, "the multipart body is broken: "+err.Error())
			}
			continue
		}
		out, err = s.Benchmarks.ImportRun(c.UserContext(), viewer(c), in, p, func(in *store.NewImport) error {
			for {
				p, err := mr.NextPart()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return fmt.Errorf("%w: %v", ingest.ErrUnreadable, err)
				}
				if err := readField(p, in); err != nil {
					return fmt.Errorf("%w: %v", ingest.ErrUnreadable, err)
				}
			}
		})
		var le *resultimport.Error
		switch {
		case errors.As(err, &le):
			problem := fiber.Map{"field": le.Field, "message": le.Message}
			if le.Line > 0 {
				problem["line"] = le.Line
			}
			return out, []fiber.Map{problem}, nil
		case errors.Is(err, store.ErrImportEmpty), errors.Is(err, store.ErrImportNoMatch):
			return out, []fiber.Map{{"field": "file", "message": err.Error() + ": nothing was imported"}}, nil
		case errors.Is(err, store.ErrImportModel), errors.Is(err, bench.ErrScorer):
			field := "model"
			if errors.Is(err, bench.ErrScorer) {
				field = "scorer"
			}
			return out, []fiber.Map{{"field": field, "message": err.Error()}}, nil
		case errors.Is(err, store.ErrNotFound):
			return out, nil, fiber.NewError(fiber.StatusNotFound, "no such dataset")
		case errors.Is(err, ingest.ErrUnreadable):
			return out, nil, fiber.NewError(fiber.StatusBadRequest, err.Error())
		case err != nil:
			return out, nil, err
		}
		if out.UnmatchedIDs == nil {
			out.UnmatchedIDs = []string{}
		}
		s.Logger.Info("results imported", "by", currentUser(c).ID, "run", out.RunID, "matched", out.Matched, "unmatched", out.Unmatched)
		return out, nil, nil
	}
}
