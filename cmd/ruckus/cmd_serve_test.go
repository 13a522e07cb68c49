package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/config"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// The reaper's job does not queue behind the server's scoring: it has a
// queue of its own, which the server works and no agent can serve.
func TestReaperHasAQueueOfItsOwn(t *testing.T) {
	cfg := serverRiverConfig(config.Config{AgentStaleAfter: 15 * time.Second}, river.NewWorkers(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	reaper, score := jobs.ReaperArgs{}.InsertOpts().Queue, jobs.ScoreRunArgs{}.InsertOpts().Queue
	if reaper == score {
		t.Fatalf("the reaper shares the %q queue with scoring", reaper)
	}
	for _, q := range []string{reaper, score} {
		if cfg.Queues[q].MaxWorkers < 1 {
			t.Fatalf("the server does not work the %q queue: %v", q, cfg.Queues)
		}
	}
	if strings.Contains(reaper, "_") {
		t.Fatalf("the reaper's queue %q has the shape of an agent's (profile_runtime)", reaper)
	}
}

// Attack 6. An agent that held the advisory lock the server bootstrapped
// its first administrator under kept `ruckus serve` from starting. An
// agent may take no advisory lock (migration 0023, as a superuser runs
// it), and the bootstrap no longer waits on one: with the lock held by
// another session, as an agent could where the migration could not take
// the functions away, the server still bootstraps within its timeout.
func TestAnAgentCannotStopTheServerStarting(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	st := store.New(pool)
	agent, err := pgx.Connect(ctx, pgtest.AgentURL(t, pool, "boot-mallory"))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close(ctx)
	for _, q := range []string{`SELECT pg_advisory_lock(hashtext('bootstrap_admin'))`, `SELECT pg_try_advisory_lock(1)`,
		`SELECT pg_advisory_xact_lock(hashtext('bootstrap_admin'))`, `SELECT pg_advisory_lock_shared(1, 2)`} {
		var pe *pgconn.PgError
		if _, err := agent.Exec(ctx, q); !errors.As(err, &pe) || pe.Code != "42501" {
			t.Errorf("%s as an agent: %v, want permission denied", q, err)
		}
	}
	holder, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock(hashtext('bootstrap_admin'))`); err != nil {
		t.Fatal(err)
	}
	defer holder.Exec(ctx, `SELECT pg_advisory_unlock_all()`) //nolint:errcheck // released with the connection anyway
	pw, err := auth.NewPasswords(4)
	if err != nil {
		t.Fatal(err)
	}
	bctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := bootstrapAdmin(bctx, st, pw, config.Config{AdminPassword: "a-long-enough-password"}, io.Discard); err != nil {
		t.Fatalf("bootstrap with the advisory lock held elsewhere: %v", err)
	}
	if n, err := st.CountActiveAdmins(ctx); err != nil || n != 1 {
		t.Fatalf("administrators after bootstrap: %d %v", n, err)
	}
}

// Attack 3, the server's side. An agent's forged NOTIFY on River's control
// channel paused every listening client, the server's queues included
// (a run stayed queued 39 s per message). The server's client polls and
// acts on no notification: after the forged pauses its queue works at once.
func TestAForgedPauseLeavesTheServersQueuesWorking(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool := pgtest.NewDB(t)
	st := store.New(pool)
	_, rc, err := startJobs(ctx, pool, st, config.Config{AgentStaleAfter: 15 * time.Second}, jobDeps{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Stop(context.Background()) }()
	agent, err := pgx.Connect(ctx, pgtest.AgentURL(t, pool, "pause-mallory"))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close(ctx)
	for _, payload := range []string{`{"action":"pause","queue":"*"}`, `{"action":"pause","queue":"` + jobs.ServerQueue + `"}`} {
		if _, err := agent.Exec(ctx, `SELECT pg_notify(current_schema() || '.river_control', $1)`, payload); err != nil {
			t.Fatalf("NOTIFY as an agent: %v (the attack could not be made)", err)
		}
	}
	res, err := rc.Insert(ctx, jobs.SessionCleanupArgs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	queued := time.Now()
	for {
		var state string
		if err := pool.QueryRow(ctx, `SELECT state FROM river_job WHERE id = $1`, res.Job.ID).Scan(&state); err != nil {
			t.Fatal(err)
		}
		if state == "completed" {
			break
		}
		if time.Since(queued) > 5*time.Second {
			t.Fatalf("a server job stayed %s %v after a forged pause", state, time.Since(queued))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("a server job queued after the forged pause completed in %v", time.Since(queued).Round(time.Millisecond))
}

// The server's River client logs its periodic job counts at debug level:
// `make run`'s info log does not repeat them every few seconds per queue.
func TestServerRiverLoggerKeepsJobCountsOutOfTheInfoLog(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	cfg := serverRiverConfig(config.Config{AgentStaleAfter: 15 * time.Second}, river.NewWorkers(), slog.New(slog.NewTextHandler(&b, nil)))
	cfg.Logger.Info("producer: Producer job counts", "queue", "server")
	cfg.Logger.Info("River client started")
	if out := b.String(); strings.Contains(out, "Producer job counts") || !strings.Contains(out, "River client started") {
		t.Errorf("the server's River log:\n%s", out)
	}
}
