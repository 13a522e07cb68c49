package report_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ruckus/ruckus/agentd/report"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// recorder passes every write to the store and notes the size of each
// result batch, so a test can see how the reporter cut them.
type recorder struct {
	*store.Store
	mu      sync.Mutex
	batches []int
}

func (r *recorder) WriteResults(ctx context.Context, l store.Lease, rs []store.ResultRecord) (int, error) {
	n, err := r.Store.WriteResults(ctx, l, rs)
	r.mu.Lock()
	r.batches = append(r.batches, len(rs))
	r.mu.Unlock()
	return n, err
}

func (r *recorder) sizes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.batches)
}

// clock is a settable time for the reporter's figures.
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) set(t time.Time)         { c.ns.Store(t.UnixNano()) }
func (c *clock) add(d time.Duration)     { c.ns.Add(int64(d)) }
func newClock(t time.Time) *clock        { c := &clock{}; c.set(t); return c }
func (c *clock) since(t time.Time) int64 { return c.ns.Load() - t.UnixNano() }

type testBundle struct {
	ctx     context.Context
	st      *store.Store
	rec     *recorder
	lease   store.Lease
	claimed store.ClaimedRun
	runID   int64
	jobID   int64
	agentID int64
}

// setup makes a one-run benchmark of items items on a fresh database and
// claims the run for an agent.
func setup(t *testing.T, items int) *testBundle {
	t.Helper()
	ctx := context.Background()
	st := store.New(pgtest.NewDB(t))
	b := &testBundle{ctx: ctx, st: st, rec: &recorder{Store: st}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	u := testkit.User(ctx, t, st, &testkit.UserOpts{Email: "u@example.com", Name: "U"})
	dsItems := make([]store.DatasetItem, items)
	for i := range dsItems {
		dsItems[i] = store.DatasetItem{Idx: i, CustomID: fmt.Sprint("c", i), Request: json.RawMessage(`{}`)}
	}
	dsID, werr := st.WriteDataset(ctx, store.NewDataset{OwnerID: u.ID, Name: "d", Format: "simple", Visibility: "private"},
		store.ItemsFrom(dsItems), func(*store.Queries, int64) (store.DatasetTotals, error) {
			return store.DatasetTotals{Name: "d", Visibility: "private", Format: "simple"}, nil
		})
	must(werr)
	agent := testkit.Agent(ctx, t, st, &testkit.AgentOpts{Name: "a"})
	modelID := testkit.Model(ctx, t, st, &testkit.ModelOpts{Name: "org/m", DisplayName: "m", ParamsB: 1, ContextLength: 2048})
	benchID := testkit.Benchmark(ctx, t, st, &testkit.BenchmarkOpts{Dataset: dsID, Owner: u.ID, Name: "b", Manifest: json.RawMessage(`{}`)})
	b.runID = testkit.Run(ctx, t, st, &testkit.RunOpts{Benchmark: benchID, Model: modelID, Total: items})
	b.jobID, b.agentID = 100+b.runID, agent.ID
	must(st.SetRunJob(ctx, b.runID, b.jobID))
	var err error
	b.claimed, err = st.ClaimRun(ctx, b.runID, agent.ID, b.jobID, "sim")
	must(err)
	b.lease = b.claimed.Lease
	return b
}

func result(idx, tokens int) jobs.Result {
	return jobs.Result{Idx: idx, CustomID: fmt.Sprint("c", idx), Status: jobs.StatusOK, Output: "x", CompletionTokens: tokens,
		ContentEvents: tokens, TTFT: 10 * time.Millisecond, E2E: 50 * time.Millisecond, StartOffset: time.Duration(idx) * time.Millisecond}
}

// run is the columns of the run row the reporter writes.
type run struct {
	completed, outputTokens int
	throughput, rps         float64
	eta                     *float64
	samples                 int
}

func (b *testBundle) run(t *testing.T) run {
	t.Helper()
	var r run
	err := b.st.Pool().QueryRow(b.ctx, `SELECT completed, output_tokens, throughput, requests_per_s, eta_seconds,
		(SELECT count(*) FROM run_samples WHERE run_id = runs.id) FROM runs WHERE id = $1`, b.runID).
		Scan(&r.completed, &r.outputTokens, &r.throughput, &r.rps, &r.eta, &r.samples)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (b *testBundle) results(t *testing.T) int {
	t.Helper()
	var n int
	if err := b.st.Pool().QueryRow(b.ctx, `SELECT count(*) FROM results WHERE run_id = $1`, b.runID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// runReporter runs r until the test ends and returns what Run returned.
func runReporter(t *testing.T, r *report.Reporter) <-chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done, stopped := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(stopped)
		done <- r.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-stopped
	})
	return done
}

func TestReporter(t *testing.T) {
	t.Parallel()
	const hour = time.Hour

	t.Run("FlushesOnBatchSize", func(t *testing.T) {
		t.Parallel()
		b := setup(t, 10)
		r := report.New(b.rec, b.lease, 10, report.Options{BatchSize: 3, FlushInterval: hour, ProgressInterval: hour}, nil)
		// All seven wait before Run starts, so the batches do not depend
		// on how Adds and flushes interleave.
		for i := range 7 {
			r.Add(result(i, 2))
		}
		runReporter(t, r)
		// Two full batches go at once; the seventh result waits for the
		// interval (an hour) or Close.
		testkit.WaitFor(t, "two batches", func() bool { return len(b.rec.sizes()) == 2 })
		if got := b.rec.sizes(); !slices.Equal(got, []int{3, 3}) {
			t.Errorf("batches %v, want [3 3]", got)
		}
		if n := b.results(t); n != 6 {
			t.Errorf("%d results stored, want 6", n)
		}
		if err := r.Close(b.ctx); err != nil {
			t.Fatal(err)
		}
		if got := b.rec.sizes(); !slices.Equal(got, []int{3, 3, 1}) {
			t.Errorf("batches after Close %v, want [3 3 1]", got)
		}
		if got := b.run(t); got.completed != 7 || got.outputTokens != 14 || got.samples != 1 {
			t.Errorf("run after Close: %+v", got)
		}
	})

	t.Run("FlushesOnInterval", func(t *testing.T) {
		t.Parallel()
		b := setup(t, 10)
		r := report.New(b.rec, b.lease, 10, report.Options{BatchSize: 500, FlushInterval: 20 * time.Millisecond, ProgressInterval: hour}, nil)
		r.Add(result(0, 1))
		r.Add(result(1, 1))
		runReporter(t, r)
		testkit.WaitFor(t, "the interval's flush", func() bool { return len(b.rec.sizes()) > 0 })
		if got := b.rec.sizes(); got[0] != 2 {
			t.Errorf("batches %v, want the two results in one", got)
		}
		if n := b.results(t); n != 2 {
			t.Errorf("%d results stored, want 2", n)
		}
	})

	t.Run("StaleLeaseIsRefusedWhole", func(t *testing.T) {
		t.Parallel()
		b := setup(t, 10)
		r := report.New(b.rec, b.lease, 10, report.Options{BatchSize: 4, FlushInterval: hour, ProgressInterval: hour}, nil)
		for i := range 4 {
			r.Add(result(i, 3))
		}
		done := runReporter(t, r)
		testkit.WaitFor(t, "the first batch", func() bool { return len(b.rec.sizes()) == 1 })
		if n := b.results(t); n != 4 {
			t.Fatalf("%d results stored, want 4", n)
		}

		// The run is reassigned: another claim moves the fence.
		if err := b.st.HandBackRun(b.ctx, b.lease, time.Second, "test"); err != nil {
			t.Fatal(err)
		}
		next, err := b.st.ClaimRun(b.ctx, b.runID, b.agentID, b.jobID, "sim")
		if err != nil || next.Fence <= b.lease.Fence {
			t.Fatalf("second claim: %+v %v", next, err)
		}
		for i := 4; i < 8; i++ {
			r.Add(result(i, 3))
		}
		select {
		case err := <-done:
			if !errors.Is(err, store.ErrFenced) {
				t.Fatalf("Run returned %v, want ErrFenced", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not stop on the fence")
		}
		select {
		case <-r.Fenced():
		default:
			t.Error("Fenced is not closed")
		}
		// Nothing of the refused batch is stored, and the counters are
		// those of the first batch.
		if n := b.results(t); n != 4 {
			t.Errorf("%d results stored, want the first batch's 4", n)
		}
		if got := b.run(t); got.completed != 4 || got.outputTokens != 12 {
			t.Errorf("run after the refusal: %+v", got)
		}
		if err := r.Close(b.ctx); !errors.Is(err, store.ErrFenced) {
			t.Errorf("Close after the fence: %v", err)
		}
		if n := b.results(t); n != 4 {
			t.Errorf("Close stored results under the stale lease: %d", n)
		}
	})

	t.Run("ProgressAndETA", func(t *testing.T) {
		t.Parallel()
		b := setup(t, 10)
		t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		c := newClock(t0)
		gpu := 0.75
		r := report.New(b.rec, b.lease, 10, report.Options{BatchSize: 500, FlushInterval: hour, ProgressInterval: hour, Now: c.now,
			Sample: func() store.Sample { return store.Sample{GPUUtil: &gpu} }}, nil)
		r.Start(t0)
		// Five requests one after another, 200 ms each, 10 tokens each.
		for i := range 5 {
			back := r.Sending()
			c.add(200 * time.Millisecond)
			back()
			res := result(i, 10)
			res.StartOffset = time.Duration(c.since(t0)) - 200*time.Millisecond
			res.E2E = 200 * time.Millisecond
			r.Add(res)
		}
		if err := r.Close(b.ctx); err != nil {
			t.Fatal(err)
		}
		got := b.run(t)
		// One second, 5 requests and 50 tokens.
		if got.completed != 5 || got.throughput != 50 || got.rps != 5 || got.samples != 1 {
			t.Fatalf("progress: %+v", got)
		}
		// Half the items are left at one request per 200 ms.
		if got.eta == nil || *got.eta <= 0 || *got.eta > 10 {
			t.Fatalf("ETA %v, want a positive estimate under 10 s", got.eta)
		}
		var at time.Time
		var util *float64
		var completed int
		if err := b.st.Pool().QueryRow(b.ctx, `SELECT t, gpu_util, completed FROM run_samples WHERE run_id = $1`, b.runID).Scan(&at, &util, &completed); err != nil {
			t.Fatal(err)
		}
		if !at.Equal(t0.Add(time.Second)) || util == nil || *util != 0.75 || completed != 5 {
			t.Errorf("sample: %v %v %d", at, util, completed)
		}
	})
}
