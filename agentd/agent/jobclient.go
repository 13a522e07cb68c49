package agent

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"

	"github.com/ruckus/ruckus/app/riverlog"
	"github.com/ruckus/ruckus/app/store"
)

// jobClient is the agent's River client over its one queue: running while
// the agent takes runs, stopped while it is drained and when it stops.
type jobClient struct {
	ctx    context.Context // the agent's; the client itself is stopped explicitly
	driver riverdriver.Driver[pgx.Tx]
	cfg    runConfig
	queue  string
	// profile is the hardware profile the agent detects: with cfg.Serves,
	// what the server must grant it before it takes runs of queue.
	profile string
	worker  *runWorker
	logger  *slog.Logger

	rc *river.Client[pgx.Tx] // nil while not taking runs
	// draining is closed when a drain's client has stopped (its run done).
	draining chan struct{}
	// waiting is set once the agent said it waits for a grant.
	waiting bool
}

// start starts a client that takes runs from the queue.
func (j *jobClient) start() error {
	workers := river.NewWorkers()
	river.AddWorker(workers, j.worker)
	rc, err := river.NewClient(j.driver, &river.Config{
		Logger: riverlog.New(j.logger), // its periodic job counts at debug level
		// One run at a time: a benchmark must not share the machine.
		Queues:                 map[string]river.QueueConfig{j.queue: {MaxWorkers: 1}},
		Workers:                workers,
		LeaderElectionDisabled: true,
		FetchOnlyKnownKinds:    true,
		// The agent queues score_run jobs for the server to work.
		SkipUnknownJobCheck: true,
		FetchPollInterval:   time.Second,
		// River polls, directly or through PgBouncer: its notifications
		// (cancel, pause) come from any role that may NOTIFY, which is
		// every role, so no agent acts on one. A cancel reaches a run in
		// progress through the run's own row (watchRun, --control-poll)
		// and through River's poll of its own job's row, which only the
		// server and this agent may write (migration 0023).
		PollOnly: true,
	})
	j.rc = rc
	if err != nil {
		return fmt.Errorf("river client: %w", err)
	}
	j.worker.river = rc
	// The client is stopped explicitly (draining first), not by the
	// signal context, which would cancel the run in progress.
	return rc.Start(context.WithoutCancel(j.ctx))
}

// stop stops c taking runs; a run in progress finishes (drain) or, when
// handBack, stops sending and goes back to the queue for another agent to
// resume.
func (j *jobClient) stop(c *river.Client[pgx.Tx], handBack bool) {
	if handBack {
		j.worker.beginDrain()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Stop(sctx); err != nil {
		j.logger.Warn("stopping the job client", "err", err)
		_ = c.StopAndCancel(context.Background())
	}
}

// abandonTimeout bounds how long an agent PostgreSQL no longer accepts
// waits for its River client to stop.
const abandonTimeout = 3 * time.Second

// abandon stops taking runs and stops a run in progress at once, writing
// nothing more (the database refuses this agent).
func (j *jobClient) abandon() {
	j.worker.abandon()
	if j.rc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), abandonTimeout)
	defer cancel()
	if err := j.rc.StopAndCancel(ctx); err != nil {
		j.logger.Warn("stopping the job client", "err", err)
	}
	j.rc = nil
}

// stopWorking stops taking runs, waiting for a drain under way to end.
func (j *jobClient) stopWorking(handBack bool) {
	if handBack {
		j.worker.beginDrain()
	}
	if j.draining != nil {
		<-j.draining
	}
	if j.rc != nil {
		j.stop(j.rc, handBack)
		j.rc = nil
	}
}

// follow applies what the agent's row says (at registration and every
// heartbeat): a drain, or a grant that does not cover what the agent
// serves, lets the current run finish in the background and takes no
// more; an undrain or a grant, once that run is done, takes runs again.
func (j *jobClient) follow(a store.Agent) error {
	granted := a.Granted(j.profile, j.cfg.Serves)
	if !granted && !j.waiting {
		j.logger.Warn("not taking runs: the server has not granted this agent what it serves; "+
			"an administrator approves it on the Agents page (or `ruckus agent approve "+a.Name+"`)",
			"declared_profile", j.profile, "declared_runtime", j.cfg.Serves, "granted_profile", a.Profile, "granted_runtimes", a.Runtimes)
	}
	if granted && j.waiting {
		j.logger.Info("granted: taking runs", "queue", j.queue)
	}
	j.waiting = !granted
	drained := a.Drained || !granted
	switch {
	case drained && j.rc != nil:
		j.logger.Info("drained by an administrator: finishing the current run, taking no more")
		c, done := j.rc, make(chan struct{})
		j.rc, j.draining = nil, done
		go func() { j.stop(c, false); close(done) }()
	case !drained && j.rc == nil:
		if j.draining != nil {
			select {
			case <-j.draining:
				j.draining = nil
			default:
				return nil // the drained run is still finishing
			}
		}
		j.logger.Info("undrained: taking runs again")
		return j.start()
	}
	return nil
}
