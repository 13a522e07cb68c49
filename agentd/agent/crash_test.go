package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/devdb"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/migrations"
)

// TestMain lets the tests start this test binary as a real agentd process
// (RUCKUS_AGENTD_MAIN=1), so crash tests kill real processes.
func TestMain(m *testing.M) {
	if log := os.Getenv(fakeRuntimeLogEnv); log != "" && fakeRuntimeNames[filepath.Base(os.Args[0])] {
		os.Exit(fakeRuntime(log))
	}
	if os.Getenv("RUCKUS_AGENTD_MAIN") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Run(ctx, "test", os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// world is a database with one benchmark's worth of fixtures and the
// server side's benchmark service (reaper included).
type world struct {
	t       *testing.T
	pool    *pgxpool.Pool
	st      *store.Store
	url     string
	viewer  store.Viewer
	svc     *bench.Service
	dataset int64
}

func newWorld(t *testing.T, pool *pgxpool.Pool, url string, items int) *world {
	t.Helper()
	ctx := context.Background()
	st := store.New(pool)
	u := testkit.User(ctx, t, st, &testkit.UserOpts{Email: "a@example.com"})
	var b strings.Builder
	for i := range items {
		fmt.Fprintf(&b, "{\"custom_id\":\"q%d\",\"prompt\":\"question %d\"}\n", i, i)
	}
	res := testkit.Dataset(ctx, t, st, &testkit.DatasetOpts{Owner: u.ID, Content: b.String()})
	testkit.Model(ctx, t, st, &testkit.ModelOpts{Name: "sim/tiny", ParamsB: 0.1, Quantization: "bf16"})
	rc := testkit.RiverClient(t.Context(), t, pool, nil)
	return &world{t: t, pool: pool, st: st, url: url, viewer: store.Viewer{UserID: u.ID}, dataset: res.ID,
		svc: testkit.Service(ctx, t, st, &testkit.ServiceOpts{River: rc, StaleAfter: 3 * time.Second})}
}

// agentURL is the database URL of agent name's own restricted role, as
// `ruckus agent create` gives it.
func (w *world) agentURL(name string) string {
	w.t.Helper()
	return pgtest.AgentURL(w.t, w.pool, name)
}

// online counts the agents that have registered and are online (an agent
// role made ahead of its process leaves an offline row until it starts).
func (w *world) online() int {
	as, _ := w.st.ListAgents(context.Background())
	n := 0
	for _, a := range as {
		if a.State == store.AgentOnline {
			n++
		}
	}
	return n
}

// launch creates a one-run benchmark on the cpu/sim queue.
func (w *world) launch(load jobs.LoadProfile) int64 { return w.launchOn("cpu", load) }

// launchOn creates a one-run benchmark on the profile's sim queue.
func (w *world) launchOn(profile string, load jobs.LoadProfile) int64 {
	return w.launchTarget(bench.Target{Model: "sim/tiny", Runtime: "sim", Hardware: profile}, load)
}

// launchTarget creates a one-run benchmark for target.
func (w *world) launchTarget(target bench.Target, load jobs.LoadProfile) int64 {
	w.t.Helper()
	c, err := w.svc.Create(context.Background(), w.viewer, bench.Manifest{Name: "crash", Dataset: bench.DatasetRef{ID: w.dataset},
		Targets: []bench.Target{target}, Load: load, Sampling: jobs.Sampling{MaxTokens: 16}})
	if err != nil {
		w.t.Fatal(err)
	}
	return c.BenchmarkID
}

func (w *world) run(benchmarkID int64) store.Run {
	w.t.Helper()
	b, err := w.st.BenchmarkByID(context.Background(), store.Viewer{Admin: true}, benchmarkID)
	if err != nil {
		return store.Run{}
	}
	return b.Runs[0]
}

// finished says whether every run of the benchmark has completed or
// failed.
func (w *world) finished(benchmarkID int64) bool {
	b, err := w.st.BenchmarkByID(context.Background(), store.Viewer{Admin: true}, benchmarkID)
	if err != nil {
		return false
	}
	for _, r := range b.Runs {
		if r.State != "completed" && r.State != "failed" {
			return false
		}
	}
	return true
}

// reap runs the server's reaper every 200 ms until the test ends.
func (w *world) reap() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			_, _ = w.svc.ReassignStaleRuns(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	w.t.Cleanup(func() { cancel(); <-done })
}

// exactlyOnce checks the run's result rows: one per item, none missing.
func (w *world) exactlyOnce(runID int64, n int) {
	w.t.Helper()
	var rows, distinct, maxIdx int
	err := w.st.Pool().QueryRow(context.Background(), `SELECT count(*), count(DISTINCT idx), coalesce(max(idx), -1) FROM results WHERE run_id = $1`, runID).
		Scan(&rows, &distinct, &maxIdx)
	if err != nil {
		w.t.Fatal(err)
	}
	if rows != n || distinct != n || maxIdx != n-1 {
		w.t.Fatalf("results: %d rows, %d distinct items, last idx %d; want exactly %d", rows, distinct, maxIdx, n)
	}
}

// agentProcess is agentd run as a real child process.
type agentProcess struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited; err is its end
	err  error
	log  *syncBuffer
	// refusalsExpected: the test takes the agent's rights away, so
	// PostgreSQL's refusals in its log are the point, not a missing grant.
	refusalsExpected bool
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func startAgent(t *testing.T, url, name string, extra ...string) *agentProcess {
	t.Helper()
	return startAgentWithEnv(t, nil, url, name, extra...)
}

// startAgentWithEnv is startAgent with env added to the agent's environment.
func startAgentWithEnv(t *testing.T, env []string, url, name string, extra ...string) *agentProcess {
	t.Helper()
	args := append([]string{"run", "--database-url", url, "--name", name, "--heartbeat", "1s", "--progress-interval", "200ms",
		"--sim-ttft", "const:5ms", "--sim-itl", "const:2ms", "--sim-output-tokens", "const:10"}, extra...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), env...), "RUCKUS_AGENTD_MAIN=1")
	p := &agentProcess{cmd: cmd, done: make(chan struct{}), log: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		// The agent works under its own restricted role: anything it does
		// that PostgreSQL refuses is a missing grant, not a retry.
		if l := p.log.String(); !p.refusalsExpected && (strings.Contains(l, "permission denied") || strings.Contains(l, "row-level security")) {
			t.Errorf("agent %s was refused by PostgreSQL", name)
		}
		if t.Failed() {
			t.Logf("agent %s log:\n%s", name, p.log.String())
		}
	})
	return p
}

