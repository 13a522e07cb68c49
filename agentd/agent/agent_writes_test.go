package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// agentAtWork is an agent connected with its own role (directly, or
// through PgBouncer with its key) and holding a running run of its queue.
type agentAtWork struct {
	agentDB
	w     *world
	agent store.Agent
	claim store.ClaimedRun
	jobID int64
}

// startWork registers node-a on the cpu/sim queue and has it claim a run
// there.
func startWork(t *testing.T, pooled bool) *agentAtWork {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 5)
	url, key := pgtest.AgentLogin(t, pool, "node-a")
	if pooled {
		url = via(t, url, startPgBouncer(t, w, 2))
	} else {
		key = ""
	}
	x := &agentAtWork{agentDB: connectAs(t, url, key), w: w}
	var err error
	x.agent, err = x.RegisterAgent(ctx, store.AgentRegistration{Name: "node-a", ProtocolVersion: jobs.ProtocolVersion,
		Runtimes: []string{"sim"}, Profile: store.HardwareProfile{Slug: "cpu", CPUCores: 2}})
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	x.claim, x.jobID = x.takeRun(t)
	return x
}

// takeRun queues a run on the agent's queue, has its job running (as
// River's fetch leaves it) and the agent claim it.
func (x *agentAtWork) takeRun(t *testing.T) (store.ClaimedRun, int64) {
	t.Helper()
	ctx := context.Background()
	run := x.w.run(x.w.launchOn("cpu", jobs.LoadProfile{Profile: jobs.LoadSequential}))
	if _, err := x.w.pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1`, *run.RiverJobID); err != nil {
		t.Fatal(err)
	}
	claim, err := x.ClaimRun(ctx, run.ID, x.agent.ID, *run.RiverJobID, "sim")
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return claim, *run.RiverJobID
}

// bothWays runs f with the agent connected directly and through PgBouncer.
func bothWays(t *testing.T, f func(t *testing.T, pooled bool)) {
	t.Run("direct", func(t *testing.T) { f(t, false) })
	t.Run("pooled", func(t *testing.T) { f(t, true) })
}

// tooLong says whether err is the database refusing a value over one of
// migration 0024's limits, by the constraint named.
func tooLong(err error, constraint string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23514" && pe.ConstraintName == constraint
}

// An agent filling the columns it writes (60 MB into a run's summary, GPU
// summary and runtime log once made its owner's pages take seconds and
// the server grow by gigabytes) is refused by the database, value by
// value, with the limit named; the owner's run keeps what it had. A
// legitimately long output (1 MiB) still goes in. So is a figure no
// measurement gives (NaN, an infinity, a negative time), which would make
// the run's summary and conclusions unwritable.
func TestAgentWritesAreBounded(t *testing.T) {
	bothWays(t, func(t *testing.T, pooled bool) {
		ctx := context.Background()
		x := startWork(t, pooled)
		run, me := x.claim.RunID, x.agent.ID
		const huge = 60 << 20
		for _, c := range []struct{ constraint, sql string }{
			{"runs_summary_length", `UPDATE runs SET summary = jsonb_build_object('x', repeat('a', 62914560)) WHERE id = $1 AND $2::bigint > 0`},
			{"runs_gpu_summary_length", `UPDATE runs SET gpu_summary = jsonb_build_object('x', repeat('a', 62914560)) WHERE id = $1 AND $2::bigint > 0`},
			{"runs_runtime_log_length", `UPDATE runs SET runtime_log = repeat('a', 62914560) WHERE id = $1 AND $2::bigint > 0`},
			{"runs_node_summary_length", `UPDATE runs SET node_summary = jsonb_build_object('x', repeat('a', 62914560)) WHERE id = $1 AND $2::bigint > 0`},
			// A sample's readings: a share over 100 %, NaN, memory below 0 or
			// beyond 2^60, a GPU drawing a gigawatt.
			{"run_samples_node_bounds", `INSERT INTO run_samples (run_id, t, cpu_util) SELECT $1, now(), 101 WHERE $2::bigint > 0`},
			{"run_samples_node_bounds", `INSERT INTO run_samples (run_id, t, proc_cpu_util) SELECT $1, now(), 'NaN' WHERE $2::bigint > 0`},
			{"run_samples_node_bounds", `INSERT INTO run_samples (run_id, t, mem_used_bytes) SELECT $1, now(), -1 WHERE $2::bigint > 0`},
			{"run_samples_node_bounds", `INSERT INTO run_samples (run_id, t, proc_rss_bytes) SELECT $1, now(), 9223372036854775807 WHERE $2::bigint > 0`},
			{"run_samples_gpu_bounds", `INSERT INTO run_samples (run_id, t, gpu_power_w) SELECT $1, now(), 'Infinity' WHERE $2::bigint > 0`},
			{"run_samples_gpu_bounds", `INSERT INTO run_samples (run_id, t, gpu_util) SELECT $1, now(), 1e9 WHERE $2::bigint > 0`},
			{"runs_error_length", `UPDATE runs SET error = repeat('a', 65537) WHERE id = $1 AND $2::bigint > 0`},
			{"runs_stopped_by_length", `UPDATE runs SET stopped_by = repeat('a', 257) WHERE id = $1 AND $2::bigint > 0`},
			{"runs_mode_length", `UPDATE runs SET mode = repeat('a', 257) WHERE id = $1 AND $2::bigint > 0`},
			{"results_output_length", `INSERT INTO results (run_id, idx, custom_id, status, output, sent_at, agent_id)
				VALUES ($1, 0, 'q0', 'ok', repeat('a', 62914560), now(), $2)`},
			{"results_error_length", `INSERT INTO results (run_id, idx, custom_id, status, error, sent_at, agent_id)
				VALUES ($1, 0, 'q0', 'error', repeat('a', 65537), now(), $2)`},
			{"results_custom_id_length", `INSERT INTO results (run_id, idx, custom_id, status, sent_at, agent_id)
				VALUES ($1, 0, repeat('a', 1025), 'ok', now(), $2)`},
			{"results_short_text_length", `INSERT INTO results (run_id, idx, custom_id, status, phase, sent_at, agent_id)
				VALUES ($1, 0, 'q0', 'ok', repeat('a', 257), now(), $2)`},
			{"results_itl_gaps_length", `INSERT INTO results (run_id, idx, custom_id, status, itl_gaps_us, sent_at, agent_id)
				VALUES ($1, 0, 'q0', 'ok', array_fill(1, ARRAY[1048577]), now(), $2)`},
			// Figures no measurement gives: NaN, an infinity, a negative
			// time or count, a send time at infinity (migration 0041).
			{"results_timings_bounds", `INSERT INTO results (run_id, idx, custom_id, status, ttft_ms, sent_at, agent_id)
				VALUES ($1, 0, 'q0', 'ok', 'NaN', now(), $2)`},
			{"results_timings_bounds", `INSERT INTO results (run_id, idx, custom_id, status, e2e_ms, sent_at, agent_id)
				VALUES ($1, 0, 'q0', 'ok', 'Infinity', now(), $2)`},
			{"results_timings_bounds", `INSERT INTO results (run_id, idx, custom_id, status, tpot_ms, sent_at, agent_id)
				VALUES ($1, 0, 'q0', 'ok', -1, now(), $2)`},
			{"results_timings_bounds", `INSERT INTO results (run_id, idx, custom_id, status, sent_at, agent_id)
				VALUES ($1, 0, 'q0', 'ok', 'infinity', $2)`},
			{"results_counts_bounds", `INSERT INTO results (run_id, idx, custom_id, status, completion_tokens, sent_at, agent_id)
				VALUES ($1, 0, 'q0', 'ok', -5, now(), $2)`},
			{"results_counts_bounds", `INSERT INTO results (run_id, idx, custom_id, status, itl_gaps_us, itl_tokens, sent_at, agent_id)
				VALUES ($1, 0, 'q0', 'ok', '{10,-3}', '{1,1}', now(), $2)`},
			{"results_counts_bounds", `INSERT INTO results (run_id, idx, custom_id, status, itl_gaps_us, itl_tokens, sent_at, agent_id)
				VALUES ($1, 0, 'q0', 'ok', '{10,3}', '{1,0}', now(), $2)`},
			{"runs_rates_bounds", `UPDATE runs SET throughput = 'NaN' WHERE id = $1 AND $2::bigint > 0`},
			{"runs_rates_bounds", `UPDATE runs SET measured_seconds = -1 WHERE id = $1 AND $2::bigint > 0`},
			{"runs_rates_bounds", `UPDATE runs SET eta_seconds = 'Infinity' WHERE id = $1 AND $2::bigint > 0`},
			{"run_events_message_length", `INSERT INTO run_events (run_id, agent_id, kind, message) VALUES ($1, $2, 'x', repeat('a', 4097))`},
			{"run_events_kind_length", `INSERT INTO run_events (run_id, agent_id, kind, message) VALUES ($1, $2, repeat('a', 65), '')`},
			{"agents_capabilities_length", `UPDATE agents SET capabilities = jsonb_build_object('x', repeat('a', 62914560)) WHERE id = $2 AND $1::bigint > 0`},
			{"agents_host_length", `UPDATE agents SET host = repeat('a', 257) WHERE id = $2 AND $1::bigint > 0`},
			{"agents_version_length", `UPDATE agents SET version = repeat('a', 257) WHERE id = $2 AND $1::bigint > 0`},
			{"agents_declared_runtimes_length", `UPDATE agents SET declared_runtimes = array_fill('sim'::text, ARRAY[17]) WHERE id = $2 AND $1::bigint > 0`},
			{"agents_declared_profile_length", `UPDATE agents SET declared_profile = repeat('x', 257) WHERE id = $2 AND $1::bigint > 0`},
			// An agent may add a profile (never change one: migration 0023).
			{"hardware_profiles_gpu_name_length", `INSERT INTO hardware_profiles (slug, gpu_name)
				SELECT 'bounded-' || $1::bigint || '-' || $2::bigint, repeat('a', 257)`},
		} {
			if _, err := x.db.Exec(ctx, c.sql, run, me); !tooLong(err, c.constraint) {
				t.Errorf("%s: %v, want a check violation of %s", c.sql, err, c.constraint)
			}
		}
		// River's rows the agent may write: its job's metadata and errors.
		// (A policy may refuse the row first; either way nothing grows.)
		for _, c := range []struct{ constraint, sql string }{
			{"ruckus_river_job_metadata_length", `UPDATE river_job SET metadata = jsonb_build_object('x', repeat('a', 62914560)) WHERE id = $1`},
			{"ruckus_river_job_errors_length", `UPDATE river_job SET errors = ARRAY[jsonb_build_object('x', repeat('a', 62914560))] WHERE id = $1`},
		} {
			if tag, err := x.db.Exec(ctx, c.sql, x.jobID); !tooLong(err, c.constraint) && !refused(err) && (err != nil || tag.RowsAffected() != 0) {
				t.Errorf("%s: %v %v, want a check violation of %s", c.sql, tag, err, c.constraint)
			}
		}

		// Through the store, the error says what was too long.
		long := strings.Repeat("é", jobs.MaxOutputBytes/2) // exactly the limit, in bytes
		res := func(idx int, output string) []store.ResultRecord {
			return []store.ResultRecord{{Result: jobs.Result{Idx: idx, CustomID: "q", Status: jobs.StatusOK, Output: output}, SentAt: time.Now()}}
		}
		if _, err := x.WriteResults(ctx, x.claim.Lease, res(1, long+"a")); !errors.Is(err, store.ErrTooLarge) ||
			!strings.Contains(err.Error(), "output is at most 1 MiB") {
			t.Errorf("an output over 1 MiB: %v, want ErrTooLarge naming the output", err)
		}
		neg := res(2, "x")
		neg[0].ITLGapsMicros = []int32{10, -3}
		if _, err := x.WriteResults(ctx, x.claim.Lease, neg); !errors.Is(err, store.ErrTooLarge) || !strings.Contains(err.Error(), "inter-token gaps are not negative") {
			t.Errorf("a negative inter-token gap: %v, want ErrTooLarge naming the gaps", err)
		}
		if n, err := x.WriteResults(ctx, x.claim.Lease, res(1, long)); err != nil || n != 1 {
			t.Errorf("an output of 1 MiB: %d %v, want it stored", n, err)
		}
		err := x.FinishRun(ctx, x.claim.Lease, store.Finish{State: "completed", RuntimeLog: strings.Repeat("a", huge)})
		if !errors.Is(err, store.ErrTooLarge) || !strings.Contains(err.Error(), "runtime log is at most 256 KiB") {
			t.Errorf("a 60 MB runtime log: %v, want ErrTooLarge naming the log", err)
		}

		// What the owner's pages read back is as small as before.
		var sizes int64
		if err := x.w.pool.QueryRow(ctx, `SELECT coalesce(octet_length(summary::text), 0) + coalesce(octet_length(gpu_summary::text), 0)
			+ octet_length(runtime_log) + octet_length(error) + (SELECT coalesce(sum(octet_length(output)), 0) FROM results WHERE run_id = $1)
			FROM runs WHERE id = $1`, run).Scan(&sizes); err != nil {
			t.Fatal(err)
		}
		if sizes > 2*jobs.MaxOutputBytes {
			t.Errorf("the run holds %d bytes of the agent's text", sizes)
		}
		if err := x.FinishRun(ctx, x.claim.Lease, store.Finish{State: "completed", StoppedBy: "completed", RuntimeLog: "tail"}); err != nil {
			t.Errorf("a run's end within the limits: %v", err)
		}
	})
}

// An agent rewriting history: once it has ended a run, nothing of that run
// is the agent's to change (state, figures, summary, error) and no result,
// sample or event goes in for it; the server still rescores it. A run its
// user cancelled takes the agent's last results and its end (its partial
// figures), but stays cancelled, and only for 5 minutes.
func TestFinishedRunsAreImmutableToAgents(t *testing.T) {
	bothWays(t, func(t *testing.T, pooled bool) {
		ctx := context.Background()
		x := startWork(t, pooled)
		run, me := x.claim.RunID, x.agent.ID
		res := func(idx int) []store.ResultRecord {
			return []store.ResultRecord{{Result: jobs.Result{Idx: idx, CustomID: "q", Status: jobs.StatusOK, Output: "real"}, SentAt: time.Now()}}
		}
		if _, err := x.WriteResults(ctx, x.claim.Lease, res(0)); err != nil {
			t.Fatal(err)
		}
		if err := x.FinishRun(ctx, x.claim.Lease, store.Finish{State: "completed", StoppedBy: "completed", Throughput: 10}); err != nil {
			t.Fatal(err)
		}
		type figures struct {
			State, Error string
			Throughput   float64
			Results      int
			Samples      int
			Events       int
		}
		read := func(id int64) figures {
			t.Helper()
			var f figures
			if err := x.w.pool.QueryRow(ctx, `SELECT state, error, throughput, (SELECT count(*) FROM results WHERE run_id = $1),
				(SELECT count(*) FROM run_samples WHERE run_id = $1), (SELECT count(*) FROM run_events WHERE run_id = $1)
				FROM runs WHERE id = $1`, id).Scan(&f.State, &f.Error, &f.Throughput, &f.Results, &f.Samples, &f.Events); err != nil {
				t.Fatal(err)
			}
			return f
		}
		before := read(run)

		// Its updates find no row; its inserts are refused.
		for _, q := range []string{
			`UPDATE runs SET state = 'failed', throughput = 1e9, summary = '{}', error = 'forged', finished_at = NULL,
				segment_started_at = now() WHERE id = $1 AND $2::bigint > 0`,
			`UPDATE runs SET completed = 0, fence = fence + 1 WHERE id = $1 AND $2::bigint > 0`,
		} {
			if tag, err := x.db.Exec(ctx, q, run, me); err != nil || tag.RowsAffected() != 0 {
				t.Errorf("%s on a finished run: %v %v, want no row", q, tag, err)
			}
		}
		for _, q := range []string{
			`INSERT INTO results (run_id, idx, custom_id, status, output, sent_at, agent_id) VALUES ($1, 1, 'q1', 'ok', 'forged', now(), $2)`,
			`INSERT INTO run_samples (run_id, t, throughput) VALUES ($1, now() + make_interval(secs => $2::bigint), 1e9)`,
			`INSERT INTO run_events (run_id, agent_id, kind, message) VALUES ($1, $2, 'completed', 'forged')`,
		} {
			if _, err := x.db.Exec(ctx, q, run, me); !refused(err) {
				t.Errorf("%s on a finished run: %v, want refused", q, err)
			}
		}
		if _, err := x.WriteResults(ctx, x.claim.Lease, res(1)); !errors.Is(err, store.ErrFenced) {
			t.Errorf("results under the finished run's lease: %v, want fenced", err)
		}
		if err := x.FinishRun(ctx, x.claim.Lease, store.Finish{State: "failed", Error: "forged"}); !errors.Is(err, store.ErrFenced) {
			t.Errorf("a second end: %v, want fenced", err)
		}
		if after := read(run); after != before {
			t.Errorf("the finished run changed: %+v, was %+v", after, before)
		}
		// The server's scorer still writes it.
		if _, err := x.w.pool.Exec(ctx, `UPDATE runs SET quality = 0.5, scored_at = now() WHERE id = $1`, run); err != nil {
			t.Errorf("the server rescoring: %v", err)
		}
		if _, err := x.w.pool.Exec(ctx, `UPDATE results SET score = 1 WHERE run_id = $1`, run); err != nil {
			t.Errorf("the server scoring results: %v", err)
		}

		// A run its user cancels while the agent works it.
		claim, _ := x.takeRun(t)
		if err := x.w.st.SetRunCancelled(ctx, claim.RunID); err != nil {
			t.Fatal(err)
		}
		if _, err := x.WriteResults(ctx, claim.Lease, res(0)); err != nil {
			t.Errorf("the last result after a cancel: %v", err)
		}
		if err := x.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", StoppedBy: "cancelled"}); err != nil {
			t.Errorf("the end after a cancel: %v", err)
		}
		if f := read(claim.RunID); f.State != "cancelled" || f.Results != 1 {
			t.Errorf("the cancelled run after its agent's end: %+v", f)
		}
		if tag, err := x.db.Exec(ctx, `UPDATE runs SET state = 'completed' WHERE id = $1`, claim.RunID); err != nil || tag.RowsAffected() != 0 {
			t.Errorf("a cancelled run rewritten after its end: %v %v", tag, err)
		}
		// Cancelled, never closed by its agent: 5 minutes later it is
		// closed to it all the same.
		claim, _ = x.takeRun(t)
		if err := x.w.st.SetRunCancelled(ctx, claim.RunID); err != nil {
			t.Fatal(err)
		}
		if tag, err := x.db.Exec(ctx, `UPDATE runs SET state = 'completed', stopped_by = 'forged' WHERE id = $1`, claim.RunID); err != nil || tag.RowsAffected() != 1 {
			t.Errorf("the agent's write within 5 minutes of the cancel: %v %v", tag, err)
		}
		if f := read(claim.RunID); f.State != "cancelled" {
			t.Errorf("the agent undid its user's cancel: %+v", f)
		}
		if _, err := x.w.pool.Exec(ctx, `UPDATE runs SET finished_at = now() - interval '301 seconds' WHERE id = $1`, claim.RunID); err != nil {
			t.Fatal(err)
		}
		if tag, err := x.db.Exec(ctx, `UPDATE runs SET error = 'forged' WHERE id = $1`, claim.RunID); err != nil || tag.RowsAffected() != 0 {
			t.Errorf("the agent's write 5 minutes after the cancel: %v %v", tag, err)
		}
		if _, err := x.WriteResults(ctx, claim.Lease, res(1)); !errors.Is(err, store.ErrFenced) {
			t.Errorf("results 5 minutes after the cancel: %v, want fenced", err)
		}
	})
}

// An agent that dates its heartbeat and its run's progress in the future,
// then dies, does not keep the run: the database sets those times from its
// own clock, and the reaper reassigns the run after the stale period.
func TestForgedTimesDoNotKeepADeadRun(t *testing.T) {
	bothWays(t, func(t *testing.T, pooled bool) {
		ctx := context.Background()
		x := startWork(t, pooled)
		run, me := x.claim.RunID, x.agent.ID
		for _, q := range []string{
			`UPDATE agents SET last_heartbeat_at = now() + interval '1 day', started_at = now() + interval '1 day' WHERE id = $2 AND $1::bigint > 0`,
			`UPDATE runs SET progress_at = now() + interval '1 day', segment_started_at = now() + interval '1 day',
				started_at = now() + interval '1 day' WHERE id = $1 AND $2::bigint > 0`,
		} {
			if tag, err := x.db.Exec(ctx, q, run, me); err != nil || tag.RowsAffected() != 1 {
				t.Fatalf("%s: %v %v", q, tag, err)
			}
		}
		// A heartbeat through the store, in any form, is the database's now().
		if _, err := x.AgentHeartbeat(ctx, me); err != nil {
			t.Fatal(err)
		}
		var future bool
		if err := x.w.pool.QueryRow(ctx, `SELECT a.last_heartbeat_at > now() OR a.started_at > now() OR r.progress_at > now()
			OR r.segment_started_at > now() OR r.started_at > now() FROM runs r, agents a WHERE r.id = $1 AND a.id = $2`, run, me).Scan(&future); err != nil {
			t.Fatal(err)
		}
		if future {
			t.Error("a time the agent wrote is in the future")
		}
		// The agent dies here: nothing more from it. The reaper hands the
		// run on once the stale period (3 s) has passed.
		testkit.WaitFor(t, "the reaper to reassign the dead agent's run", func() bool {
			if _, err := x.w.svc.ReassignStaleRuns(ctx); err != nil {
				t.Fatal(err)
			}
			return strings.Contains(eventKinds(t, x.w.st, run), "reassigned")
		})
		var state string
		if err := x.w.pool.QueryRow(ctx, `SELECT state FROM runs WHERE id = $1`, run).Scan(&state); err != nil || state != "queued" {
			t.Errorf("the dead agent's run after the reaper: %s %v, want queued for another agent", state, err)
		}
	})
}
