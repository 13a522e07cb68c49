package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/ruckus/ruckus/app/fleet"
)

const fleetUsage = "ruckus fleet submit FILE [--dry-run] [--wait] [--format summary|json] [--min-success RATE] | ruckus fleet export ID [--dir DIR]"

// cmdFleet is `ruckus fleet submit FILE` (a fleet manifest through the
// API: RUCKUS_URL, RUCKUS_TOKEN), optionally waiting for the fleet to
// finish, and `ruckus fleet export ID` (its artifact tree on disk).
func cmdFleet(ctx context.Context, args []string, out io.Writer) error {
	if len(args) > 0 && args[0] == "export" {
		return cmdFleetExport(ctx, args[1:], out)
	}
	if len(args) == 0 || args[0] != "submit" {
		return fmt.Errorf("%w: %s", errUsage, fleetUsage)
	}
	fs := newFlags("fleet submit", "ruckus fleet submit FILE [--dry-run] [--wait] [--format summary|json] [--min-success RATE]", out)
	dry := fs.Bool("dry-run", false, "validate and show the runs without creating anything")
	wait := fs.Bool("wait", false, "wait until every run finishes, with a progress bar, then print the report")
	format := fs.String("format", "summary", "with --wait, the report as a summary or as JSON")
	minSuccess := fs.Float64("min-success", 0, "with --wait, exit non-zero when the fleet's success rate (succeeded tests / tests) is below this, from 0 to 1")
	interval := fs.Duration("interval", 2*time.Second, "with --wait, how often to read the fleet's progress")
	file, err := parseFileArg(fs, args[1:])
	if err != nil {
		return err
	}
	switch {
	case *format != "summary" && *format != "json":
		return fmt.Errorf("%w: --format must be summary or json", errUsage)
	case !(*minSuccess >= 0 && *minSuccess <= 1):
		return fmt.Errorf("%w: --min-success must be between 0 and 1 (got %g)", errUsage, *minSuccess)
	case *interval < 100*time.Millisecond || *interval > time.Hour:
		return fmt.Errorf("%w: --interval must be between 100ms and 1h", errUsage)
	case *dry && *wait:
		return fmt.Errorf("%w: --dry-run creates nothing to wait for", errUsage)
	}
	var body fleetSubmitted
	base, status, err := postManifest(ctx, "/api/v1/fleets", file, *dry, &body)
	if err != nil {
		return err
	}
	if status != http.StatusOK && status != http.StatusCreated {
		return body.failure("the fleet manifest", status)
	}
	// With --format json the standard output is the report alone.
	info := out
	if *wait && *format == "json" {
		info = io.Discard
	}
	body.print(info, *dry)
	if *dry {
		return nil
	}
	fmt.Fprintf(info, "report: %s/fleets/%d (API: %s/api/v1/fleets/%d/report?format=json|csv|html)\n", base, body.FleetID, base, body.FleetID)
	if !*wait {
		return nil
	}
	rep, err := waitForFleet(ctx, body.FleetID, *interval, os.Stderr)
	if err != nil {
		return err
	}
	if err := writeFleetReport(out, rep, *format); err != nil {
		return err
	}
	if rep.Summary.SuccessRate < *minSuccess {
		return fmt.Errorf("fleet %d: success rate %.1f %% is below --min-success %.1f %%", rep.FleetID, 100*rep.Summary.SuccessRate, 100**minSuccess)
	}
	return nil
}

// fleetSubmitted is the API's answer to a fleet manifest: the fleet and
// the runs it created (or would create, for a dry run).
type fleetSubmitted struct {
	FleetID int64  `json:"fleet_id"`
	Name    string `json:"name"`
	Runs    []struct {
		FleetRunID                      string `json:"fleet_run_id"`
		RunID                           int64  `json:"run_id"`
		Repository                      string `json:"repository"`
		Scenario                        string `json:"scenario"`
		Model, Runtime, Hardware, Queue string
		Items                           int
		WaitingForAgent                 bool `json:"waiting_for_agent"`
	} `json:"runs"`
	submitErrors
}