func eventKinds(t *testing.T, st *store.Store, runID int64) string {
	es, err := st.RunEvents(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	var k []string
	for _, e := range es {
		k = append(k, e.Kind)
	}
	return strings.Join(k, ",")
}

// kill -9 of the agent working a run, with a second agent running: the
// reaper reassigns the run and it completes with exactly N results.
func TestKilledAgentsRunIsReassignedAndCompletesExactlyOnce(t *testing.T) {
	t.Parallel()
	const n = 300
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), n)
	w.reap()
	a := startAgent(t, w.agentURL("node-a"), "node-a")
	testkit.WaitFor(t, "agent a online", func() bool { return w.online() == 1 })
	id := w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 2})
	testkit.WaitFor(t, "agent a to get through some items", func() bool { r := w.run(id); return r.State == "running" && r.Completed >= 40 })
	startAgent(t, w.agentURL("node-b"), "node-b")
	testkit.WaitFor(t, "agent b online", func() bool { return w.online() == 2 })
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.done
	testkit.WaitWithin(t, 60*time.Second, "the run to complete on agent b", func() bool { return w.run(id).State == "completed" })
	r := w.run(id)
	w.exactlyOnce(r.ID, n)
	if r.Completed != n || r.Resumed != 1 || r.AgentName != "node-b" {
		t.Fatalf("run %+v", r)
	}
	if k := eventKinds(t, w.st, r.ID); k != "started,reassigned,resumed,completed" {
		t.Fatalf("events %s", k)
	}
}

