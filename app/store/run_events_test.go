package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// TestRunEventGoesWithItsChange kills the connection of a store method
// while its event waits to be written: the run's change and the event
// that records it are then both there or both missing, never the change
// alone. A second connection holds run_events in SHARE mode, so that any
// insert into it waits; once the method's backend waits on that lock it
// is terminated.
func TestRunEventGoesWithItsChange(t *testing.T) {
	t.Parallel()
	claim := func(ctx context.Context, st *store.Store, f runFixture) store.Lease {
		c, err := st.ClaimRun(ctx, f.runID, f.agent.ID, f.jobID, "sim")
		if err != nil {
			t.Fatal(err)
		}
		return c.Lease
	}
	cases := []struct {
		name string
		kind string // the event the change writes
		// before brings the run to where the change applies; change makes
		// it on the store whose connection is killed.
		before func(context.Context, *store.Store, runFixture) store.Lease
		change func(context.Context, *store.Queries, runFixture, store.Lease) error
	}{
		{name: "claim", kind: "started",
			change: func(ctx context.Context, q *store.Queries, f runFixture, _ store.Lease) error {
				_, err := q.ClaimRun(ctx, f.runID, f.agent.ID, f.jobID, "sim")
				return err
			}},
		{name: "hand back", kind: "handed_back", before: claim,
			change: func(ctx context.Context, q *store.Queries, _ runFixture, l store.Lease) error {
				return q.HandBackRun(ctx, l, time.Second, "agent stopping")
			}},
		{name: "reassign", kind: "reassigned", before: claim,
			change: func(ctx context.Context, q *store.Queries, f runFixture, l store.Lease) error {
				return q.ReassignStaleRun(ctx, f.runID, l.Fence, f.jobID+1, false, "agent stopped heartbeating")
			}},
		{name: "retry", kind: "retried", before: claim,
			change: func(ctx context.Context, q *store.Queries, f runFixture, _ store.Lease) error {
				return q.RequeueRun(ctx, f.runID, f.jobID+1, false)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, b := setupStore(t)
			f := createRun(t, st, b, 4)
			var l store.Lease
			if tc.before != nil {
				l = tc.before(b.ctx, st, f)
			}
			fence, events := fenceAndEvents(t, st, f.runID, tc.kind)

			// The store under test has one connection, whose backend is
			// the one to kill.
			cfg, err := pgxpool.ParseConfig(pgtest.URL(t, st.Pool()))
			if err != nil {
				t.Fatal(err)
			}
			cfg.MaxConns = 1
			victimPool, err := pgxpool.NewWithConfig(b.ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(victimPool.Close)
			var pid int32
			if err := victimPool.QueryRow(b.ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				t.Fatal(err)
			}

			lock, err := st.Pool().Begin(b.ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = lock.Rollback(b.ctx) }()
			if _, err := lock.Exec(b.ctx, `LOCK TABLE run_events IN SHARE MODE`); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- tc.change(b.ctx, store.New(victimPool).Queries, f, l) }()

			waitForLockWait(t, st, pid)
			var killed bool
			if err := st.Pool().QueryRow(b.ctx, `SELECT pg_terminate_backend($1)`, pid).Scan(&killed); err != nil || !killed {
				t.Fatalf("terminate backend %d: %v %v", pid, killed, err)
			}
			if err := <-done; err == nil {
				t.Fatal("the change succeeded on a terminated connection")
			}
			if err := lock.Rollback(b.ctx); err != nil {
				t.Fatal(err)
			}

			fenceAfter, eventsAfter := fenceAndEvents(t, st, f.runID, tc.kind)
			changed, recorded := fenceAfter != fence, eventsAfter != events
			if changed != recorded {
				t.Errorf("after the kill the run changed: %v (fence %d → %d), its %s event written: %v (%d → %d)",
					changed, fence, fenceAfter, tc.kind, recorded, events, eventsAfter)
			}
		})
	}
}

// fenceAndEvents reads a run's fence and how many events of kind it has.
func fenceAndEvents(t *testing.T, st *store.Store, runID int64, kind string) (fence int64, events int) {
	t.Helper()
	err := st.Pool().QueryRow(context.Background(), `SELECT fence, (SELECT count(*) FROM run_events WHERE run_id = r.id AND kind = $2)
		FROM runs r WHERE id = $1`, runID, kind).Scan(&fence, &events)
	if err != nil {
		t.Fatal(err)
	}
	return fence, events
}

// waitForLockWait returns once backend pid waits for a lock.
func waitForLockWait(t *testing.T, st *store.Store, pid int32) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("backend %d to wait for the lock on run_events", pid), func() bool {
		var waiting bool
		err := st.Pool().QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE pid = $1 AND wait_event_type = 'Lock')`, pid).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		return waiting
	})
}
