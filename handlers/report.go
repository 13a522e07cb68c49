package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/compare"
	"github.com/ruckus/ruckus/views/report"
	"github.com/ruckus/ruckus/views/said"
)

// benchmarkReport is a benchmark as one self-contained HTML file to share
// (inline styles and SVG, no scripts), or with ?format=json the whole
// summary as data: configuration, agents, runs with their figures,
// comparison and recommendation.
func (s *server) benchmarkReport(c *fiber.Ctx) error {
	b, err := s.benchmarkParam(c)
	if err != nil {
		return err
	}
	format := c.Query("format", "html")
	if format != "html" && format != "json" {
		return catalogueErr(fiber.StatusBadRequest, "report.error_format", "Format", strconv.Quote(format))
	}
	ctx := c.UserContext()
	manifest, _, err := s.Store.BenchmarkManifest(ctx, b.ID)
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for _, r := range b.Runs {
		names[r.AgentName] = true
	}
	agents, hardware, err := s.reportAgents(ctx, names)
	if err != nil {
		return err
	}
	// The runs the verdict weighs (conclude.WeighBenchmark): the succeeded
	// ones, quality under the scorer identity the verdict ranks by; the
	// others are listed with their state and not weighed
	// (docs/verdict.md#which-runs-and-which-scorer).
	j, err := conclude.WeighBenchmark(ctx, s.Store, viewer(c), b, false)
	if err != nil {
		return err
	}
	// Paired comparisons of quality only once the conclusions are
	// complete: until then the scores still change, and the report
	// withholds their significance as the recommendation page does
	// (docs/verdict.md#when-a-verdict-is-final).
	st := j.Status
	var ev conclude.Evidence
	if !st.Pending {
		if ev, err = conclude.GatherEvidence(ctx, s.Store, j.Each); err != nil {
			return err
		}
	}
	// A target repeated in the benchmark is one candidate, as in its
	// verdict and recommendation.
	rec := j.Recommend(conclude.Constraints{}, conclude.Weights{Quality: 1, Speed: 1, Cost: 1}, ev)
	var claims map[int64][]conclude.Margin
	if len(j.Each) > 0 {
		_, claims = conclude.AgainstBaseline(j.Each, ev, j.Each[0].RunID)
	}
	if format == "json" {
		apiRuns, err := s.apiRunsWithFigures(c, b.Runs)
		if err != nil {
			return err
		}
		return c.JSON(apiReport{BenchmarkID: b.ID, Name: b.Name, DatasetID: b.DatasetID, Dataset: b.DatasetName,
			CreatedAt: b.CreatedAt, Manifest: json.RawMessage(manifest), Agents: agents, Runs: apiRuns, Recommendation: recommendationJSON(rec),
			Pending: st.Pending, PendingReason: notFinal(context.Background(), st)})
	}
	for i, h := range hardware {
		if h != nil {
			agents[i].CPU = i18n.T(ctx, "report.cpu_line", "Model", h.CPUModel, "Cores", fmt.Sprint(h.CPUCores),
				"GiB", said.Fixed(ctx, float64(h.MemoryBytes)/(1<<30), 0))
		}
	}
	figs, compared, err := s.reportFigures(c, b, j)
	if err != nil {
		return err
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, manifest, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(manifest)
	}
	css := string(s.Assets.Body("pico.min.css")) + "\n" + string(s.Assets.Body("app.css"))
	d := report.Data{Benchmark: b, Manifest: pretty.String(), Generated: time.Now(), Version: s.Version, Agents: agents,
		Runs: figs, Compared: compared, Recommend: rec, Claims: claims, ScorerKey: j.ScorerKey, GridCO2: s.GridCO2, CSS: css, Pending: notFinal(ctx, st)}
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`inline; filename="benchmark-%d-report.html"`, b.ID))
	// The report carries its styles inline and runs nothing.
	c.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	return render(c, fiber.StatusOK, report.Page(d))
}

// reportFigures are the figures of every run of benchmark b for the
// report's runs table, and of the runs weighed (j) for its comparison
// table and charts, each with the quality it is compared on
// (conclude.Figures.AsWeighed); a run left out shows its own latest
// scoring, in the runs table only.
func (s *server) reportFigures(c *fiber.Ctx, b store.Benchmark, j conclude.Weighed) (all, compared []compare.Figures, err error) {
	// The weighed runs were read by WeighBenchmark; only those left out
	// are read here.
	byID := map[int64]store.RunFigures{}
	for _, r := range j.Runs {
		byID[r.ID] = r
	}
	var left []int64
	for _, r := range j.Left {
		left = append(left, r.ID)
	}
	if len(left) > 0 {
		rs, err := s.Store.RunFiguresByID(c.UserContext(), viewer(c), left)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range rs {
			byID[r.ID] = r
		}
	}
	for _, br := range b.Runs {
		r, ok := byID[br.ID]
		if !ok {
			continue
		}
		f := compare.NewFigures(r)
		f.GridCO2 = s.GridCO2
		if slices.ContainsFunc(j.Each, func(x conclude.Candidate) bool { return x.RunID == r.ID }) {
			f.Figures = f.AsWeighed(j.Each)
			compared = append(compared, f)
		}
		all = append(all, f)
	}
	return all, compared, nil
}

// reportAgents is the agents named in names as the report lists them, in
// English (the JSON report's words), with each one's hardware for the
// page's own wording of its CPU (nil where it sent none).
func (s *server) reportAgents(ctx context.Context, names map[string]bool) ([]report.Agent, []*jobs.Hardware, error) {
	all, err := s.Store.ListAgents(ctx)
	if err != nil {
		return nil, nil, err
	}
	var agents []report.Agent
	// hardware is each agent's, for the page's own wording of its CPU.
	var hardware []*jobs.Hardware
	for _, a := range all {
		if !names[a.Name] {
			continue
		}
		ra := report.Agent{Name: a.Name, Host: a.Host, Version: a.Version, Profile: a.Profile, Runtimes: a.Runtimes}
		var hw *jobs.Hardware
		var caps jobs.Capabilities
		if json.Unmarshal(a.Capabilities, &caps) == nil {
			h := caps.Hardware
			hw = &h
			ra.CPU = fmt.Sprintf("%s, %d cores, %.0f GiB", h.CPUModel, h.CPUCores, float64(h.MemoryBytes)/(1<<30))
			ra.Driver, ra.CUDA = h.DriverVersion, h.CUDAVersion
			for _, g := range h.GPUs {
				ra.GPUs = append(ra.GPUs, fmt.Sprintf("%s (%.0f GiB)", g.Name, float64(g.MemoryBytes)/(1<<30)))
			}
		}
		agents = append(agents, ra)
		hardware = append(hardware, hw)
	}
	return agents, hardware, nil
}

// apiReport is #/components/schemas/Report: a benchmark with its
// manifest, the agents that ran it, its runs and the recommendation.
type apiReport struct {
	BenchmarkID    int64                   `json:"benchmark_id"`
	Name           string                  `json:"name"`
	DatasetID      int64                   `json:"dataset_id"`
	Dataset        string                  `json:"dataset"`
	CreatedAt      time.Time               `json:"created_at"`
	Manifest       json.RawMessage         `json:"manifest"`
	Agents         []report.Agent          `json:"agents"`
	Runs           []apiRun                `json:"runs"`
	Recommendation conclude.Recommendation `json:"recommendation"`
	// Pending: the benchmark's conclusions are not complete yet
	// (docs/verdict.md#when-a-verdict-is-final); PendingReason says why.
	Pending       bool   `json:"pending"`
	PendingReason string `json:"pending_reason,omitempty"`
}
