package load

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// fake is a Send that takes latency per request and tracks concurrency.
type fake struct {
	latency  time.Duration
	fail     func(idx int) bool
	inFlight atomic.Int32
	peak     atomic.Int32
	mu       sync.Mutex
	sends    []time.Time
}

func (f *fake) send(ctx context.Context, idx int, phase string) jobs.Result {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	f.mu.Lock()
	f.sends = append(f.sends, time.Now())
	f.mu.Unlock()
	select {
	case <-time.After(f.latency):
	case <-ctx.Done():
		return jobs.Result{Idx: idx, Status: jobs.StatusError, ErrorClass: jobs.ErrCancelled}
	}
	if f.fail != nil && f.fail(idx) {
		return jobs.Result{Idx: idx, Status: jobs.StatusError, ErrorClass: jobs.ErrHTTP5xx}
	}
	return jobs.Result{Idx: idx, Status: jobs.StatusOK, CompletionTokens: 10}
}

func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

type sink struct {
	mu  sync.Mutex
	got []jobs.Result
}

func (s *sink) record(r jobs.Result) { s.mu.Lock(); s.got = append(s.got, r); s.mu.Unlock() }

func (s *sink) once(t *testing.T, want []int) {
	t.Helper()
	seen := map[int]int{}
	for _, r := range s.got {
		seen[r.Idx]++
	}
	for _, i := range want {
		if seen[i] != 1 {
			t.Fatalf("item %d recorded %d times", i, seen[i])
		}
	}
	if len(s.got) != len(want) {
		t.Fatalf("recorded %d results, want %d", len(s.got), len(want))
	}
}

func TestProfilesSendEveryItemOnceWithinTheirConcurrency(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p    jobs.LoadProfile
		peak int32
	}{
		{jobs.LoadProfile{Profile: jobs.LoadSequential}, 1},
		{jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 4}, 4},
		{jobs.LoadProfile{Profile: jobs.LoadConstant, Rate: 400}, 0},
		{jobs.LoadProfile{Profile: jobs.LoadPoisson, Rate: 400, Concurrency: 3}, 3},
		{jobs.LoadProfile{Profile: jobs.LoadSweep, Concurrency: 4, Steps: 2}, 4},
	} {
		t.Run(c.p.Profile, func(t *testing.T) {
			t.Parallel()
			f := &fake{latency: 5 * time.Millisecond}
			s := &sink{}
			out, err := Run(context.Background(), Config{Indices: indices(40), Profile: c.p, Send: f.send, Record: s.record})
			if err != nil || out.StoppedBy != StoppedCompleted || out.Sent != 40 || out.Recorded != 40 {
				t.Fatalf("%+v %v", out, err)
			}
			s.once(t, indices(40))
			if c.peak > 0 && f.peak.Load() > c.peak {
				t.Fatalf("peak in flight %d, limit %d", f.peak.Load(), c.peak)
			}
			if c.p.Profile == jobs.LoadConcurrency && f.peak.Load() != 4 {
				t.Fatalf("concurrency 4 reached only %d", f.peak.Load())
			}
			if c.p.Profile == jobs.LoadSweep {
				names := []string{}
				for _, ph := range out.Phases {
					names = append(names, ph.Name)
				}
				if len(names) != 4 || names[0] != "sequential" || names[1] != "max" || out.Phases[1].RequestsPerS <= out.Phases[0].RequestsPerS {
					t.Fatalf("sweep phases %+v", out.Phases)
				}
				for _, r := range s.got {
					if r.Phase == "" {
						t.Fatal("a sweep result without its phase")
					}
				}
			}
		})
	}
}

func TestConstantRatePacesSends(t *testing.T) {
	t.Parallel()
	f := &fake{latency: time.Millisecond}
	s := &sink{}
	start := time.Now()
	out, _ := Run(context.Background(), Config{Indices: indices(50), Profile: jobs.LoadProfile{Profile: jobs.LoadConstant, Rate: 200}, Send: f.send, Record: s.record})
	took := time.Since(start)
	// 49 gaps of 5 ms: about 0.245 s.
	if took < 200*time.Millisecond || took > time.Second || out.Recorded != 50 {
		t.Fatalf("50 requests at 200/s took %v (%+v)", took, out)
	}
}

