package load

import (
	"context"
	"testing"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// conversations lays out n conversations of turns turns each, conversation
// by conversation, as the multi-turn generator does.
func conversations(n, turns int) (items []int, prev map[int]int, arrivals map[int]time.Duration) {
	prev, arrivals = map[int]int{}, map[int]time.Duration{}
	for c := range n {
		for t := range turns {
			idx := c*turns + t
			items = append(items, idx)
			arrivals[idx] = time.Duration(idx) * time.Millisecond
			if t > 0 {
				prev[idx] = idx - 1
			}
		}
	}
	return items, prev, arrivals
}

func TestConversationTurnsWaitForThePreviousTurn(t *testing.T) {
	t.Parallel()
	profiles := []jobs.LoadProfile{
		{Profile: jobs.LoadSequential},
		{Profile: jobs.LoadConcurrency, Concurrency: 4},
		{Profile: jobs.LoadConstant, Rate: 500},
		{Profile: jobs.LoadPoisson, Rate: 500},
		{Profile: jobs.LoadTrace, Speed: 1},
		{Profile: jobs.LoadSweep, Concurrency: 4, Steps: 2},
	}
	for _, p := range profiles {
		t.Run(p.Profile, func(t *testing.T) {
			t.Parallel()
			const convs, turns = 6, 4
			items, prev, arrivals := conversations(convs, turns)
			f := newFake(5 * time.Millisecond)
			f.fail = func(idx int) bool { return idx == 5 } // a failed turn still releases the next
			var recorded []jobs.Result
			out, err := Run(context.Background(), Config{Indices: items, Profile: p, Prev: prev, Arrivals: arrivals,
				Send: f.send, Record: func(r jobs.Result) { recorded = append(recorded, r) }})
			if err != nil {
				t.Fatal(err)
			}
			if out.StoppedBy != StoppedCompleted || len(recorded) != convs*turns {
				t.Fatalf("stopped by %s with %d of %d recorded", out.StoppedBy, len(recorded), convs*turns)
			}
			byIdx := map[int]call{}
			for _, c := range f.measured() {
				byIdx[c.idx] = c
			}
			for idx, p := range prev {
				if byIdx[idx].start.Before(byIdx[p].end) {
					t.Errorf("turn %d started %v before turn %d finished", idx, byIdx[p].end.Sub(byIdx[idx].start), p)
				}
			}
			if p.Profile == jobs.LoadConcurrency && f.peak.Load() < 2 {
				t.Errorf("conversations did not run concurrently: peak %d in flight", f.peak.Load())
			}
		})
	}
}

func TestConversationOrderWithoutConversations(t *testing.T) {
	t.Parallel()
	f := newFake(0)
	var got []int
	_, err := Run(context.Background(), Config{Indices: []int{3, 1, 2}, Profile: jobs.LoadProfile{Profile: jobs.LoadSequential},
		Send: f.send, Record: func(r jobs.Result) { got = append(got, r.Idx) }})
	if err != nil || len(got) != 3 || got[0] != 3 || got[1] != 1 || got[2] != 2 {
		t.Fatalf("sent %v (%v): want the given order", got, err)
	}
}

func TestTraceProfileSendsAtArrivalTimes(t *testing.T) {
	t.Parallel()
	arrivals := map[int]time.Duration{0: 0, 1: 40 * time.Millisecond, 2: 40 * time.Millisecond, 3: 120 * time.Millisecond, 4: 200 * time.Millisecond}
	items := []int{0, 1, 2, 3, 4}
	for _, speed := range []float64{1, 2} {
		f := newFake(time.Millisecond)
		var start time.Time
		out, err := Run(context.Background(), Config{Indices: items, Profile: jobs.LoadProfile{Profile: jobs.LoadTrace, Speed: speed},
			Arrivals: arrivals, OnStart: func(t time.Time) { start = t }, Send: f.send, Record: func(jobs.Result) {}})
		if err != nil || out.Recorded != 5 {
			t.Fatalf("speed %v: %+v %v", speed, out, err)
		}
		for _, c := range f.measured() {
			want := time.Duration(float64(arrivals[c.idx]) / speed)
			got := c.start.Sub(start)
			if got < want || got > want+30*time.Millisecond {
				t.Errorf("speed %v: item %d sent at %v, want %v (within 30ms after)", speed, c.idx, got, want)
			}
		}
	}
}

func TestTraceProfileRefusals(t *testing.T) {
	t.Parallel()
	f := newFake(0)
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no arrivals", Config{Indices: []int{0}, Profile: jobs.LoadProfile{Profile: jobs.LoadTrace}}},
		{"an item without", Config{Indices: []int{0, 1}, Arrivals: map[int]time.Duration{0: 0}, Profile: jobs.LoadProfile{Profile: jobs.LoadTrace}}},
		{"negative speed", Config{Indices: []int{0}, Arrivals: map[int]time.Duration{0: 0}, Profile: jobs.LoadProfile{Profile: jobs.LoadTrace, Speed: -1}}},
	}
	for _, tc := range tests {
		tc.cfg.Send, tc.cfg.Record = f.send, func(jobs.Result) {}
		if _, err := Run(context.Background(), tc.cfg); err == nil {
			t.Errorf("%s: want an error", tc.name)
		}
	}
	if len(f.measured()) != 0 {
		t.Fatal("a refused config sent requests")
	}
}

func TestTraceProfileMaxRequests(t *testing.T) {
	t.Parallel()
	f := newFake(0)
	arr := map[int]time.Duration{0: 0, 1: time.Millisecond, 2: 2 * time.Millisecond}
	out, err := Run(context.Background(), Config{Indices: []int{0, 1, 2}, Arrivals: arr, Profile: jobs.LoadProfile{Profile: jobs.LoadTrace, MaxRequests: 2},
		Send: f.send, Record: func(jobs.Result) {}})
	if err != nil || out.Sent != 2 || out.StoppedBy != StoppedMaxRequests {
		t.Fatalf("%+v %v", out, err)
	}
}
