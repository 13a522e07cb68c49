// Command soak is the agent soak (`make bench-soak`): on the cluster
// DATABASE_URL names (run it through `ruckus dev-db exec`) it starts the
// server, PgBouncer in transaction mode and --agents agentd processes that
// reach the database only through PgBouncer, each with its own role: sim
// agents standing in for three GPU profiles, and black-box agents serving
// "vllm" from `agentd sim` endpoints. It submits --runs small runs across
// those four queues at a steady pace, kills -9 a tenth of the agents
// half-way and starts as many replacements, cancels a few long probe runs,
// and waits for every run to end. Then it prints what an operator of many
// agents needs to know: runs completed, lost and duplicated results, wall time,
// peak PostgreSQL backends, lease latency (a run's job available → its
// first request sent), reassignment and cancel delays, and server and agent
// memory. Targets: 0 lost, 0 duplicated, ≤ 40 backends, p95 lease latency
// ≤ 2 s, reassignment within the stale period + 5 s, a cancel stops the agent
// within 1 s.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/pgbouncer"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/cmd/selfbench/internal/benchkit"
	"github.com/ruckus/ruckus/jobs"
)

type options struct {
	ruckus, agentd string
	agents, runs   int
	items          int
	killShare      float64
	pace           time.Duration // between one benchmark (one run per queue) and the next
	stale          time.Duration
	budget         int
	probes         int
	timeout        time.Duration
	logs           string
}

// group is a kind of agent: a hardware profile and the runtime it serves.
type group struct {
	name   string
	share  float64
	simGPU string // sim agents: the GPUs they present
	serves string // black-box agents: the runtime name they serve
	queue  string // filled once an agent of the group is online
}

var groups = []*group{
	{name: "a100", share: 0.3, simGPU: "NVIDIA A100-SXM4-80GB:80:1"},
	{name: "h100x2", share: 0.3, simGPU: "NVIDIA H100 80GB HBM3:80:2"},
	{name: "l4", share: 0.2, simGPU: "NVIDIA L4:24:1"},
	{name: "vllm", share: 0.2, serves: "vllm"},
}

func main() {
	var o options
	flag.StringVar(&o.ruckus, "ruckus", "bin/ruckus", "the ruckus binary (make build)")
	flag.StringVar(&o.agentd, "agentd", "bin/agentd", "the agentd binary (make build)")
	flag.IntVar(&o.agents, "agents", 100, "agentd processes")
	flag.IntVar(&o.runs, "runs", 1000, "small runs to complete")
	flag.IntVar(&o.items, "items", 20, "items per run")
	flag.Float64Var(&o.killShare, "kill", 0.1, "share of the agents killed with SIGKILL half-way")
	flag.DurationVar(&o.pace, "pace", 150*time.Millisecond, "time between benchmarks (each one run per queue)")
	flag.DurationVar(&o.stale, "stale", 15*time.Second, "the server's agent stale period")
	flag.IntVar(&o.budget, "budget", soakBudget, "PgBouncer's PostgreSQL connections for all agents together")
	flag.IntVar(&o.probes, "probes", 8, "long runs cancelled mid-way to time the cancel")
	flag.DurationVar(&o.timeout, "timeout", 15*time.Minute, "give up after")
	flag.StringVar(&o.logs, "logs", "", "also write each agent's log to DIR/NAME.log")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-soak:", err)
		os.Exit(1)
	}
}

// The soak's PostgreSQL connections: the target is 40 backends in all, and
// PgBouncer's budget is what the server's pool, the soak's own pool and
// PgBouncer's auth lookup leave of them (30 + 5 + 4 + 1). On this one
// machine the agents share the CPU with PostgreSQL, which gets its share
// through its busy backends: with a budget of 20 it got too little of it
// for the lease latency target (docs/self-benchmarks.md#bench-soak-the-agent-soak).
const (
	soakBudget     = 30
	soakServerPool = 5
	soakOwnPool    = 4
)