// SIGTERM: the agent stops sending, hands the run back, and another agent
// resumes it.
func TestSIGTERMHandsTheRunBack(t *testing.T) {
	t.Parallel()
	const n = 300
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), n)
	a := startAgent(t, w.agentURL("node-a"), "node-a")
	testkit.WaitFor(t, "agent a online", func() bool { return w.online() == 1 })
	id := w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 2})
	testkit.WaitFor(t, "agent a to get through some items", func() bool { return w.run(id).Completed >= 40 })
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.done:
		if a.err != nil {
			t.Fatalf("agent a exited with %v", a.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("agent a did not stop within 30 s of SIGTERM")
	}
	if r := w.run(id); r.State != "queued" || r.Completed >= n {
		t.Fatalf("after SIGTERM: %+v", r)
	}
	startAgent(t, w.agentURL("node-b"), "node-b")
	testkit.WaitWithin(t, 60*time.Second, "the run to complete on agent b", func() bool { return w.run(id).State == "completed" })
	r := w.run(id)
	w.exactlyOnce(r.ID, n)
	if k := eventKinds(t, w.st, r.ID); k != "started,handed_back,resumed,completed" {
		t.Fatalf("events %s", k)
	}
}

// The runtime failing: errors are recorded by class and the run completes;
// past max_errors it stops, failed, with the reason.
func TestRuntimeFaultsAreRecordedByClass(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 200)
	startAgent(t, w.agentURL("node-f"), "node-f", "--sim-fault-5xx", "0.1", "--sim-fault-429", "0.1", "--sim-fault-malformed", "0.05", "--sim-fault-disconnect", "0.05")
	testkit.WaitFor(t, "agent online", func() bool { return w.online() == 1 })
	id := w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 4})
	testkit.WaitWithin(t, 60*time.Second, "the run to finish", func() bool { s := w.run(id).State; return s == "completed" || s == "failed" })
	r := w.run(id)
	w.exactlyOnce(r.ID, 200)
	sum, err := summary.Run(context.Background(), w.st, r.ID, jobs.SLO{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != "completed" || r.Errors == 0 || r.Errors != sum.Errors {
		t.Fatalf("run %+v, summary %+v", r, sum)
	}
	// The sim waits a constant 2 ms between tokens, so the 9 gaps of each
	// successful request add up to at least 18 ms: the mean over every
	// token is at least 2 ms (single gaps may be shorter when two events
	// arrive in one read, the next one then longer).
	if sum.ITLTokens != 9*sum.OK || sum.ITL.Mean < 2 || sum.ITL.Max < 2 {
		t.Errorf("token ITL over %d tokens (want %d): %+v", sum.ITLTokens, 9*sum.OK, sum.ITL)
	}
	for _, class := range []string{jobs.ErrHTTP5xx, jobs.ErrHTTP429, jobs.ErrMalformed, jobs.ErrDisconnect} {
		if sum.ErrorsByClass[class] == 0 {
			t.Errorf("no %s errors recorded: %v", class, sum.ErrorsByClass)
		}
	}

	id = w.launch(jobs.LoadProfile{Profile: jobs.LoadSequential, MaxErrors: 3})
	testkit.WaitWithin(t, 60*time.Second, "the second run to finish", func() bool { s := w.run(id).State; return s == "completed" || s == "failed" })
	r = w.run(id)
	if r.State != "failed" || r.StoppedBy != "max_errors" || !strings.Contains(r.Error, "more than max_errors (3)") || r.Completed >= 200 {
		t.Fatalf("max errors: %+v", r)
	}
}

// A run none of whose requests succeeded measured nothing: it fails with
// the reason, not succeeded with empty figures.
func TestRunWithNoSuccessFails(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 20)
	startAgent(t, w.agentURL("node-r"), "node-r", "--sim-fault-429", "1")
	testkit.WaitFor(t, "agent online", func() bool { return w.online() == 1 })
	id := w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 4})
	testkit.WaitWithin(t, 60*time.Second, "the run to finish", func() bool { s := w.run(id).State; return s == "completed" || s == "failed" })
	r := w.run(id)
	if r.State != "failed" || r.Errors != 20 || r.Error != "no request succeeded (20 sent: 20 http_429): nothing was measured" {
		t.Fatalf("run %+v", r)
	}
}

