package store_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

func secs(v float64) *float64 { return &v }

// The estimate's rules, one case each: percent rounded down, finished is
// 0, running runs count their own ETA, queued runs are timed from this
// benchmark's runs on their queue (completed, then running), the target
// elsewhere, then any queue, dealt out to the queue's agents; and no
// estimate, with the reason, when a queue has no agent or nothing times
// a run.
func TestEstimateBenchmark(t *testing.T) {
	t.Parallel()
	const cpu, gpu = "cpu_sim", "gpu_vllm"
	run := func(id int64, state, queue string, total, completed int64) store.RunTiming {
		r := store.RunTiming{ID: id, State: state, ModelID: 1, Runtime: "sim", Hardware: "cpu", Total: total, Completed: completed}
		if queue == gpu {
			r.Runtime, r.Hardware = "vllm", "gpu"
		}
		return r
	}
	with := func(r store.RunTiming, f func(*store.RunTiming)) store.RunTiming { f(&r); return r }
	done := func(id int64, queue string, total int64, took float64) store.RunTiming {
		return with(run(id, "completed", queue, total, total), func(r *store.RunTiming) { r.Duration = took })
	}
	running := func(id int64, queue string, total, completed int64, elapsed float64, eta *float64) store.RunTiming {
		return with(run(id, "running", queue, total, completed), func(r *store.RunTiming) { r.Elapsed, r.ETASeconds = elapsed, eta })
	}
	agents := func(n map[string]int) store.EstimateFacts { return store.EstimateFacts{Agents: n} }
	cases := []struct {
		name     string
		runs     []store.RunTiming
		facts    store.EstimateFacts
		status   string
		progress int
		eta      int64 // -1: none
		reason   string
	}{
		{"finished", []store.RunTiming{done(1, cpu, 3, 10), run(2, "failed", cpu, 3, 1)}, agents(nil), "completed", 66, 0, ""},
		{"running runs: the longest, rounded up", []store.RunTiming{running(1, cpu, 10, 5, 5, secs(10.2)), running(2, gpu, 10, 1, 5, secs(3))},
			agents(nil), "running", 30, 11, ""},
		{"queued after a completed run on its queue, one agent",
			[]store.RunTiming{done(1, cpu, 10, 100), running(2, cpu, 10, 5, 50, secs(40.5)), run(3, "queued", cpu, 20, 0)},
			agents(map[string]int{cpu: 1}), "running", 37, 241, ""}, // 40.5 + 20 × 10 s
		{"queued beside the running run, two agents",
			[]store.RunTiming{done(1, cpu, 10, 100), running(2, cpu, 10, 5, 50, secs(40.5)), run(3, "queued", cpu, 20, 0)},
			agents(map[string]int{cpu: 2}), "running", 37, 200, ""},
		{"three queued on two agents",
			[]store.RunTiming{done(1, cpu, 10, 30), run(2, "queued", cpu, 10, 0), run(3, "queued", cpu, 10, 0), run(4, "queued", cpu, 10, 0)},
			agents(map[string]int{cpu: 2}), "running", 25, 60, ""},
		{"timed by the running run's projection", []store.RunTiming{running(1, cpu, 10, 5, 20, secs(20)), run(2, "queued", cpu, 10, 0)},
			agents(map[string]int{cpu: 1}), "running", 25, 60, ""}, // 20 + 10 × (20 + 20) / 10
		{"all queued, timed by the target's runs elsewhere", []store.RunTiming{run(1, "queued", cpu, 10, 0), run(2, "queued", cpu, 10, 0)},
			store.EstimateFacts{Agents: map[string]int{cpu: 1}, TargetPace: map[store.Target]float64{{ModelID: 1, Runtime: "sim", Hardware: "cpu"}: 2.5}},
			"queued", 0, 50, ""},
		{"timed by a run on another queue", []store.RunTiming{done(1, gpu, 10, 40), run(2, "queued", cpu, 5, 0)},
			agents(map[string]int{cpu: 1}), "running", 66, 20, ""},
		{"the queue's own runs before other queues'", []store.RunTiming{done(1, gpu, 10, 1000), done(2, cpu, 10, 10), run(3, "queued", cpu, 10, 0)},
			agents(map[string]int{cpu: 1}), "running", 66, 10, ""},
		{"no agent serves the queue", []store.RunTiming{done(1, cpu, 10, 10), run(2, "queued", gpu, 10, 0)},
			agents(map[string]int{cpu: 3}), "running", 50, -1, "no agent serves queue gpu_vllm"},
		{"nothing finished to time one", []store.RunTiming{run(1, "queued", cpu, 10, 0)},
			agents(map[string]int{cpu: 1}), "queued", 0, -1, "no run of this benchmark has finished yet to time one"},
		{"a running run without an ETA and nothing to time it", []store.RunTiming{running(7, cpu, 10, 0, 1, nil)},
			agents(map[string]int{cpu: 1}), "running", 0, -1, "run 7 has no ETA yet and no run of this benchmark has finished to time it"},
		{"a running run without an ETA, timed by a finished one", []store.RunTiming{done(1, cpu, 10, 50), running(2, cpu, 10, 4, 30, nil)},
			agents(map[string]int{cpu: 1}), "running", 70, 30, ""}, // 6 left × 5 s
		{"a stale agent's running run still counts", []store.RunTiming{running(1, cpu, 10, 5, 5, secs(99))},
			agents(nil), "running", 50, 99, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := store.EstimateBenchmark(tc.runs, tc.facts)
			if got.Status != tc.status || got.Progress != tc.progress || got.ETAReason != tc.reason {
				t.Errorf("got %s %d %% (%q), want %s %d %% (%q)", got.Status, got.Progress, got.ETAReason, tc.status, tc.progress, tc.reason)
			}
			switch {
			case tc.eta < 0 && got.ETASeconds != nil:
				t.Errorf("ETA %d, want none", *got.ETASeconds)
			case tc.eta >= 0 && (got.ETASeconds == nil || *got.ETASeconds != tc.eta):
				t.Errorf("ETA %v, want %d", got.ETASeconds, tc.eta)
			}
		})
	}
}