// soak is the state of one soak.
type soak struct {
	o       options
	dbURL   string
	pool    *pgxpool.Pool
	st      *store.Store
	svc     *bench.Service
	viewer  store.Viewer
	dataset int64
	long    int64 // the probes' dataset
	bouncer string
	sims    []string // black-box endpoints
	out     io.Writer

	mu     sync.Mutex
	agents []*proc // every agentd started
	server *proc
	others []*proc
}

func run(ctx context.Context, o options, out io.Writer) error {
	dbURL, err := benchkit.DatabaseURL()
	if err != nil {
		return err
	}
	for _, b := range []string{o.ruckus, o.agentd} {
		if _, err := os.Stat(b); err != nil {
			return fmt.Errorf("%w (make build makes it)", err)
		}
	}
	if o.agents < len(groups) || o.runs < len(groups) || o.items < 1 {
		return fmt.Errorf("want at least %d agents and runs, and 1 item", len(groups))
	}
	pool, err := benchkit.OpenMigrated(ctx, dbURL, soakOwnPool)
	if err != nil {
		return err
	}
	defer pool.Close()
	s := &soak{o: o, dbURL: dbURL, pool: pool, st: store.New(pool), out: out}
	defer s.stopAll()
	if err := s.fixtures(ctx); err != nil {
		return err
	}
	if err := s.startServices(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "starting %d agents through PgBouncer (budget %d PostgreSQL connections) ...\n", o.agents, o.budget)
	started := time.Now()
	for i := range o.agents {
		if _, err := s.startAgent(ctx, groupOf(i, o.agents), fmt.Sprintf("soak-%03d", i)); err != nil {
			return err
		}
	}
	if err := s.waitOnline(ctx, o.agents, 3*time.Minute); err != nil {
		return err
	}
	fmt.Fprintf(out, "%d agents online in %.1f s\n", o.agents, time.Since(started).Seconds())

	watch := s.watch(ctx)
	t0 := time.Now()
	kill := s.submit(ctx)
	if kill.err != nil {
		return kill.err
	}
	if err := s.waitDone(ctx, t0.Add(o.timeout)); err != nil {
		fmt.Fprintln(out, "warning:", err)
	}
	wall := time.Since(t0)
	peaks := watch()
	return s.report(ctx, wall, peaks, kill)
}

// groupOf spreads agents over the groups by their shares.
func groupOf(i, n int) *group {
	acc := 0.0
	for _, g := range groups {
		acc += g.share
		if float64(i) < acc*float64(n) {
			return g
		}
	}
	return groups[len(groups)-1]
}

func (s *soak) fixtures(ctx context.Context) error {
	stamp := benchkit.RandomHex(4)
	u, err := s.st.CreateUser(ctx, store.NewUser{Email: "soak-" + stamp + "@example.com", PasswordHash: "x", Role: store.RoleUser})
	if err != nil {
		return err
	}
	s.viewer = store.Viewer{UserID: u.ID}
	up := &ingest.Uploader{Store: s.st, Limits: dataset.DefaultLimits()}
	for _, d := range []struct {
		n  int
		id *int64
	}{{s.o.items, &s.dataset}, {2000, &s.long}} {
		var b strings.Builder
		for i := range d.n {
			fmt.Fprintf(&b, "{\"custom_id\":\"q%05d\",\"prompt\":\"Question %d: what is %d plus %d?\"}\n", i, i, i, i)
		}
		res, err := up.Upload(ctx, ingest.Source{File: strings.NewReader(b.String())}, ingest.Request{Viewer: s.viewer, FileName: fmt.Sprintf("soak-%d.jsonl", d.n)})
		if err != nil {
			return err
		}
		*d.id = res.Dataset.ID
	}
	if _, err := s.st.CreateModel(ctx, store.ModelFields{Name: "soak/small", ParamsB: 0.5, Quantization: "bf16", ContextLength: 4096}); err != nil {
		return err
	}
	s.svc, err = benchkit.NewService(s.pool, s.st, s.o.stale)
	return err
}

