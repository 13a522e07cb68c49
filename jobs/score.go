package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// ScoreRunArgs scores a run's results on the server: queued by the agent
// when a run ends, and again when a user picks another scorer.
type ScoreRunArgs struct {
	RunID int64 `json:"run_id"`
	// Scorer overrides the benchmark's; empty uses it.
	Scorer string `json:"scorer,omitempty"`
}

// Kind is the job kind, stable across versions.
func (ScoreRunArgs) Kind() string { return "score_run" }

// InsertOpts puts scoring on the server's queue.
func (ScoreRunArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: ServerQueue, MaxAttempts: 3}
}

// RunScorer is what the worker needs (score.Service).
type RunScorer interface {
	ScoreRun(ctx context.Context, runID int64, scorer string) error
}

// ScoreRunWorker scores runs.
type ScoreRunWorker struct {
	river.WorkerDefaults[ScoreRunArgs]
	Scorer RunScorer
}

// Timeout allows for large runs.
func (w *ScoreRunWorker) Timeout(*river.Job[ScoreRunArgs]) time.Duration { return 10 * time.Minute }

// Work scores the run.
func (w *ScoreRunWorker) Work(ctx context.Context, job *river.Job[ScoreRunArgs]) error {
	return w.Scorer.ScoreRun(ctx, job.Args.RunID, job.Args.Scorer)
}
