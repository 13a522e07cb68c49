package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// The "imported" profile imported runs name is no hardware: it is not
// listed (Admin → Hardware, the benchmark form, capacity) nor priced.
func TestImportedIsNoHardware(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testkit.Store(t)
	testkit.NewWorld(ctx, t, st, nil)
	if _, err := st.Pool().Exec(ctx, `INSERT INTO hardware_profiles (slug) VALUES ('imported') ON CONFLICT DO NOTHING`); err != nil {
		t.Fatal(err)
	}
	hs, err := st.ListHardwareProfiles(ctx, time.Minute)
	if err != nil || len(hs) == 0 {
		t.Fatalf("list: %v %v", hs, err)
	}
	for _, h := range hs {
		if h.Slug == "imported" {
			t.Fatal("the imported pseudo profile is listed as hardware")
		}
	}
	price := 2.5
	if err := st.SetHardwarePrice(ctx, "imported", &price); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("pricing the imported profile: %v, want ErrNotFound", err)
	}
}

// A judge's run belongs to a hidden benchmark that judges another run: its
// end is no event for its owner's webhooks.
func TestJudgeRunsAreNoWebhookEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testkit.Store(t)
	w := testkit.NewWorld(ctx, t, st, nil)
	if _, err := st.RunNoticeOf(ctx, w.Run); err != nil {
		t.Fatalf("an ordinary run: %v", err)
	}
	judge := testkit.Run(ctx, t, st, &testkit.RunOpts{Model: w.Model,
		Benchmark: testkit.Benchmark(ctx, t, st, &testkit.BenchmarkOpts{Dataset: w.Dataset.ID, Owner: w.Owner.ID})})
	if _, err := st.Pool().Exec(ctx, `UPDATE benchmarks SET judges_run_id = $1 WHERE id = (SELECT benchmark_id FROM runs WHERE id = $2)`,
		w.Run, judge); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RunNoticeOf(ctx, judge); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a judge's run: %v, want ErrNotFound (no event)", err)
	}
}

// An administrator's drain, deactivation or approval of an agent whose row
// another transaction holds (the agent itself may hold it) gives up after
// the lock timeout with ErrBusy instead of waiting for the holder.
func TestAgentActionsDoNotWaitForAHeldAgentRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testkit.Store(t)
	a := testkit.Agent(ctx, t, st, nil)
	held, err := st.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Rollback(ctx) }()
	if _, err := held.Exec(ctx, `SELECT id FROM agents WHERE id = $1 FOR UPDATE`, a.ID); err != nil {
		t.Fatal(err)
	}
	for name, act := range map[string]func() error{
		"drain":      func() error { return st.SetAgentDrained(ctx, a.ID, true) },
		"deactivate": func() error { return st.SetAgentDeactivated(ctx, a.ID, true) },
		"approve":    func() error { return st.ApproveAgent(ctx, a.ID) },
	} {
		start := time.Now()
		err := act()
		if took := time.Since(start); !store.IsBusy(err) || took > testkit.Scaled(3*store.RowLockTimeout) {
			t.Errorf("%s of a held agent row: %v after %v, want ErrBusy within the lock timeout", name, err, took)
		}
	}
	if err := held.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.SetAgentDrained(ctx, a.ID, true); err != nil {
		t.Fatalf("drain once the row is free: %v", err)
	}
	// The lock timeout was the batch's own: the pool's next statement
	// waits as long as it must.
	var timeout string
	if err := st.Pool().QueryRow(ctx, `SHOW lock_timeout`).Scan(&timeout); err != nil || timeout != "0" {
		t.Fatalf("lock_timeout after the batch: %q %v, want 0", timeout, err)
	}
}