// print lists the fleet's runs, one a line.
func (body *fleetSubmitted) print(w io.Writer, dry bool) {
	if dry {
		fmt.Fprintf(w, "valid; fleet %s would create %d run(s) (ids as if submitted now):\n", body.Name, len(body.Runs))
	} else {
		fmt.Fprintf(w, "fleet %d (%s) created with %d run(s):\n", body.FleetID, body.Name, len(body.Runs))
	}
	for _, r := range body.Runs {
		wait := ""
		if r.WaitingForAgent {
			wait = "  (waiting for an agent)"
		}
		scenario := r.Scenario
		if r.Repository != "" {
			scenario = r.Repository + "/" + r.Scenario
		}
		fmt.Fprintf(w, "  %s  %s: %s on %s / %s, queue %s, %d items%s\n", r.FleetRunID, scenario, r.Model, r.Runtime, r.Hardware, r.Queue, r.Items, wait)
	}
}

// writeFleetReport writes a finished fleet's report as JSON or as a
// summary.
func writeFleetReport(out io.Writer, rep fleet.Report, format string) error {
	if format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printFleetSummary(out, rep)
	return nil
}

// getFleetReport reads a fleet's report.
func getFleetReport(ctx context.Context, id int64) (fleet.Report, error) {
	var rep fleet.Report
	err := getJSON(ctx, fmt.Sprintf("/api/v1/fleets/%d/report", id), &rep)
	return rep, err
}

// getJSON decodes the API's answer at path into into.
func getJSON(ctx context.Context, path string, into any) error {
	res, err := apiGet(ctx, path)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if err := json.NewDecoder(io.LimitReader(res.Body, 256<<20)).Decode(into); err != nil {
		return fmt.Errorf("GET %s: the answer is not the JSON expected: %w", path, err)
	}
	return nil
}

// waitForFleet polls the fleet's report until no run is queued or
// running, drawing its tests done as a bar on a terminal (bars) and a
// line per change elsewhere.
func waitForFleet(ctx context.Context, id int64, interval time.Duration, progress io.Writer) (fleet.Report, error) {
	var bar *mpb.Bar
	var p *mpb.Progress
	if tty := barsTo(progress); tty != nil {
		p = mpb.NewWithContext(ctx, mpb.WithOutput(tty), mpb.WithWidth(120), mpb.WithRefreshRate(200*time.Millisecond))
		defer p.Wait()
	}
	last := ""
	for {
		rep, err := getFleetReport(ctx, id)
		if err != nil {
			if bar != nil {
				bar.Abort(false)
			}
			return rep, err
		}
		s := rep.Summary
		done := s.TotalTests - s.TotalPending
		line := fmt.Sprintf("fleet %d: %d/%d tests (%d succeeded, %d failed, %d timed out), %d/%d runs finished",
			id, done, s.TotalTests, s.TotalSucceeded, s.TotalFailed, s.TotalTimeout, rep.Runs-rep.Active, rep.Runs)
		switch {
		case p != nil:
			if bar == nil {
				bar = p.New(int64(max(s.TotalTests, 1)), mpb.BarStyle().Lbound("[").Filler("#").Tip("#").Padding(".").Rbound("]"), mpb.BarWidth(32),
					mpb.PrependDecorators(decor.Name(fmt.Sprintf("fleet %d ", id))),
					mpb.AppendDecorators(decor.CountersNoUnit("%d / %d tests"), decor.Name(" "), decor.Percentage(decor.WC{W: 5})))
			}
			bar.SetTotal(int64(max(s.TotalTests, 1)), false)
			bar.SetCurrent(int64(done))
		case line != last:
			fmt.Fprintln(progress, line)
		}
		last = line
		if rep.Active == 0 {
			if bar != nil {
				bar.SetTotal(int64(max(s.TotalTests, 1)), true)
			}
			return rep, nil
		}
		select {
		case <-ctx.Done():
			if bar != nil {
				bar.Abort(false)
			}
			return rep, ctx.Err()
		case <-time.After(interval):
		}
	}
}

