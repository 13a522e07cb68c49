package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/fleet"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/fleets"
)

// Fleets plans and creates fleets; *fleet.Service satisfies it.
type Fleets interface {
	Plan(ctx context.Context, v store.Viewer, m fleet.Manifest) (fleet.Plan, error)
	Create(ctx context.Context, v store.Viewer, m fleet.Manifest) (fleet.Created, error)
}

// fleetStore is what the fleet pages and the fleet API read.
type fleetStore interface {
	ListFleets(ctx context.Context, v store.Viewer, limit int) ([]store.FleetSummary, error)
	FleetByID(ctx context.Context, v store.Viewer, id int64) (store.Fleet, error)
	FleetCategories(ctx context.Context, fleetID int64) ([]store.FleetCategory, error)
	FleetResults(ctx context.Context, fleetID int64) ([]store.FleetRunResults, []store.FleetDurations, error)
}

// maxFleetsListed bounds the fleets a list shows.
const maxFleetsListed = 200

// apiCreateFleet takes a fleet manifest in JSON or YAML. With
// ?dry_run=true it validates and returns the plan without creating
// anything.
func (s *server) apiCreateFleet(c *fiber.Ctx) error {
	m, err := fleet.Decode(bytes.NewReader(c.Body()))
	if err != nil {
		return fleetRefused(c, m, err)
	}
	if c.QueryBool("dry_run") {
		plan, err := s.Fleets.Plan(c.UserContext(), viewer(c), m)
		if err != nil {
			return fleetRefused(c, m, err)
		}
		return c.JSON(apiFleetDryRun{DryRun: true, Name: m.Name, SubmittedAt: plan.SubmittedAt, Runs: plan.Runs})
	}
	created, err := s.Fleets.Create(c.UserContext(), viewer(c), m)
	if err != nil {
		return fleetRefused(c, m, err)
	}
	return c.Status(fiber.StatusCreated).JSON(created)
}

// apiFleetDryRun is what a fleet's create with ?dry_run=true answers.
type apiFleetDryRun struct {
	DryRun      bool               `json:"dry_run"`
	Name        string             `json:"name"`
	SubmittedAt time.Time          `json:"submitted_at"`
	Runs        []fleet.PlannedRun `json:"runs"`
}

// fleetRefused answers a manifest's field errors (422) and a name taken
// within the second (409); any other error goes on to handleError.
func fleetRefused(c *fiber.Ctx, m fleet.Manifest, err error) error {
	var ferrs fleet.Errors
	switch {
	case errors.As(err, &ferrs):
		return c.Status(fiber.StatusUnprocessableEntity).JSON(apiPathErrors{Errors: ferrs})
	case errors.Is(err, store.ErrFleetRunIDTaken):
		return fiber.NewError(fiber.StatusConflict, "a fleet named "+m.Name+" was submitted within this second: submit it again")
	}
	return err
}

func (s *server) apiListFleets(c *fiber.Ctx) error {
	fs, err := s.Store.ListFleets(c.UserContext(), viewer(c), maxFleetsListed)
	if err != nil {
		return err
	}
	out := make([]apiFleetSummary, len(fs))
	for i, f := range fs {
		out[i] = apiFleetSummary{FleetID: f.ID, Name: f.Name, SubmittedAt: f.SubmittedAt, Scenarios: f.Scenarios,
			Runs: f.Runs, Completed: f.Completed, Failed: f.Failed, Cancelled: f.Cancelled, Active: f.Active}
	}
	return c.JSON(struct {
		Fleets []apiFleetSummary `json:"fleets"`
	}{out})
}

// fleetOf reads the fleet named by :id, if the viewer may see it (else 404).
func (s *server) fleetOf(c *fiber.Ctx) (store.Fleet, error) {
	id, err := idParam(c, "id", "fleet")
	if err != nil {
		return store.Fleet{}, err
	}
	f, err := s.Store.FleetByID(c.UserContext(), viewer(c), id)
	return f, lookup("fleet", err)
}

