package jobs

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
)

// ReaperArgs reassigns the runs of agents that stopped heartbeating to
// other agents, and ends pooled agent sessions that began with defaults an
// agent gave the pool role; the server runs it periodically
// (ReaperInterval).
type ReaperArgs struct{}

// ReaperQueue is the reaper's own queue, worked by the server: on the
// server's queue a reassignment waited behind every score_run job queued before
// it. (Agents' queues are a profile and a runtime joined by "_", so no
// agent serves this one.)
const ReaperQueue = "reaper"

// Kind is the job kind, stable across versions.
func (ReaperArgs) Kind() string { return "agent_reaper" }

// InsertOpts puts the job on the reaper's queue, once per period.
func (ReaperArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: ReaperQueue, MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByPeriod: time.Second}}
}

// Reaper is the part of the benchmark service the worker needs.
type Reaper interface {
	ReassignStaleRuns(ctx context.Context) (int, error)
	SweepStalledAgents(ctx context.Context) (int, error)
}

// ReaperWorker runs the reaper.
type ReaperWorker struct {
	river.WorkerDefaults[ReaperArgs]
	Reaper Reaper
	// Searches, when set, decides the budgeted searches' rungs whose runs
	// have all ended (docs/benchmarks.md#budgeted-search): periodic, so a
	// rung is decided after a restart or an agent's death as well.
	Searches SearchDecider
}

// SearchDecider decides the search rungs that are ready
// (bench.Service.DecideSearches).
type SearchDecider interface {
	DecideSearches(ctx context.Context) (int, error)
}

// Work reassigns every stale agent's runs, ends agent sessions that
// stall the others and decides search rungs; a sweep that ended sessions is logged, as the trace
// of an agent's attack.
func (w *ReaperWorker) Work(ctx context.Context, _ *river.Job[ReaperArgs]) error {
	_, err := w.Reaper.ReassignStaleRuns(ctx)
	n, serr := w.Reaper.SweepStalledAgents(ctx)
	if n > 0 {
		slog.WarnContext(ctx, "ended agent sessions idle in a transaction or in one statement past their bounds", "sessions", n)
	}
	var derr error
	if w.Searches != nil {
		_, derr = w.Searches.DecideSearches(ctx)
	}
	return errors.Join(err, serr, derr)
}

// ReaperInterval is how often the server looks for stale agents' runs: a
// twentieth of the stale period, between 0.5 s and 1 s, so a dead agent's
// run is reassigned within the stale period plus 1 s, and another agent
// (polling every second) takes it up soon after. The look is one indexed
// query.
func ReaperInterval(staleAfter time.Duration) time.Duration {
	return min(max(staleAfter/20, 500*time.Millisecond), time.Second)
}
