package home

import (
	"fmt"
	"strings"
	"time"

	"github.com/ruckus/ruckus/app/store"
)

func greeting(name string) string {
	if name == "" {
		return ""
	}
	return ", " + name
}

func joined(s []string) string { return strings.Join(s, ", ") }

func ago(d time.Duration) string {
	switch {
	case d < 2*time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%d s ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// progress is a live run's "12 / 24 · 123.4 tokens/s · ETA 1m5s".
func progress(r store.Run) string {
	s := fmt.Sprintf("%d / %d", r.Completed, r.Total)
	if r.Throughput > 0 {
		s += fmt.Sprintf(" · %.1f tokens/s", r.Throughput)
	}
	if r.State == "running" && r.ETASeconds != nil {
		s += " · ETA " + (time.Duration(*r.ETASeconds) * time.Second).Round(time.Second).String()
	}
	if r.Errors > 0 {
		s += fmt.Sprintf(" · %d %s", r.Errors, plural(r.Errors, "error", "errors"))
	}
	return s
}

// runsText is "2 runs" or "3 runs, 1 not completed".
func runsText(runs, failed int) string {
	s := fmt.Sprintf("%d %s", runs, plural(runs, "run", "runs"))
	if failed > 0 {
		s += fmt.Sprintf(", %d not completed", failed)
	}
	return s
}

// wait is how long a run has been queued: "for 12 s", "for 3 min".
func wait(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("for %d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("for %d min", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("for %d h", int(d.Hours()))
	}
	return fmt.Sprintf("for %d days", int(d.Hours()/24))
}
