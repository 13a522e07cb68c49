package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

func TestProfileSlug(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		hw   jobs.Hardware
		want string
	}{
		{jobs.Hardware{CPUCores: 8}, "cpu"},
		{jobs.Hardware{GPUs: []jobs.GPU{{Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 80 << 30}}}, "h100-80gb-hbm3-x1"},
		{jobs.Hardware{GPUs: []jobs.GPU{{Name: "NVIDIA L4", MemoryBytes: 23034 << 20}, {Name: "NVIDIA L4", MemoryBytes: 23034 << 20}}}, "l4-22gb-x2"},
		{jobs.Hardware{GPUs: []jobs.GPU{{Name: "NVIDIA GeForce RTX 4090", MemoryBytes: 24 << 30}}}, "rtx-4090-24gb-x1"},
	} {
		if got := tc.hw.ProfileSlug(); got != tc.want {
			t.Errorf("%+v: slug %q, want %q", tc.hw.GPUs, got, tc.want)
		}
	}
	// River's own rule for queue names (client.go, validateQueueName).
	riverName := regexp.MustCompile(`^(?:[a-z0-9])+(?:[_|\-]?[a-z0-9]+)*$`)
	for _, tc := range []struct{ profile, runtime, want string }{
		{"h100-80gb-x1", "vllm", "h100-80gb-x1_vllm"},
		{"cpu-2c", "sim", "cpu-2c_sim"},
		{jobs.Hardware{GPUs: []jobs.GPU{{Name: "NVIDIA GeForce RTX 4090", MemoryBytes: 24 << 30}}}.ProfileSlug(), "llama-cpp", "rtx-4090-24gb-x1_llama-cpp"},
	} {
		q := jobs.Queue(tc.profile, tc.runtime)
		if q != tc.want || !riverName.MatchString(q) || len(q) > 64 {
			t.Errorf("queue(%q, %q) = %q, want %q and a valid River queue name", tc.profile, tc.runtime, q, tc.want)
		}
	}
}

func TestSessionCleanupDeletesOnlyExpired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(pgtest.NewDB(t))
	u := testkit.User(ctx, t, st, &testkit.UserOpts{Email: "a@example.com"})
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

func TestRunArgsInsertOnTheirQueueInTheCallersTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	rc := testkit.RiverClient(t.Context(), t, pool, nil)
	temp := 0.0
	args := jobs.RunArgs{ProtocolVersion: jobs.ProtocolVersion, RunID: 7, BenchmarkID: 3, DatasetID: 2,
		Model: "Qwen/Qwen2.5-0.5B-Instruct", Runtime: "sim", HardwareProfile: "cpu-2c",
		Load:     jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 4, MaxDuration: jobs.Duration(time.Minute)},
		Sampling: jobs.Sampling{Temperature: &temp, MaxTokens: 64}}

	// Rolled back with the caller's transaction: no job.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.InsertTx(ctx, tx, args, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM river_job`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("jobs after rollback = %d (%v)", n, err)
	}

	res, err := rc.Insert(ctx, args, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Job.Queue != "cpu-2c_sim" || res.Job.Kind != "benchmark_run" {
		t.Fatalf("job on queue %q kind %q", res.Job.Queue, res.Job.Kind)
	}
	var back jobs.RunArgs
	if err := json.Unmarshal(res.Job.EncodedArgs, &back); err != nil || back.RunID != 7 || back.Load.MaxDuration != jobs.Duration(time.Minute) || *back.Sampling.Temperature != 0 {
		t.Fatalf("args round trip: %+v %v (%s)", back, err, res.Job.EncodedArgs)
	}
	var raw struct {
		Load map[string]any `json:"load"`
	}
	if err := json.Unmarshal(res.Job.EncodedArgs, &raw); err != nil || raw.Load["max_duration"] != "1m0s" {
		t.Errorf("durations should read as text in the job: %s", res.Job.EncodedArgs)
	}
}

func TestCheckProtocol(t *testing.T) {
	t.Parallel()
	if err := jobs.CheckProtocol(jobs.ProtocolVersion); err != nil {
		t.Fatal(err)
	}
	err := jobs.CheckProtocol(jobs.ProtocolVersion + 1)
	if err == nil || !strings.Contains(err.Error(), "protocol") || !strings.Contains(err.Error(), "same release") {
		t.Fatalf("other version: %v", err)
	}
}

type fakeReaper struct{ decided, told int }

func (f *fakeReaper) ReassignStaleRuns(context.Context) (int, error)  { return 0, nil }
func (f *fakeReaper) SweepStalledAgents(context.Context) (int, error) { return 0, nil }
func (f *fakeReaper) DecideSearches(context.Context) (int, error) {
	f.decided++
	return 1, errors.New("rung 0 of benchmark 1: no plan")
}

func (f *fakeReaper) ConcludeGivenUp(context.Context) (int, error) {
	f.told++
	return 0, errors.New("runs given up: no database")
}

// TestConcludeGivenUpWorker: the periodic job queues the conclusions of
// runs given up (docs/verdict.md#when-a-verdict-is-final) and fails with
// the look's error; it runs less often than the reaper.
func TestConcludeGivenUpWorker(t *testing.T) {
	f := &fakeReaper{}
	err := (&jobs.ConcludeGivenUpWorker{GivenUp: f}).Work(context.Background(), &river.Job[jobs.ConcludeGivenUpArgs]{})
	if f.told != 1 || err == nil {
		t.Fatalf("looked %d times, error %v", f.told, err)
	}
	if opts := (jobs.ConcludeGivenUpArgs{}).InsertOpts(); opts.Queue != jobs.ReaperQueue || opts.UniqueOpts.ByPeriod < jobs.ReaperInterval(time.Hour) {
		t.Fatalf("insert options %+v", opts)
	}
}

// TestReaperDecidesSearches: each period the reaper also decides the
// searches' ready rungs (docs/benchmarks.md#budgeted-search), and a
// decider's error is the job's.
func TestReaperDecidesSearches(t *testing.T) {
	f := &fakeReaper{}
	err := (&jobs.ReaperWorker{Reaper: f, Searches: f}).Work(context.Background(), &river.Job[jobs.ReaperArgs]{})
	if f.decided != 1 || err == nil || !strings.Contains(err.Error(), "no plan") {
		t.Fatalf("decided %d times, error %v", f.decided, err)
	}
	if err := (&jobs.ReaperWorker{Reaper: f}).Work(context.Background(), &river.Job[jobs.ReaperArgs]{}); err != nil || f.decided != 1 {
		t.Fatalf("without a decider: %v, decided %d", err, f.decided)
	}
}
