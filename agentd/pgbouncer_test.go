package main

import (
	"context"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/devdb"
	"github.com/ruckus/ruckus/app/pgbouncer"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// startPgBouncer runs Debian's PgBouncer in transaction mode in front of
// the test's database, with budget PostgreSQL connections for the agents,
// and returns its host:port.
func startPgBouncer(t *testing.T, w *world, budget int) string {
	t.Helper()
	if _, err := pgbouncer.Binary(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err) // make deps installs it
		}
		t.Skip(err)
	}
	ctx := context.Background()
	password := "pgb-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-test-password"
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
		Database: cc.Database, MaxDBConnections: budget, MaxClients: 200, AuthPassword: password}
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
// second; a killed agent's run is handed on within the stale period plus
// 5 s; PostgreSQL never holds more agent connections than the budget.
func TestAgentsThroughPgBouncer(t *testing.T) {
	const n, budget = 200, 3
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), n)
	w.reap()
	bouncer := startPgBouncer(t, w, budget)
	extra := []string{"--pgbouncer", "--db-pool-size", "3", "--control-poll", "100ms"}
	agents := map[string]*agentProcess{}
	for _, name := range []string{"pgb-a", "pgb-b", "pgb-c"} {
		url, key := pgtest.AgentLogin(t, pool, name)
		agents[name] = startAgentWithEnv(t, []string{"RUCKUS_AGENT_KEY=" + key}, via(t, url, bouncer), name, extra...)
	}
	until(t, 30*time.Second, "three agents online", func() bool { return w.online() == 3 })

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
	until(t, 60*time.Second, "the run to succeed", func() bool { return w.run(id).State == "completed" })
	w.exactlyOnce(w.run(id).ID, n)

	// 2. Cancel: the agent stops sending within a second.
	id = w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 1})
	until(t, 30*time.Second, "the second run to get going", func() bool { return w.run(id).Completed >= 10 })
	r := w.run(id)
	cancelledAt := time.Now()
	if err := w.planner.CancelRun(context.Background(), store.Viewer{Admin: true}, id, r.ID); err != nil {
		t.Fatal(err)
	}
	until(t, 10*time.Second, "the agent to record the cancel", func() bool {
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

	// 3. kill -9: handed on within the stale period (3 s here) + 5 s.
	id = w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 1})
	until(t, 30*time.Second, "the third run to get going", func() bool { return w.run(id).Completed >= 10 })
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
	until(t, 30*time.Second, "a result from the new agent", func() bool {
		return pool.QueryRow(context.Background(), `SELECT min(r.sent_at) FROM results r JOIN agents a ON a.id = r.agent_id
			WHERE r.run_id = $1 AND a.name <> $2 HAVING count(*) > 0`, r.ID, r.AgentName).Scan(&resumedAt) == nil
	})
	if took := resumedAt.Sub(killedAt); took > w.planner.StaleAfter+5*time.Second {
		t.Errorf("the run was resumed %v after the kill, want within the stale period %v + 5 s", took, w.planner.StaleAfter)
	} else {
		t.Logf("resumed %v after the kill (stale period %v)", took.Round(time.Millisecond), w.planner.StaleAfter)
	}
	until(t, 60*time.Second, "the third run to succeed", func() bool { return w.run(id).State == "completed" })
	w.exactlyOnce(r.ID, n)

	stopWatch()
	if most := <-peak; most > budget {
		t.Errorf("PostgreSQL held %d agent connections, over the budget of %d", most, budget)
	} else if most == 0 {
		t.Error("no agent connection seen: the agents did not go through PgBouncer to this database")
	} else {
		t.Logf("at most %d agent connections in PostgreSQL for 3 agents of pool size 3", most)
	}
}
