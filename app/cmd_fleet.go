package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// cmdFleet is `ruckus fleet submit FILE [--dry-run]`: a fleet manifest
// through the API (RUCKUS_URL, RUCKUS_TOKEN).
func cmdFleet(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "submit" {
		return fmt.Errorf("%w: ruckus fleet submit FILE [--dry-run]", errUsage)
	}
	fs := newFlags("fleet submit", "ruckus fleet submit FILE [--dry-run]", out)
	dry := fs.Bool("dry-run", false, "validate and show the runs without creating anything")
	file, err := parseFileArg(fs, args[1:])
	if err != nil {
		return err
	}
	base, token, err := apiSettings()
	if err != nil {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	url := base + "/api/v1/fleets"
	if *dry {
		url += "?dry_run=true"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, f)
	if err != nil {
		return err
	}
	if fi, err := f.Stat(); err == nil {
		req.ContentLength = fi.Size()
	}
	req.Header.Set("Content-Type", "application/yaml")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("submit to %s: %w", base, err)
	}
	defer res.Body.Close()
	var body struct {
		FleetID int64  `json:"fleet_id"`
		Name    string `json:"name"`
		Runs    []struct {
			FleetRunID                      string `json:"fleet_run_id"`
			RunID                           int64  `json:"run_id"`
			Scenario                        string `json:"scenario"`
			Model, Runtime, Hardware, Queue string
			Items                           int
			WaitingForAgent                 bool `json:"waiting_for_agent"`
		} `json:"runs"`
		Errors []struct{ Path, Message string } `json:"errors"`
		Error  string                           `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<20)).Decode(&body); err != nil {
		return fmt.Errorf("the server answered %s without JSON", res.Status)
	}
	switch res.StatusCode {
	case http.StatusOK, http.StatusCreated:
		if *dry {
			fmt.Fprintf(out, "valid; fleet %s would create %d run(s) (ids as if submitted now):\n", body.Name, len(body.Runs))
		} else {
			fmt.Fprintf(out, "fleet %d (%s) created with %d run(s):\n", body.FleetID, body.Name, len(body.Runs))
		}
		for _, r := range body.Runs {
			wait := ""
			if r.WaitingForAgent {
				wait = "  (waiting for an agent)"
			}
			fmt.Fprintf(out, "  %s  %s: %s on %s / %s, queue %s, %d items%s\n", r.FleetRunID, r.Scenario, r.Model, r.Runtime, r.Hardware, r.Queue, r.Items, wait)
		}
		if !*dry {
			fmt.Fprintf(out, "report: %s/fleets/%d (API: %s/api/v1/fleets/%d/report?format=json|csv)\n", base, body.FleetID, base, body.FleetID)
		}
		return nil
	case http.StatusUnprocessableEntity:
		var b strings.Builder
		b.WriteString("the fleet manifest is not valid:")
		for _, e := range body.Errors {
			p := e.Path
			if p == "" {
				p = "(manifest)"
			}
			fmt.Fprintf(&b, "\n  %s: %s", p, e.Message)
		}
		return fmt.Errorf("%s", b.String())
	}
	return fmt.Errorf("the server answered %s: %s", res.Status, body.Error)
}
