package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/dataset/synth"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/views/datasets"
)

// datasetGenerateStore is what generating a dataset needs besides the
// uploader: the generator spec it answers with.
type datasetGenerateStore interface {
	DatasetGenerator(ctx context.Context, v store.Viewer, id int64) (json.RawMessage, error)
}

// generateRequest is the body of POST /api/v1/datasets/generate: the spec's
// fields, plus the dataset's name and visibility.
type generateRequest struct {
	synth.Spec
	Name       string `json:"name"`
	Visibility string `json:"visibility"`
}

// apiGenerateDataset generates a synthetic dataset from a JSON spec: 201
// with the dataset and its spec, or 422 with the errors by field.
func (s *server) apiGenerateDataset(c *fiber.Ctx) error {
	var req generateRequest
	if errs := valid.DecodeJSON(c.Body(), &req); errs != nil {
		return c.Status(fiber.StatusUnprocessableEntity).JSON(apiPathErrors{Errors: errs})
	}
	up, err := s.Uploader.Upload(c.UserContext(), ingest.Source{},
		ingest.Request{Kind: ingest.Generated, Viewer: viewer(c), Name: req.Name, Visibility: req.Visibility, Spec: req.Spec})
	ds := up.Dataset
	var errs synth.Errors
	if errors.As(err, &errs) {
		return c.Status(fiber.StatusUnprocessableEntity).JSON(apiPathErrors{Errors: errs})
	}
	if err != nil {
		return err
	}
	s.Logger.Info("synthetic dataset generated", "id", ds.ID, "items", ds.ItemCount, "kind", req.Kind)
	gen, err := s.Store.DatasetGenerator(c.UserContext(), viewer(c), ds.ID)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(struct {
		apiDataset
		Generator json.RawMessage `json:"generator"`
	}{toAPIDataset(ds), gen})
}

// generateDataset handles the generate form: on success to the new
// dataset's page; else the form again, 422, with the errors beside the
// fields.
func (s *server) generateDataset(c *fiber.Ctx) error {
	st := datasets.GenerateState{Name: strings.Clone(c.FormValue("name")), Visibility: strings.Clone(c.FormValue("visibility")), Errors: map[string]string{}}
	st.Spec = specFromForm(c.UserContext(), c.FormValue, st.Errors)
	req := ingest.Request{Kind: ingest.Generated, Viewer: viewer(c), Name: st.Name, Visibility: st.Visibility, Spec: st.Spec}
	if len(st.Errors) > 0 {
		// Numbers that did not parse: say what else is wrong too.
		req.Spec.Normalize()
		_, errs := ingest.CheckGenerated(&req)
		for _, e := range errs {
			if _, dup := st.Errors[e.Path]; !dup {
				st.Errors[e.Path] = e.Text(c.UserContext())
			}
		}
	} else {
		up, err := s.Uploader.Upload(c.UserContext(), ingest.Source{}, req)
		ds := up.Dataset
		var errs synth.Errors
		switch {
		case errors.As(err, &errs):
			for _, e := range errs {
				if _, dup := st.Errors[e.Path]; !dup {
					st.Errors[e.Path] = e.Text(c.UserContext())
				}
			}
		case err != nil:
			return err
		default:
			s.Logger.Info("synthetic dataset generated", "id", ds.ID, "items", ds.ItemCount, "kind", st.Spec.Kind)
			if err := s.flash(c, "info", i18n.N(c.UserContext(), "generate.generated", ds.ItemCount, "Name", ds.Name)); err != nil {
				return err
			}
			return redirect(c, fmt.Sprintf("/datasets/%d", ds.ID))
		}
	}
	if c.Get("HX-Request") != "" {
		return render(c, fiber.StatusUnprocessableEntity, datasets.GenerateForm(st))
	}
	list, err := s.Store.ListDatasets(c.UserContext(), viewer(c))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusUnprocessableEntity, datasets.ListPage(datasets.ListData{Datasets: list, MaxBytes: s.DatasetLimits.MaxFileBytes, Generate: &st}))
}

// specFromForm reads the generate form's fields into a spec; numbers that
// do not parse are errors beside their field, in ctx's language. Fields of
// the other workloads are read too, and ignored by the spec's kind.
func specFromForm(ctx context.Context, get func(string, ...string) string, errs map[string]string) synth.Spec {
	field := func(k string) string { return strings.TrimSpace(get(k)) }
	integer := func(k string) int {
		v := field(k)
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1<<30 {
			errs[k] = i18n.T(ctx, "generate.whole_number")
		}
		return n
	}
	float := func(k string) float64 {
		v := field(k)
		if v == "" {
			return 0
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			errs[k] = i18n.T(ctx, "generate.number")
		}
		return x
	}
	dist := func(name string) synth.Dist {
		return synth.Dist{Kind: field(name + ".dist"), Value: integer(name + ".value"), Min: integer(name + ".min"), Max: integer(name + ".max"),
			Mean: float(name + ".mean"), StdDev: float(name + ".stddev"), Median: float(name + ".median"), Sigma: float(name + ".sigma")}
	}
	sp := synth.Spec{Kind: field("kind"), Count: integer("count"), Endpoint: field("endpoint"), Input: dist("input"), Output: dist("output"),
		FreeOutput: field("free_output") != "", Prefixes: integer("prefixes"), SuffixesPerPrefix: integer("suffixes_per_prefix"),
		PrefixTokens: integer("prefix_tokens"), Rate: float("rate"), Arrival: field("arrival"), Trace: strings.Clone(get("trace"))}
	if seed := field("seed"); seed != "" {
		n, err := strconv.ParseUint(seed, 10, 64)
		if err != nil {
			errs["seed"] = i18n.T(ctx, "generate.whole_number")
		}
		sp.Seed = n
	}
	switch sp.Kind {
	case synth.KindMultiTurn:
		sp.Turns = dist("turns")
	case synth.KindTrace:
		if strings.TrimSpace(sp.Trace) != "" {
			// A pasted trace sets the items and their times.
			sp.Count, sp.Rate, sp.Arrival = 0, 0, ""
		} else {
			sp.Trace = ""
		}
	}
	if sp.Kind != synth.KindTrace {
		sp.Trace, sp.Rate, sp.Arrival = "", 0, ""
	}
	if sp.Kind != synth.KindSharedPrefix {
		sp.Prefixes, sp.SuffixesPerPrefix, sp.PrefixTokens = 0, 0, 0
	}
	return sp
}
