package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// cmdBench is `ruckus bench submit FILE [--dry-run]`: a manifest through
// the API (RUCKUS_URL, RUCKUS_TOKEN).
func cmdBench(ctx context.Context, args []string, out io.Writer) error {
	if len(args) > 0 && args[0] == "watch" {
		return cmdBenchWatch(ctx, args[1:], out)
	}
	if len(args) == 0 || args[0] != "submit" {
		return fmt.Errorf("%w: ruckus bench submit FILE [--dry-run] | ruckus bench watch ID", errUsage)
	}
	fs := newFlags("bench submit", "ruckus bench submit FILE [--dry-run]", out)
	dry := fs.Bool("dry-run", false, "validate and show the plan without creating anything")
	file, err := parseFileArg(fs, args[1:])
	if err != nil {
		return err
	}
	var body struct {
		BenchmarkID int64  `json:"benchmark_id"`
		Status      string `json:"status"`
		Runs        []struct {
			RunID                           int64 `json:"run_id"`
			Model, Runtime, Hardware, Queue string
			MemoryGB                        float64 `json:"memory_gb"`
			Items                           int
			WaitingForAgent                 bool        `json:"waiting_for_agent"`
			Engine                          jobs.Engine `json:"engine"`
			EstimateLow                     float64     `json:"estimated_seconds_low"`
			EstimateHigh                    float64     `json:"estimated_seconds_high"`
		} `json:"runs"`
		submitErrors
	}
	_, status, err := postManifest(ctx, "/api/v1/benchmarks", file, *dry, &body)
	if err != nil {
		return err
	}
	switch status {
	case http.StatusOK, http.StatusCreated:
		if *dry {
			fmt.Fprintf(out, "valid; it would create %d run(s):\n", len(body.Runs))
		} else {
			fmt.Fprintf(out, "benchmark %d created (%s) with %d run(s):\n", body.BenchmarkID, body.Status, len(body.Runs))
		}
		for _, r := range body.Runs {
			id := ""
			if r.RunID > 0 {
				id = fmt.Sprintf("run %d: ", r.RunID)
			}
			wait := ""
			if r.WaitingForAgent {
				wait = "  (waiting for an agent)"
			}
			engine := ""
			if len(r.Engine) > 0 {
				engine = " [" + r.Engine.Key() + "]"
			}
			took := ""
			if *dry && r.EstimateHigh > 0 {
				took = fmt.Sprintf(", about %s to %s", seconds(r.EstimateLow), seconds(r.EstimateHigh))
			}
			fmt.Fprintf(out, "  %s%s on %s / %s%s, %d items, ~%.1f GB%s%s\n", id, r.Model, r.Runtime, r.Hardware, engine, r.Items, r.MemoryGB, took, wait)
		}
		return nil
	}
	return body.failure("the manifest", status)
}

// seconds is a planned run's estimate, rounded as a person reads it.
func seconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

// submitErrors is what the API answers a manifest it refuses: field
// errors (422) or one error.
type submitErrors struct {
	Errors []struct{ Path, Message string } `json:"errors"`
	Error  string                           `json:"error"`
}

// failure says why the server refused what (a manifest, a fleet
// manifest), each field error on a line of its own.
func (e submitErrors) failure(what string, status int) error {
	if status != http.StatusUnprocessableEntity {
		return fmt.Errorf("the server answered %d %s: %s", status, http.StatusText(status), e.Error)
	}
	var b strings.Builder
	b.WriteString(what + " is not valid:")
	for _, fe := range e.Errors {
		p := fe.Path
		if p == "" {
			p = "(manifest)"
		}
		fmt.Fprintf(&b, "\n  %s: %s", p, fe.Message)
	}
	return fmt.Errorf("%s", b.String())
}

// postManifest sends FILE to the API's apiPath (RUCKUS_URL, RUCKUS_TOKEN),
// with ?dry_run=true when dry, and decodes the JSON answer into into. It
// returns the server's base URL and the answer's status.
func postManifest(ctx context.Context, apiPath, file string, dry bool, into any) (string, int, error) {
	base, token, err := apiSettings()
	if err != nil {
		return "", 0, err
	}
	f, err := os.Open(file)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	url := base + apiPath
	if dry {
		url += "?dry_run=true"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, f)
	if err != nil {
		return "", 0, err
	}
	if fi, err := f.Stat(); err == nil {
		req.ContentLength = fi.Size() // the server wants a length for small bodies
	}
	req.Header.Set("Content-Type", "application/yaml")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("submit to %s: %w", base, err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<20)).Decode(into); err != nil {
		return "", 0, fmt.Errorf("the server answered %s without JSON", res.Status)
	}
	return base, res.StatusCode, nil
}
