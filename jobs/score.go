package jobs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/riverqueue/river"
)

// ScoreRunArgs scores a run's results on the server: queued by the agent
// when a run ends, and again when a user picks another scorer.
type ScoreRunArgs struct {
	RunID int64 `json:"run_id"`
	// Scorer overrides the benchmark's; empty uses it.
	Scorer string `json:"scorer,omitempty"`
	// Options are the scorer's settings (scorer_options: a regex pattern,
	// a JSON Schema); empty uses the benchmark's when Scorer is its own.
	Options json.RawMessage `json:"scorer_options,omitempty"`
}

// Kind is the job kind, stable across versions.
func (ScoreRunArgs) Kind() string { return "score_run" }

// InsertOpts puts scoring on the server's queue.
func (ScoreRunArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: ServerQueue, MaxAttempts: 3}
}

// RunScorer is what the worker needs (score.Service).
type RunScorer interface {
	ScoreRunOptions(ctx context.Context, runID int64, scorer string, options json.RawMessage) error
}

// RegressionChecker flags a scored run's target when it is significantly
// worse than the same target in the previous comparable benchmark
// (regress.Checker).
type RegressionChecker interface {
	CheckRegressions(ctx context.Context, runID int64) error
}

// RunStatsComputer keeps a finished run's figures with their intervals
// and, once it is scored, its paired comparisons of quality with the
// other runs of its benchmark (conclude.Keeper: the engine computes, the
// store writes).
type RunStatsComputer interface {
	ComputeRunStats(ctx context.Context, runID int64) error
	PairRunQualities(ctx context.Context, runID int64) error
}

// RunAttester signs a finished run's result rows (attest.Service).
type RunAttester interface {
	AttestRun(ctx context.Context, runID int64) error
}

// RunNotifier records the events of an ended run for its owner's
// webhooks (notify.Notifier).
type RunNotifier interface {
	RunEnded(ctx context.Context, runID int64) error
}

// ScoreRunWorker scores runs.
type ScoreRunWorker struct {
	river.WorkerDefaults[ScoreRunArgs]
	Scorer RunScorer
	// Regressions, when set, checks each run once it is scored: its
	// quality is final then (a rescoring checks it again).
	Regressions RegressionChecker
	// Stats, when set, keeps the run's figures with their intervals
	// first, so that every conclusion drawn about it reads them.
	Stats RunStatsComputer
	// Attester, when set, signs the run's results first, as they were
	// when it ended (a later rescoring leaves that signature alone).
	Attester RunAttester
	// Notifier, when set, tells the run's owner's webhooks, once the run
	// is scored and checked for a regression.
	Notifier RunNotifier
}

// Timeout allows for large runs.
func (w *ScoreRunWorker) Timeout(*river.Job[ScoreRunArgs]) time.Duration { return 10 * time.Minute }

// Work signs the run's results, keeps the run's figures, scores the run, then checks it for a
// regression.
func (w *ScoreRunWorker) Work(ctx context.Context, job *river.Job[ScoreRunArgs]) error {
	if w.Attester != nil {
		if err := w.Attester.AttestRun(ctx, job.Args.RunID); err != nil {
			return err
		}
	}
	if w.Stats != nil {
		if err := w.Stats.ComputeRunStats(ctx, job.Args.RunID); err != nil {
			return err
		}
	}
	if err := w.Scorer.ScoreRunOptions(ctx, job.Args.RunID, job.Args.Scorer, job.Args.Options); err != nil {
		return err
	}
	if w.Stats != nil {
		if err := w.Stats.PairRunQualities(ctx, job.Args.RunID); err != nil {
			return err
		}
	}
	if w.Regressions != nil {
		if err := w.Regressions.CheckRegressions(ctx, job.Args.RunID); err != nil {
			return err
		}
	}
	if w.Notifier == nil {
		return nil
	}
	return w.Notifier.RunEnded(ctx, job.Args.RunID)
}
