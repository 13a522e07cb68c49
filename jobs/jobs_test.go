package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

func TestProfileSlug(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		hw   jobs.Hardware
		want string
	}{
		{jobs.Hardware{CPUCores: 8}, "cpu-8c"},
		{jobs.Hardware{GPUs: []jobs.GPU{{Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 80 << 30}}}, "h100-80gb-hbm3-x1"},
		{jobs.Hardware{GPUs: []jobs.GPU{{Name: "NVIDIA L4", MemoryBytes: 23034 << 20}, {Name: "NVIDIA L4", MemoryBytes: 23034 << 20}}}, "l4-22gb-x2"},
		{jobs.Hardware{GPUs: []jobs.GPU{{Name: "NVIDIA GeForce RTX 4090", MemoryBytes: 24 << 30}}}, "rtx-4090-24gb-x1"},
	} {
		if got := tc.hw.ProfileSlug(); got != tc.want {
			t.Errorf("%+v: slug %q, want %q", tc.hw.GPUs, got, tc.want)
		}
	}
	if q := jobs.Queue("h100-80gb-x1", "vllm"); q != "h100-80gb-x1.vllm" {
		t.Errorf("queue = %q", q)
	}
}

func TestSessionCleanupDeletesOnlyExpired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(pgtest.NewDB(t))
	u, err := st.CreateUser(ctx, store.NewUser{Email: "a@example.com", PasswordHash: "x", Role: store.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	for i, exp := range []time.Time{time.Now().Add(-time.Minute), time.Now().Add(time.Hour)} {
		if err := st.SaveSession(ctx, store.Session{ID: []byte{byte(i)}, UserID: u.ID, ExpiresAt: exp}); err != nil {
			t.Fatal(err)
		}
	}
	w := &jobs.SessionCleanupWorker{Store: st}
	if err := w.Work(ctx, &river.Job[jobs.SessionCleanupArgs]{}); err != nil {
		t.Fatal(err)
	}
	n, err := st.CountUserSessions(ctx, u.ID)
	if err != nil || n != 1 {
		t.Fatalf("live sessions after cleanup = %d (%v), want 1", n, err)
	}
	var total int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM sessions`).Scan(&total); err != nil || total != 1 {
		t.Fatalf("sessions left = %d (%v), want 1", total, err)
	}
}
