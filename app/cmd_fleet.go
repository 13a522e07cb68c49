package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
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
		submitErrors
	}
	base, status, err := postManifest(ctx, "/api/v1/fleets", file, *dry, &body)
	if err != nil {
		return err
	}
	switch status {
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
	}
	return body.failure("the fleet manifest", status)
}
