package report

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/agentd/load"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// t0 is the simulated runs' window start.
var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// simRun is a run played out on a simulated clock, as agentd's load
// generator would play it: a closed loop keeps conc requests in flight,
// an open loop sends on its schedule (gap) with at most cap in flight,
// holding a send when the cap is reached and keeping the schedule after
// it; nothing leaves at or after max_duration. latency says how long the
// request sent at offset sent takes.
type simRun struct {
	plan    Plan
	latency func(sent time.Duration) time.Duration
	// gap is the open loop's time to the next send; nil for a closed
	// loop.
	gap func() time.Duration
	// conc is the closed loop's concurrency, or the open loop's cap.
	conc int
}

// tick is one progress write: the ETA shown then and the truth.
type tick struct {
	at       time.Duration // since the window start
	progress float64       // share of the segment's requests back
	eta      *time.Duration
	truth    time.Duration
}

func (t tick) String() string {
	eta := "unknown"
	if t.eta != nil {
		eta = fmt.Sprintf("%.1fs", t.eta.Seconds())
	}
	return fmt.Sprintf("t=%5.1fs %3.0f%% eta %-8s true %.1fs", t.at.Seconds(), 100*t.progress, eta, t.truth.Seconds())
}

// play runs the simulation, asking the estimator every second.
func (s simRun) play() []tick {
	e := NewETA(s.plan)
	e.Start(t0)
	n := s.plan.Items
	if m := s.plan.Load.MaxRequests; m > 0 {
		n = min(n, max(m-s.plan.Before.Requests, 0))
	}
	var deadline time.Duration = -1
	if d := time.Duration(s.plan.Load.MaxDuration); d > 0 {
		deadline = d - s.plan.Before.Measured
	}
	type req struct {
		id  uint64
		end time.Duration
	}
	var (
		inflight   []req
		sent, back int
		now        time.Duration
		nextSend   time.Duration // open loop: the schedule
		ticks      []tick
		nextTick   = time.Second
		last       time.Duration
		canSend    = func() bool { return sent < n && (deadline < 0 || now < deadline) }
	)
	send := func() {
		id := e.Sent(t0.Add(now))
		inflight = append(inflight, req{id, now + s.latency(now)})
		sent++
	}
	if s.gap == nil {
		for range min(s.conc, n) {
			send()
		}
	}
	for {
		// The next event: a request back, a scheduled send, a tick.
		next := time.Duration(math.MaxInt64)
		for _, r := range inflight {
			next = min(next, r.end)
		}
		if s.gap != nil && canSend() && len(inflight) < s.conc {
			next = min(next, max(nextSend, now))
		}
		if next == time.Duration(math.MaxInt64) {
			break // nothing in flight, nothing more to send
		}
		for nextTick < next {
			now = nextTick
			eta, ok := e.Estimate(t0.Add(now))
			t := tick{at: now, progress: float64(back) / float64(n)}
			if ok {
				t.eta = &eta
			}
			ticks = append(ticks, t)
			nextTick += time.Second
		}
		now = next
		// Requests back first, then sends (a closed loop refills the
		// slot at once; an open loop's held send takes it).
		slices.SortFunc(inflight, func(a, b req) int { return int(a.end - b.end) })
		for len(inflight) > 0 && inflight[0].end <= now {
			e.Ended(inflight[0].id, t0.Add(now))
			inflight = inflight[1:]
			back++
			last = now
			if s.gap == nil && canSend() {
				send()
			}
		}
		for s.gap != nil && canSend() && len(inflight) < s.conc && nextSend <= now {
			send()
			nextSend += s.gap()
		}
	}
	for i := range ticks {
		ticks[i].truth = max(last-ticks[i].at, 0)
	}
	return ticks
}

func constLatency(d time.Duration) func(time.Duration) time.Duration {
	return func(time.Duration) time.Duration { return d }
}

func every(d time.Duration) func() time.Duration { return func() time.Duration { return d } }

func concurrency(n int) jobs.LoadProfile {
	return jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: n}
}

