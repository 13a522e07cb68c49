package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"

	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/jobs"
)

// refused says whether err is PostgreSQL refusing the statement: no
// privilege, or a row-level security policy.
func refused(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "42501"
}

// agentDB is how an agent reaches the database in a test: its store, the
// querier its own statements go through, and River's driver, as agentd
// opens them.
type agentDB struct {
	*store.Store
	db    store.DBTX
	river riverdriver.Driver[pgx.Tx]
}

// connectAs opens a pool with an agent's own role: directly or, with a
// key, through PgBouncer (where the agent is known by its key).
func connectAs(t *testing.T, url, key string) agentDB {
	t.Helper()
	pool, err := openPool(context.Background(), runConfig{DatabaseURL: url, DBPoolSize: 4, PgBouncer: key != ""})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st, err := store.NewAgent(pool, key)
	if err != nil {
		t.Fatal(err)
	}
	return agentDB{Store: st, db: st.DB(), river: newKeyedDriver(pool, st)}
}

// An agent's own role (ruckus agent create) reaches what an agent does
// and nothing else, whatever SQL it sends: PostgreSQL enforces it.
func TestAgentRoleIsLimitedToItsOwnWork(t *testing.T) {
	t.Parallel()
	testAgentConfinement(t, false)
}

// Through PgBouncer agents share server connections of one role, and
// PostgreSQL tells them apart by the key each transaction carries: the
// same confinement holds, statement for statement.
func TestPooledAgentIsLimitedToItsOwnWork(t *testing.T) {
	testAgentConfinement(t, true)
}

