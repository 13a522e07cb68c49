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
	ScoreRunOptions(ctx context.Context, runID int64, scorer string, options json.RawMessage) (Scored, error)
}

// Scored is where a run's scoring stands once its score job has done its
// part (docs/verdict.md#when-a-verdict-is-final).
type Scored struct {
	// Continues says the run's quality comes later, from the sandbox or
	// a judging: the end of that concludes the run (ConcludeRunArgs, or
	// the judge run's score job), not this job.
	Continues bool
	// JudgeOf is the run a judge's run judged (0: the run is no judge's
	// run): its verdicts have just scored that run, which is concluded
	// now in its stead.
	JudgeOf int64
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
	// RunConcluded records that the run's conclusions are drawn for its
	// attempt, before its owner is told: a benchmark is concluded once
	// each of its completed runs is (conclude.StatusOf).
	RunConcluded(ctx context.Context, runID int64) error
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

// Work signs the run's results, keeps the run's figures, scores the run,
// then concludes it (concludeRun) — unless its quality comes later from
// the sandbox or a judging, whose end concludes it; a judge's run
// concludes the run it judged instead.
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
	sc, err := w.Scorer.ScoreRunOptions(ctx, job.Args.RunID, job.Args.Scorer, job.Args.Options)
	switch {
	case err != nil:
		return err
	case sc.JudgeOf != 0:
		return concludeRun(ctx, w.Stats, w.Regressions, w.Notifier, sc.JudgeOf)
	case sc.Continues:
		// Checked and told once its quality exists: a regression check
		// now would test a run without quality, and benchmark.finished
		// would go out before it (docs/operations.md#webhooks).
		return nil
	}
	return concludeRun(ctx, w.Stats, w.Regressions, w.Notifier, job.Args.RunID)
}

// concludeRun draws a scored run's conclusions: its paired comparisons of
// quality, its regression check, the record that they are drawn, then
// its owner's webhooks. Every step may run again (a retried job): each
// replaces what it wrote, and an event is recorded once per webhook.
func concludeRun(ctx context.Context, st RunStatsComputer, reg RegressionChecker, n RunNotifier, runID int64) error {
	if st != nil {
		if err := st.PairRunQualities(ctx, runID); err != nil {
			return err
		}
	}
	if reg != nil {
		if err := reg.CheckRegressions(ctx, runID); err != nil {
			return err
		}
	}
	if st != nil {
		if err := st.RunConcluded(ctx, runID); err != nil {
			return err
		}
	}
	if n == nil {
		return nil
	}
	return n.RunEnded(ctx, runID)
}

// ConcludeRunArgs concludes a run whose quality arrived after its score
// job: queued by the sandbox worker when a run's execution is done (a
// judging concludes in its judge run's score job).
type ConcludeRunArgs struct {
	RunID int64 `json:"run_id"`
}

// Kind is the job kind, stable across versions.
func (ConcludeRunArgs) Kind() string { return "conclude_run" }

// InsertOpts puts the conclusion on the server's queue.
func (ConcludeRunArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: ServerQueue, MaxAttempts: 3}
}

// ConcludeRunWorker concludes runs (concludeRun).
type ConcludeRunWorker struct {
	river.WorkerDefaults[ConcludeRunArgs]
	Regressions RegressionChecker
	Stats       RunStatsComputer
	Notifier    RunNotifier
}

// Work concludes the run.
func (w *ConcludeRunWorker) Work(ctx context.Context, job *river.Job[ConcludeRunArgs]) error {
	return concludeRun(ctx, w.Stats, w.Regressions, w.Notifier, job.Args.RunID)
}
