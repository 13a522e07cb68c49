package agent

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/app/devdb"
	"github.com/ruckus/ruckus/app/pgbouncer"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// startPgBouncer runs Debian's PgBouncer in transaction mode in front of
// the test's database, with budget PostgreSQL connections for the agents
// (each agent's pool the default size within it), and returns its
// host:port.
func startPgBouncer(t *testing.T, w *world, budget int) string {
	t.Helper()
	return startPgBouncerEach(t, w, budget, 0)
}

// startPgBouncerEach is startPgBouncer with perAgent server connections
// for each agent's pool.
func startPgBouncerEach(t *testing.T, w *world, budget, perAgent int) string {
	t.Helper()
	if _, err := pgbouncer.Binary(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err) // make deps installs it
		}
		t.Skip(err)
	}
	ctx := context.Background()
	// PgBouncer's roles belong to the whole cluster, which tests of other
	// packages share: one password for all of them, so that none changes
	// it under another's PgBouncer.
	const password = "ruckus-test-pgbouncer-password"
	if err := pgbouncer.SetupAuth(ctx, w.pool, password); err != nil {
		t.Fatal(err)
	}
	port, err := devdb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "ruckus-pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cc := w.pool.Config().ConnConfig
	listen := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cfg := pgbouncer.Config{Dir: dir, Listen: listen, Upstream: net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port))),
		Database: cc.Database, MaxDBConnections: budget, AgentConnections: perAgent, MaxClients: 200, AuthPassword: password}
	pctx, stop := context.WithCancel(context.Background())
	log := &syncBuffer{}
	cmd, err := pgbouncer.Start(pctx, cfg, log)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(dir + "/pgbouncer.log")
			t.Logf("pgbouncer:\n%s%s", log.String(), b)
		}
	})
	return listen
}

