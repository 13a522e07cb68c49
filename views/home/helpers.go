package home

import (
	"context"
	"strings"
	"time"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
)

func joined(s []string) string { return strings.Join(s, ", ") }

func ago(ctx context.Context, d time.Duration) string {
	switch {
	case d < 2*time.Second:
		return i18n.T(ctx, "time.just_now")
	case d < time.Minute:
		return i18n.T(ctx, "time.s_ago", "N", int(d.Seconds()))
	case d < time.Hour:
		return i18n.T(ctx, "time.min_ago", "N", int(d.Minutes()))
	case d < 48*time.Hour:
		return i18n.T(ctx, "time.h_ago", "N", int(d.Hours()))
	}
	return i18n.T(ctx, "time.days_ago", "N", int(d.Hours()/24))
}

// progress is a live run's "12 / 24 · 123.4 tokens/s · ETA 1m5s".
func progress(ctx context.Context, r store.Run) string {
	s := i18n.Int(ctx, int64(r.Completed)) + " / " + i18n.Int(ctx, int64(r.Total))
	if r.Throughput > 0 {
		s += " · " + i18n.T(ctx, "home.tokens_per_s", "N", i18n.Num(ctx, r.Throughput, 1))
	}
	if r.State == "running" && r.ETASeconds != nil {
		s += " · " + i18n.T(ctx, "home.eta", "D", (time.Duration(*r.ETASeconds)*time.Second).Round(time.Second).String())
	}
	if r.Errors > 0 {
		s += " · " + i18n.N(ctx, "home.errors", r.Errors)
	}
	return s
}

// runsText is "2 runs" or "3 runs, 1 not completed".
func runsText(ctx context.Context, runs, failed int) string {
	s := i18n.N(ctx, "home.runs", runs)
	if failed > 0 {
		s += ", " + i18n.N(ctx, "home.not_completed", failed)
	}
	return s
}

// wait is how long a run has been queued: "for 12 s", "for 3 min".
func wait(ctx context.Context, d time.Duration) string {
	switch {
	case d < time.Minute:
		return i18n.T(ctx, "time.for_s", "N", int(d.Seconds()))
	case d < time.Hour:
		return i18n.T(ctx, "time.for_min", "N", int(d.Minutes()))
	case d < 48*time.Hour:
		return i18n.T(ctx, "time.for_h", "N", int(d.Hours()))
	}
	return i18n.T(ctx, "time.for_days", "N", int(d.Hours()/24))
}