// PostgreSQL restarted mid-run: the agent keeps its results, reconnects
// and completes the run.
func TestPostgresRestartMidRun(t *testing.T) {
	t.Parallel()
	c, pool, url := privateCluster(t)
	ctx := context.Background()
	const n = 300
	w := newWorld(t, pool, url, n)
	startAgent(t, w.agentURL("node-p"), "node-p")
	testkit.WaitFor(t, "agent online", func() bool { return w.online() == 1 })
	id := w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 2})
	testkit.WaitFor(t, "some items", func() bool { return w.run(id).Completed >= 40 })
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.WaitWithin(t, 90*time.Second, "the run to complete after the restart", func() bool { return w.run(id).State == "completed" })
	r := w.run(id)
	w.exactlyOnce(r.ID, n)
	if r.Completed != n || r.Resumed != 0 {
		t.Fatalf("run %+v", r)
	}
}

// privateCluster starts a PostgreSQL cluster of the test's own (one it
// may restart), migrated, and returns it with a pool and its URL.
func privateCluster(t *testing.T) (*devdb.Cluster, *pgxpool.Pool, string) {
	t.Helper()
	c, url := pgtest.Cluster(t)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	mig, err := migrations.New(pool)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mig.Up(ctx); err != nil {
		t.Fatal(err)
	}
	return c, pool, url
}

// An agent revoked mid-run (ruckus agent revoke: its role dropped, its key
// forgotten) can write nothing more; it sees so at its next heartbeat,
// says so and exits within 10 s instead of retrying its writes, and the
// reaper reassigns its run. Directly and through PgBouncer.
func TestRevokedAgentExits(t *testing.T) {
	bothWays(t, func(t *testing.T, pooled bool) {
		ctx := context.Background()
		pool := pgtest.NewDB(t)
		w := newWorld(t, pool, pgtest.URL(t, pool), 300)
		w.reap()
		url, key := pgtest.AgentLogin(t, pool, "node-r")
		var env, extra []string
		if pooled {
			url = via(t, url, startPgBouncer(t, w, 2))
			env, extra = []string{"RUCKUS_AGENT_KEY=" + key}, []string{"--pgbouncer"}
		}
		a := startAgentWithEnv(t, env, url, "node-r", extra...)
		a.refusalsExpected = true
		testkit.WaitFor(t, "agent online", func() bool { return w.online() == 1 })
		id := w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 2})
		testkit.WaitFor(t, "the agent to get through some items", func() bool { return w.run(id).Completed >= 20 })
		if _, err := w.st.RevokeAgentRole(ctx, "node-r"); err != nil {
			t.Fatal(err)
		}
		revokedAt := time.Now()
		select {
		case <-a.done:
			t.Logf("exited %v after the revocation", time.Since(revokedAt).Round(time.Millisecond))
		case <-time.After(10 * time.Second):
			t.Fatal("the revoked agent still runs 10 s after its revocation")
		}
		if a.err == nil || !strings.Contains(a.log.String(), "its database credentials were revoked or replaced") {
			t.Errorf("the revoked agent exited with %v, without saying it was revoked", a.err)
		}
		testkit.WaitFor(t, "the reaper to reassign the run", func() bool {
			return strings.Contains(eventKinds(t, w.st, w.run(id).ID), "reassigned")
		})
	})
}

// SIGTERM while the run's end cannot be recorded (every try refused): the
// agent tries for a few seconds more, says it gave up, and exits, rather
// than retrying for a minute until killed.
func TestSIGTERMIsObeyedWhileTheRunsEndIsRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 20)
	// The run's end is refused, whoever writes it.
	if _, err := pool.Exec(ctx, `ALTER TABLE runs ADD CONSTRAINT test_no_end CHECK (stopped_by = '') NOT VALID`); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, w.agentURL("node-t"), "node-t")
	testkit.WaitFor(t, "agent online", func() bool { return w.online() == 1 })
	w.launch(jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 2})
	testkit.WaitFor(t, "the agent to retry the run's end", func() bool {
		return strings.Count(a.log.String(), "recording the run's end") >= 2
	})
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent still runs 10 s after SIGTERM")
	}
	if !strings.Contains(a.log.String(), "gave up recording the run's end") {
		t.Error("the agent did not say it gave up recording the run's end")
	}
}
