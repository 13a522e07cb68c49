package load

import (
	"context"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// call is one Send as the fake runtime saw it.
type call struct {
	idx        int
	phase      string
	start, end time.Time
}

// fake is a runtime: Send takes latency (the only sleeps in these tests,
// simulating work), tracks how many requests are in flight, and can fail
// items, hold items until ctx ends, or hold the first requests until a
// given number are in flight at once.
type fake struct {
	latency time.Duration
	fail    func(idx int) bool
	// hang items never answer: they return only when ctx ends.
	hang func(idx int) bool
	// release, when set, holds every request until it is closed (or ctx
	// ends).
	release chan struct{}
	// barrier, when above zero, holds requests until that many are in
	// flight together, proving the generator reaches that concurrency.
	barrier     int32
	barrierOnce sync.Once
	barrierHit  chan struct{}
	// inFlightAt is signalled each time the in-flight count rises, so a
	// test can wait for a condition without polling in a sleep loop.
	inFlightAt chan int32
	inFlight   atomic.Int32
	peak       atomic.Int32
	hanging    atomic.Int32
	mu         sync.Mutex
	calls      []call
}

func newFake(latency time.Duration) *fake {
	return &fake{latency: latency, barrierHit: make(chan struct{}), inFlightAt: make(chan int32, 1024)}
}

func (f *fake) send(ctx context.Context, idx int, phase string) jobs.Result {
	start := time.Now()
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
	}
	select {
	case f.inFlightAt <- n:
	default:
	}
	defer func() {
		f.mu.Lock()
		f.calls = append(f.calls, call{idx: idx, phase: phase, start: start, end: time.Now()})
		f.mu.Unlock()
	}()
	cancelled := jobs.Result{Idx: idx, Status: jobs.StatusError, ErrorClass: jobs.ErrCancelled}
	if f.barrier > 0 {
		if n >= f.barrier {
			f.barrierOnce.Do(func() { close(f.barrierHit) })
		}
		select {
		case <-f.barrierHit:
		case <-time.After(5 * time.Second): // a safety net: the test then fails on the peak
		case <-ctx.Done():
			return cancelled
		}
	}
	if f.hang != nil && f.hang(idx) {
		f.hanging.Add(1)
		select {
		case f.inFlightAt <- n:
		default:
		}
		<-ctx.Done()
		return cancelled
	}
	if f.release != nil {
		select {
		case <-f.release:
		case <-ctx.Done():
			return cancelled
		}
	}
	if f.latency > 0 {
		t := time.NewTimer(f.latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return cancelled
		}
	}
	if f.fail != nil && f.fail(idx) {
		return jobs.Result{Status: jobs.StatusError, ErrorClass: jobs.ErrHTTP5xx}
	}
	return jobs.Result{Status: jobs.StatusOK, CompletionTokens: 10}
}

