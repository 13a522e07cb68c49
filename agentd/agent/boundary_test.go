package agent

import (
	"context"
	"errors"
	"fmt"
	"net/url"
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

// Attack 1. Through PgBouncer every pooled agent logs in to PostgreSQL as
// its own role: PgBouncer keeps a pool per agent, logged in with the keys
// that agent proved (docs/scaling.md#one-pool-login-per-agent). Mallory,
// one pooled agent, gives her own role the defaults that would stop any
// session (read-only, a 1 ms statement timeout, a 1 ms idle session
// timeout, a search_path leading nowhere) and a new password, which
// PostgreSQL lets any role do to itself; she tries the same on the
// victim's role, the server's, PgBouncer's lookup role, the former shared
// pool role, every role and the database, and to end and cancel the
// victim's server connections: all refused. Every agent server connection
// is then ended, so the next transactions need new logins; the victim,
// pooled through the same PgBouncer within a budget of two server
// connections for both, works a run from start to end and its sessions
// start clean. Mallory's old password no longer lets her in: she has
// locked out herself alone.
func TestOneAgentCannotLockPooledAgentsOut(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 40)
	bouncer := startPgBouncer(t, w, 2)
	vURL, vKey := pgtest.AgentLogin(t, pool, "lock-victim")
	startAgentWithEnv(t, []string{"RUCKUS_AGENT_KEY=" + vKey}, via(t, vURL, bouncer), "lock-victim",
		"--pgbouncer", "--db-pool-size", "2")
	testkit.WaitFor(t, "the victim online", func() bool { return w.online() == 1 })
	mURL, mKey := pgtest.AgentLogin(t, pool, "lock-mallory")
	mallory := rawThrough(t, via(t, mURL, bouncer))
	victimRole, malloryRole := roleOf(t, vURL), roleOf(t, mURL)
	var who string
	if err := mallory.QueryRow(ctx, `SELECT session_user`).Scan(&who); err != nil || who != malloryRole {
		t.Fatalf("Mallory's pooled session is %q (%v), want her own role %q", who, err, malloryRole)
	}

	victim := pgx.Identifier{victimRole}.Sanitize()
	for _, q := range []string{
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '` + victimRole + `'`,
		`SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE usename = '` + victimRole + `'`,
		`SELECT pg_terminate_backend(pg_backend_pid())`,
	} {
		if _, err := keyed(ctx, mallory, mKey, q); !refused(err) {
			t.Errorf("%s through PgBouncer: %v, want permission denied", q, err)
		}
	}
	for _, q := range []string{
		`ALTER ROLE ` + victim + ` SET statement_timeout = 1`,
		`ALTER ROLE ` + victim + ` SET default_transaction_read_only = on`,
		`ALTER ROLE ` + victim + ` PASSWORD 'mallory-owns-the-victim'`,
		`ALTER ROLE ` + pgx.Identifier{pool.Config().ConnConfig.User}.Sanitize() + ` SET statement_timeout = 1`,
		`ALTER ROLE ` + pgbouncer.AuthRole + ` PASSWORD 'mallory-owns-the-lookup'`,
		`ALTER ROLE ` + store.AgentPoolRole + ` LOGIN PASSWORD 'mallory-owns-the-pool'`,
		`ALTER ROLE ALL SET statement_timeout = 1`,
		`ALTER DATABASE ` + pgx.Identifier{pool.Config().ConnConfig.Database}.Sanitize() + ` SET statement_timeout = 1`,
	} {
		if _, err := mallory.Exec(ctx, q); !refused(err) {
			t.Errorf("%s: %v, want permission denied", q, err)
		}
	}
	// What PostgreSQL lets a role do to itself, in one transaction (one
	// server session, which the defaults do not reach).
	err := pgx.BeginFunc(ctx, mallory, func(tx pgx.Tx) error {
		for _, q := range []string{
			`ALTER ROLE CURRENT_USER SET default_transaction_read_only = on`,
			`ALTER ROLE CURRENT_USER SET statement_timeout = 1`,
			`ALTER ROLE CURRENT_USER SET idle_session_timeout = 1`,
			`ALTER ROLE CURRENT_USER SET search_path = nowhere`,
			`ALTER ROLE CURRENT_USER PASSWORD 'mallory-changed-her-own'`,
		} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return fmt.Errorf("%s: %w (the attack could not be made)", q, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// PgBouncer keeps its server connections (idle timeout, lifetime):
	// end every agent's now, as the database's owner, so every later
	// transaction needs a new login.
	if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = ANY ($1)`,
		[]string{victimRole, malloryRole}); err != nil {
		t.Fatal(err)
	}

	// The victim works a run from start to end.
	id := w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 4})
	testkit.WaitWithin(t, 60*time.Second, "the victim's run to complete", func() bool { return w.run(id).State == "completed" })
	w.exactlyOnce(w.run(id).ID, 40)
	// A new session of the victim's through PgBouncer starts clean.
	fresh := rawThrough(t, via(t, vURL, bouncer))
	var ro, timeout, idle, path string
	if err := fresh.QueryRow(ctx, `SELECT session_user, current_setting('transaction_read_only'), current_setting('statement_timeout'),
		current_setting('idle_session_timeout'), current_setting('search_path')`).Scan(&who, &ro, &timeout, &idle, &path); err != nil ||
		who != victimRole || ro != "off" || timeout != "2min" || idle != "0" || strings.Contains(path, "nowhere") {
		t.Errorf("a pooled session of the victim: %s, read-only %q, statement_timeout %q, idle_session_timeout %q, search_path %q (%v)",
			who, ro, timeout, idle, path, err)
	}
	// Mallory's defaults are on her role alone, and her old password no
	// longer takes her through PgBouncer.
	var others int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole
		WHERE r.rolname <> $1 AND array_to_string(s.setconfig, ',') ~ '(read_only|idle_session|nowhere|statement_timeout=1($|,))'`,
		malloryRole).Scan(&others); err != nil || others != 0 {
		t.Errorf("%d other roles (or the database) carry Mallory's defaults (%v), want none", others, err)
	}
	if old, err := pgx.Connect(ctx, via(t, mURL, bouncer)); err == nil {
		err = old.Ping(ctx)
		old.Close(ctx)
		if err == nil {
			t.Error("Mallory's old password still takes her through PgBouncer")
		}
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

// roleOf is the role an agent's database URL logs in as.
func roleOf(t *testing.T, agentURL string) string {
	t.Helper()
	u, err := url.Parse(agentURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.User.Username()
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
