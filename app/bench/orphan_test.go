package bench_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// A worker that takes a run's job and dies before it claims the run (or
// whose claim failed and whose job's end was never written) leaves the
// run queued behind a job River calls running for a day: no agent would
// take it. The reaper queues it again once the job has been running a
// stale period, and a discarded job's run too; a job just taken, or one
// waiting, is left alone. Seen in `make bench-day` when an agent was
// killed while PgBouncer's logins failed.
func TestOrphanedQueuedRunIsQueuedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, v, m := fixture(t)
	p := testkit.Service(ctx, t, st, &testkit.ServiceOpts{StaleAfter: time.Second})
	created, err := p.Create(ctx, v, m)
	if err != nil {
		t.Fatal(err)
	}
	runID := created.Runs[0].RunID
	job := func() int64 {
		b, err := st.BenchmarkByID(ctx, v, created.BenchmarkID)
		if err != nil {
			t.Fatal(err)
		}
		if r := b.Runs[0]; r.State != "queued" || r.RiverJobID == nil {
			t.Fatalf("run: %+v", r)
		}
		return *b.Runs[0].RiverJobID
	}
	reap := func(want int, why string) {
		t.Helper()
		if n, err := p.ReassignStaleRuns(ctx); err != nil || n != want {
			t.Fatalf("%s: reaper reassigned %d (%v), want %d", why, n, err, want)
		}
	}
	setJob := func(id int64, state, attempted string) {
		t.Helper()
		if _, err := st.Pool().Exec(ctx, `UPDATE river_job SET state = $2::text::river_job_state, attempt = 1, attempted_at = now() - $3::interval,
			finalized_at = CASE WHEN $2::text = 'discarded' THEN now() END WHERE id = $1`,
			id, state, attempted); err != nil {
			t.Fatal(err)
		}
	}

	job1 := job()
	reap(0, "a job waiting for an agent")
	setJob(job1, "running", "0 s")
	reap(0, "a job just taken")
	setJob(job1, "running", "1 hour")
	reap(1, "a job taken an hour ago, its run never claimed")
	var jobState, jobErr string
	if err := st.Pool().QueryRow(ctx, `SELECT state::text, coalesce(errors[array_length(errors, 1)]->>'error', '') FROM river_job WHERE id = $1`,
		job1).Scan(&jobState, &jobErr); err != nil || jobState != "cancelled" || !strings.Contains(jobErr, "never claimed") {
		t.Fatalf("the dead worker's job: %q %q %v", jobState, jobErr, err)
	}
	job2 := job()
	if job2 == job1 {
		t.Fatal("the run is still on its dead job")
	}
	var events int
	if err := st.Pool().QueryRow(ctx, `SELECT count(*) FROM run_events WHERE run_id = $1 AND kind = 'reassigned'`, runID).Scan(&events); err != nil || events != 1 {
		t.Fatalf("reassigned events: %d %v", events, err)
	}
	agents, err := st.ListAgents(ctx)
	if err != nil || len(agents) != 1 {
		t.Fatalf("agents: %v %v", agents, err)
	}
	// The dead worker's job can no longer claim the run; the new one can.
	if _, err := st.ClaimRun(ctx, runID, agents[0].ID, job1, "sim"); !errors.Is(err, store.ErrStaleJob) {
		t.Fatalf("claim with the dead job: %v, want ErrStaleJob", err)
	}

	// A job discarded after its attempts leaves its run queued too.
	setJob(job2, "discarded", "0 s")
	reap(1, "a discarded job")
	if job3 := job(); job3 == job2 || job3 == job1 {
		t.Fatal("the run stayed on its discarded job")
	}
	job3 := job()
	if _, err := st.ClaimRun(ctx, runID, agents[0].ID, job3, "sim"); err != nil {
		t.Fatalf("claim with the new job: %v", err)
	}
	setJob(job3, "running", "1 hour")
	if _, err := st.Pool().Exec(ctx, `UPDATE agents SET last_heartbeat_at = now() WHERE id = $1`, agents[0].ID); err != nil {
		t.Fatal(err)
	}
	reap(0, "a claimed run its live agent works")

	// The agent's attempt fails after its claim, River gives the next
	// attempt to another agent, whose claim is refused, and the job is
	// cancelled: the live agent holds a run nothing works. Once the job has
	// been over a stale period, the run is reassigned.
	if _, err := st.Pool().Exec(ctx, `UPDATE river_job SET state = 'cancelled', finalized_at = now() WHERE id = $1`, job3); err != nil {
		t.Fatal(err)
	}
	reap(0, "a job that ended just now")
	if _, err := st.Pool().Exec(ctx, `UPDATE river_job SET finalized_at = now() - interval '1 hour' WHERE id = $1`, job3); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE agents SET last_heartbeat_at = now() WHERE id = $1`, agents[0].ID); err != nil {
		t.Fatal(err)
	}
	reap(1, "a running run whose job ended an hour ago, its agent alive")
	b, err := st.BenchmarkByID(ctx, v, created.BenchmarkID)
	if err != nil {
		t.Fatal(err)
	}
	if r := b.Runs[0]; r.State != "queued" || r.AgentID != nil || *r.RiverJobID == job3 {
		t.Fatalf("after the hand-on: %+v", r)
	}
	var why string
	if err := st.Pool().QueryRow(ctx, `SELECT message FROM run_events WHERE run_id = $1 AND kind = 'reassigned' ORDER BY id DESC LIMIT 1`, runID).Scan(&why); err != nil ||
		!strings.Contains(why, "job ended while agent") {
		t.Fatalf("the hand-on's reason: %q %v", why, err)
	}
}