// printFleetSummary prints the report's summary, its failures and its
// breakdown by provider and repository.
func printFleetSummary(out io.Writer, r fleet.Report) {
	fmt.Fprintf(out, "fleet %d (%s): %d run(s), %d completed, %d failed, %d cancelled\n", r.FleetID, r.Name, r.Runs, r.Completed, r.Failed, r.Cancelled)
	for _, m := range r.Summary.Metrics() {
		fmt.Fprintf(out, "  %-24s %s\n", m.Label, m.Value)
	}
	if len(r.Providers) > 0 {
		fmt.Fprintln(out, "by provider:")
		for _, p := range r.Providers {
			fmt.Fprintf(out, "  %-16s %d/%d tests succeeded (%.1f %%), %d tokens, cost %s\n", p.Provider, p.Succeeded, p.Tests, 100*p.TestSuccessRate,
				p.TotalTokens, usdOrDash(p.Cost))
		}
	}
	if len(r.Repositories) > 0 {
		fmt.Fprintln(out, "by repository:")
		for _, g := range r.Repositories {
			fmt.Fprintf(out, "  %-16s %d scenario(s), %d/%d tests succeeded (%.1f %%), cost %s\n", orNone(g.Repository), g.Scenarios, g.Succeeded, g.Tests,
				100*g.SuccessRate, usdOrDash(g.Cost))
		}
	}
	for _, f := range r.Failures {
		fmt.Fprintf(out, "failed: %s (%s/%s on %s): %s\n", printable(f.FleetRunID), printable(orNone(f.Repository)), printable(f.Scenario),
			printable(f.Target), printable(f.Error))
	}
}

