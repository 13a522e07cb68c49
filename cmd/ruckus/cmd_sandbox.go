package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/ruckus/ruckus/app/config"
	"github.com/ruckus/ruckus/app/riverlog"
	"github.com/ruckus/ruckus/app/sandbox"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// cmdSandbox is `ruckus sandbox`: the worker that executes runs' code
// answers (HumanEval, MBPP) in bubblewrap. It is a process of its own,
// never the web server: it works only the sandbox queue, with at most
// --concurrency programs at once.
func cmdSandbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sandbox", "ruckus sandbox [--concurrency N]", stdout)
	conc := fs.Int("concurrency", envInt("RUCKUS_SANDBOX_CONCURRENCY", runtime.NumCPU()), "programs run at once (RUCKUS_SANDBOX_CONCURRENCY; default: the CPUs)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *conc < 1 || *conc > 256 {
		return fmt.Errorf("%w: --concurrency must be between 1 and 256 (got %d)", errUsage, *conc)
	}
	cfg, err := config.FromEnvironment()
	if err != nil {
		return err
	}
	logger := newLogger(cfg, stderr)
	runner := sandbox.NewRunner()
	if err := runner.Check(); err != nil {
		return err
	}
	// bwrap's inner process outlives its parent for a moment; this
	// process reaps it rather than the machine's init.
	if err := sandbox.BecomeSubreaper(); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	pool, err := openPool(ctx, cfg.DatabaseURL, *conc+4)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)
	exec := sandbox.NewExecutor(st, runner, *conc, logger)
	workers := river.NewWorkers()
	river.AddWorker(workers, &jobs.ExecuteRunWorker{Executor: exec})
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Logger: riverlog.New(logger), // its periodic job counts at debug level
		// Two runs at a time share the process's programs (exec.Slots).
		Queues:                 map[string]river.QueueConfig{jobs.SandboxQueue: {MaxWorkers: 2}},
		Workers:                workers,
		LeaderElectionDisabled: true,
		FetchOnlyKnownKinds:    true,
		// It queues the server's conclude_run (sandbox.Queue), a kind it
		// does not work.
		SkipUnknownJobCheck: true,
		FetchPollInterval:   time.Second,
		// River's notifications can be sent by any role (agents too):
		// this client acts on none (see serverRiverConfig).
		PollOnly: true,
	})
	if err != nil {
		return fmt.Errorf("river client: %w", err)
	}
	exec.Conclusions = &sandbox.Queue{Store: st, River: rc}
	if err := rc.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start river: %w", err)
	}
	logger.Info("sandbox worker ready", "queue", jobs.SandboxQueue, "concurrency", *conc)
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Programs in flight are stopped; their job resumes on the next start.
	if err := rc.StopAndCancel(sctx); err != nil {
		return fmt.Errorf("stop river: %w", err)
	}
	return nil
}