// A benchmark with queued runs gets an estimate from the database's
// facts: the live agents serving the queue (not a drained one) and the
// time its completed run took; or from the owner's earlier runs of the
// target; another user's private runs time nothing.
func TestBenchmarkETAOfQueuedRuns(t *testing.T) {
	t.Parallel()
	st, b := setupStore(t)
	ds := createDataset(t, st, b.owner.ID, "eta", "private", 10)
	otherDS := createDataset(t, st, b.other.ID, "eta", "private", 10)
	model := testkit.Model(b.ctx, t, st, &testkit.ModelOpts{Name: "org/m"})
	agent := testkit.Agent(b.ctx, t, st, &testkit.AgentOpts{Name: "a"})
	// A GPU node serving vLLM only: nothing serves gpu_sim.
	testkit.Agent(b.ctx, t, st, &testkit.AgentOpts{Name: "g", Runtimes: []string{"vllm"}, Profile: store.HardwareProfile{Slug: "gpu", GPUCount: 1}})
	newBenchmark := func(owner, dataset int64, runs ...string) (int64, []int64) {
		t.Helper()
		id, err := st.CreateBenchmark(b.ctx, owner, fmt.Sprint("b", owner), dataset, json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, hw := range runs {
			r, err := st.CreateRun(b.ctx, store.NewRun{BenchmarkID: id, ModelID: model, Runtime: "sim", HardwareProfile: hw, Total: 10})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r)
		}
		return id, ids
	}
	estimate := func(v store.Viewer, id int64) store.BenchmarkEstimate {
		t.Helper()
		row, err := st.BenchmarkStatusByID(b.ctx, v, id, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return row.Estimate
	}
	want := func(what string, got store.BenchmarkEstimate, eta int64, reason string) {
		t.Helper()
		if reason != "" {
			if got.ETASeconds != nil || got.ETAReason != reason {
				t.Errorf("%s: ETA %v (%q), want none because %q", what, got.ETASeconds, got.ETAReason, reason)
			}
			return
		}
		if got.ETASeconds == nil || *got.ETASeconds != eta || got.ETAReason != "" {
			t.Errorf("%s: ETA %v (%q), want %d", what, got.ETASeconds, got.ETAReason, eta)
		}
	}

	// Another user's benchmark of the same target, completed in 1000 s.
	_, theirs := newBenchmark(b.other.ID, otherDS, "cpu")
	if _, err := st.Pool().Exec(b.ctx, `UPDATE runs SET state = 'completed', completed = total, started_at = now() - interval '1000 s',
		finished_at = now() WHERE id = $1`, theirs[0]); err != nil {
		t.Fatal(err)
	}
	// Nothing of the owner's times the run: no estimate, and the reason.
	first, runs := newBenchmark(b.owner.ID, ds, "cpu", "cpu")
	want("all queued", estimate(b.ownerV, first), 0, "no run of this benchmark has finished yet to time one")

	// Its first run completed in 50 s: the second takes as long, on the
	// one live agent.
	if _, err := st.Pool().Exec(b.ctx, `UPDATE runs SET state = 'completed', completed = total, started_at = now() - interval '50 s',
		finished_at = now() WHERE id = $1`, runs[0]); err != nil {
		t.Fatal(err)
	}
	got := estimate(b.ownerV, first)
	want("one completed, one queued", got, 50, "")
	if got.Status != store.BenchmarkRunning || got.Progress != 50 {
		t.Errorf("status %s, %d %%", got.Status, got.Progress)
	}
	// The list says the same.
	list, err := st.ListBenchmarkStatuses(b.ctx, b.ownerV, store.BenchmarkPage{Limit: 10, StaleAfter: time.Minute})
	if err != nil || len(list) != 1 || list[0].Estimate.ETASeconds == nil || *list[0].Estimate.ETASeconds != 50 {
		t.Fatalf("list: %+v %v", list, err)
	}

	// A new benchmark of the same target is timed by the owner's earlier
	// run (5 s a request), not by the other user's private one.
	second, _ := newBenchmark(b.owner.ID, ds, "cpu")
	want("timed by the owner's earlier run", estimate(b.ownerV, second), 50, "")

	// A queue no agent serves; then the agent drained: no estimate.
	third, _ := newBenchmark(b.owner.ID, ds, "gpu")
	want("no agent", estimate(b.ownerV, third), 0, "no agent serves queue gpu_sim")
	if err := st.SetAgentDrained(b.ctx, agent.ID, true); err != nil {
		t.Fatal(err)
	}
	want("drained", estimate(b.ownerV, first), 0, "no agent serves queue cpu_sim")
	// An agent whose heartbeat is older than the stale period does not
	// serve either.
	if err := st.SetAgentDrained(b.ctx, agent.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(b.ctx, `UPDATE agents SET last_heartbeat_at = now() - interval '2 minutes' WHERE id = $1`, agent.ID); err != nil {
		t.Fatal(err)
	}
	want("stale", estimate(b.ownerV, first), 0, "no agent serves queue cpu_sim")
}
