package bench_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

func result(idx int, status string, ttftMS, e2eMS float64, tokens int) store.ResultRecord {
	r := jobs.Result{Idx: idx, CustomID: "x", Status: status, CompletionTokens: tokens, PromptTokens: 3}
	if status == jobs.StatusOK {
		r.ContentEvents = tokens
		r.TTFT = time.Duration(ttftMS * float64(time.Millisecond))
		r.E2E = time.Duration(e2eMS * float64(time.Millisecond))
	} else {
		r.ErrorClass, r.Error = jobs.ErrHTTP5xx, "boom"
	}
	return store.ResultRecord{Result: r, SentAt: time.Now()}
}

// A run changes hands: the first agent's lease is fenced off by the reaper,
// the second resumes from the persisted results, and no item is counted
// twice.
func TestLeaseFenceReassignAndResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, v, m := fixture(t)
	p := testkit.Service(ctx, t, st, nil)
	created, err := p.Create(ctx, v, m)
	if err != nil {
		t.Fatal(err)
	}
	runID := created.Runs[0].RunID
	b, err := st.BenchmarkByID(ctx, v, created.BenchmarkID)
	if err != nil {
		t.Fatal(err)
	}
	job1 := *b.Runs[0].RiverJobID
	agents, err := st.ListAgents(ctx)
	if err != nil || len(agents) != 1 {
		t.Fatalf("agents: %v %v", agents, err)
	}
	a1 := agents[0].ID

	if _, err := st.ClaimRun(ctx, runID, a1, job1+1000, "sim"); !errors.Is(err, store.ErrStaleJob) {
		t.Fatalf("claim with another job: %v, want ErrStaleJob", err)
	}
	c1, err := st.ClaimRun(ctx, runID, a1, job1, "sim")
	if err != nil {
		t.Fatal(err)
	}
	if c1.Resumed || c1.Total != 2 || c1.Completed != 0 {
		t.Fatalf("first claim: %+v", c1)
	}
	pending, err := st.PendingItems(ctx, runID, c1.DatasetID, c1.Total)
	if err != nil || len(pending) != 2 || pending[0].Idx != 0 || pending[1].Idx != 1 {
		t.Fatalf("pending: %+v %v", pending, err)
	}
	n, err := st.WriteResults(ctx, c1.Lease, []store.ResultRecord{result(0, jobs.StatusOK, 100, 400, 10)})
	if err != nil || n != 1 {
		t.Fatalf("write: %d %v", n, err)
	}
	// The same item again (a retried write after a lost answer) is not
	// counted twice.
	n, err = st.WriteResults(ctx, c1.Lease, []store.ResultRecord{result(0, jobs.StatusOK, 100, 400, 10)})
	if err != nil || n != 0 {
		t.Fatalf("rewrite: %d %v", n, err)
	}
	if err := st.UpdateProgress(ctx, c1.Lease, store.Progress{Throughput: 25}, store.Sample{At: time.Now()}); err != nil {
		t.Fatal(err)
	}

	// Nobody is stale yet: the reaper leaves the run alone.
	if n, err := p.ReassignStaleRuns(ctx); err != nil || n != 0 {
		t.Fatalf("reaper on a live agent: %d %v", n, err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE agents SET last_heartbeat_at = now() - interval '1 hour' WHERE id = $1`, a1); err != nil {
		t.Fatal(err)
	}
	// The agent's job is running, as River left it when the agent took it.
	if _, err := st.Pool().Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1`, job1); err != nil {
		t.Fatal(err)
	}
	// Its heartbeats are late but it still writes the run's progress (its
	// beats wait behind a busy pool): it is alive, the run stays.
	if n, err := p.ReassignStaleRuns(ctx); err != nil || n != 0 {
		t.Fatalf("reaper on an agent writing progress: %d %v", n, err)
	}
	// Neither a beat nor progress within the stale period: it is gone.
	if _, err := st.Pool().Exec(ctx, `UPDATE runs SET progress_at = now() - interval '1 hour', segment_started_at = now() - interval '2 hours'
		WHERE id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	if n, err := p.ReassignStaleRuns(ctx); err != nil || n != 1 {
		t.Fatalf("reaper: %d %v", n, err)
	}
	// The dead agent's job does not stay "running" for River's rescuer: it
	// is cancelled, saying why.
	var jobState, jobErr string
	if err := st.Pool().QueryRow(ctx, `SELECT state::text, coalesce(errors[array_length(errors, 1)]->>'error', '') FROM river_job
		WHERE id = $1 AND finalized_at IS NOT NULL`, job1).Scan(&jobState, &jobErr); err != nil || jobState != "cancelled" || !strings.Contains(jobErr, "stopped heartbeating") {
		t.Fatalf("the dead agent's job after the reassignment: %q %q %v", jobState, jobErr, err)
	}
	b, _ = st.BenchmarkByID(ctx, v, created.BenchmarkID)
	r := b.Runs[0]
	if r.State != "queued" || r.AgentID != nil || *r.RiverJobID == job1 || r.Completed != 1 {
		t.Fatalf("after reassignment: %+v", r)
	}
	// Its new job keeps the run's place in line: it is fetched before the
	// runs queued after this one.
	var inLine bool
	if err := st.Pool().QueryRow(ctx, `SELECT j.state = 'available' AND j.scheduled_at = r.created_at
		FROM runs r JOIN river_job j ON j.id = r.river_job_id WHERE r.id = $1`, runID).Scan(&inLine); err != nil || !inLine {
		t.Fatalf("the reassigned run's new job is not available at the run's own queueing time: %v %v", inLine, err)
	}

	// The first agent comes back: every write is refused, nothing lands.
	if _, err := st.WriteResults(ctx, c1.Lease, []store.ResultRecord{result(1, jobs.StatusOK, 100, 400, 10)}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("fenced write: %v", err)
	}
	if err := st.UpdateProgress(ctx, c1.Lease, store.Progress{}, store.Sample{At: time.Now()}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("fenced progress: %v", err)
	}
	if err := st.FinishRun(ctx, c1.Lease, store.Finish{State: "completed"}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("fenced finish: %v", err)
	}
	// Its old job no longer drives the run.
	if _, err := st.ClaimRun(ctx, runID, a1, job1, "sim"); !errors.Is(err, store.ErrStaleJob) {
		t.Fatalf("claim with the old job: %v", err)
	}

	// A second agent takes the new job and resumes with the one item left.
	a2 := testkit.Agent(ctx, t, st, &testkit.AgentOpts{Name: "cpu-2"})
	c2, err := st.ClaimRun(ctx, runID, a2.ID, *r.RiverJobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	if !c2.Resumed || c2.Completed != 1 || c2.Fence <= c1.Fence {
		t.Fatalf("second claim: %+v (first %+v)", c2, c1)
	}
	pending, err = st.PendingItems(ctx, runID, c2.DatasetID, c2.Total)
	if err != nil || len(pending) != 1 || pending[0].Idx != 1 {
		t.Fatalf("pending after resume: %+v %v", pending, err)
	}
	if _, err := st.WriteResults(ctx, c2.Lease, []store.ResultRecord{result(1, jobs.StatusError, 0, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	sum, err := summary.Run(ctx, st, runID, jobs.SLO{}, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Requests != 2 || sum.OK != 1 || sum.Errors != 1 || sum.ErrorsByClass[jobs.ErrHTTP5xx] != 1 || sum.OutputTokens != 10 {
		t.Fatalf("summary: %+v", sum)
	}
	if err := st.FinishRun(ctx, c2.Lease, store.Finish{State: "completed", StoppedBy: "completed", Segment: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	b, _ = st.BenchmarkByID(ctx, v, created.BenchmarkID)
	r = b.Runs[0]
	if r.State != "completed" || r.Completed != 2 || r.Errors != 1 || r.Resumed != 1 {
		t.Fatalf("finished: %+v", r)
	}
	events, err := st.RunEvents(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	want := []string{"started", "reassigned", "resumed", "completed"}
	if len(kinds) != len(want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("events %v, want %v", kinds, want)
		}
	}

	// A retry starts over: the earlier attempt's results are gone.
	if err := p.RetryRun(ctx, v, created.BenchmarkID, runID); err == nil {
		t.Fatal("retry of a succeeded run was allowed")
	}
}

// Percentiles follow numpy's linear interpolation; goodput counts only
// requests meeting every SLO.
func TestRunAggregateFigures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, v, m := fixture(t)
	p := testkit.Service(ctx, t, st, nil)
	created, err := p.Create(ctx, v, m)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := st.BenchmarkByID(ctx, v, created.BenchmarkID)
	agents, _ := st.ListAgents(ctx)
	c, err := st.ClaimRun(ctx, b.Runs[0].ID, agents[0].ID, *b.Runs[0].RiverJobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	// TTFTs 100 and 300 ms; E2E 400 and 1000 ms; 10 and 30 tokens.
	if _, err := st.WriteResults(ctx, c.Lease, []store.ResultRecord{result(0, jobs.StatusOK, 100, 400, 10), result(1, jobs.StatusOK, 300, 1000, 30)}); err != nil {
		t.Fatal(err)
	}
	sum, err := summary.Run(ctx, st, c.RunID, jobs.SLO{TTFT: jobs.Duration(200 * time.Millisecond)}, 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	// numpy.percentile([100, 300], 95) = 100 + 0.95*200 = 290.
	if !near(sum.TTFT.P50, 200) || !near(sum.TTFT.P95, 290) || !near(sum.TTFT.Mean, 200) || !near(sum.E2E.P99, 994) {
		t.Fatalf("ttft %+v e2e %+v", sum.TTFT, sum.E2E)
	}
	if sum.OutputTokens != 40 || !near(sum.OutputTokensPerS, 10) || !near(sum.RequestsPerS, 0.5) {
		t.Fatalf("throughput: %+v", sum)
	}
	if sum.GoodRequests != 1 || !near(sum.GoodputRPS, 0.25) {
		t.Fatalf("goodput: %d %v", sum.GoodRequests, sum.GoodputRPS)
	}
}

// The run's ITL is over every token of every successful request: one
// 500 ms stall among 10 ms gaps shows in ITL p99 and max, and a gap an
// event's two tokens share counts as two latencies of half of it.
func TestRunAggregateTokenITL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, v, m := fixture(t)
	p := testkit.Service(ctx, t, st, nil)
	created, err := p.Create(ctx, v, m)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := st.BenchmarkByID(ctx, v, created.BenchmarkID)
	agents, _ := st.ListAgents(ctx)
	c, err := st.ClaimRun(ctx, b.Runs[0].ID, agents[0].ID, *b.Runs[0].RiverJobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	// Request 0: 20 one-token events, 10 ms apart but for one 500 ms
	// stall (TTFT 100 ms, E2E 780 ms). Request 1: three events, the
	// second carrying two tokens: gaps 60 ms (2 tokens) and 40 ms.
	stalled := result(0, jobs.StatusOK, 100, 780, 20)
	for i := range 19 {
		g := int32(10_000)
		if i == 9 {
			g = 500_000
		}
		stalled.ITLGapsMicros = append(stalled.ITLGapsMicros, g)
	}
	stalled.TPOT = (780 - 100) * time.Millisecond / 19
	shared := result(1, jobs.StatusOK, 100, 200, 4)
	shared.ITLGapsMicros, shared.ITLTokens = []int32{60_000, 40_000}, []int32{2, 1}
	if _, err := st.WriteResults(ctx, c.Lease, []store.ResultRecord{stalled, shared}); err != nil {
		t.Fatal(err)
	}
	sum, err := summary.Run(ctx, st, c.RunID, jobs.SLO{}, 4*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Latencies: 18 × 10, 30, 30, 40, 500 (22 of them). numpy:
	// percentile(…, 99) = 40 + 0.79·460 = 403.4; p95 = 30 + 0.95·10 = 39.5;
	// p50 = 10; mean = 780/22.
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if sum.ITLTokens != 22 || !near(sum.ITL.Max, 500) || !near(sum.ITL.P99, 403.4) || !near(sum.ITL.P95, 39.5) ||
		!near(sum.ITL.P50, 10) || !near(sum.ITL.Mean, 780.0/22) || !near(sum.ITL.Min, 10) {
		t.Fatalf("ITL over %d tokens: %+v", sum.ITLTokens, sum.ITL)
	}
	// TPOT smooths the stall: ≈ 35.8 ms for that request.
	if sum.TPOT.Max > 40 {
		t.Fatalf("TPOT %+v should not show the stall", sum.TPOT)
	}
	// Stored as sent.
	item, err := st.ResultByIdx(ctx, c.RunID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(item.ITLGapsMicros) != 2 || item.ITLGapsMicros[0] != 60_000 || len(item.ITLTokens) != 2 || item.ITLTokens[0] != 2 {
		t.Fatalf("stored gaps %v tokens %v", item.ITLGapsMicros, item.ITLTokens)
	}
}

// A sweep's steps are summarised one by one from the results' phases, and
// the saturation point is bracketed by the busiest step where the SLOs hold
// and the next busier one where they do not.
func TestRunStepsAndSaturation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, v, m := fixture(t)
	p := testkit.Service(ctx, t, st, nil)
	created, err := p.Create(ctx, v, m)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := st.BenchmarkByID(ctx, v, created.BenchmarkID)
	agents, _ := st.ListAgents(ctx)
	c, err := st.ClaimRun(ctx, b.Runs[0].ID, agents[0].ID, *b.Runs[0].RiverJobID, "sim")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var rs []store.ResultRecord
	step := func(phase string, start, every time.Duration, e2eMS float64, ttftMS ...float64) {
		for i, ttft := range ttftMS {
			r := result(len(rs), jobs.StatusOK, ttft, e2eMS, 10)
			r.Phase, r.SentAt, r.TPOT = phase, t0.Add(start+time.Duration(i)*every), 20*time.Millisecond
			rs = append(rs, r)
		}
	}
	// sequential: 4 sent 1 s apart, 1 s each → 4 s window, 1 req/s, TTFT 100 ms.
	step("sequential", 0, time.Second, 1000, 100, 100, 100, 100)
	// max: 8 at once, 2 s each → 4 req/s, every TTFT 600 ms (over the SLO).
	step("max", 10*time.Second, 0, 2000, 600, 600, 600, 600, 600, 600, 600, 600)
	// rate 2/s: 4 sent 0.5 s apart, 0.5 s each → 2 s window, 2 req/s.
	step("rate 2.00/s", 20*time.Second, 500*time.Millisecond, 500, 200, 200, 200, 200)
	// rate 3/s: 6 sent 1/3 s apart, 1 s each → 2⅔ s, 2.25 req/s; 5 of 6 meet the SLO.
	step("rate 3.00/s", 30*time.Second, time.Second/3, 1000, 300, 300, 300, 300, 300, 700)
	if _, err := st.WriteResults(ctx, c.Lease, rs); err != nil {
		t.Fatal(err)
	}
	sum, err := summary.Run(ctx, st, c.RunID, jobs.SLO{TTFT: jobs.Duration(500 * time.Millisecond)}, 40*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// (Timestamps are kept to the microsecond: ⅓ s is not exact.)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-5 }
	if len(sum.Steps) != 4 {
		t.Fatalf("steps: %+v", sum.Steps)
	}
	for i, want := range []struct {
		name          string
		offered       float64 // 0: closed loop
		rps, good     float64
		holds         bool
		requests, okN int
	}{
		{"sequential", 0, 1, 1, true, 4, 4},
		{"max", 0, 4, 0, false, 8, 8},
		{"rate 2.00/s", 2, 2, 2, true, 4, 4},
		{"rate 3.00/s", 3, 2.25, 5 / (8.0 / 3), false, 6, 6},
	} {
		s := sum.Steps[i]
		offered := 0.0
		if s.OfferedRPS != nil {
			offered = *s.OfferedRPS
		}
		if s.Name != want.name || !near(offered, want.offered) || !near(s.AchievedRPS, want.rps) || !near(s.GoodputRPS, want.good) ||
			s.SLOsHold != want.holds || s.Requests != want.requests || s.OK != want.okN || !near(s.TokensPerSPerUser, 50) ||
			!near(s.OutputTokensPerS, 10*want.rps) {
			t.Errorf("step %d: %+v, want %+v", i, s, want)
		}
	}
	if s := sum.Steps[3]; !near(s.TTFT.P99, 300+0.95*400) || !near(s.TTFT.P50, 300) {
		t.Errorf("rate 3/s TTFT %+v", s.TTFT)
	}
	sat := sum.Saturation
	if sat == nil || sat.HoldsAtRPS == nil || sat.FailsAtRPS == nil || !near(*sat.HoldsAtRPS, 2) || !near(*sat.FailsAtRPS, 2.25) ||
		sat.HoldsStep != "rate 2.00/s" || sat.FailsStep != "rate 3.00/s" || sat.GoodputShare != 0.99 {
		t.Fatalf("saturation %+v", sat)
	}
}

func TestFindSaturation(t *testing.T) {
	t.Parallel()
	steps := func(holds ...bool) []jobs.StepSummary {
		var out []jobs.StepSummary
		for i, h := range holds {
			out = append(out, jobs.StepSummary{Name: fmt.Sprint(i), AchievedRPS: float64(i + 1), SLOsHold: h})
		}
		return out
	}
	rps := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	for _, c := range []struct {
		holds       []bool
		hold, fails float64 // -1: none
	}{
		{[]bool{true, true, true}, 3, -1}, // beyond what was measured
		{[]bool{false, false}, -1, 1},     // below the lightest load
		{[]bool{true, true, false, false}, 2, 3},
		{[]bool{true, false, true, false}, 3, 4}, // a noisy step: the busiest that holds
	} {
		s := jobs.FindSaturation(steps(c.holds...), 0.99)
		if rps(s.HoldsAtRPS) != c.hold || rps(s.FailsAtRPS) != c.fails {
			t.Errorf("%v: holds at %v, fails at %v; want %v, %v", c.holds, rps(s.HoldsAtRPS), rps(s.FailsAtRPS), c.hold, c.fails)
		}
	}
	if jobs.FindSaturation(nil, 0.99) != nil {
		t.Error("no steps, yet a saturation point")
	}
}
