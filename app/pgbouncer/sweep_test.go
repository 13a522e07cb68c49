package pgbouncer_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/app/pgbouncer"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
)

// poolSession logs in to the test database as the pooled agents' role, as
// PgBouncer does (devdb's pg_hba rule lets it in by address), without
// running the connect query: as when PgBouncer's connect query was
// cancelled by a statement_timeout an agent gave the role.
func poolSession(t *testing.T, pool *pgxpool.Pool) *pgx.Conn {
	t.Helper()
	u, err := url.Parse(pgtest.URL(t, pool))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(store.AgentPoolRole)
	cc, err := pgx.ParseConfig(u.String())
	if err != nil {
		t.Fatal(err)
	}
	cc.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(context.Background(), cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func searchPath(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	var path string
	if err := conn.QueryRow(context.Background(), `SELECT current_setting('search_path')`).Scan(&path); err != nil {
		t.Fatalf("read search_path: %v", err)
	}
	return path
}

// TestSweepEndsSessionsTheConnectQueryMissed: a pooled session that logged
// in while an agent's defaults were on the pool role, and whose connect
// query never ran (PgBouncer keeps such a connection), is ended by the
// server's sweep, whether a later login already removed the defaults or
// the sweep removes them itself; sessions that log in afterwards are
// clean and survive later sweeps.
func TestSweepEndsSessionsTheConnectQueryMissed(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	st := store.New(pool)
	if err := pgbouncer.SetupAuth(ctx, pool, "ruckus-test-pgbouncer-password"); err != nil {
		t.Fatal(err)
	}
	inDB := `ALTER ROLE ruckus_agent_pool IN DATABASE ` + pgx.Identifier{pool.Config().ConnConfig.Database}.Sanitize()
	// Only this test's database: other tests share the cluster's role.
	t.Cleanup(func() { _, _ = pool.Exec(context.Background(), inDB+` RESET ALL`) })
	attack := func(conn *pgx.Conn) {
		t.Helper()
		for _, set := range []string{` SET search_path = nowhere`, ` SET work_mem = '64kB'`} {
			if _, err := conn.Exec(ctx, inDB+set); err != nil {
				t.Fatalf("the attack (%s): %v", set, err)
			}
		}
	}
	sweep := func() int {
		t.Helper()
		n, err := st.SweepAgentPool(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	defaults := func() int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_db_role_setting WHERE setrole = 'ruckus_agent_pool'::regrole`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	if n := sweep(); n != 0 {
		t.Fatalf("a sweep before any attack ended %d sessions", n)
	}
	attacker := poolSession(t, pool)
	attack(attacker)
	tainted := poolSession(t, pool)
	if got := searchPath(t, tainted); got != "nowhere" {
		t.Fatalf("the tainted session's search_path = %q, want the attacker's", got)
	}
	// Another login's connect query removes the defaults and ends itself;
	// the tainted session's connect query was the one cancelled.
	next := poolSession(t, pool)
	_, _ = next.Exec(ctx, pgbouncer.PoolLogin)
	if err := next.Ping(ctx); err == nil {
		t.Fatal("the login that found the defaults goes on; want it ended")
	}
	if n := defaults(); n != 0 {
		t.Fatalf("after a login's reset the pool role keeps %d defaults", n)
	}
	if got := searchPath(t, tainted); got != "nowhere" {
		t.Fatalf("before the sweep the tainted session's search_path is %q: the test shows nothing", got)
	}
	if n := sweep(); n < 2 {
		t.Errorf("the sweep ended %d sessions, want the tainted one and the attacker's", n)
	}
	if err := tainted.Ping(ctx); err == nil {
		t.Error("the session that began with the attacker's defaults survives the sweep")
	}

	// Sessions that log in now are clean, and later sweeps leave them be.
	fresh := poolSession(t, pool)
	if n := sweep(); n != 0 {
		t.Errorf("a sweep with nothing new ended %d sessions", n)
	}
	if err := fresh.Ping(ctx); err != nil || searchPath(t, fresh) == "nowhere" {
		t.Fatalf("a session after the sweep: %v, search_path %q", err, searchPath(t, fresh))
	}

	// Defaults no login has removed yet: the sweep removes them itself.
	attack(fresh)
	tainted2 := poolSession(t, pool)
	if n := sweep(); n < 1 {
		t.Errorf("the second sweep ended %d sessions", n)
	}
	if n := defaults(); n != 0 {
		t.Errorf("after the sweep the pool role keeps %d defaults", n)
	}
	if err := tainted2.Ping(ctx); err == nil {
		t.Error("the second tainted session survives the sweep")
	}
	if got := searchPath(t, poolSession(t, pool)); got == "nowhere" {
		t.Errorf("a login after the second sweep has search_path %q", got)
	}
}