func testAgentConfinement(t *testing.T, pooled bool) {
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 5)
	var bouncer string
	if pooled {
		bouncer = startPgBouncer(t, w, 2)
	}
	login := func(name string) (url, key string) {
		url, key = pgtest.AgentLogin(t, pool, name)
		if !pooled {
			return url, ""
		}
		return via(t, url, bouncer), key
	}
	// What must stay out of reach: a session, an API token, the cookie key,
	// and another user's dataset.
	if _, err := pool.Exec(ctx, `INSERT INTO sessions (id, user_id, expires_at) SELECT '\x01', id, now() + interval '1 h' FROM users`); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.CreateAPIToken(ctx, w.viewer.UserID, "t", "rk_x", []byte{2}); err != nil {
		t.Fatal(err)
	}
	aURL, aKey := login("node-a")
	bURL, bKey := login("node-b")
	a := connectAs(t, aURL, aKey)
	b := connectAs(t, bURL, bKey)
	register := func(st agentDB, name, profile string) store.Agent {
		ag, err := st.RegisterAgent(ctx, store.AgentRegistration{Name: name, ProtocolVersion: jobs.ProtocolVersion,
			Runtimes: []string{"sim"}, Profile: store.HardwareProfile{Slug: profile, CPUCores: 2}})
		if err != nil {
			t.Fatalf("register %s: %v", name, err)
		}
		return ag
	}
	agentA, agentB := register(a, "node-a", "cpu"), register(b, "node-b", "cpu-big")

	// Nothing of the accounts, secrets, datasets, models or prices.
	for _, q := range []string{`SELECT count(*) FROM users`, `SELECT count(*) FROM sessions`, `SELECT count(*) FROM api_tokens`,
		`SELECT count(*) FROM server_secrets`, `SELECT count(*) FROM datasets`, `SELECT count(*) FROM models`,
		`SELECT reference FROM dataset_items LIMIT 1`, `SELECT shot FROM dataset_items LIMIT 1`, `SELECT manifest FROM benchmarks LIMIT 1`,
		`SELECT price_per_hour FROM hardware_profiles LIMIT 1`, `SELECT count(*) FROM provider_prices`, `SELECT count(*) FROM run_providers`,
		`SELECT fleet_repository FROM benchmarks LIMIT 1`} {
		var n any
		if err := a.db.QueryRow(ctx, q).Scan(&n); !refused(err) {
			t.Errorf("%s as an agent: %v, want permission denied", q, err)
		}
	}
	// Another agent's row is invisible, its own cannot be undrained or
	// reactivated, and it cannot register under another name.
	var n int
	if err := a.db.QueryRow(ctx, `SELECT count(*) FROM agents`).Scan(&n); err != nil || n != 1 {
		t.Errorf("agents visible to node-a: %d %v, want its own row only", n, err)
	}
	if _, err := a.db.Exec(ctx, `UPDATE agents SET deactivated_at = NULL, drained = false`); !refused(err) {
		t.Errorf("undrain itself: %v, want permission denied", err)
	}
	if _, err := a.RegisterAgent(ctx, store.AgentRegistration{Name: "node-b", ProtocolVersion: jobs.ProtocolVersion}); !refused(err) {
		t.Errorf("node-a registering as node-b: %v, want refused", err)
	}
	if _, err := a.RegisterAgent(ctx, store.AgentRegistration{Name: "node-z", ProtocolVersion: jobs.ProtocolVersion}); !refused(err) {
		t.Errorf("node-a registering a new agent: %v, want refused", err)
	}

	// A run on node-b's queue, whose job node-b is working.
	id := w.launchOn("cpu-big", jobs.LoadProfile{Profile: jobs.LoadSequential})
	run := w.run(id)
	if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() WHERE id = $1`, *run.RiverJobID); err != nil {
		t.Fatal(err)
	}
	// node-a may not take it: it is not on node-a's queue.
	if _, err := a.ClaimRun(ctx, run.ID, agentA.ID, *run.RiverJobID, "sim"); !errors.Is(err, store.ErrStaleJob) {
		t.Errorf("node-a claiming node-b's run: %v, want not found", err)
	}
	claim, err := b.ClaimRun(ctx, run.ID, agentB.ID, *run.RiverJobID, "sim")
	if err != nil {
		t.Fatalf("node-b claims its run: %v", err)
	}
	items, err := b.PendingItems(ctx, run.ID, claim.DatasetID, claim.Total)
	if err != nil || len(items) != 5 {
		t.Fatalf("node-b reads its run's items: %d %v", len(items), err)
	}
	// node-a sees none of that run: not the run, not its items.
	if items, err := a.PendingItems(ctx, run.ID, claim.DatasetID, claim.Total); err != nil || len(items) != 0 {
		t.Errorf("node-a reads node-b's items: %d %v", len(items), err)
	}
	if err := a.db.QueryRow(ctx, `SELECT count(*) FROM runs`).Scan(&n); err != nil || n != 0 {
		t.Errorf("runs visible to node-a: %d %v", n, err)
	}
	// node-a cannot write node-b's run: results (even naming its lease),
	// progress, the end, events, the run row.
	res := []store.ResultRecord{{Result: jobs.Result{Idx: 0, CustomID: "q0", Status: jobs.StatusOK, Output: "forged"}, SentAt: time.Now()}}
	stolen := claim.Lease
	stolen.AgentID = agentA.ID
	for what, err := range map[string]error{
		"results under node-b's lease": func() error { _, err := a.WriteResults(ctx, claim.Lease, res); return err }(),
		"results as itself":            func() error { _, err := a.WriteResults(ctx, stolen, res); return err }(),
		"progress":                     a.UpdateProgress(ctx, claim.Lease, store.Progress{}, store.Sample{At: time.Now()}),
		"the end":                      a.FinishRun(ctx, claim.Lease, store.Finish{State: "failed"}),
		"an event":                     a.AddRunEvent(ctx, run.ID, &agentA.ID, "completed", "forged"),
	} {
		if err == nil {
			t.Errorf("node-a wrote %s of node-b's run", what)
		}
	}
	if _, err := a.db.Exec(ctx, `INSERT INTO results (run_id, idx, custom_id, status, sent_at, agent_id) VALUES ($1, 0, 'q0', 'ok', now(), $2)`,
		run.ID, agentB.ID); !refused(err) {
		t.Errorf("node-a inserting a result as node-b: %v, want refused", err)
	}
	if tag, err := a.db.Exec(ctx, `UPDATE runs SET state = 'failed' WHERE id = $1`, run.ID); err != nil || tag.RowsAffected() != 0 {
		t.Errorf("node-a failing node-b's run: %v %v", tag, err)
	}
	// River: node-a sees no job of node-b's queue and cannot queue work
	// for the server but scoring of its own runs.
	if err := a.db.QueryRow(ctx, `SELECT count(*) FROM river_job`).Scan(&n); err != nil || n != 0 {
		t.Errorf("jobs visible to node-a: %d %v", n, err)
	}
	ra, err := river.NewClient(a.river, &river.Config{SkipUnknownJobCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ra.Insert(ctx, jobs.ScoreRunArgs{RunID: run.ID}, nil); !refused(err) {
		t.Errorf("node-a queueing the scoring of node-b's run: %v, want refused", err)
	}

	// node-b does its work: results, progress, the end, its scoring job.
	if n, err := b.WriteResults(ctx, claim.Lease, res); err != nil || n != 1 {
		t.Fatalf("node-b writes its results: %d %v", n, err)
	}
	if err := b.UpdateProgress(ctx, claim.Lease, store.Progress{Throughput: 1}, store.Sample{At: time.Now()}); err != nil {
		t.Fatalf("node-b progress: %v", err)
	}
	if _, err := summary.Run(ctx, b, run.ID, jobs.SLO{}, time.Second); err != nil {
		t.Fatalf("node-b summarises its run: %v", err)
	}
	if err := b.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", StoppedBy: "completed"}); err != nil {
		t.Fatalf("node-b finishes its run: %v", err)
	}
	rb, err := river.NewClient(b.river, &river.Config{SkipUnknownJobCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rb.Insert(ctx, jobs.ScoreRunArgs{RunID: run.ID}, nil); err != nil {
		t.Fatalf("node-b queues its run's scoring: %v", err)
	}
	// Done, the run's items are out of node-b's reach too.
	if items, err := b.PendingItems(ctx, run.ID, claim.DatasetID, claim.Total); err != nil || len(items) != 0 {
		t.Errorf("node-b reads items of a finished run: %d %v", len(items), err)
	}

	// Revoked: the role is gone, the key forgotten, the agent
	// deactivated.
	revoked, err := w.st.RevokeAgentRole(ctx, "node-b")
	if err != nil {
		t.Fatal(err)
	}
	if conn, err := pgx.Connect(ctx, bURL); err == nil {
		conn.Close(ctx)
		t.Error("a revoked agent's role still connects")
	}
	if pooled {
		// A client PgBouncer let in before the revocation gets no server
		// connection: PgBouncer logs in as the agent's role, which is
		// gone (it waits for one until its query_timeout; bounded here).
		short, cancel := context.WithTimeout(ctx, 3*time.Second)
		name, err := b.BoundAgentName(short)
		cancel()
		if err == nil {
			t.Errorf("a revoked pooled agent's client is still answered, as %q", name)
		}
	}
	ags, _ := w.st.ListAgents(ctx)
	for _, ag := range ags {
		if ag.Name == "node-b" && ag.DeactivatedAt == nil {
			t.Error("a revoked agent stays active")
		}
	}
	var exists bool
	// Its own role by name: tests in other databases of the cluster have
	// node-b roles of their own.
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, revoked.Role).Scan(&exists); err != nil || exists {
		t.Errorf("node-b's role still exists: %v %v", exists, err)
	}
}
