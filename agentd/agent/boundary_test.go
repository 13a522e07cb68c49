package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/pgbouncer"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// Attacks on other agents, users and the server made with nothing but one
// agent's credentials, around the tables' grants (migration 0023). Each
// performs the attack and shows the victim unharmed.

// rawDirect connects with an agent's own role straight to PostgreSQL, as
// any client could, sending whatever SQL it likes.
func rawDirect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// keyed runs sql in a transaction that carries key (none: as is).
func keyed(ctx context.Context, conn *pgx.Conn, key, sql string, args ...any) (int64, error) {
	var n int64
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if key != "" {
			if _, err := tx.Exec(ctx, store.SetAgentKey, key); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, sql, args...)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}

// Attack 1. Every pooled agent is the role ruckus_agent_pool, which may
// change its own password and session defaults: Mallory, one pooled
// agent, sets a password of its own and makes every later session
// read-only with a 1 ms statement timeout and a search_path leading
// nowhere, and tries to end and cancel the pool's server connections (and
// a direct agent another's). The signals are refused; the pool's login
// depends on PgBouncer's address (pg_hba), not on the password; and the
// defaults are removed at PgBouncer's next login, whose session is ended.
// Another pooled agent keeps working.
func TestOneAgentCannotLockPooledAgentsOut(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 40)
	bouncer := startPgBouncer(t, w, 2)
	t.Cleanup(func() {
		// The pool role is the cluster's: whatever happened, leave it as
		// the other tests' PgBouncers expect it.
		_, _ = pool.Exec(context.Background(), `ALTER ROLE ruckus_agent_pool RESET ALL`)
		_ = pgbouncer.SetupAuth(context.Background(), pool, "ruckus-test-pgbouncer-password")
	})
	vURL, vKey := pgtest.AgentLogin(t, pool, "lock-victim")
	startAgentWithEnv(t, []string{"RUCKUS_AGENT_KEY=" + vKey}, via(t, vURL, bouncer), "lock-victim",
		"--pgbouncer", "--db-pool-size", "2")
	testkit.WaitFor(t, "the victim online", func() bool { return w.online() == 1 })
	mURL, mKey := pgtest.AgentLogin(t, pool, "lock-mallory")
	mallory := rawThrough(t, via(t, mURL, bouncer))
	var poolPid int
	if err := mallory.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&poolPid); err != nil {
		t.Fatal(err)
	}

	for _, q := range []string{
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'ruckus_agent_pool' AND pid <> pg_backend_pid()`,
		`SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE usename = 'ruckus_agent_pool' AND pid <> pg_backend_pid()`,
		`SELECT pg_terminate_backend(pg_backend_pid())`,
	} {
		if _, err := keyed(ctx, mallory, mKey, q); !refused(err) {
			t.Errorf("%s through PgBouncer: %v, want permission denied", q, err)
		}
	}
	for _, q := range []string{
		`ALTER ROLE ruckus_agent_pool PASSWORD 'mallory-owns-the-pool'`,
		`ALTER ROLE ruckus_agent_pool SET default_transaction_read_only = on`,
		`ALTER ROLE ruckus_agent_pool SET statement_timeout = 1`,
		`ALTER ROLE ruckus_agent_pool SET search_path = nowhere`,
	} {
		// PostgreSQL lets a role do this to itself: nothing to refuse.
		if _, err := mallory.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v (the attack could not be made)", q, err)
		}
	}
	// Mallory may not end the pool's sessions, but PgBouncer opens new
	// ones in time (idle timeout, lifetime, load): end them all now, as
	// the database's owner, so every later transaction needs a new login.
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'ruckus_agent_pool'`); err != nil {
		t.Fatal(err)
	}

	// The server's reaper sweeps the agents' pool every period, as
	// `ruckus serve` does (jobs.ReaperWorker): PgBouncer's connect query
	// runs under Mallory's statement_timeout and a loaded machine cancels
	// it, keeping a session with her defaults; the sweep ends it.
	sweepCtx, stopSweeps := context.WithCancel(ctx)
	sweeps := make(chan int, 1)
	go func() {
		ended := 0
		defer func() { sweeps <- ended }()
		tick := time.NewTicker(jobs.ReaperInterval(0))
		defer tick.Stop()
		for {
			select {
			case <-sweepCtx.Done():
				return
			case <-tick.C:
				n, err := w.svc.SweepAgentPool(sweepCtx)
				if err != nil && sweepCtx.Err() == nil {
					t.Errorf("sweep: %v", err)
				}
				ended += n
			}
		}
	}()

	// The victim works a run from start to end.
	id := w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 4})
	testkit.WaitWithin(t, 60*time.Second, "the victim's run to complete", func() bool { return w.run(id).State == "completed" })
	w.exactlyOnce(w.run(id).ID, 40)
	stopSweeps()
	t.Logf("the reaper's sweeps ended %d pooled sessions", <-sweeps)
	var defaults int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_db_role_setting WHERE setrole = 'ruckus_agent_pool'::regrole`).Scan(&defaults); err != nil || defaults != 0 {
		t.Errorf("the pool role keeps %d defaults (%v), want none", defaults, err)
	}
	// A new session through PgBouncer starts clean.
	fresh := rawThrough(t, via(t, vURL, bouncer))
	var ro, path string
	if err := fresh.QueryRow(ctx, `SELECT current_setting('transaction_read_only'), current_setting('search_path')`).Scan(&ro, &path); err != nil ||
		ro != "off" || strings.Contains(path, "nowhere") {
		t.Errorf("a pooled session: read-only %q, search_path %q (%v)", ro, path, err)
	}

	// Directly, agents are roles of their own: one may not signal
	// another's backend either.
	aURL, _ := pgtest.AgentLogin(t, pool, "lock-direct-a")
	bURL, _ := pgtest.AgentLogin(t, pool, "lock-direct-b")
	a, b := rawDirect(t, aURL), rawDirect(t, bURL)
	var bPid int
	if err := b.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&bPid); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"pg_cancel_backend", "pg_terminate_backend"} {
		if _, err := a.Exec(ctx, fmt.Sprintf(`SELECT %s($1)`, f), bPid); !refused(err) {
			t.Errorf("a direct agent calling %s on another agent's backend: %v, want permission denied", f, err)
		}
	}
	if err := b.Ping(ctx); err != nil {
		t.Errorf("the other direct agent's connection: %v", err)
	}
}

// Attacks 2 and 3. River's control messages travel by NOTIFY, which any
// role may send on any channel, and River cancels a running job whose row
// carries cancel_attempted_at: an agent (directly and through PgBouncer)
// forges a cancel of another agent's run on its own queue and a pause of
// every queue, writes cancel_attempted_at into that agent's job and
// pauses the queue's row. The run goes on to completion, and a run queued
// after the forged pause is taken at once.
func TestForgedRiverControlIsIgnored(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 150)
	bouncer := startPgBouncer(t, w, 2)
	// The victim connects directly: a client that listened would act on
	// the forged messages at once.
	startAgent(t, w.agentURL("ctl-victim"), "ctl-victim")
	testkit.WaitFor(t, "the victim online", func() bool { return w.online() == 1 })
	// Mallory serves the same queue (cpu, sim), directly and pooled.
	mURL, mKey := pgtest.AgentLogin(t, pool, "ctl-mallory")
	m := connectAs(t, mURL, "")
	testkit.Agent(ctx, t, m.Store, &testkit.AgentOpts{Name: "ctl-mallory"})
	attackers := map[string]struct {
		conn *pgx.Conn
		key  string
	}{"directly": {rawDirect(t, mURL), ""}, "through PgBouncer": {rawThrough(t, via(t, mURL, bouncer)), mKey}}

	id := w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 1})
	testkit.WaitFor(t, "the victim's run under way", func() bool { return w.run(id).Completed >= 5 })
	r := w.run(id)
	for how, at := range attackers {
		for _, payload := range []string{
			fmt.Sprintf(`{"action":"cancel","job_id":%d,"queue":"cpu_sim"}`, *r.RiverJobID),
			`{"action":"pause","queue":"*"}`,
			`{"action":"pause","queue":"cpu_sim"}`,
		} {
			if _, err := keyed(ctx, at.conn, at.key, `SELECT pg_notify(current_schema() || '.river_control', $1)`, payload); err != nil {
				t.Fatalf("NOTIFY %s: %v (the attack could not be made)", how, err)
			}
		}
		n, err := keyed(ctx, at.conn, at.key, `UPDATE river_job SET metadata = metadata || jsonb_build_object('cancel_attempted_at', now()) WHERE id = $1`, *r.RiverJobID)
		if err != nil || n != 0 {
			t.Errorf("%s, marking the victim's job cancelled: %d rows, %v; want none", how, n, err)
		}
		if _, err := keyed(ctx, at.conn, at.key, `UPDATE river_queue SET paused_at = now() WHERE name = 'cpu_sim'`); !refused(err) {
			t.Errorf("%s, pausing the queue's row: %v, want permission denied", how, err)
		}
	}
	testkit.WaitWithin(t, 60*time.Second, "the victim's run to complete", func() bool {
		s := w.run(id).State
		if s == "cancelled" {
			t.Fatalf("the victim's run was cancelled by a forged message")
		}
		return s == "completed"
	})
	w.exactlyOnce(r.ID, 150)
	var paused bool
	if err := pool.QueryRow(ctx, `SELECT paused_at IS NOT NULL FROM river_queue WHERE name = 'cpu_sim'`).Scan(&paused); err != nil || paused {
		t.Errorf("queue cpu_sim paused %v (%v)", paused, err)
	}
	// Not paused: the next run is taken within River's poll.
	next := w.launch(jobs.LoadProfile{Profile: jobs.LoadSequential})
	queued := time.Now()
	testkit.WaitFor(t, "the next run taken", func() bool { return w.run(next).State != "queued" })
	t.Logf("a run queued after the forged pause was taken in %v", time.Since(queued).Round(time.Millisecond))
}

// Attack 4 (and what an agent serves is granted). Mallory is granted
// cpu/sim; a user's private run waits on cpu/vllm. Mallory declares vllm,
// rewrites the runtimes and profile on its own row and adds a profile of
// its own, directly and through PgBouncer: its queues stay cpu_sim, the
// run cannot be claimed and its prompts are not readable. A new agent
// with no grant serves nothing until an administrator approves what it
// declares, and then takes runs.
func TestAgentServesOnlyWhatIsGranted(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 5)
	bouncer := startPgBouncer(t, w, 2)
	mURL, mKey := pgtest.AgentLoginGranted(t, pool, "grant-mallory", store.AgentGrant{Profile: "cpu", Runtimes: []string{"sim"}})

	id := w.launchTarget(bench.Target{Model: "sim/tiny", Runtime: "vllm", Hardware: "cpu"}, jobs.LoadProfile{Profile: jobs.LoadSequential})
	run := w.run(id)
	if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1`, *run.RiverJobID); err != nil {
		t.Fatal(err)
	}
	for how, db := range map[string]agentDB{"directly": connectAs(t, mURL, ""), "through PgBouncer": connectAs(t, via(t, mURL, bouncer), mKey)} {
		ag, err := db.RegisterAgent(ctx, store.AgentRegistration{Name: "grant-mallory", ProtocolVersion: jobs.ProtocolVersion,
			Runtimes: []string{"vllm"}, Profile: store.HardwareProfile{Slug: "cpu", CPUCores: 2}})
		if err != nil {
			t.Fatalf("%s: register: %v", how, err)
		}
		if ag.Profile != "cpu" || strings.Join(ag.Runtimes, ",") != "sim" || strings.Join(ag.DeclaredRuntimes, ",") != "vllm" {
			t.Errorf("%s: declaring vllm made the row serve %s %v (declared %v)", how, ag.Profile, ag.Runtimes, ag.DeclaredRuntimes)
		}
		for _, q := range []string{
			`UPDATE agents SET runtimes = '{sim,vllm}'`,
			`UPDATE agents SET hardware_profile = 'cpu'`,
			`UPDATE hardware_profiles SET gpu_name = 'forged'`,
			`INSERT INTO agents (name, protocol_version, runtimes, hardware_profile, db_role) VALUES ('x', 1, '{vllm}', 'cpu', ruckus_agent_role())`,
		} {
			if _, err := db.db.Exec(ctx, q); !refused(err) {
				t.Errorf("%s: %s: %v, want permission denied", how, q, err)
			}
		}
		if _, err := db.db.Exec(ctx, `INSERT INTO hardware_profiles (slug) VALUES ('mallory-x1') ON CONFLICT DO NOTHING`); err != nil {
			t.Errorf("%s: adding a profile: %v", how, err)
		}
		rows, _ := db.db.Query(ctx, `SELECT ruckus_agent_queues()`)
		queues, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || strings.Join(queues, ",") != "cpu_sim" {
			t.Errorf("%s: queues %v (%v), want cpu_sim alone", how, queues, err)
		}
		if _, err := db.ClaimRun(ctx, run.ID, ag.ID, *run.RiverJobID, "vllm"); !errors.Is(err, store.ErrStaleJob) {
			t.Errorf("%s: claiming the cpu_vllm run: %v, want refused", how, err)
		}
		var prompts, jobsSeen int
		if err := db.db.QueryRow(ctx, `SELECT (SELECT count(*) FROM dataset_items), (SELECT count(*) FROM river_job)`).Scan(&prompts, &jobsSeen); err != nil ||
			prompts != 0 || jobsSeen != 0 {
			t.Errorf("%s: sees %d prompts and %d jobs (%v), want none", how, prompts, jobsSeen, err)
		}
	}
	if err := pool.QueryRow(ctx, `SELECT state FROM runs WHERE id = $1`, run.ID).Scan(&run.State); err != nil || run.State != "queued" {
		t.Errorf("the cpu_vllm run is %q (%v), want still queued", run.State, err)
	}

	// A new agent with no grant: declared, serving nothing, until approved.
	pURL, _ := pgtest.AgentLoginGranted(t, pool, "grant-pending", store.AgentGrant{})
	p := startAgent(t, pURL, "grant-pending")
	testkit.WaitFor(t, "the pending agent to say it waits", func() bool {
		return strings.Contains(p.log.String(), "has not granted this agent")
	})
	simRun := w.launch(jobs.LoadProfile{Profile: jobs.LoadSequential})
	launched := time.Now()
	var pending store.Agent
	// Two heartbeats (and River polls, were it polling) after the launch.
	testkit.WaitFor(t, "two heartbeats of the pending agent", func() bool {
		for _, a := range mustAgents(t, w) {
			if a.Name == "grant-pending" {
				pending = a
			}
		}
		return pending.LastHeartbeatAt.After(launched.Add(2 * time.Second))
	})
	if !pending.Pending() || pending.Profile != "" || pending.DeclaredProfile != "cpu" {
		t.Fatalf("the new agent: granted %q %v, declared %q %v; want nothing granted, cpu declared", pending.Profile, pending.Runtimes,
			pending.DeclaredProfile, pending.DeclaredRuntimes)
	}
	if s := w.run(simRun).State; s != "queued" {
		t.Fatalf("a run was taken (%s) with no agent granted its queue", s)
	}
	if err := w.st.ApproveAgent(ctx, pending.ID); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the approved agent to complete the run", func() bool { return w.run(simRun).State == "completed" })
}

func mustAgents(t *testing.T, w *world) []store.Agent {
	t.Helper()
	as, err := w.st.ListAgents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return as
}
