package handlers

import (
	"context"
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

	"github.com/ruckus/ruckus/app/i18n"
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
		return c.Status(fiber.StatusUnprocessableEntity).JSON(apiImportProblems{Errors: problems})
	}
	return c.Status(fiber.StatusCreated).JSON(apiImported{RunID: out.RunID, BenchmarkID: out.BenchmarkID, Matched: out.Matched,
		Unmatched: out.Unmatched, Missing: out.Missing, UnmatchedIDs: out.UnmatchedIDs,
		ResultsURL: fmt.Sprintf("/runs/%d", out.RunID)})
}

// apiImported is what an import answers (201).
type apiImported struct {
	RunID        int64    `json:"run_id"`
	BenchmarkID  int64    `json:"benchmark_id"`
	Matched      int      `json:"matched"`
	Unmatched    int      `json:"unmatched"`
	Missing      int      `json:"missing"`
	UnmatchedIDs []string `json:"unmatched_ids"`
	ResultsURL   string   `json:"results_url"`
}

// apiImportProblems is what a refused import answers (422).
type apiImportProblems struct {
	Errors []importProblem `json:"errors"`
}

// importProblem is what is wrong with an import: a form field, or a line
// of the file (Line > 0) and the field within that line's record.
type importProblem struct {
	Line    int    `json:"line,omitempty"`
	Field   string `json:"field"`
	Message string `json:"message"`
	// wording is Message as the catalogue words it, for the page.
	wording i18n.Message
}

// problemAt is an importProblem in field, its message the catalogue's key
// with args; Message is its English.
func problemAt(field, key string, args ...any) importProblem {
	m := i18n.M(key, args...)
	return importProblem{Field: field, Message: m.English(), wording: m}
}

// text is the problem in the reader's language, with its line and field.
func (p importProblem) text(ctx context.Context) string {
	msg := p.wording.Text(ctx)
	if p.wording.Key == "" {
		msg = p.Message
	}
	if p.Line > 0 {
		return i18n.T(ctx, "import_err.at_line", "Line", p.Line, "Field", p.Field, "Message", msg)
	}
	return i18n.T(ctx, "import_err.at_field", "Field", p.Field, "Message", msg)
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
			msgs = append(msgs, p.text(c.UserContext()))
		}
		if err := s.flashKey(c, "error", "import_err.refused", "Problems", strings.Join(msgs, "; ")); err != nil {
			return err
		}
		return redirect(c, fmt.Sprintf("/datasets/%d", datasetID))
	}
	msg := i18n.T(c.UserContext(), "import_err.imported", "Matched", out.Matched, "Unmatched", out.Unmatched, "Missing", out.Missing)
	if len(out.UnmatchedIDs) > 0 {
		msg = i18n.T(c.UserContext(), "import_err.imported_unmatched", "Imported", msg, "IDs", strings.Join(out.UnmatchedIDs, ", "))
	}
	if err := s.flash(c, "info", msg); err != nil {
		return err
	}
	return redirect(c, fmt.Sprintf("/runs/%d", out.RunID))
}

// receiveImport streams an import (multipart: file, name, model, scorer,
// in any order) into the benchmark service, which copies it into PostgreSQL as it
// arrives; problems are the caller's to show (422), err is a server
// failure, a missing dataset (404) or a body that cannot be read (400).
func (s *server) receiveImport(c *fiber.Ctx) (store.ImportedRun, []importProblem, error) {
	// Whether the caller may see the dataset comes first: anyone else is
	// told it does not exist, whatever they sent.
	ds, err := s.datasetParam(c)
	if err != nil {
		return store.ImportedRun{}, nil, err
	}
	mt, params, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return store.ImportedRun{}, nil, fiber.NewError(fiber.StatusUnsupportedMediaType, `send multipart/form-data with the results in the field "file"`)
	}
	body := io.LimitReader(c.Context().RequestBodyStream(), s.DatasetLimits.MaxFileBytes+1<<20)
	// Whatever is left when the import ends early (a refused line) is
	// read and dropped, so the client gets the answer rather than a
	// connection reset in the middle of its upload.
	defer io.Copy(io.Discard, body) //nolint:errcheck // best effort
	mr := multipart.NewReader(body, params["boundary"])
	if err := checkUploadCSRF(c, mr); err != nil {
		return store.ImportedRun{}, nil, err
	}
	in := store.NewImport{DatasetID: ds.ID}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return store.ImportedRun{}, []importProblem{problemAt("file", "import_err.no_file")}, nil
		}
		if err != nil {
			return store.ImportedRun{}, nil, fiber.NewError(fiber.StatusBadRequest, "the multipart body is broken: "+err.Error())
		}
		if p.FormName() == "file" {
			return s.importFile(c, mr, p, in)
		}
		if err := readImportField(p, &in); err != nil {
			return store.ImportedRun{}, nil, fiber.NewError(fiber.StatusBadRequest, "the multipart body is broken: "+err.Error())
		}
	}
}

// importFile streams the file part p into the benchmark service, which reads the
// fields after it (mr's further parts) when it needs them.
func (s *server) importFile(c *fiber.Ctx, mr *multipart.Reader, p *multipart.Part, in store.NewImport) (store.ImportedRun, []importProblem, error) {
	out, err := s.Benchmarks.ImportRun(c.UserContext(), viewer(c), in, p, func(in *store.NewImport) error {
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%w: %v", ingest.ErrUnreadable, err)
			}
			if err := readImportField(p, in); err != nil {
				return fmt.Errorf("%w: %v", ingest.ErrUnreadable, err)
			}
		}
	})
	var le *resultimport.Error
	switch {
	case errors.As(err, &le):
		return out, []importProblem{{Line: le.Line, Field: le.Field, Message: le.Message, wording: le.Wording}}, nil
	case errors.Is(err, store.ErrImportEmpty), errors.Is(err, store.ErrImportNoMatch):
		wording := i18n.M("import_err.empty")
		if errors.Is(err, store.ErrImportNoMatch) {
			wording = i18n.M("import_err.no_match_plain")
			if len(out.UnmatchedIDs) > 0 {
				wording = i18n.M("import_err.no_match", "N", out.Unmatched, "ID", fmt.Sprintf("%q", out.UnmatchedIDs[0]))
			}
		}
		return out, []importProblem{{Field: "file", Message: err.Error() + ": nothing was imported", wording: wording}}, nil
	case errors.Is(err, bench.ErrScorer):
		return out, []importProblem{{Field: "scorer", Message: err.Error(), wording: i18n.M("import_err.scorer", "Err", err.Error())}}, nil
	case errors.Is(err, store.ErrImportModel):
		return out, []importProblem{problemAt("model", "import_err.no_model")}, nil
	case errors.Is(err, ingest.ErrUnreadable):
		return out, nil, fiber.NewError(fiber.StatusBadRequest, err.Error())
	case err != nil:
		return out, nil, lookup("dataset", err)
	}
	if out.UnmatchedIDs == nil {
		out.UnmatchedIDs = []string{}
	}
	s.Logger.Info("results imported", "by", currentUser(c).ID, "run", out.RunID, "matched", out.Matched, "unmatched", out.Unmatched)
	return out, nil, nil
}

// readImportField reads an import's field p (other than the file) into in.
func readImportField(p *multipart.Part, in *store.NewImport) error {
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
