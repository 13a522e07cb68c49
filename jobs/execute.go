package jobs

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"
)

// SandboxQueue is where code execution waits: worked by `ruckus sandbox`
// processes, never by the web server or an agent.
const SandboxQueue = "sandbox"

// ExecuteRunArgs runs a finished run's answers in the sandbox (HumanEval,
// MBPP) and stores each one's outcome and the run's pass@k: queued by the
// server's scoring when the run's scorer executes code.
type ExecuteRunArgs struct {
	RunID int64 `json:"run_id"`
	// Scorer is the execution scorer: humaneval, mbpp or exec (either,
	// recognised per item).
	Scorer string `json:"scorer"`
}

// Kind is the job kind, stable across versions.
func (ExecuteRunArgs) Kind() string { return "execute_run" }

// InsertOpts puts execution on the sandbox queue.
func (ExecuteRunArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: SandboxQueue, MaxAttempts: 5}
}

// RunExecutor is what the worker needs (sandbox.Executor).
type RunExecutor interface {
	ExecuteRun(ctx context.Context, runID int64, scorer string) error
}

// ExecuteRunWorker executes runs' answers.
type ExecuteRunWorker struct {
	river.WorkerDefaults[ExecuteRunArgs]
	Executor RunExecutor
}

// Timeout allows for a large run executed a few programs at a time.
func (w *ExecuteRunWorker) Timeout(*river.Job[ExecuteRunArgs]) time.Duration { return MaxRunTime }

// Work executes the run; a retry continues where the last attempt
// stopped (results already executed are kept).
func (w *ExecuteRunWorker) Work(ctx context.Context, job *river.Job[ExecuteRunArgs]) error {
	return w.Executor.ExecuteRun(ctx, job.Args.RunID, job.Args.Scorer)
}

// ServerExecuteRunWorker registers the kind with the server's River
// client (its rescuer discards jobs of kinds it does not know); the server
// never listens to the sandbox queue.
type ServerExecuteRunWorker struct {
	river.WorkerDefaults[ExecuteRunArgs]
}

// Work is reached only if the server were configured with the sandbox
// queue.
func (ServerExecuteRunWorker) Work(context.Context, *river.Job[ExecuteRunArgs]) error {
	return river.JobSnooze(time.Minute)
}

// ErrNoSandbox is returned when a run asks for execution but nothing can
// queue it.
var ErrNoSandbox = errors.New("code execution is not set up on this server")