// measured returns the calls that were not warm-up, in send order.
func (f *fake) measured() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []call
	for _, c := range f.calls {
		if c.phase != PhaseWarmup {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

// waitFor blocks until cond holds, re-checking whenever the fake's
// in-flight count rises; it fails the test after a generous deadline.
func (f *fake) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(testkit.Timeout())
	for !cond() {
		select {
		case <-f.inFlightAt:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// sink is a Record that also checks Run's promise that calls are
// serialised.
type sink struct {
	active  atomic.Int32
	overlap atomic.Bool
	mu      sync.Mutex
	got     []jobs.Result
	// reached, when set, is closed once that many results are recorded.
	want    int
	reached chan struct{}
}

func (s *sink) record(r jobs.Result) {
	if s.active.Add(1) != 1 {
		s.overlap.Store(true)
	}
	defer s.active.Add(-1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, r)
	if s.reached != nil && len(s.got) == s.want {
		close(s.reached)
	}
}

func (s *sink) results() []jobs.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// exactlyOnce fails unless every item of want was recorded exactly once
// and nothing else was.
func (s *sink) exactlyOnce(t *testing.T, want []int) {
	t.Helper()
	if s.overlap.Load() {
		t.Error("Record was called concurrently")
	}
	seen := map[int]int{}
	for _, r := range s.results() {
		seen[r.Idx]++
	}
	for _, i := range want {
		if seen[i] != 1 {
			t.Errorf("item %d recorded %d times", i, seen[i])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("recorded %d distinct items, want %d", len(seen), len(want))
	}
}

func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func run(t *testing.T, ctx context.Context, cfg Config) Outcome {
	t.Helper()
	out, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEveryProfileSendsEachItemExactlyOnce(t *testing.T) {
	t.Parallel()
	for _, p := range []jobs.LoadProfile{
		{Profile: jobs.LoadSequential},
		{Profile: jobs.LoadConcurrency, Concurrency: 4},
		{Profile: jobs.LoadConstant, Rate: 500},
		{Profile: jobs.LoadPoisson, Rate: 500, Concurrency: 3},
		{Profile: jobs.LoadSweep, Concurrency: 4, Steps: 2},
	} {
		t.Run(p.Profile, func(t *testing.T) {
			t.Parallel()
			f, s := newFake(2*time.Millisecond), &sink{}
			out := run(t, context.Background(), Config{Indices: indices(40), Profile: p, Seed: 7, Send: f.send, Record: s.record})
			if out.StoppedBy != StoppedCompleted || out.Sent != 40 || out.Recorded != 40 || out.Dropped != 0 || out.Errors != 0 {
				t.Fatalf("%+v", out)
			}
			s.exactlyOnce(t, indices(40))
			if calls := f.measured(); len(calls) != 40 {
				t.Fatalf("Send was called %d times for 40 items", len(calls))
			}
			if out.Window <= 0 || out.RequestsPerS <= 0 || math.Abs(out.OutputTokensPerS-10*out.RequestsPerS) > 1e-6*out.OutputTokensPerS {
				t.Fatalf("figures %+v", out)
			}
			if (out.Phases != nil) != (p.Profile == jobs.LoadSweep) {
				t.Fatalf("phases %+v for %s", out.Phases, p.Profile)
			}
		})
	}
}

func TestSequentialKeepsOneRequestInFlight(t *testing.T) {
	t.Parallel()
	f, s := newFake(2*time.Millisecond), &sink{}
	run(t, context.Background(), Config{Indices: indices(20), Profile: jobs.LoadProfile{Profile: jobs.LoadSequential}, Send: f.send, Record: s.record})
	if f.peak.Load() != 1 {
		t.Fatalf("peak in flight %d", f.peak.Load())
	}
	// In order, and each result is recorded before the next send.
	for i, r := range s.results() {
		if r.Idx != i {
			t.Fatalf("result %d is item %d", i, r.Idx)
		}
	}
}

func TestConcurrencyReachesNAndNeverExceedsIt(t *testing.T) {
	t.Parallel()
	f, s := newFake(time.Millisecond), &sink{}
	f.barrier = 5 // the first requests wait until five are in flight together
	out := run(t, context.Background(), Config{Indices: indices(60), Profile: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 5},
		Send: f.send, Record: s.record})
	if f.peak.Load() != 5 {
		t.Fatalf("peak in flight %d, want 5", f.peak.Load())
	}
	if out.Recorded != 60 {
		t.Fatalf("%+v", out)
	}
	s.exactlyOnce(t, indices(60))
}

func TestConstantRatePacesSends(t *testing.T) {
	t.Parallel()
	f, s := newFake(time.Millisecond), &sink{}
	start := time.Now()
	out := run(t, context.Background(), Config{Indices: indices(50), Profile: jobs.LoadProfile{Profile: jobs.LoadConstant, Rate: 200},
		Send: f.send, Record: s.record})
	took := time.Since(start)
	// 49 gaps of 5 ms: about 0.245 s.
	if took < 200*time.Millisecond || took > time.Second || out.Recorded != 50 {
		t.Fatalf("50 requests at 200/s took %v (%+v)", took, out)
	}
	calls := f.measured()
	gap := calls[len(calls)-1].start.Sub(calls[0].start) / time.Duration(len(calls)-1)
	if gap < 4*time.Millisecond || gap > 20*time.Millisecond {
		t.Fatalf("mean gap between sends %v, want about 5ms", gap)
	}
	// The offsets follow the schedule: send k at about k × 5 ms.
	for _, r := range s.results() {
		if want := time.Duration(r.Idx) * 5 * time.Millisecond; r.StartOffset < want-time.Millisecond {
			t.Fatalf("item %d sent at %v, before its time %v", r.Idx, r.StartOffset, want)
		}
	}
	if out.CapDelays != 0 {
		t.Fatalf("%d cap delays with nothing near the cap", out.CapDelays)
	}
}

func TestOpenLoopCapsInFlightAndCountsDelays(t *testing.T) {
	t.Parallel()
	// 1000/s offered, each request takes 20 ms, one slot: every send after
	// the first finds the slot taken.
	f, s := newFake(20*time.Millisecond), &sink{}
	out := run(t, context.Background(), Config{Indices: indices(5), Profile: jobs.LoadProfile{Profile: jobs.LoadConstant, Rate: 1000, Concurrency: 1},
		Send: f.send, Record: s.record})
	if f.peak.Load() != 1 || out.CapDelays < 1 || out.CapDelays > 4 || out.Recorded != 5 {
		t.Fatalf("peak %d, %+v", f.peak.Load(), out)
	}
	s.exactlyOnce(t, indices(5))
}

func TestPoissonScheduleIsSeededWithMeanOneOverRate(t *testing.T) {
	t.Parallel()
	const n, rate = 10000, 50.0
	a, b, other := newArrivals(rate, true, 42), newArrivals(rate, true, 42), newArrivals(rate, true, 43)
	var sum time.Duration
	same := 0
	for range n {
		d := a.next()
		if d != b.next() {
			t.Fatal("the same seed gave another schedule")
		}
		if d < 0 {
			t.Fatalf("negative gap %v", d)
		}
		if d == other.next() {
			same++
		}
		sum += d
	}
	if same > n/100 {
		t.Fatalf("seeds 42 and 43 agree on %d of %d gaps", same, n)
	}
	// The standard error of the mean is 1/(rate·√n) = 0.2 ms: 5 % is 5σ.
	if mean := sum.Seconds() / n; math.Abs(mean-1/rate) > 0.05/rate {
		t.Fatalf("mean gap %v s, want %v", mean, 1/rate)
	}
	c := newArrivals(rate, false, 42)
	for range 3 {
		if d := c.next(); d != 20*time.Millisecond {
			t.Fatalf("constant gap %v, want 20ms", d)
		}
	}
}

func TestSweepRunsItsPhasesInOrder(t *testing.T) {
	t.Parallel()
	f, s := newFake(10*time.Millisecond), &sink{}
	out := run(t, context.Background(), Config{Indices: indices(41), Profile: jobs.LoadProfile{Profile: jobs.LoadSweep, Concurrency: 4, Steps: 3},
		Send: f.send, Record: s.record})
	if out.StoppedBy != StoppedCompleted || out.Recorded != 41 {
		t.Fatalf("%+v", out)
	}
	s.exactlyOnce(t, indices(41))
	if len(out.Phases) != 5 {
		t.Fatalf("phases %+v", out.Phases)
	}
	// 41 items over 5 steps: 9, 8, 8, 8, 8.
	for i, ph := range out.Phases {
		want := 8
		if i == 0 {
			want = 9
		}
		if ph.Sent != want || ph.Requests != want || ph.RequestsPerS <= 0 || math.Abs(ph.OutputTokensPerS-10*ph.RequestsPerS) > 1e-6*ph.OutputTokensPerS {
			t.Fatalf("phase %d: %+v", i, ph)
		}
	}
	seq, top := out.Phases[0], out.Phases[1]
	if seq.Name != PhaseSequential || top.Name != PhaseMax || top.RequestsPerS <= seq.RequestsPerS {
		t.Fatalf("sequential %+v, max %+v", seq, top)
	}
	prev := seq.RequestsPerS
	for _, ph := range out.Phases[2:] {
		if ph.OfferedRate <= prev || ph.OfferedRate >= top.RequestsPerS || ph.Name != ratePhase(ph.OfferedRate) || !strings.HasPrefix(ph.Name, "rate ") {
			t.Fatalf("rate step %+v between %v and %v", ph, prev, top.RequestsPerS)
		}
		prev = ph.OfferedRate
	}
	// Results carry their step, and the steps follow each other in time
	// and in item order.
	order := map[string]int{}
	for i, ph := range out.Phases {
		order[ph.Name] = i
	}
	got := s.results()
	sort.Slice(got, func(i, j int) bool { return got[i].StartOffset < got[j].StartOffset })
	last := 0
	for _, r := range got {
		i, ok := order[r.Phase]
		if !ok || i < last {
			t.Fatalf("item %d in phase %q after phase %d", r.Idx, r.Phase, last)
		}
		last = i
	}
	for _, c := range f.measured() {
		if c.phase == "" {
			t.Fatal("a sweep request sent without its phase")
		}
	}
}

// A sweep of the user's own steps: constant rates, or concurrencies, in the
// order given, items shared out, each step labelled.
func TestSweepOfListedSteps(t *testing.T) {
	t.Parallel()
	f, s := newFake(5*time.Millisecond), &sink{}
	out := run(t, context.Background(), Config{Indices: indices(12), Profile: jobs.LoadProfile{Profile: jobs.LoadSweep, Concurrency: 8,
		Rates: []float64{50, 200, 400}}, Send: f.send, Record: s.record})
	s.exactlyOnce(t, indices(12))
	if len(out.Phases) != 3 {
		t.Fatalf("phases %+v", out.Phases)
	}
	for i, want := range []float64{50, 200, 400} {
		if ph := out.Phases[i]; ph.Name != ratePhase(want) || ph.OfferedRate != want || ph.Sent != 4 {
			t.Errorf("rate step %d: %+v", i, ph)
		}
	}
	f, s = newFake(5*time.Millisecond), &sink{}
	out = run(t, context.Background(), Config{Indices: indices(12), Profile: jobs.LoadProfile{Profile: jobs.LoadSweep, Concurrency: 8,
		Concurrencies: []int{1, 4}}, Send: f.send, Record: s.record})
	s.exactlyOnce(t, indices(12))
	if len(out.Phases) != 2 || out.Phases[0].Name != "concurrency 1" || out.Phases[1].Name != "concurrency 4" || out.Phases[1].Sent != 6 {
		t.Fatalf("concurrency steps %+v", out.Phases)
	}
	if f.peak.Load() != 4 {
		t.Errorf("peak in flight %d, want the last step's 4", f.peak.Load())
	}
	if _, err := Run(context.Background(), Config{Indices: indices(2), Profile: jobs.LoadProfile{Profile: jobs.LoadSweep, Rates: []float64{math.NaN()}},
		Send: f.send, Record: s.record}); err == nil {
		t.Error("a NaN rate was accepted")
	}
}

func TestWarmupIsExcludedAndOffsetsStartAfterIt(t *testing.T) {
	t.Parallel()
	f, s := newFake(2*time.Millisecond), &sink{}
	var started time.Time
	out := run(t, context.Background(), Config{Indices: indices(5), Profile: jobs.LoadProfile{Profile: jobs.LoadSequential, Warmup: 7},
		Send: f.send, Record: s.record, OnStart: func(at time.Time) { started = at }})
	if out.Warmup != 7 || out.Sent != 5 || out.Recorded != 5 {
		t.Fatalf("%+v", out)
	}
	s.exactlyOnce(t, indices(5))
	f.mu.Lock()
	calls := slices.Clone(f.calls)
	f.mu.Unlock()
	var warm []int
	var lastWarm time.Time
	for _, c := range calls {
		if c.phase == PhaseWarmup {
			warm = append(warm, c.idx)
			lastWarm = c.end
		}
	}
	if !slices.Equal(warm, []int{0, 1, 2, 3, 4, 0, 1}) {
		t.Fatalf("warm-up sent %v, want the items cyclically", warm)
	}
	if started.Before(lastWarm) {
		t.Fatal("the measured window started before warm-up ended")
	}
	for i, c := range f.measured() {
		r := s.results()[i]
		if r.Phase == PhaseWarmup || r.StartOffset < 0 {
			t.Fatalf("result %+v", r)
		}
		// The offset is the send time from the window's start; Send runs a
		// moment later, in its own goroutine.
		if d := c.start.Sub(started.Add(r.StartOffset)); d < 0 || d > 20*time.Millisecond {
			t.Fatalf("item %d: offset %v but sent %v after the start", r.Idx, r.StartOffset, c.start.Sub(started))
		}
	}
	if out.Window > time.Since(started) {
		t.Fatalf("window %v includes warm-up", out.Window)
	}
}

func TestMaxRequestsSendsOnlyTheFirstItems(t *testing.T) {
	t.Parallel()
	f, s := newFake(time.Millisecond), &sink{}
	out := run(t, context.Background(), Config{Indices: indices(100), Profile: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 3, MaxRequests: 10},
		Send: f.send, Record: s.record})
	if out.StoppedBy != StoppedMaxRequests || out.Sent != 10 {
		t.Fatalf("%+v", out)
	}
	s.exactlyOnce(t, indices(10))

	// A resumed run counts what earlier segments sent.
	f, s = newFake(0), &sink{}
	out = run(t, context.Background(), Config{Indices: indices(20), Profile: jobs.LoadProfile{Profile: jobs.LoadSequential, MaxRequests: 10},
		Done: Progress{Requests: 7}, Send: f.send, Record: s.record})
	if out.StoppedBy != StoppedMaxRequests || out.Sent != 3 {
		t.Fatalf("resumed: %+v", out)
	}
}

func TestMaxErrorsStopsWithinTheRequestsInFlight(t *testing.T) {
	t.Parallel()
	always := func(int) bool { return true }
	for _, c := range []struct {
		name  string
		p     jobs.LoadProfile
		done  int
		extra int // requests that may be in flight besides the one over the limit
	}{
		{"sequential", jobs.LoadProfile{Profile: jobs.LoadSequential, MaxErrors: 5}, 0, 0},
		{"concurrency", jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 3, MaxErrors: 5}, 0, 2},
		{"open loop", jobs.LoadProfile{Profile: jobs.LoadConstant, Rate: 2000, Concurrency: 4, MaxErrors: 5}, 0, 3},
		{"resumed", jobs.LoadProfile{Profile: jobs.LoadSequential, MaxErrors: 5}, 4, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(time.Millisecond)
			f.fail = always
			out := run(t, context.Background(), Config{Indices: indices(100), Profile: c.p, Done: Progress{Errors: c.done},
				Send: f.send, Record: (&sink{}).record})
			first := c.p.MaxErrors + 1 - c.done
			if out.StoppedBy != StoppedMaxErrors || out.Errors < first || out.Errors > first+c.extra || out.Sent != out.Recorded {
				t.Fatalf("want %d to %d errors: %+v", first, first+c.extra, out)
			}
		})
	}
}

func TestMaxDurationStopsSendingAndLetsInFlightFinish(t *testing.T) {
	t.Parallel()
	const limit = 100 * time.Millisecond
	for _, p := range []jobs.LoadProfile{
		{Profile: jobs.LoadSequential, MaxDuration: jobs.Duration(limit)},
		{Profile: jobs.LoadConstant, Rate: 100, MaxDuration: jobs.Duration(limit)},
	} {
		t.Run(p.Profile, func(t *testing.T) {
			t.Parallel()
			f, s := newFake(20*time.Millisecond), &sink{}
			out := run(t, context.Background(), Config{Indices: indices(1000), Profile: p, Send: f.send, Record: s.record})
			// Sequential: one send per ≥ 20 ms; 100/s: one per 10 ms.
			if out.StoppedBy != StoppedMaxDuration || out.Sent < 1 || out.Sent > 11 || out.Recorded != out.Sent {
				t.Fatalf("%+v", out)
			}
			for _, r := range s.results() {
				if r.StartOffset >= limit || r.Status != jobs.StatusOK {
					t.Fatalf("result %+v after the %v limit", r, limit)
				}
			}
		})
	}
	f := newFake(0)
	out := run(t, context.Background(), Config{Indices: indices(10), Profile: jobs.LoadProfile{Profile: jobs.LoadSequential, Warmup: 2, MaxDuration: jobs.Duration(limit)},
		Done: Progress{Measured: limit}, Send: f.send, Record: (&sink{}).record})
	if out.StoppedBy != StoppedMaxDuration || out.Sent != 0 || out.Warmup != 0 {
		t.Fatalf("a resumed run with its time spent: %+v", out)
	}
}

func TestCancelStopsWithinASecondAndDropsCutRequests(t *testing.T) {
	t.Parallel()
	for _, p := range []jobs.LoadProfile{
		{Profile: jobs.LoadConcurrency, Concurrency: 3},
		{Profile: jobs.LoadConstant, Rate: 50},
		{Profile: jobs.LoadSweep, Concurrency: 3, Steps: 2},
	} {
		t.Run(p.Profile, func(t *testing.T) {
			t.Parallel()
			f := newFake(0)
			// The first items answer; the others hang until cancelled.
			quick := 3
			if p.Profile == jobs.LoadSweep {
				quick = 10 // the sequential share of 40 items, and none of "max"
			}
			f.hang = func(idx int) bool { return idx >= quick }
			s := &sink{want: quick, reached: make(chan struct{})}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan Outcome)
			go func() {
				out, _ := Run(ctx, Config{Indices: indices(40), Profile: p, Send: f.send, Record: s.record})
				done <- out
			}()
			<-s.reached
			f.waitFor(t, "two hanging requests", func() bool { return f.hanging.Load() >= 2 })
			cancel()
			at := time.Now()
			select {
			case out := <-done:
				if took := time.Since(at); took >= time.Second {
					t.Fatalf("returned %v after cancel", took)
				}
				if out.StoppedBy != StoppedCancelled || out.Recorded != quick || out.Dropped < 2 || out.Sent != out.Recorded+out.Dropped || out.Errors != 0 {
					t.Fatalf("%+v", out)
				}
				s.exactlyOnce(t, indices(quick))
			case <-time.After(time.Second):
				t.Fatal("Run did not return within 1 s of cancellation")
			}
		})
	}
}

func TestDrainFinishesAndRecordsInFlightRequests(t *testing.T) {
	t.Parallel()
	f, s := newFake(0), &sink{}
	f.release = make(chan struct{})
	drain := make(chan struct{})
	done := make(chan Outcome)
	go func() {
		out, _ := Run(context.Background(), Config{Indices: indices(100), Profile: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 2},
			Send: f.send, Record: s.record, Drain: drain})
		done <- out
	}()
	f.waitFor(t, "two requests in flight", func() bool { return f.inFlight.Load() == 2 })
	close(drain)
	close(f.release) // the runtime answers after the drain
	out := <-done
	if out.StoppedBy != StoppedDrained || out.Sent != 2 || out.Recorded != 2 || out.Dropped != 0 {
		t.Fatalf("%+v", out)
	}
	for _, r := range s.results() {
		if r.Status != jobs.StatusOK {
			t.Fatalf("an in-flight request was cut: %+v", r)
		}
	}
	s.exactlyOnce(t, indices(2))
}