// within checks the ETA against the truth at every tick from a progress
// (and time) on: off by at most tol of the truth plus slack (the spacing
// of answers: a closed loop at constant latency answers in waves).
type within struct {
	// truth, when set, replaces the run's: before a change the
	// estimator cannot foresee, it is checked against the run without it.
	truth        func(at time.Duration) time.Duration
	fromProgress float64
	fromTime     time.Duration
	until        time.Duration // 0: to the end
	tol          float64
	slack        time.Duration
}

func (w within) check(t *testing.T, ticks []tick) {
	t.Helper()
	checked := 0
	for _, k := range ticks {
		if k.progress < w.fromProgress || k.at < w.fromTime || (w.until > 0 && k.at > w.until) {
			continue
		}
		checked++
		if w.truth != nil {
			k.truth = w.truth(k.at)
		}
		if k.eta == nil {
			t.Errorf("%v: no ETA", k)
			continue
		}
		if off := (*k.eta - k.truth).Abs(); float64(off) > w.tol*float64(k.truth)+float64(w.slack) {
			t.Errorf("%v: off by %.1fs, more than %.0f%% + %v", k, off.Seconds(), 100*w.tol, w.slack)
		}
	}
	if checked == 0 {
		t.Errorf("no tick checked")
	}
}

func TestETA(t *testing.T) {
	poisson := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name  string
		run   simRun
		check func(t *testing.T, ticks []tick)
	}{{
		// The benchmark's run: 8 in flight, 1.36 s each, 400 items: 68 s.
		// Right from the first answers on, where the old formula (done ÷
		// elapsed) was off by the time before them.
		name: "steady concurrency",
		run:  simRun{plan: Plan{Items: 400, Load: concurrency(8)}, latency: constLatency(1360 * time.Millisecond), conc: 8},
		check: func(t *testing.T, ticks []tick) {
			unknownUntil(t, ticks, 1360*time.Millisecond)
			within{fromTime: 1360 * time.Millisecond, slack: time.Millisecond}.check(t, ticks)
		},
	}, {
		name: "sequential",
		run:  simRun{plan: Plan{Items: 120, Load: jobs.LoadProfile{Profile: jobs.LoadSequential}}, latency: constLatency(500 * time.Millisecond), conc: 1},
		check: func(t *testing.T, ticks []tick) {
			within{slack: time.Millisecond}.check(t, ticks)
		},
	}, {
		// Latencies drawn from 0.5–3.5 s: the first answers are the
		// shortest, and the requests still out are the long ones.
		name: "varied latencies",
		run: simRun{plan: Plan{Items: 1000, Load: concurrency(32)}, conc: 32, latency: func() func(time.Duration) time.Duration {
			r := rand.New(rand.NewPCG(3, 4))
			return func(time.Duration) time.Duration {
				return time.Duration((0.5 + 3*r.Float64()) * float64(time.Second))
			}
		}()},
		check: func(t *testing.T, ticks []tick) {
			within{fromProgress: 0.05, tol: 0.2, slack: 2 * time.Second}.check(t, ticks)
			within{fromProgress: 0.1, tol: 0.1, slack: 2 * time.Second}.check(t, ticks)
		},
	}, {
		// The first wave takes 5 s (a cold runtime), then 1 s each: 500
		// items at 10 in flight end at 5 + 49 = 54 s. The first wave's
		// latency is set aside once the second wave is back.
		name: "slow start",
		run: simRun{plan: Plan{Items: 500, Load: concurrency(10)}, conc: 10, latency: func(sent time.Duration) time.Duration {
			if sent == 0 {
				return 5 * time.Second
			}
			return time.Second
		}},
		check: func(t *testing.T, ticks []tick) {
			unknownUntil(t, ticks, 5*time.Second)
			within{fromProgress: 0.1, slack: time.Millisecond}.check(t, ticks)
		},
	}, {
		// 1 s per request until 30 s, then 2 s: the pace halves midway.
		// The ETA follows within a decay time or two.
		name: "rate change midway",
		run: simRun{plan: Plan{Items: 600, Load: concurrency(10)}, conc: 10, latency: func(sent time.Duration) time.Duration {
			if sent < 30*time.Second {
				return time.Second
			}
			return 2 * time.Second
		}},
		check: func(t *testing.T, ticks []tick) {
			within{truth: steady(60 * time.Second), slack: time.Millisecond, until: 30 * time.Second}.check(t, ticks)
			later(t, ticks, 31*time.Second, 40*time.Second) // slower answers: the end moves out
			within{fromTime: 30*time.Second + 2*ETADecay, tol: 0.2, slack: 2 * time.Second}.check(t, ticks)
		},
	}, {
		// The runtime freezes from 20 s to 40 s: the ETA must not count
		// down through the stall; after it, it comes back to the pace.
		name: "stall",
		run: simRun{plan: Plan{Items: 800, Load: concurrency(8)}, conc: 8, latency: func(sent time.Duration) time.Duration {
			return frozen(sent, time.Second, 20*time.Second, 40*time.Second)
		}},
		check: func(t *testing.T, ticks []tick) {
			within{truth: steady(100 * time.Second), fromTime: time.Second, slack: time.Millisecond, until: 20 * time.Second}.check(t, ticks)
			rising(t, ticks, 22*time.Second, 40*time.Second)
			// The stall weighs on the pace until it is a few decay times
			// old.
			within{fromTime: 40*time.Second + 3*ETADecay, tol: 0.2, slack: 2 * time.Second}.check(t, ticks)
		},
	}, {
		// 1000 items would take 100 s; max_duration stops sending at 30 s.
		name: "max_duration",
		run: simRun{plan: Plan{Items: 1000, Load: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 10, MaxDuration: jobs.Duration(30 * time.Second)}},
			conc: 10, latency: constLatency(time.Second)},
		check: func(t *testing.T, ticks []tick) {
			within{slack: time.Millisecond}.check(t, ticks)
			capped(t, ticks, 30*time.Second, time.Second)
		},
	}, {
		// Resumed after 10 s of measured load: 20 s are left of the 30.
		name: "max_duration, resumed",
		run: simRun{plan: Plan{Items: 900, Before: load.Progress{Requests: 100, Measured: 10 * time.Second},
			Load: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 10, MaxDuration: jobs.Duration(30 * time.Second)}},
			conc: 10, latency: constLatency(time.Second)},
		check: func(t *testing.T, ticks []tick) {
			within{slack: time.Millisecond}.check(t, ticks)
			capped(t, ticks, 20*time.Second, time.Second)
		},
	}, {
		// 500 items left, but max_requests 300 of which 100 were recorded
		// by an earlier segment: 200 at 10/s.
		name: "max_requests, resumed",
		run: simRun{plan: Plan{Items: 500, Before: load.Progress{Requests: 100, Measured: 10 * time.Second},
			Load: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 10, MaxRequests: 300}},
			conc: 10, latency: constLatency(time.Second)},
		check: func(t *testing.T, ticks []tick) {
			if end := ticks[0].truth + ticks[0].at; end != 20*time.Second {
				t.Fatalf("the simulated run ends at %v, want 20s", end)
			}
			within{slack: time.Millisecond}.check(t, ticks)
		},
	}, {
		// 5/s, 2 s each, 300 items: 59.8 + 2 s. Known from the first send:
		// remaining ÷ rate, plus the age of the oldest in flight until
		// one is back.
		name: "constant rate",
		run: simRun{plan: Plan{Items: 300, Load: jobs.LoadProfile{Profile: jobs.LoadConstant, Rate: 5}},
			gap: every(200 * time.Millisecond), conc: load.OpenLoopCeiling, latency: constLatency(2 * time.Second)},
		check: func(t *testing.T, ticks []tick) {
			within{tol: 0.02, slack: 1100 * time.Millisecond}.check(t, ticks)
		},
	}, {
		// 20/s asked, but 10 in flight at 1 s each allow 10/s: the cap
		// paces the run once the latency is known.
		name: "constant rate above what the cap allows",
		run: simRun{plan: Plan{Items: 400, Load: jobs.LoadProfile{Profile: jobs.LoadConstant, Rate: 20, Concurrency: 10}},
			gap: every(50 * time.Millisecond), conc: 10, latency: constLatency(time.Second)},
		check: func(t *testing.T, ticks []tick) {
			within{fromTime: 2 * time.Second, tol: 0.02, slack: 1100 * time.Millisecond}.check(t, ticks)
		},
	}, {
		// 20/s asked of a runtime that serves 10/s (10 at a time, 1 s
		// each, the rest queued), with no cap: the backlog grows, and
		// the latencies of the last answers lag behind it. 400 items end
		// at about 41 s.
		name: "constant rate above what the runtime serves",
		run: simRun{plan: Plan{Items: 400, Load: jobs.LoadProfile{Profile: jobs.LoadConstant, Rate: 20}},
			gap: every(50 * time.Millisecond), conc: load.OpenLoopCeiling, latency: queue(10, time.Second)},
		check: func(t *testing.T, ticks []tick) {
			within{fromProgress: 0.1, tol: 0.2, slack: time.Second}.check(t, ticks)
		},
	}, {
		name: "poisson",
		run: simRun{plan: Plan{Items: 300, Load: jobs.LoadProfile{Profile: jobs.LoadPoisson, Rate: 5}},
			gap:  func() time.Duration { return time.Duration(poisson.ExpFloat64() * float64(200*time.Millisecond)) },
			conc: load.OpenLoopCeiling, latency: constLatency(time.Second)},
		check: func(t *testing.T, ticks []tick) {
			within{fromProgress: 0.1, tol: 0.2, slack: time.Second}.check(t, ticks)
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ticks := c.run.play()
			c.check(t, ticks)
			if t.Failed() {
				var b strings.Builder
				for _, k := range ticks {
					fmt.Fprintln(&b, k)
				}
				t.Log("\n" + b.String())
			}
		})
	}
}

