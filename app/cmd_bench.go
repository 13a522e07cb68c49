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
	base, token, err := apiSettings()
	if err != nil {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	url := base + "/api/v1/benchmarks"
	if *dry {
		url += "?dry_run=true"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, f)
	if err != nil {
		return err
	}
	if fi, err := f.Stat(); err == nil {
		req.ContentLength = fi.Size() // the server wants a length for small bodies
	}
	req.Header.Set("Content-Type", "application/yaml")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("submit to %s: %w", base, err)
	}
	defer res.Body.Close()
	var body struct {
		BenchmarkID int64  `json:"benchmark_id"`
		Status      string `json:"status"`
		Runs        []struct {
			RunID                           int64 `json:"run_id"`
			Model, Runtime, Hardware, Queue string
			MemoryGB                        float64 `json:"memory_gb"`
			Items                           int
			WaitingForAgent                 bool `json:"waiting_for_agent"`
		} `json:"runs"`
		Errors []struct{ Path, Message string } `json:"errors"`
		Error  string                           `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return fmt.Errorf("the server answered %s without JSON", res.Status)
	}
	switch res.StatusCode {
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
			fmt.Fprintf(out, "  %s%s on %s / %s, %d items, ~%.1f GB%s\n", id, r.Model, r.Runtime, r.Hardware, r.Items, r.MemoryGB, wait)
		}
		return nil
	case http.StatusUnprocessableEntity:
		var b strings.Builder
		b.WriteString("the manifest is not valid:")
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
