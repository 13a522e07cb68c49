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
