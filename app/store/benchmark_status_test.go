package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// A benchmark's status and figures are aggregated over its runs by one
// query; the status agrees with BenchmarkStatus (the benchmark page's) for
// every mix of run states, and the list pages by id without gaps.
func TestBenchmarkStatusesAggregateRuns(t *testing.T) {
	t.Parallel()
	st, b := setupStore(t)
	ds := createDataset(t, st, b.owner.ID, "mixed", "private", 10)
	small := testkit.Model(b.ctx, t, st, &testkit.ModelOpts{Name: "org/small", DisplayName: "Small"})
	big := testkit.Model(b.ctx, t, st, &testkit.ModelOpts{Name: "org/big", ParamsB: 7})
	testkit.Agent(b.ctx, t, st, &testkit.AgentOpts{Name: "a"})

	// Each case: the runs' states, with the status it must aggregate to.
	cases := []struct {
		states []string
		want   string
	}{
		{[]string{"queued"}, "queued"},
		{[]string{"queued", "queued"}, "queued"},
		{[]string{"running", "queued"}, "running"},
		{[]string{"completed", "queued"}, "running"},
		{[]string{"failed", "running"}, "running"},
		{[]string{"completed", "failed", "cancelled"}, "completed"},
		{[]string{"failed", "cancelled"}, "failed"},
		{[]string{"cancelled", "cancelled"}, "cancelled"},
		{[]string{"completed"}, "completed"},
		{[]string{"failed"}, "failed"},
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ids := make([]int64, len(cases))
	for i, tc := range cases {
		id, err := st.CreateBenchmark(b.ctx, b.owner.ID, fmt.Sprintf("case %d", i), ds, json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
		for k, state := range tc.states {
			model := small
			if k > 0 {
				model = big
			}
			runID, err := st.CreateRun(b.ctx, store.NewRun{BenchmarkID: id, ModelID: model, Runtime: "sim", HardwareProfile: "cpu", Total: 10})
			if err != nil {
				t.Fatal(err)
			}
			// completed requests 2, 4, …; throughput 10, 20, …; ETAs
			// 30.2, 60.2, … for running runs only; started k minutes after
			// start, finished an hour after that.
			var started, finished *time.Time
			var eta *float64
			if state != "queued" {
				s := start.Add(time.Duration(k) * time.Minute)
				started = &s
			}
			switch state {
			case "running":
				e := 30.2 * float64(k+1)
				eta = &e
			case "completed", "failed", "cancelled":
				f := started.Add(time.Hour)
				finished = &f
			}
			if _, err := st.Pool().Exec(b.ctx, `UPDATE runs SET state = $2, completed = $3, throughput = $4, eta_seconds = $5,
				started_at = $6, finished_at = $7, output_tokens = $8 WHERE id = $1`,
				runID, state, 2*(k+1), 10.0*float64(k+1), eta, started, finished, 100*(k+1)); err != nil {
				t.Fatal(err)
			}
		}
	}

	list, err := st.ListBenchmarkStatuses(b.ctx, b.ownerV, store.BenchmarkPage{Limit: 100, StaleAfter: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(cases) {
		t.Fatalf("listed %d of %d benchmarks", len(list), len(cases))
	}
	byID := map[int64]store.BenchmarkStatusRow{}
	for i, row := range list {
		byID[row.ID] = row
		if i > 0 && row.ID >= list[i-1].ID {
			t.Errorf("not newest first: %d after %d", row.ID, list[i-1].ID)
		}
	}
	for i, tc := range cases {
		row := byID[ids[i]]
		if row.Status != tc.want {
			t.Errorf("%v: listed as %q, want %q", tc.states, row.Status, tc.want)
		}
		if got := store.BenchmarkStatus(tc.states); got != tc.want {
			t.Errorf("%v: BenchmarkStatus says %q, want %q", tc.states, got, tc.want)
		}
		bm, err := st.BenchmarkByID(b.ctx, b.ownerV, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		if bm.Status() != tc.want {
			t.Errorf("%v: the benchmark page says %q, want %q", tc.states, bm.Status(), tc.want)
		}
		// Sums over the runs.
		n := int64(len(tc.states))
		if row.Total != 10*n || row.Completed != n*(n+1) || row.OutputTokens != 100*n*(n+1)/2 || len(row.Runs) != len(tc.states) {
			t.Errorf("%v: completed %d / %d, tokens %d, %d runs", tc.states, row.Completed, row.Total, row.OutputTokens, len(row.Runs))
		}
		if row.Runs[0].Model != "org/small" || row.Runs[0].DisplayName != "Small" || row.Runs[0].ModelID != small ||
			(len(row.Runs) > 1 && (row.Runs[1].Model != "org/big" || row.Runs[1].RunID <= row.Runs[0].RunID)) {
			t.Errorf("%v: runs %+v", tc.states, row.Runs)
		}
		// Live throughput sums the running runs; the best is the highest
		// completed run's.
		var live, best float64
		var eta *float64
		etaUnknown := false
		active := false
		for k, s := range tc.states {
			switch s {
			case "running":
				live += 10 * float64(k+1)
				e := 30.2 * float64(k+1)
				if eta == nil || e > *eta {
					eta = &e
				}
				active = true
			case "queued":
				etaUnknown, active = true, true
			case "completed":
				best = max(best, 10*float64(k+1))
			}
		}
		if row.LiveThroughput != live || row.BestThroughput != best {
			t.Errorf("%v: live %v best %v, want %v %v", tc.states, row.LiveThroughput, row.BestThroughput, live, best)
		}
		// Without queued runs the ETA is the longest running run's, rounded
		// up, or 0 once finished; queued runs are timed or say why not
		// (TestBenchmarkETAOfQueuedRuns).
		got := row.Estimate
		if got.Status != tc.want || got.Progress != int(100*row.Completed/row.Total) {
			t.Errorf("%v: estimate %+v, want status %q and %d %%", tc.states, got, tc.want, 100*row.Completed/row.Total)
		}
		switch {
		case etaUnknown:
			if (got.ETASeconds == nil) == (got.ETAReason == "") {
				t.Errorf("%v: ETA %v with the reason %q", tc.states, got.ETASeconds, got.ETAReason)
			}
		case !active:
			if got.ETASeconds == nil || *got.ETASeconds != 0 {
				t.Errorf("%v: finished, ETA %v, want 0", tc.states, got.ETASeconds)
			}
		default:
			if got.ETASeconds == nil || float64(*got.ETASeconds) != math.Ceil(*eta) || got.ETAReason != "" {
				t.Errorf("%v: ETA %v (%q), want %v rounded up", tc.states, got.ETASeconds, got.ETAReason, *eta)
			}
		}
		// Started with the first run to start; finished only when none is
		// active, with the last run to finish.
		if tc.states[0] != "queued" && (row.StartedAt == nil || !row.StartedAt.Equal(start)) {
			t.Errorf("%v: started at %v", tc.states, row.StartedAt)
		}
		if active != (row.FinishedAt == nil) {
			t.Errorf("%v: finished at %v while active is %v", tc.states, row.FinishedAt, active)
		}
		if !active {
			want := start.Add(time.Duration(len(tc.states)-1)*time.Minute + time.Hour)
			if !row.FinishedAt.Equal(want) {
				t.Errorf("%v: finished at %v, want %v", tc.states, row.FinishedAt, want)
			}
		}
	}

	// Pages of 3: every benchmark once, none missing, then no more.
	var seen []int64
	var after int64
	for pages := 0; ; pages++ {
		page, err := st.ListBenchmarkStatuses(b.ctx, b.ownerV, store.BenchmarkPage{After: after, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 || pages > len(cases) {
			break
		}
		for _, r := range page {
			seen = append(seen, r.ID)
		}
		after = page[len(page)-1].ID
	}
	if len(seen) != len(cases) {
		t.Fatalf("paged %d benchmarks, want %d: %v", len(seen), len(cases), seen)
	}
	for i := range seen {
		if seen[i] != ids[len(ids)-1-i] {
			t.Fatalf("pages %v, want the ids %v newest first", seen, ids)
		}
	}

	// Another user sees none of them; an administrator all; one by id.
	if other, err := st.ListBenchmarkStatuses(b.ctx, b.otherV, store.BenchmarkPage{Limit: 100}); err != nil || len(other) != 0 {
		t.Errorf("another user lists %d: %v", len(other), err)
	}
	if all, _ := st.ListBenchmarkStatuses(b.ctx, b.adminV, store.BenchmarkPage{Limit: 100}); len(all) != len(cases) {
		t.Errorf("an administrator lists %d", len(all))
	}
	if _, err := st.BenchmarkStatusByID(b.ctx, b.otherV, ids[0], time.Minute); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another user reads one: %v", err)
	}
	one, err := st.BenchmarkStatusByID(b.ctx, b.ownerV, ids[2], time.Minute)
	if err != nil || one.ID != ids[2] || one.Status != "running" || !strings.HasPrefix(one.Name, "case 2") {
		t.Errorf("one by id: %+v %v", one, err)
	}
	// The benchmarks page's list says the same status.
	sums, err := st.ListBenchmarks(b.ctx, b.ownerV)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		if s.Status != byID[s.ID].Status {
			t.Errorf("benchmark %d: the page's list says %q, the API's %q", s.ID, s.Status, byID[s.ID].Status)
		}
	}
}