// printable is s for a terminal: a run's error comes from an agent or a
// remote provider, and a control character (an escape sequence that
// moves the cursor, retitles the window or writes the clipboard) is shown
// as its Go escape instead of being obeyed.
func printable(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func usdOrDash(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("$%.4f", *v)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// cmdFleetExport is `ruckus fleet export ID [--dir DIR]`: the fleet
// document's artifact tree,
//
//	DIR/{name}-{submitted}/fleet.json            the report, with the manifest
//	                       csv/fleet-summary.csv, repositories.csv, providers.csv, categories.csv, runs.csv
//	                       report.html           the self-contained dashboard
//	                       {repository}/{provider}_{model}/{scenario}/results.json, results.csv, responses.jsonl
//
// with the artifacts the manifest's output.formats chose (all when none).
// DIR defaults to the manifest's output.base_dir when that is a path inside
// the current directory, else ./fleet-results.
func cmdFleetExport(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlags("fleet export", "ruckus fleet export ID [--dir DIR]", out)
	dir := fs.String("dir", "", "where to write the artifact tree (default: the manifest's output.base_dir, else ./fleet-results)")
	arg, err := parseFileArg(fs, args)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id <= 0 {
		return fmt.Errorf("%w: ID must be a fleet id (got %q)", errUsage, arg)
	}
	var f struct {
		Name        string          `json:"name"`
		SubmittedAt time.Time       `json:"submitted_at"`
		Manifest    json.RawMessage `json:"manifest"`
	}
	if err := getJSON(ctx, fmt.Sprintf("/api/v1/fleets/%d", id), &f); err != nil {
		return err
	}
	var m fleet.Manifest
	if err := json.Unmarshal(f.Manifest, &m); err != nil {
		return fmt.Errorf("fleet %d: its manifest cannot be read: %w", id, err)
	}
	if *dir == "" {
		if *dir, err = exportDir(id, m); err != nil {
			return err
		}
	}
	rep, err := getFleetReport(ctx, id)
	if err != nil {
		return err
	}
	root := filepath.Join(*dir, pathPart(f.Name)+"-"+f.SubmittedAt.UTC().Format(fleet.TimestampFormat))
	w := artifactWriter{root: root}
	w.fleetFiles(ctx, id, m, rep, f.Manifest)
	w.runFiles(ctx, m, rep.Rows)
	if w.err != nil {
		return w.err
	}
	fmt.Fprintf(out, "fleet %d (%s): %d file(s) written under %s\n", id, f.Name, w.files, root)
	return nil
}

// exportDir is where a fleet's artifacts go without --dir: the manifest's
// output.base_dir, else ./fleet-results.
func exportDir(id int64, m fleet.Manifest) (string, error) {
	if m.Output == nil || m.Output.BaseDir == "" {
		return "./fleet-results", nil
	}
	// The manifest may be another user's (an administrator exports any
	// fleet): its base_dir is followed only inside this directory.
	if !filepath.IsLocal(m.Output.BaseDir) {
		return "", fmt.Errorf("fleet %d: its output.base_dir %q is not a path inside this directory: give --dir", id, m.Output.BaseDir)
	}
	return m.Output.BaseDir, nil
}

// fleetFiles writes the fleet's own files in the formats m wants: the
// report with its manifest, the CSV tables and the dashboard.
func (w *artifactWriter) fleetFiles(ctx context.Context, id int64, m fleet.Manifest, rep fleet.Report, manifest json.RawMessage) {
	if m.WantsFormat(fleet.FormatJSON) {
		w.json("fleet.json", struct {
			fleet.Report
			Manifest json.RawMessage `json:"manifest"`
		}{rep, manifest})
	}
	if m.WantsFormat(fleet.FormatCSV) {
		for _, t := range fleet.CSVTables {
			w.download(ctx, filepath.Join("csv", t.File), fmt.Sprintf("/api/v1/fleets/%d/report?format=csv&table=%s", id, t.Name))
		}
	}
	if m.WantsFormat(fleet.FormatHTML) {
		w.download(ctx, "report.html", fmt.Sprintf("/api/v1/fleets/%d/report.html", id))
	}
}

// runFiles writes each run's files in a folder per repository, target
// and scenario: its row, its results and its responses.
func (w *artifactWriter) runFiles(ctx context.Context, m fleet.Manifest, rows []fleet.Row) {
	used := map[string]bool{}
	for _, row := range rows {
		target := row.Provider
		if target == "" {
			target = row.Runtime + "@" + row.Hardware
		}
		d := filepath.Join(pathPart(orNone(row.Repository)), pathPart(target+"_"+row.Model), pathPart(row.Scenario))
		// Two names may become one path ("a b" and "a_b", or names cut at
		// the same length): the later run gets its fleet run id appended
		// rather than overwriting the earlier one's files.
		if used[d] {
			d += "_" + pathPart(row.FleetRunID)
		}
		used[d] = true
		if m.WantsFormat(fleet.FormatJSON) {
			w.json(filepath.Join(d, "results.json"), row)
		}
		if m.WantsFormat(fleet.FormatCSV) {
			w.download(ctx, filepath.Join(d, "results.csv"), fmt.Sprintf("/api/v1/runs/%d/results?format=csv", row.RunID))
		}
		w.download(ctx, filepath.Join(d, "responses.jsonl"), fmt.Sprintf("/api/v1/runs/%d/results?format=jsonl", row.RunID))
	}
}

// unsafePath is what a path part may not hold: a name from the server
// (a model's, a scenario's) becomes a directory, never a way out of it.
var unsafePath = regexp.MustCompile(`[^A-Za-z0-9._@-]+`)

// pathPart makes s one safe path element: other characters become "_",
// and it never starts with a dot (so never "." or "..").
func pathPart(s string) string {
	s = unsafePath.ReplaceAllString(s, "_")
	s = strings.TrimLeft(s, ".")
	if len(s) > 120 {
		s = s[:120]
	}
	if s == "" {
		return "_"
	}
	return s
}

// artifactWriter writes files under root, keeping the first error.
type artifactWriter struct {
	root  string
	files int
	err   error
}

func (w *artifactWriter) create(rel string) (*os.File, bool) {
	if w.err != nil {
		return nil, false
	}
	path := filepath.Join(w.root, rel)
	if !strings.HasPrefix(path, filepath.Clean(w.root)+string(filepath.Separator)) {
		w.err = fmt.Errorf("%s is outside %s", path, w.root)
		return nil, false
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		w.err = err
		return nil, false
	}
	f, err := os.Create(path)
	if err != nil {
		w.err = err
		return nil, false
	}
	w.files++
	return f, true
}

func (w *artifactWriter) finish(f *os.File, err error) {
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("%s: %w", f.Name(), err)
	}
}

func (w *artifactWriter) json(rel string, v any) {
	f, ok := w.create(rel)
	if !ok {
		return
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	w.finish(f, enc.Encode(v))
}

func (w *artifactWriter) download(ctx context.Context, rel, apiPath string) {
	if w.err != nil {
		return
	}
	res, err := apiGet(ctx, apiPath)
	if err != nil {
		w.err = fmt.Errorf("%s: %w", rel, err)
		return
	}
	defer res.Body.Close()
	f, ok := w.create(rel)
	if !ok {
		return
	}
	_, err = io.Copy(f, res.Body)
	if errors.Is(err, context.Canceled) {
		err = ctx.Err()
	}
	w.finish(f, err)
}