// via points an agent's database URL at PgBouncer.
func via(t *testing.T, agentURL, bouncer string) string {
	t.Helper()
	u, err := pgbouncer.AgentURL(agentURL, bouncer)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Agents work through PgBouncer in transaction mode: River polls instead
// of LISTEN, no statement is prepared on a server connection, and a run
// completes exactly once; a cancel stops the agent's sending within a
// second; a killed agent's run is reassigned within the stale period plus
// 5 s; PostgreSQL never holds more agent connections than the budget. The
// budget is the agents' pools together: where it is smaller, PgBouncer
// closes one agent's idle connection to open another's, and PostgreSQL
// holds the closing one for a moment beside the new
// (docs/scaling.md#one-pool-login-per-agent).
func TestAgentsThroughPgBouncer(t *testing.T) {
	const n, budget = 200, 3
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), n)
	w.reap()
	bouncer := startPgBouncerEach(t, w, budget, 1)
	extra := []string{"--pgbouncer", "--db-pool-size", "3", "--control-poll", "100ms"}
	agents := map[string]*agentProcess{}
	for _, name := range []string{"pgb-a", "pgb-b", "pgb-c"} {
		url, key := pgtest.AgentLogin(t, pool, name)
		agents[name] = startAgentWithEnv(t, []string{"RUCKUS_AGENT_KEY=" + key}, via(t, url, bouncer), name, extra...)
	}
	testkit.WaitFor(t, "three agents online", func() bool { return w.online() == 3 })

	// The most connections PostgreSQL holds for the agents' roles.
	ctx, stopWatch := context.WithCancel(context.Background())
	peak := make(chan int, 1)
	go func() {
		most := 0
		for ctx.Err() == nil {
			var k int
			err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
				AND usesysid IN (SELECT member FROM pg_auth_members WHERE roleid = 'ruckus_agent'::regrole)`).Scan(&k)
			if err != nil && ctx.Err() == nil {
				t.Errorf("counting agent connections: %v", err)
			}
			most = max(most, k)
			time.Sleep(20 * time.Millisecond)
		}
		peak <- most
	}()

	// 1. A run completes exactly once.
	id := w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 4})
	testkit.WaitWithin(t, 60*time.Second, "the run to succeed", func() bool { return w.run(id).State == "completed" })
	w.exactlyOnce(w.run(id).ID, n)

	// 2. Cancel: the agent stops sending within a second.
	id = w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 1})
	testkit.WaitFor(t, "the second run to get going", func() bool { return w.run(id).Completed >= 10 })
	r := w.run(id)
	cancelledAt := time.Now()
	if err := w.svc.CancelRun(context.Background(), store.Viewer{Admin: true}, id, r.ID); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the agent to record the cancel", func() bool {
		var k int
		_ = pool.QueryRow(context.Background(), `SELECT count(*) FROM run_events WHERE run_id = $1 AND kind = 'cancelled' AND agent_id IS NOT NULL`, r.ID).Scan(&k)
		return k > 0
	})
	var lastSent time.Time
	if err := pool.QueryRow(context.Background(), `SELECT max(sent_at) FROM results WHERE run_id = $1`, r.ID).Scan(&lastSent); err != nil {
		t.Fatal(err)
	}
	if after := lastSent.Sub(cancelledAt); after > time.Second {
		t.Errorf("a request was sent %v after the cancel, want within 1 s", after)
	}
	t.Logf("last request sent %v after the cancel", lastSent.Sub(cancelledAt).Round(time.Millisecond))

	// 3. kill -9: reassigned within the stale period (3 s here) + 5 s.
	id = w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 1})
	testkit.WaitFor(t, "the third run to get going", func() bool { return w.run(id).Completed >= 10 })
	r = w.run(id)
	victim := agents[r.AgentName]
	if victim == nil {
		t.Fatalf("run held by %q", r.AgentName)
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.done
	killedAt := time.Now()
	var resumedAt time.Time
	testkit.WaitFor(t, "a result from the new agent", func() bool {
		return pool.QueryRow(context.Background(), `SELECT min(r.sent_at) FROM results r JOIN agents a ON a.id = r.agent_id
			WHERE r.run_id = $1 AND a.name <> $2 HAVING count(*) > 0`, r.ID, r.AgentName).Scan(&resumedAt) == nil
	})
	if took := resumedAt.Sub(killedAt); took > w.svc.StaleAfter+5*time.Second {
		t.Errorf("the run was resumed %v after the kill, want within the stale period %v + 5 s", took, w.svc.StaleAfter)
	} else {
		t.Logf("resumed %v after the kill (stale period %v)", took.Round(time.Millisecond), w.svc.StaleAfter)
	}
	testkit.WaitWithin(t, 60*time.Second, "the third run to succeed", func() bool { return w.run(id).State == "completed" })
	w.exactlyOnce(r.ID, n)

	stopWatch()
	if most := <-peak; most > budget {
		t.Errorf("PostgreSQL held %d agent connections, over the budget of %d", most, budget)
	} else if most == 0 {
		t.Error("no agent connection seen: the agents did not go through PgBouncer to this database")
	} else {
		t.Logf("at most %d agent connections in PostgreSQL for 3 agents of pool size 3, one server connection each", most)
	}
}

// rawThrough connects to PgBouncer with an agent's role as any client
// could, sending whatever SQL it likes (unnamed statements, as PgBouncer
// in transaction mode requires).
func rawThrough(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	cc, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cc.DefaultQueryExecMode = pgx.QueryExecModeExec
	conn, err := pgx.ConnectConfig(context.Background(), cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Through PgBouncer pooled agents share no server connection and no role
// (docs/scaling.md#one-pool-login-per-agent): each transaction runs on a
// session logged in as its own agent's role, which is who it is to the
// policies whatever key it carries (none, a wrong one, another agent's);
// what one client leaves in a session (a key set for the session, a
// temporary table shadowing a real one, a search_path, an advisory lock)
// reaches neither another agent's transaction, which runs on a login of
// its own, nor the same agent's next one on that session (the reset
// query); and another agent cannot read a pooled agent's statements in
// pg_stat_activity.
func TestPooledAgentsShareNoConnection(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 3)
	// One server connection for both agents: PgBouncer must close one
	// agent's to open the other's.
	bouncer := startPgBouncer(t, w, 1)
	aURL, aKey := pgtest.AgentLogin(t, pool, "pool-a")
	bURL, bKey := pgtest.AgentLogin(t, pool, "pool-b")
	a := connectAs(t, via(t, aURL, bouncer), aKey)
	mallory := rawThrough(t, via(t, bURL, bouncer))
	// Connected before Mallory leaves anything behind: PgBouncer closes
	// an idle server connection to look a new client's role up when the
	// budget is spent, which would wipe the session for another reason.
	next := rawThrough(t, via(t, bURL, bouncer))
	other := rawThrough(t, via(t, aURL, bouncer))
	if name, err := a.BoundAgentName(ctx); err != nil || name != "pool-a" {
		t.Fatalf("pool-a names itself %q (%v)", name, err)
	}

	count := func(conn *pgx.Conn, key, sql string) int {
		t.Helper()
		var n int
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if key != "" {
				if _, err := tx.Exec(ctx, store.SetAgentKey, key); err != nil {
					return err
				}
			}
			return tx.QueryRow(ctx, sql).Scan(&n)
		})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return n
	}
	const others = `SELECT count(*) FROM agents WHERE name <> 'pool-b'`
	for what, key := range map[string]string{"its own key": bKey, "no key": "", "a wrong key": "rka_" + strings.Repeat("x", 43),
		"pool-a's key": aKey} {
		if n := count(mallory, key, others); n != 0 {
			t.Errorf("pool-b with %s sees %d other agents' rows, want none", what, n)
		}
		if n := count(mallory, key, `SELECT count(*) FROM agents WHERE id = ruckus_agent_id() AND name = 'pool-b'`); n != 1 {
			t.Errorf("pool-b with %s is not pool-b to the policies", what)
		}
	}

	// Mallory leaves state in her server session...
	var leftOn, foundOn int
	var who string
	if err := mallory.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&leftOn); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT set_config('ruckus.agent_key', '` + aKey + `', false)`,
		`CREATE TEMP TABLE runs (id bigint, state text)`,
		`SET search_path = pg_temp, public`,
	} {
		if _, err := mallory.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// (An advisory lock it may not take: migration 0023.)
	if _, err := mallory.Exec(ctx, `SELECT pg_advisory_lock(42)`); !refused(err) {
		t.Errorf("an advisory lock through PgBouncer: %v, want permission denied", err)
	}
	// ...and neither her next client, on the same server connection, nor
	// another agent, on a login of its own, finds any of it.
	for _, c := range []struct {
		name, role string
		conn       *pgx.Conn
	}{{"pool-b's next client", roleOf(t, bURL), next}, {"pool-a", roleOf(t, aURL), other}} {
		var key, path string
		var temp *string
		var lockHeld bool
		if err := c.conn.QueryRow(ctx, `SELECT pg_backend_pid(), session_user, coalesce(current_setting('ruckus.agent_key', true), ''),
			current_setting('search_path'), to_regclass('pg_temp.runs')::text,
			EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = 42 AND pid = pg_backend_pid())`).
			Scan(&foundOn, &who, &key, &path, &temp, &lockHeld); err != nil {
			t.Fatal(err)
		}
		if who != c.role {
			t.Errorf("%s's transaction ran as %q, want its own role %q", c.name, who, c.role)
		}
		if c.conn == next && foundOn != leftOn {
			t.Fatalf("pool-b's next client ran on server connection %d, Mallory on %d: the check would prove nothing", foundOn, leftOn)
		}
		if key != "" || strings.HasPrefix(path, "pg_temp") || temp != nil || lockHeld {
			t.Errorf("%s inherited Mallory's session: key %q, search_path %q, temporary table %v, advisory lock held %v", c.name, key, path, temp, lockHeld)
		}
	}
	if name, err := a.BoundAgentName(ctx); err != nil || name != "pool-a" {
		t.Errorf("pool-a names itself %q (%v)", name, err)
	}

	// A statement in flight is not another agent's to read: pool-a holds
	// its transaction open on a second server connection while pool-b
	// reads pg_stat_activity.
	bouncer2 := startPgBouncer(t, w, 2)
	a2 := connectAs(t, via(t, aURL, bouncer2), aKey)
	reader := rawThrough(t, via(t, bURL, bouncer2))
	err := a2.InTx(ctx, func(q *store.Queries) error {
		rows, err := reader.Query(ctx, `SELECT coalesce(query, '') FROM pg_stat_activity WHERE usename = $1`, roleOf(t, aURL))
		if err != nil {
			return err
		}
		shown, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if len(shown) == 0 {
			t.Error("pool-a's open transaction is not in pg_stat_activity: the check below would prove nothing")
		}
		for _, q := range shown {
			if q != "<insufficient privilege>" {
				t.Errorf("pg_stat_activity shows pool-a's statement to pool-b: %q", q)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// PostgreSQL restarted for a moment under pooled agents in mid-run: PgBouncer
// logs in again within a second (server_login_retry), the reaper counts no
// silence from before PostgreSQL came back up, and no run is reassigned:
// each completes on the agent that had it, exactly once.
func TestPostgresRestartHandsOnNoPooledRun(t *testing.T) {
	c, pool, url := privateCluster(t)
	ctx := context.Background()
	const n = 400
	w := newWorld(t, pool, url, n)
	w.svc.StaleAfter = 5 * time.Second
	w.reap()
	bouncer := startPgBouncer(t, w, 3)
	for _, name := range []string{"pgb-r1", "pgb-r2"} {
		u, key := pgtest.AgentLogin(t, pool, name)
		startAgentWithEnv(t, []string{"RUCKUS_AGENT_KEY=" + key}, via(t, u, bouncer), name, "--pgbouncer", "--db-pool-size", "3")
	}
	testkit.WaitFor(t, "two agents online", func() bool { return w.online() == 2 })
	ids := []int64{w.launch(jobs.LoadProfile{Profile: jobs.LoadSequential}), w.launch(jobs.LoadProfile{Profile: jobs.LoadSequential})}
	testkit.WaitWithin(t, 60*time.Second, "both runs under way", func() bool {
		for _, id := range ids {
			if r := w.run(id); r.State != "running" || r.Completed < 20 {
				return false
			}
		}
		return true
	})
	began := time.Now()
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL was restarted in %v", time.Since(began).Round(time.Millisecond))
	for _, id := range ids {
		if w.run(id).Completed >= n {
			t.Fatalf("run of benchmark %d had finished before the restart: make the runs longer", id)
		}
	}
	testkit.WaitWithin(t, 120*time.Second, "both runs to complete after the restart", func() bool {
		for _, id := range ids {
			if w.run(id).State != "completed" {
				return false
			}
		}
		return true
	})
	for _, id := range ids {
		r := w.run(id)
		w.exactlyOnce(r.ID, n)
		if k := eventKinds(t, w.st, r.ID); r.Resumed != 0 || k != "started,completed" {
			t.Errorf("run %d: resumed %d times, events %s; want it never reassigned", r.ID, r.Resumed, k)
		}
	}
}