func TestDrainAfterTheLastSendStillCompletes(t *testing.T) {
	t.Parallel()
	drain := make(chan struct{})
	s := &sink{}
	send := func(ctx context.Context, idx int, phase string) jobs.Result {
		if idx == 2 {
			close(drain) // agentd is told to stop while the last item is in flight
		}
		return jobs.Result{Status: jobs.StatusOK}
	}
	out := run(t, context.Background(), Config{Indices: indices(3), Profile: jobs.LoadProfile{Profile: jobs.LoadSequential}, Send: send, Record: s.record, Drain: drain})
	if out.StoppedBy != StoppedCompleted || out.Recorded != 3 {
		t.Fatalf("%+v", out)
	}
}

func TestResumedRunSendsExactlyItsSubset(t *testing.T) {
	t.Parallel()
	rest := []int{3, 7, 8, 42, 99, 100, 250}
	for _, p := range []jobs.LoadProfile{
		{Profile: jobs.LoadSequential, Warmup: 2},
		{Profile: jobs.LoadConcurrency, Concurrency: 3},
		{Profile: jobs.LoadPoisson, Rate: 1000},
	} {
		t.Run(p.Profile, func(t *testing.T) {
			t.Parallel()
			f, s := newFake(time.Millisecond), &sink{}
			run(t, context.Background(), Config{Indices: rest, Profile: p, Send: f.send, Record: s.record})
			s.exactlyOnce(t, rest)
			var sent []int
			for _, c := range f.measured() {
				sent = append(sent, c.idx)
			}
			slices.Sort(sent)
			if !slices.Equal(sent, rest) {
				t.Fatalf("sent %v, want %v", sent, rest)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			for _, c := range f.calls {
				if c.phase == PhaseWarmup && c.idx != 3 && c.idx != 7 {
					t.Fatalf("warm-up sent item %d, outside the first of the subset", c.idx)
				}
			}
		})
	}
}

func TestRunRefusesAConfigItCannotHonour(t *testing.T) {
	t.Parallel()
	send := func(context.Context, int, string) jobs.Result { t.Error("sent"); return jobs.Result{} }
	record := func(jobs.Result) {}
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no send", Config{Record: record}, "Send and Record"},
		{"unknown profile", Config{Send: send, Record: record, Profile: jobs.LoadProfile{Profile: "burst"}}, `"burst"`},
		{"no rate", Config{Send: send, Record: record, Profile: jobs.LoadProfile{Profile: jobs.LoadPoisson}}, "rate above 0"},
		{"no concurrency", Config{Send: send, Record: record, Profile: jobs.LoadProfile{Profile: jobs.LoadConcurrency}}, "concurrency of at least 1"},
		{"negative", Config{Send: send, Record: record, Profile: jobs.LoadProfile{Profile: jobs.LoadSequential, MaxErrors: -1}}, "negative"},
	} {
		_, err := Run(context.Background(), Config{Indices: indices(3), Profile: c.cfg.Profile, Send: c.cfg.Send, Record: c.cfg.Record})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error about %s", c.name, err, c.want)
		}
	}
}