// apiFleetSummary is a fleet in GET /fleets: its runs counted by state.
type apiFleetSummary struct {
	FleetID     int64     `json:"fleet_id"`
	Name        string    `json:"name"`
	SubmittedAt time.Time `json:"submitted_at"`
	Scenarios   int       `json:"scenarios"`
	Runs        int       `json:"runs"`
	Completed   int       `json:"completed"`
	Failed      int       `json:"failed"`
	Cancelled   int       `json:"cancelled"`
	Active      int       `json:"active"`
}

// apiFleet is GET /fleets/{id}: the fleet, its manifest, the benchmark of
// each scenario and every run.
type apiFleet struct {
	FleetID     int64               `json:"fleet_id"`
	Name        string              `json:"name"`
	SubmittedAt time.Time           `json:"submitted_at"`
	Manifest    json.RawMessage     `json:"manifest"`
	Benchmarks  []apiFleetBenchmark `json:"benchmarks"`
	Runs        []apiFleetRun       `json:"runs"`
}

// apiFleetBenchmark is the benchmark of one scenario of a fleet.
type apiFleetBenchmark struct {
	BenchmarkID int64  `json:"benchmark_id"`
	Scenario    string `json:"scenario"`
	DatasetID   int64  `json:"dataset_id"`
	Dataset     string `json:"dataset"`
}

// apiFleetRun is a fleet's run in the API: the run as GET /runs/{id}
// gives it, with its scenario.
type apiFleetRun struct {
	apiRun
	Scenario    string `json:"scenario"`
	BenchmarkID int64  `json:"benchmark_id"`
}

func (s *server) apiGetFleet(c *fiber.Ctx) error {
	f, err := s.fleetOf(c)
	if err != nil {
		return err
	}
	bs := make([]apiFleetBenchmark, len(f.Benchmarks))
	for i, b := range f.Benchmarks {
		bs[i] = apiFleetBenchmark{BenchmarkID: b.ID, Scenario: b.Scenario, DatasetID: b.DatasetID, Dataset: b.DatasetName}
	}
	runs := make([]apiFleetRun, len(f.Runs))
	for i, r := range f.Runs {
		runs[i] = apiFleetRun{apiRun: toAPIRun(r.Run).withFigures(r.RunFigures), Scenario: r.Scenario, BenchmarkID: r.BenchmarkID}
	}
	return c.JSON(apiFleet{FleetID: f.ID, Name: f.Name, SubmittedAt: f.SubmittedAt, Manifest: f.Manifest,
		Benchmarks: bs, Runs: runs})
}

func (s *server) fleetReport(c *fiber.Ctx) (store.Fleet, fleet.Report, error) {
	f, err := s.fleetOf(c)
	if err != nil {
		return f, fleet.Report{}, err
	}
	cats, err := s.Store.FleetCategories(c.UserContext(), f.ID)
	if err != nil {
		return f, fleet.Report{}, err
	}
	results, durations, err := s.Store.FleetResults(c.UserContext(), f.ID)
	if err != nil {
		return f, fleet.Report{}, err
	}
	return f, fleet.BuildReport(f, cats, results, durations), nil
}

