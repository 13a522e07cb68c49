package benchmarks

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/charts"
)

// Card is what a run's live card shows.
type Card struct {
	Run          store.Run
	Charts       []charts.Chart
	ErrorClasses []store.ErrorClassCount
}

func rate(ctx context.Context, tps float64) string {
	if tps <= 0 {
		return "–"
	}
	return i18n.Num(ctx, tps, 1)
}

func eta(r store.Run) string {
	if r.State != "running" || r.ETASeconds == nil {
		return "–"
	}
	return (time.Duration(*r.ETASeconds) * time.Second).Round(time.Second).String()
}

// benchmarkETA is an active benchmark's time left, or "unknown" (the
// reason is beside it).
func benchmarkETA(ctx context.Context, e store.BenchmarkEstimate) string {
	if e.ETASeconds == nil {
		return i18n.T(ctx, "bench.eta_unknown")
	}
	return (time.Duration(*e.ETASeconds) * time.Second).String()
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func orManifest(path string) string {
	if path == "" {
		return "manifest"
	}
	return path
}

func orNone(ctx context.Context, s string) string {
	if s == "" {
		return i18n.T(ctx, "common.none")
	}
	return s
}

func memory(ctx context.Context, r bench.PlannedRun) string {
	if r.CapacityGB == 0 {
		return i18n.T(ctx, "newbench.memory_cpu", "GB", i18n.Num(ctx, r.MemoryGB, 1))
	}
	return i18n.T(ctx, "newbench.memory_of", "GB", i18n.Num(ctx, r.MemoryGB, 1), "Has", i18n.Num(ctx, r.CapacityGB, 0))
}

// compareURL compares every run of the benchmark (up to eight).
func compareURL(b store.Benchmark) string {
	ids := ""
	for i, r := range b.Runs {
		if i == 8 {
			break
		}
		if i > 0 {
			ids += ","
		}
		ids += fmt.Sprint(r.ID)
	}
	return "/compare?runs=" + ids
}

// num formats a count or an id (strconv, not fmt: the runs table is
// rendered for every poll of every watcher).
func num[T int | int64](v T) string { return strconv.FormatInt(int64(v), 10) }

// id64 formats an id within a path or a test id.
func id64(v int64) string { return strconv.FormatInt(v, 10) }