func TestSplitSharesDifferByAtMostOne(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n, parts int
		want     []int
	}{
		{10, 4, []int{3, 3, 2, 2}},
		{3, 4, []int{1, 1, 1, 0}},
		{0, 3, []int{0, 0, 0}},
		{8, 4, []int{2, 2, 2, 2}},
	} {
		var sizes, all []int
		for _, sh := range split(indices(c.n), c.parts) {
			sizes = append(sizes, len(sh))
			all = append(all, sh...)
		}
		if !slices.Equal(sizes, c.want) || !slices.Equal(all, indices(c.n)) {
			t.Errorf("split(%d, %d) = %v", c.n, c.parts, sizes)
		}
	}
}

// TestLengthSweepStepsAtOneConcurrency: a length sweep sends its steps in
// order, each labelled with its lengths, each at the profile's one
// concurrency, and refuses a profile without lengths.
func TestLengthSweepStepsAtOneConcurrency(t *testing.T) {
	t.Parallel()
	f, s := newFake(5*time.Millisecond), &sink{}
	lengths := &jobs.Lengths{Input: []int{128, 512, 2048}, Output: []int{16}}
	out := run(t, context.Background(), Config{Indices: indices(12), Profile: jobs.LoadProfile{Profile: jobs.LoadLengthSweep, Concurrency: 2,
		Lengths: lengths}, Send: f.send, Record: s.record})
	s.exactlyOnce(t, indices(12))
	want := []string{"input 128 output 16", "input 512 output 16", "input 2048 output 16"}
	if len(out.Phases) != len(want) {
		t.Fatalf("phases %+v", out.Phases)
	}
	for i, ph := range out.Phases {
		if ph.Name != want[i] || ph.Sent != 4 || ph.Requests != 4 {
			t.Errorf("step %d: %+v, want %s with 4 requests", i, ph, want[i])
		}
	}
	if f.peak.Load() != 2 {
		t.Errorf("peak in flight %d, want the profile's 2", f.peak.Load())
	}
	got := s.results()
	sort.Slice(got, func(i, j int) bool { return got[i].StartOffset < got[j].StartOffset })
	for i, r := range got {
		if r.Phase != want[i/4] {
			t.Fatalf("request %d sent in step %q, want %q (steps follow each other)", i, r.Phase, want[i/4])
		}
	}
	if _, err := Run(context.Background(), Config{Indices: indices(2), Profile: jobs.LoadProfile{Profile: jobs.LoadLengthSweep},
		Send: f.send, Record: s.record}); err == nil {
		t.Error("a length sweep without lengths was accepted")
	}
	// At a rate: each step an open loop at that rate, capped in flight.
	f, s = newFake(20*time.Millisecond), &sink{}
	out = run(t, context.Background(), Config{Indices: indices(8), Profile: jobs.LoadProfile{Profile: jobs.LoadLengthSweep, Rate: 400, Concurrency: 3,
		Lengths: &jobs.Lengths{Input: []int{64, 256}}}, Send: f.send, Record: s.record})
	s.exactlyOnce(t, indices(8))
	if len(out.Phases) != 2 || out.Phases[0].Name != "input 64" || out.Phases[1].Name != "input 256" || out.Phases[1].OfferedRate != 400 || out.Phases[1].Sent != 4 {
		t.Fatalf("rate steps %+v", out.Phases)
	}
	if p := f.peak.Load(); p > 3 {
		t.Errorf("peak in flight %d, above the cap of 3", p)
	}
}