// apiFleetReport is the fleet's report: ?format=json (default), csv (one
// of the tables fleet.CSVTables, ?table=, runs by default) or html (the
// self-contained dashboard, as GET …/report.html gives it).
func (s *server) apiFleetReport(c *fiber.Ctx) error {
	format := c.Query("format", "json")
	table := c.Query("table", fleet.TableRuns)
	if format != "json" && format != "csv" && format != "html" {
		return catalogueErr(fiber.StatusBadRequest, "fleets.bad_format")
	}
	if !slices.ContainsFunc(fleet.CSVTables, func(t struct{ Name, File string }) bool { return t.Name == table }) {
		return catalogueErr(fiber.StatusBadRequest, "fleets.bad_table")
	}
	f, rep, err := s.fleetReport(c)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	switch format {
	case "json":
		return c.JSON(rep)
	case "html":
		return s.sendFleetDashboard(c, f, rep)
	}
	if err := rep.WriteCSV(&buf, table); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="fleet-%d-%s-%s.csv"`, f.ID, f.Name, table))
	return c.Send(buf.Bytes())
}

// apiFleetDashboard is the fleet's report as a self-contained HTML file.
func (s *server) apiFleetDashboard(c *fiber.Ctx) error {
	f, rep, err := s.fleetReport(c)
	if err != nil {
		return err
	}
	return s.sendFleetDashboard(c, f, rep)
}

func (s *server) sendFleetDashboard(c *fiber.Ctx, f store.Fleet, rep fleet.Report) error {
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf, time.Now()); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/html; charset=utf-8")
	// Nothing in it runs or loads: say so to the browser too.
	c.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	if c.QueryBool("download") {
		c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="fleet-%d-%s-report.html"`, f.ID, f.Name))
	}
	return c.Send(buf.Bytes())
}

func (s *server) showFleetsPage(c *fiber.Ctx) error {
	return s.fleetsPage(c, fiber.StatusOK, fleets.ListData{})
}

func (s *server) fleetsPage(c *fiber.Ctx, status int, d fleets.ListData) error {
	fs, err := s.Store.ListFleets(c.UserContext(), viewer(c), maxFleetsListed)
	if err != nil {
		return err
	}
	d.Fleets = fs
	return render(c, status, fleets.ListPage(d))
}

// submitFleet takes a fleet manifest file from the browser: "preview"
// shows the runs it would create, "launch" creates them and opens the
// fleet's report.
func (s *server) submitFleet(c *fiber.Ctx) error {
	var d fleets.ListData
	fh, err := c.FormFile("manifest")
	if err != nil {
		d.Errors = fleet.Errors{{Message: i18n.T(c.UserContext(), "fleets.choose_file")}}
		return s.fleetsPage(c, fiber.StatusUnprocessableEntity, d)
	}
	file, err := fh.Open()
	if err != nil {
		return err
	}
	defer file.Close()
	m, err := fleet.Decode(io.LimitReader(file, fleet.MaxManifestBytes+1))
	if err == nil {
		if c.FormValue("action") == "launch" {
			var created fleet.Created
			created, err = s.Fleets.Create(c.UserContext(), viewer(c), m)
			if err == nil {
				if err := s.flash(c, "info", i18n.N(c.UserContext(), "fleets.launched", len(created.Runs), "Name", created.Name)); err != nil {
					return err
				}
				return redirect(c, fmt.Sprintf("/fleets/%d", created.FleetID))
			}
		} else {
			var plan fleet.Plan
			plan, err = s.Fleets.Plan(c.UserContext(), viewer(c), m)
			if err == nil {
				d.Plan = plan.Runs
				if d.Plan == nil {
					d.Plan = []fleet.PlannedRun{}
				}
				return s.fleetsPage(c, fiber.StatusOK, d)
			}
		}
	}
	switch {
	case errors.As(err, &d.Errors):
		return s.fleetsPage(c, fiber.StatusUnprocessableEntity, d)
	case errors.Is(err, store.ErrFleetRunIDTaken):
		d.Errors = fleet.Errors{{Path: "name", Message: i18n.T(c.UserContext(), "fleets.name_taken")}}
		return s.fleetsPage(c, fiber.StatusConflict, d)
	}
	return err
}

func (s *server) showFleetPage(c *fiber.Ctx) error {
	f, rep, err := s.fleetReport(c)
	if err != nil {
		return err
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, f.Manifest, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(f.Manifest)
	}
	return render(c, fiber.StatusOK, fleets.ReportPage(rep, strings.TrimSpace(pretty.String())))
}