// startServices starts the server (for the reaper and the score jobs),
// PgBouncer and the black-box endpoints.
func (s *soak) startServices(ctx context.Context) error {
	addr, err := benchkit.FreeAddr()
	if err != nil {
		return err
	}
	s.server, err = s.start(ctx, "server", []string{"DATABASE_URL=" + s.dbURL, "RUCKUS_ADDR=" + addr,
		"RUCKUS_AGENT_STALE_AFTER=" + s.o.stale.String(), "RUCKUS_DB_POOL_SIZE=" + strconv.Itoa(soakServerPool), "RUCKUS_EXPORTS_TOTAL=4",
		"RUCKUS_ADMIN_EMAIL=admin@soak.local", "RUCKUS_ADMIN_PASSWORD=soak-admin"}, s.o.ruckus, "serve")
	if err != nil {
		return err
	}
	if s.bouncer, err = benchkit.FreeAddr(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "ruckus-soak-pgbouncer-")
	if err != nil {
		return err
	}
	bp, err := s.start(ctx, "pgbouncer", []string{"DATABASE_URL=" + s.dbURL, "RUCKUS_PGBOUNCER_AUTH_PASSWORD=" + benchkit.RandomHex(16)},
		s.o.ruckus, "pgbouncer", "--listen", s.bouncer, "--dir", dir, "--setup-auth", "--max-db-connections", strconv.Itoa(s.o.budget))
	if err != nil {
		return err
	}
	if err := dialWithin(s.bouncer, 15*time.Second, bp); err != nil {
		return err
	}
	for range 2 {
		addr, err := benchkit.FreeAddr()
		if err != nil {
			return err
		}
		p, err := s.start(ctx, "sim-endpoint", nil, s.o.agentd, "sim", "--listen", addr, "--sim-ttft", "const:20ms", "--sim-itl", "const:4ms",
			"--sim-output-tokens", "const:16", "--sim-batch", "256")
		if err != nil {
			return err
		}
		if err := dialWithin(addr, 15*time.Second, p); err != nil {
			return err
		}
		s.sims = append(s.sims, "http://"+addr)
	}
	return nil
}

// proc is a child process, with its output kept.
type proc struct {
	*benchkit.Proc
	// killed is set when the soak killed it.
	killed time.Time
}

// start starts a child in a process group of its own: the soak stops its
// children itself, in order.
func (s *soak) start(_ context.Context, name string, env []string, bin string, args ...string) (*proc, error) {
	return s.startLogged(name, env, nil, bin, args...)
}

// startLogged is start with the process's stderr also written to w.
func (s *soak) startLogged(name string, env []string, w io.Writer, bin string, args ...string) (*proc, error) {
	bp, err := benchkit.Start(benchkit.Spec{Name: name, Argv: append([]string{bin}, args...), Env: env, OwnGroup: true, Stderr: w})
	if err != nil {
		return nil, err
	}
	p := &proc{Proc: bp}
	if name != "agent" {
		s.mu.Lock()
		if name != "server" {
			s.others = append(s.others, p)
		}
		s.mu.Unlock()
	}
	return p, nil
}