func TestPoissonArrivalsHaveTheRateAsMean(t *testing.T) {
	a := newArrivals(50, true, 42)
	b := newArrivals(50, true, 42)
	var sum time.Duration
	for range 10000 {
		d := a.next()
		if d != b.next() {
			t.Fatal("the same seed gave another schedule")
		}
		sum += d
	}
	mean := sum.Seconds() / 10000
	if math.Abs(mean-0.02) > 0.001 {
		t.Fatalf("mean gap %v s, want 0.02", mean)
	}
}

func TestWarmupIsExcludedAndOffsetsStartAfterIt(t *testing.T) {
	t.Parallel()
	f := &fake{latency: 10 * time.Millisecond}
	s := &sink{}
	var started time.Time
	out, _ := Run(context.Background(), Config{Indices: indices(5), Profile: jobs.LoadProfile{Profile: jobs.LoadSequential, Warmup: 3},
		Send: f.send, Record: s.record, OnStart: func(t time.Time) { started = t }})
	if out.Warmup != 3 || out.Recorded != 5 || len(f.sends) != 8 {
		t.Fatalf("%+v, %d sends", out, len(f.sends))
	}
	if !started.After(f.sends[2]) {
		t.Fatal("the measured window started before warm-up ended")
	}
	if s.got[0].StartOffset < 0 || s.got[0].StartOffset > 5*time.Millisecond {
		t.Fatalf("first offset %v", s.got[0].StartOffset)
	}
}

func TestMaxErrorsAndMaxDuration(t *testing.T) {
	t.Parallel()
	f := &fake{latency: time.Millisecond, fail: func(int) bool { return true }}
	s := &sink{}
	out, _ := Run(context.Background(), Config{Indices: indices(100), Profile: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 2, MaxErrors: 5},
		Send: f.send, Record: s.record})
	// Stops at the 6th error; at most the other request in flight follows.
	if out.StoppedBy != StoppedMaxErrors || out.Errors < 6 || out.Errors > 7 {
		t.Fatalf("max errors: %+v", out)
	}
	f = &fake{latency: 20 * time.Millisecond}
	out, _ = Run(context.Background(), Config{Indices: indices(1000), Profile: jobs.LoadProfile{Profile: jobs.LoadSequential, MaxDuration: jobs.Duration(100 * time.Millisecond)},
		Send: f.send, Record: (&sink{}).record})
	if out.StoppedBy != StoppedMaxDuration || out.Recorded < 2 || out.Recorded > 8 {
		t.Fatalf("max duration: %+v", out)
	}
}

func TestCancelStopsWithinASecondAndDropsCutRequests(t *testing.T) {
	t.Parallel()
	f := &fake{latency: time.Hour}
	s := &sink{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Outcome)
	go func() {
		out, _ := Run(ctx, Config{Indices: indices(10), Profile: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 3}, Send: f.send, Record: s.record})
		done <- out
	}()
	for f.inFlight.Load() != 3 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case out := <-done:
		if out.StoppedBy != StoppedCancelled || len(s.got) != 0 || out.Sent != 3 {
			t.Fatalf("%+v, recorded %d", out, len(s.got))
		}
	case <-time.After(time.Second):
		t.Fatal("the generator did not stop within 1 s of cancellation")
	}
}

func TestDrainFinishesInFlightAndResumeSendsTheRest(t *testing.T) {
	t.Parallel()
	f := &fake{latency: 30 * time.Millisecond}
	s := &sink{}
	drain := make(chan struct{})
	done := make(chan Outcome)
	go func() {
		out, _ := Run(context.Background(), Config{Indices: indices(100), Profile: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 2},
			Send: f.send, Record: s.record, Drain: drain})
		done <- out
	}()
	for f.inFlight.Load() != 2 {
		time.Sleep(time.Millisecond)
	}
	close(drain)
	out := <-done
	if out.StoppedBy != StoppedDrained || out.Recorded != out.Sent || out.Sent >= 100 {
		t.Fatalf("drain: %+v", out)
	}
	// The next segment sends exactly the items without a result.
	have := map[int]bool{}
	for _, r := range s.got {
		have[r.Idx] = true
	}
	var rest []int
	for _, i := range indices(100) {
		if !have[i] {
			rest = append(rest, i)
		}
	}
	s2 := &sink{}
	if _, err := Run(context.Background(), Config{Indices: rest, Profile: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 8},
		Send: (&fake{}).send, Record: s2.record}); err != nil {
		t.Fatal(err)
	}
	s2.once(t, rest)
}
