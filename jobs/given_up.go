package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// ConcludeGivenUpArgs concludes the runs whose concluding job River gave
// up for good (docs/verdict.md#when-a-verdict-is-final); the server runs
// it every GivenUpInterval. It is apart from the reaper, which ticks
// every second for dead agents: the runs given up are read from a day of
// River's finished jobs, a look too heavy for every second and needed far
// less often.
type ConcludeGivenUpArgs struct{}

// GivenUpInterval is how often the server looks for runs given up: a
// benchmark.finished or a regression flag half a minute late is soon
// enough for a job that failed for good.
const GivenUpInterval = 30 * time.Second

// GivenUpTag tags the conclude_run jobs queued for runs given up, so that
// one of them given up in turn is not queued again.
const GivenUpTag = "given_up"

// Kind is the job kind, stable across versions.
func (ConcludeGivenUpArgs) Kind() string { return "conclude_given_up" }

// InsertOpts puts the job on the reaper's queue, once per period.
func (ConcludeGivenUpArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: ReaperQueue, MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByPeriod: GivenUpInterval}}
}

// GivenUpConcluder queues the conclusion of runs whose concluding job
// River gave up (bench.Service.ConcludeGivenUp).
type GivenUpConcluder interface {
	ConcludeGivenUp(ctx context.Context) (int, error)
}

// ConcludeGivenUpWorker queues the conclusions of runs given up.
type ConcludeGivenUpWorker struct {
	river.WorkerDefaults[ConcludeGivenUpArgs]
	GivenUp GivenUpConcluder
}

// Work queues the conclusions.
func (w *ConcludeGivenUpWorker) Work(ctx context.Context, _ *river.Job[ConcludeGivenUpArgs]) error {
	_, err := w.GivenUp.ConcludeGivenUp(ctx)
	return err
}