// steady is the truth of a run that would end at end.
func steady(end time.Duration) func(time.Duration) time.Duration {
	return func(at time.Duration) time.Duration { return end - at }
}

// later checks the end the ETA points to (now + ETA) is later at b than
// at a.
func later(t *testing.T, ticks []tick, a, b time.Duration) {
	t.Helper()
	var ends []time.Duration
	for _, k := range ticks {
		if (k.at == a || k.at == b) && k.eta != nil {
			ends = append(ends, k.at+*k.eta)
		}
	}
	if len(ends) != 2 || ends[1] <= ends[0] {
		t.Errorf("the end the ETA points to does not move out from %v to %v: %v", a, b, ends)
	}
}

// queue is a runtime serving n requests at a time, each for d, the others
// waiting their turn in the order they came.
func queue(n int, d time.Duration) func(time.Duration) time.Duration {
	free := make([]time.Duration, n) // when each server is next free
	return func(sent time.Duration) time.Duration {
		i := slices.Index(free, slices.Min(free))
		free[i] = max(sent, free[i]) + d
		return free[i] - sent
	}
}

// frozen is the latency of a request needing work of service time sent
// at sent on a runtime that does nothing from a to b.
func frozen(sent, work, a, b time.Duration) time.Duration {
	if sent+work <= a || sent >= b {
		return work
	}
	return work + b - max(sent, a)
}