func (s *soak) startAgent(ctx context.Context, g *group, name string) (*proc, error) {
	password := benchkit.RandomHex(16)
	role, err := s.st.CreateAgentRole(ctx, name, password, store.AgentGrant{OnFirstRegistration: true})
	if err != nil {
		return nil, err
	}
	direct, err := store.AgentDatabaseURL(s.dbURL, role, password)
	if err != nil {
		return nil, err
	}
	viaBouncer, err := pgbouncer.AgentURL(direct, s.bouncer)
	if err != nil {
		return nil, err
	}
	args := []string{"run", "--name", name, "--pgbouncer", "--heartbeat", "3s", "--no-gpu"}
	if g.simGPU != "" {
		args = append(args, "--runtime", "sim", "--sim-gpu", g.simGPU, "--sim-ttft", "const:20ms", "--sim-itl", "const:4ms",
			"--sim-output-tokens", "const:16", "--sim-batch", "64")
	} else {
		args = append(args, "--runtime", "openai", "--serves", g.serves, "--endpoint", s.sims[len(s.agents)%len(s.sims)])
	}
	var logFile io.Writer
	if s.o.logs != "" {
		f, err := os.OpenFile(filepath.Join(s.o.logs, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return nil, err
		}
		logFile = f // open until the soak ends
	}
	p, err := s.startLogged("agent", []string{"DATABASE_URL=" + viaBouncer, "RUCKUS_AGENT_KEY=" + role.Key}, logFile, s.o.agentd, args...)
	if err != nil {
		return nil, err
	}
	p.Name = name
	s.mu.Lock()
	s.agents = append(s.agents, p)
	s.mu.Unlock()
	return p, nil
}

// waitOnline waits for n agents online, and learns each group's queue.
func (s *soak) waitOnline(ctx context.Context, n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		as, err := s.st.ListAgents(ctx)
		if err != nil {
			return err
		}
		online := 0
		for _, a := range as {
			if a.State == store.AgentOnline && a.Profile != "" {
				online++
				idx, _ := strconv.Atoi(strings.TrimPrefix(a.Name, "soak-"))
				if g := groupOf(idx, s.o.agents); g.queue == "" && strings.HasPrefix(a.Name, "soak-") {
					g.queue = a.Profile + "|" + a.Runtimes[0]
				}
			}
		}
		if online >= n {
			return nil
		}
		if err := s.agentDied(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d agents online after %v", online, n, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (g *group) target() bench.Target {
	profile, runtime, _ := strings.Cut(g.queue, "|")
	return bench.Target{Model: "soak/small", Runtime: runtime, Hardware: profile}
}

// killed is what the kill half-way did.
type killed struct {
	err     error
	at      time.Time
	victims []string
	// runs the victims held when killed.
	runs []int64
	// probes: the cancelled runs and when each was cancelled.
	probes map[int64]time.Time
}

// submit queues the runs at a steady pace: a benchmark with one run per
// queue every pace. Half-way it kills -9 a share of the agents (those
// holding runs first), starts as many replacements, and launches and
// cancels the probe runs.
func (s *soak) submit(ctx context.Context) killed {
	var k killed
	targets := make([]bench.Target, len(groups))
	for i, g := range groups {
		targets[i] = g.target()
	}
	load := jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 2}
	benchmarks := (s.o.runs + len(groups) - 1) / len(groups)
	tick := time.NewTicker(s.o.pace)
	defer tick.Stop()
	for i := range benchmarks {
		ts := targets
		if left := s.o.runs - i*len(groups); left < len(ts) {
			ts = ts[:left]
		}
		_, err := s.svc.Create(ctx, s.viewer, bench.Manifest{Name: fmt.Sprintf("soak %d", i), Dataset: bench.DatasetRef{ID: s.dataset},
			Targets: ts, Load: load, Sampling: jobs.Sampling{MaxTokens: 16}})
		if err != nil {
			k.err = err
			return k
		}
		if i == benchmarks/2 {
			if err := s.killHalfway(ctx, &k); err != nil {
				k.err = err
				return k
			}
		}
		select {
		case <-ctx.Done():
			k.err = ctx.Err()
			return k
		case <-tick.C:
		}
	}
	return k
}

func (s *soak) killHalfway(ctx context.Context, k *killed) error {
	// Probes: long runs on the sim queues, cancelled once going.
	k.probes = map[int64]time.Time{}
	var probeRuns []int64
	for i := range s.o.probes {
		g := groups[i%3]
		c, err := s.svc.Create(ctx, s.viewer, bench.Manifest{Name: fmt.Sprintf("probe %d", i), Dataset: bench.DatasetRef{ID: s.long},
			Targets: []bench.Target{g.target()}, Load: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 1}, Sampling: jobs.Sampling{MaxTokens: 16}})
		if err != nil {
			return err
		}
		probeRuns = append(probeRuns, c.Runs[0].RunID)
	}
	// The victims: agents holding a run first (read again for a few
	// seconds until there are enough of them), then any.
	n := int(math.Round(s.o.killShare * float64(s.o.agents)))
	holding := map[string]int64{}
	for deadline := time.Now().Add(5 * time.Second); len(holding) < n && time.Now().Before(deadline); {
		rows, err := s.pool.Query(ctx, `SELECT a.name, r.id FROM runs r JOIN agents a ON a.id = r.agent_id
			WHERE r.state = 'running' AND a.name LIKE 'soak-%' AND r.id <> ALL($1)`, probeRuns)
		if err != nil {
			return err
		}
		for rows.Next() {
			var name string
			var id int64
			if err := rows.Scan(&name, &id); err != nil {
				return err
			}
			if len(holding) < n {
				holding[name] = id
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	var victims []*proc
	s.mu.Lock()
	for _, p := range s.agents {
		if _, ok := holding[p.Name]; ok && len(victims) < n {
			victims = append(victims, p)
		}
	}
	for _, p := range s.agents {
		if _, ok := holding[p.Name]; !ok && len(victims) < n {
			victims = append(victims, p)
		}
	}
	s.mu.Unlock()
	k.at = time.Now()
	for _, p := range victims {
		p.killed = time.Now()
		p.Signal(syscall.SIGKILL)
		k.victims = append(k.victims, p.Name)
		if id, ok := holding[p.Name]; ok {
			k.runs = append(k.runs, id)
		}
	}
	for i, name := range k.victims {
		idx, _ := strconv.Atoi(strings.TrimPrefix(name, "soak-"))
		if _, err := s.startAgent(ctx, groupOf(idx, s.o.agents), fmt.Sprintf("soak-r%02d", i)); err != nil {
			return err
		}
	}
	fmt.Fprintf(s.out, "half-way: killed %d agents with SIGKILL (%d holding a run), started %d replacements\n", len(k.victims), len(k.runs), len(k.victims))
	// Cancel each probe once it has sent a few requests.
	deadline := time.Now().Add(time.Minute)
	for len(k.probes) < len(probeRuns) && time.Now().Before(deadline) {
		for _, id := range probeRuns {
			if _, done := k.probes[id]; done {
				continue
			}
			var completed int
			var bid int64
			if err := s.pool.QueryRow(ctx, `SELECT completed, benchmark_id FROM runs WHERE id = $1`, id).Scan(&completed, &bid); err != nil {
				return err
			}
			if completed >= 5 {
				k.probes[id] = time.Now()
				if err := s.svc.CancelRun(ctx, store.Viewer{Admin: true}, bid, id); err != nil {
					return err
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// agentDied is the exit of an agent the soak did not kill: an agent
// must not stop on its own.
func (s *soak) agentDied() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.agents {
		if p.Exited() && p.killed.IsZero() {
			return p.ExitError()
		}
	}
	return nil
}

// waitDone waits until every run has ended.
func (s *soak) waitDone(ctx context.Context, deadline time.Time) error {
	for {
		var open, total int
		if err := s.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state IN ('queued', 'running')), count(*) FROM runs`).Scan(&open, &total); err != nil {
			return err
		}
		if open == 0 {
			return nil
		}
		if err := s.agentDied(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d runs still open at the deadline", open, total)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// peaks are the watch's highest readings.
type peaks struct {
	backends, agentBackends int
	serverRSS               int64
	agentRSS                []int64 // each agent's highest
}

// watch samples PostgreSQL's backends and the processes' memory until the
// function it returns is called.
func (s *soak) watch(ctx context.Context) func() peaks {
	ctx, cancel := context.WithCancel(ctx)
	var p peaks
	rss := map[*proc]int64{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			var all, agents int
			err := s.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE usesysid IN
				(SELECT member FROM pg_auth_members WHERE roleid = 'ruckus_agent'::regrole))
				FROM pg_stat_activity WHERE backend_type = 'client backend'`).Scan(&all, &agents)
			if err == nil {
				p.backends, p.agentBackends = max(p.backends, all), max(p.agentBackends, agents)
			}
			p.serverRSS = max(p.serverRSS, rssOf(s.server))
			s.mu.Lock()
			for _, a := range s.agents {
				rss[a] = max(rss[a], rssOf(a))
			}
			s.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() peaks {
		cancel()
		<-done
		for _, v := range rss {
			if v > 0 {
				p.agentRSS = append(p.agentRSS, v)
			}
		}
		slices.Sort(p.agentRSS)
		return p
	}
}

// rssOf reads a live process's resident memory in bytes (0 once it ended).
func rssOf(p *proc) int64 {
	if p == nil || p.Exited() {
		return 0
	}
	n, _ := benchkit.StatusBytes(p.Pid(), "VmRSS")
	return n
}

func (s *soak) report(ctx context.Context, wall time.Duration, pk peaks, k killed) error {
	probeIDs := make([]int64, 0, len(k.probes))
	for id := range k.probes {
		probeIDs = append(probeIDs, id)
	}
	var c struct{ succeeded, failed, cancelled, open, rows, want, missing, badCounters, twiceFinished int }
	err := s.pool.QueryRow(ctx, `WITH r AS (
			SELECT ru.id, ru.state, ru.total, ru.completed,
				(SELECT count(*) FROM results x WHERE x.run_id = ru.id) AS rows,
				(SELECT count(*) FROM run_events e WHERE e.run_id = ru.id AND e.kind IN ('completed', 'failed')) AS finishes
			FROM runs ru WHERE ru.id <> ALL($1))
		SELECT count(*) FILTER (WHERE state = 'completed'), count(*) FILTER (WHERE state = 'failed'),
			count(*) FILTER (WHERE state = 'cancelled'), count(*) FILTER (WHERE state IN ('queued', 'running')),
			coalesce(sum(rows), 0), coalesce(sum(total), 0), coalesce(sum(greatest(total - rows, 0)), 0),
			count(*) FILTER (WHERE completed <> rows), count(*) FILTER (WHERE finishes > 1)
		FROM r`, probeIDs).Scan(&c.succeeded, &c.failed, &c.cancelled, &c.open, &c.rows, &c.want, &c.missing, &c.badCounters, &c.twiceFinished)
	if err != nil {
		return fmt.Errorf("tally: %w", err)
	}
	// Lease latency: a run's job available (the run and its job are made
	// in one transaction) → its first request sent.
	var lease []float64
	rows, err := s.pool.Query(ctx, `SELECT extract(epoch FROM min(x.sent_at) - ru.created_at) FROM runs ru JOIN results x ON x.run_id = ru.id
		WHERE ru.id <> ALL($1) GROUP BY ru.id`, probeIDs)
	if err != nil {
		return err
	}
	lease, err = pgx.CollectRows(rows, pgx.RowTo[float64])
	if err != nil {
		return err
	}
	slices.Sort(lease)
	// Reassignment: from the kill to another agent taking up each run a victim
	// held.
	var reassigned []float64
	interrupted := 0
	for _, id := range k.runs {
		// A run its agent finished before the kill landed was not reassigned.
		var handed bool
		if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM run_events WHERE run_id = $1 AND kind = 'reassigned')`, id).Scan(&handed); err != nil {
			return err
		}
		if !handed {
			continue
		}
		interrupted++
		// Taken up again by another agent: its "resumed" event (a run
		// whose victim had sent every request has no later result).
		var first *time.Time
		if err := s.pool.QueryRow(ctx, `SELECT min(at) FROM run_events WHERE run_id = $1 AND kind = 'resumed' AND at > $2`, id, k.at).Scan(&first); err != nil {
			return err
		}
		if first != nil {
			reassigned = append(reassigned, first.Sub(k.at).Seconds())
		}
	}
	slices.Sort(reassigned)
	// Cancel: from the cancel to the last request the agent sent.
	var cancelDelay []float64
	for id, at := range k.probes {
		var last time.Time
		if err := s.pool.QueryRow(ctx, `SELECT max(sent_at) FROM results WHERE run_id = $1`, id).Scan(&last); err != nil {
			return err
		}
		cancelDelay = append(cancelDelay, math.Max(0, last.Sub(at).Seconds()))
	}
	slices.Sort(cancelDelay)

	out := s.out
	fmt.Fprintf(out, "\nagent soak: %d agents through PgBouncer (transaction mode, %d PostgreSQL connections for all agents), %d runs × %d items on %d queues\n",
		s.o.agents, s.o.budget, s.o.runs, s.o.items, len(groups))
	fmt.Fprintf(out, "  queues: ")
	for i, g := range groups {
		if i > 0 {
			fmt.Fprint(out, ", ")
		}
		fmt.Fprintf(out, "%s", strings.Replace(g.queue, "|", "_", 1))
	}
	fmt.Fprintln(out)
	row := func(name, value, target string) { fmt.Fprintf(out, "  %-34s %-26s %s\n", name, value, target) }
	row("runs completed", fmt.Sprintf("%d / %d (%d failed, %d open)", c.succeeded, s.o.runs, c.failed, c.open), "")
	row("result rows / items", fmt.Sprintf("%d / %d", c.rows, c.want), "")
	lost := c.missing
	row("lost (items without a result)", strconv.Itoa(lost), verdict(lost == 0, "target 0"))
	dup := c.badCounters + c.twiceFinished
	row("duplicated", fmt.Sprintf("%d (counter ≠ rows: %d, finished twice: %d)", dup, c.badCounters, c.twiceFinished), verdict(dup == 0, "target 0"))
	row("wall time", fmt.Sprintf("%.1f s (%.1f runs/s)", wall.Seconds(), float64(c.succeeded)/wall.Seconds()), "")
	row("peak PostgreSQL backends", fmt.Sprintf("%d (agents' roles: %d)", pk.backends, pk.agentBackends), verdict(pk.backends <= 40, "target ≤ 40"))
	row("lease latency p50 / p95 / max", fmt.Sprintf("%.2f / %.2f / %.2f s", pct(lease, 50), pct(lease, 95), pct(lease, 100)), verdict(pct(lease, 95) <= 2, "target p95 ≤ 2 s"))
	row("killed agents", fmt.Sprintf("%d (holding %d runs, %d reassigned)", len(k.victims), len(k.runs), interrupted), "")
	limit := (s.o.stale + 5*time.Second).Seconds()
	row("reassigned after kill, max", fmt.Sprintf("%.1f s over %d runs", pct(reassigned, 100), len(reassigned)), verdict(interrupted > 0 && len(reassigned) == interrupted && pct(reassigned, 100) <= limit, fmt.Sprintf("target ≤ stale %v + 5 s", s.o.stale)))
	row("cancel → last request, max", fmt.Sprintf("%.3f s over %d runs", pct(cancelDelay, 100), len(cancelDelay)), verdict(len(cancelDelay) > 0 && pct(cancelDelay, 100) <= 1, "target ≤ 1 s"))
	row("server RSS, peak", mib(pk.serverRSS), "")
	if len(pk.agentRSS) > 0 {
		var sum int64
		for _, v := range pk.agentRSS {
			sum += v
		}
		row("agent RSS, median / max / all", fmt.Sprintf("%s / %s / %s", mib(pk.agentRSS[len(pk.agentRSS)/2]), mib(pk.agentRSS[len(pk.agentRSS)-1]), mib(sum)), "")
	}
	return nil
}

func verdict(ok bool, target string) string {
	if ok {
		return target + ": met"
	}
	return target + ": MISSED"
}

// pct is the p-th percentile (nearest rank) of sorted xs; NaN when empty.
func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(p/100*float64(len(xs)))) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func (s *soak) stopAll() {
	s.mu.Lock()
	ps := append(append([]*proc{}, s.agents...), s.server)
	// Sessions opened, for the record: PgBouncer's shared pool should open
	// about its budget, plus the agents' lookups and the server's pool.
	var sessions int64
	if err := s.pool.QueryRow(context.Background(), `SELECT sessions FROM pg_stat_database WHERE datname = current_database()`).Scan(&sessions); err == nil {
		fmt.Fprintf(s.out, "  PostgreSQL sessions opened in all: %d\n", sessions)
	}
	ps = append(ps, s.others...)
	s.mu.Unlock()
	var bps []*benchkit.Proc
	for _, p := range ps {
		if p != nil {
			bps = append(bps, p.Proc)
		}
	}
	benchkit.StopAll(bps, 10*time.Second)
}

// dialWithin waits up to limit for p to listen on addr.
func dialWithin(addr string, limit time.Duration, p *proc) error {
	return benchkit.WaitFor(context.Background(), p.Proc, limit, 50*time.Millisecond, fmt.Sprintf("%s to listen on %s", p.Name, addr), func() (bool, error) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil, nil
	})
}