// unknownUntil checks there is no ETA before the first answer.
func unknownUntil(t *testing.T, ticks []tick, first time.Duration) {
	t.Helper()
	for _, k := range ticks {
		if k.at < first && k.eta != nil {
			t.Errorf("%v: an ETA before any answer", k)
		}
	}
}

// rising checks the ETA goes up from tick to tick in [from, to].
func rising(t *testing.T, ticks []tick, from, to time.Duration) {
	t.Helper()
	var prev *time.Duration
	for _, k := range ticks {
		if k.at < from || k.at > to {
			continue
		}
		if k.eta == nil {
			t.Errorf("%v: no ETA", k)
			continue
		}
		if prev != nil && *k.eta <= *prev {
			t.Errorf("%v: down from %.1fs", k, prev.Seconds())
		}
		prev = k.eta
	}
}

// capped checks the ETA never goes past the deadline (from the window
// start) by more than a latency.
func capped(t *testing.T, ticks []tick, deadline, lat time.Duration) {
	t.Helper()
	for _, k := range ticks {
		if k.eta != nil && k.at+*k.eta > deadline+lat {
			t.Errorf("%v: past max_duration (%v) plus a latency", k, deadline)
		}
	}
}

func TestETAUnknownWithoutABasis(t *testing.T) {
	e := NewETA(Plan{Items: 10, Load: concurrency(2)})
	if _, ok := e.Estimate(t0); ok {
		t.Error("an ETA before the window started")
	}
	e.Start(t0)
	a, b := e.Sent(t0), e.Sent(t0)
	if _, ok := e.Estimate(t0.Add(3 * time.Second)); ok {
		t.Error("an ETA for a closed loop before any answer")
	}
	e.Ended(a, t0.Add(4*time.Second))
	e.Ended(b, t0.Add(4*time.Second))
	// 8 more at 2 in flight, 4 s each: 16 s.
	if eta, ok := e.Estimate(t0.Add(4 * time.Second)); !ok || eta != 16*time.Second {
		t.Errorf("ETA %v %v, want 16s", eta, ok)
	}

	// All done: zero, not unknown.
	e = NewETA(Plan{Items: 1, Load: concurrency(1)})
	e.Start(t0)
	e.Ended(e.Sent(t0), t0.Add(time.Second))
	if eta, ok := e.Estimate(t0.Add(2 * time.Second)); !ok || eta != 0 {
		t.Errorf("ETA %v %v at the end, want 0", eta, ok)
	}

	// A rate profile knows its pace from the start.
	e = NewETA(Plan{Items: 50, Load: jobs.LoadProfile{Profile: jobs.LoadPoisson, Rate: 10}})
	e.Start(t0)
	if eta, ok := e.Estimate(t0); !ok || eta != 5*time.Second {
		t.Errorf("ETA %v %v for 50 at 10/s, want 5s", eta, ok)
	}
	// Nothing left within max_requests.
	e = NewETA(Plan{Items: 50, Before: load.Progress{Requests: 20}, Load: jobs.LoadProfile{Profile: jobs.LoadSequential, MaxRequests: 20}})
	e.Start(t0)
	if eta, ok := e.Estimate(t0); !ok || eta != 0 {
		t.Errorf("ETA %v %v with max_requests used up, want 0", eta, ok)
	}
}

// The reporter writes the estimator's ETA with its progress, fed by
// Sending and its clock.
func TestReporterWritesTheETA(t *testing.T) {
	now := t0
	w := &fakeWriter{}
	r := New(w, store.Lease{RunID: 1}, 100, Options{Now: func() time.Time { return now }, Load: concurrency(4)}, nil)
	r.Start(now)
	var back []func()
	for range 4 {
		back = append(back, r.Sending())
	}
	now = now.Add(2 * time.Second)
	if err := r.progress(context.Background()); err != nil {
		t.Fatal(err)
	}
	if w.last.ETA != nil {
		t.Errorf("ETA %v before any answer, want unknown", *w.last.ETA)
	}
	for _, b := range back {
		b()
		r.Add(jobs.Result{Status: jobs.StatusOK, E2E: 2 * time.Second})
		r.Sending()
	}
	if err := r.progress(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 92 unsent at 4 per 2 s, and the last takes 2 s.
	if w.last.ETA == nil || *w.last.ETA != 48*time.Second {
		t.Errorf("ETA %v, want 48s", w.last.ETA)
	}
}

type fakeWriter struct{ last store.Progress }

func (f *fakeWriter) WriteResults(context.Context, store.Lease, []store.ResultRecord) (int, error) {
	return 0, nil
}

func (f *fakeWriter) UpdateProgress(_ context.Context, _ store.Lease, p store.Progress, _ store.Sample) error {
	f.last = p
	return nil
}
