package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/app/devdb"
	"github.com/ruckus/ruckus/app/pgbouncer"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/cmd/selfbench/internal/benchkit"
	"github.com/ruckus/ruckus/migrations"
)

// day is the state of one day: the cluster, the processes and what the
// watchers recorded.
type day struct {
	o   options
	out io.Writer
	dir string // the cluster, the logs, the backup

	cluster *devdb.Cluster
	dbURL   string
	pool    *pgxpool.Pool // the day's own reads, as the database's owner
	st      *store.Store

	addr, metricsAddr string // the server's, kept across restarts
	bouncer           string
	agentMetrics      string // one pooled agent's /metrics

	mu      sync.Mutex
	server  *benchkit.Proc
	agents  []*agent
	others  []*benchkit.Proc
	serving bool // false while the server is being restarted
	pgDown  bool // true while PostgreSQL is being restarted
	events  []string
	// problems are the day's own steps that failed (a fault, the drain).
	problems []string

	rec   *recorder
	hooks *receiver
	scr   *scraper
	att   *attacker
	fx    fixtures
}

// agent is one honest agentd.
type agent struct {
	*benchkit.Proc
	name   string
	pooled bool
	gpu    bool
	log    string // its log file
	killed bool
}

func newDay(ctx context.Context, o options, out io.Writer) (*day, error) {
	bin, err := devdb.FindBinaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ruckus-day-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := devdb.FreePort()
	if err != nil {
		return nil, err
	}
	d := &day{o: o, out: out, dir: dir, serving: true, rec: newRecorder()}
	d.cluster = &devdb.Cluster{Dir: filepath.Join(dir, "data"), Port: port, BinDir: bin, Throwaway: true, Log: io.Discard}
	if err := d.cluster.Ensure(ctx); err != nil {
		return nil, err
	}
	if err := d.cluster.Start(ctx); err != nil {
		return nil, err
	}
	if d.dbURL, err = d.cluster.CreateDatabase(ctx, "ruckus_day"); err != nil {
		return d, err
	}
	pc, err := pgxpool.ParseConfig(d.dbURL)
	if err != nil {
		return d, err
	}
	pc.MaxConns = 4
	if d.pool, err = pgxpool.NewWithConfig(ctx, pc); err != nil {
		return d, err
	}
	m, err := migrations.New(d.pool)
	if err == nil {
		_, err = m.Up(ctx)
	}
	if err != nil {
		return d, fmt.Errorf("migrate: %w", err)
	}
	d.st = store.New(d.pool)
	return d, nil
}

// note records what happened when, for the table's fault list.
func (d *day) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	d.mu.Lock()
	d.events = append(d.events, msg)
	d.mu.Unlock()
	fmt.Fprintf(d.out, "  %s %s\n", time.Now().Format("15:04:05"), msg)
}

func (d *day) serverEnv() []string {
	return []string{"DATABASE_URL=" + d.dbURL, "RUCKUS_ADDR=" + d.addr, "RUCKUS_METRICS_ADDR=" + d.metricsAddr,
		"RUCKUS_LOG_LEVEL=warn", "RUCKUS_AGENT_STALE_AFTER=10s", "RUCKUS_ADMIN_EMAIL=admin@day.local", "RUCKUS_ADMIN_PASSWORD=day-admin-password",
		"RUCKUS_WEBHOOK_ALLOWED_NETWORKS=127.0.0.1/32", "RUCKUS_TRUSTED_PROXIES=127.0.0.1", "RUCKUS_API_RATE_PER_TOKEN=0", "RUCKUS_API_RATE_PER_USER=0"}
}

// startServer starts `ruckus serve` on the day's address and waits for
// /readyz.
func (d *day) startServer(ctx context.Context) error {
	f, err := os.OpenFile(filepath.Join(d.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	p, err := benchkit.Start(benchkit.Spec{Name: "ruckus serve", Argv: []string{d.o.ruckus, "serve"}, Env: d.serverEnv(), OwnGroup: true, Stderr: f})
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.server = p
	d.mu.Unlock()
	return benchkit.WaitHTTP(ctx, p, "http://"+d.addr+"/readyz", time.Minute)
}

// restartServer stops the server (SIGTERM, as an upgrade does) and starts
// it again on the same addresses.
func (d *day) restartServer(ctx context.Context) error {
	d.mu.Lock()
	d.serving = false
	p := d.server
	d.mu.Unlock()
	t0 := time.Now()
	if err := p.Stop(30 * time.Second); err != nil {
		d.note("server: %v", err)
	}
	err := d.startServer(ctx)
	d.mu.Lock()
	d.serving = true
	d.mu.Unlock()
	d.note("server restarted (SIGTERM, start) in %.1f s", time.Since(t0).Seconds())
	return err
}

// restartPostgres stops the cluster (fast: sessions ended) and starts it.
func (d *day) restartPostgres(ctx context.Context) error {
	d.mu.Lock()
	d.pgDown = true
	d.mu.Unlock()
	t0 := time.Now()
	err := errors.Join(d.cluster.Stop(ctx), d.cluster.Start(ctx))
	d.pool.Reset()
	// The outage lasts until the server reports ready again.
	if err == nil {
		err = benchkit.WaitHTTP(ctx, nil, "http://"+d.addr+"/readyz", time.Minute)
	}
	d.mu.Lock()
	d.pgDown = false
	d.mu.Unlock()
	d.note("PostgreSQL restarted (fast stop, start; server ready again) in %.1f s", time.Since(t0).Seconds())
	return err
}

// startBouncer starts PgBouncer in transaction mode for the pooled agents.
func (d *day) startBouncer(ctx context.Context) error {
	var err error
	if d.bouncer, err = benchkit.FreeAddr(); err != nil {
		return err
	}
	dir := filepath.Join(d.dir, "pgbouncer")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	p, err := benchkit.Start(benchkit.Spec{Name: "pgbouncer", Argv: []string{d.o.ruckus, "pgbouncer", "--listen", d.bouncer, "--dir", dir,
		"--setup-auth", "--max-db-connections", "12"}, Env: []string{"DATABASE_URL=" + d.dbURL, "RUCKUS_PGBOUNCER_AUTH_PASSWORD=" + benchkit.RandomHex(16)}, OwnGroup: true})
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.others = append(d.others, p)
	d.mu.Unlock()
	return benchkit.WaitFor(ctx, p, 20*time.Second, 50*time.Millisecond, "PgBouncer to listen", func() (bool, error) {
		c, err := net.DialTimeout("tcp", d.bouncer, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil, nil
	})
}

// agentURL makes a role for an agent and returns the URL it connects with
// (through PgBouncer when pooled) and its key.
func (d *day) agentURL(ctx context.Context, name string, pooled bool) (string, string, error) {
	password := benchkit.RandomHex(16)
	role, err := d.st.CreateAgentRole(ctx, name, password, store.AgentGrant{OnFirstRegistration: true})
	if err != nil {
		return "", "", err
	}
	url, err := store.AgentDatabaseURL(d.dbURL, role, password)
	if err != nil || !pooled {
		return url, role.Key, err
	}
	url, err = pgbouncer.AgentURL(url, d.bouncer)
	return url, role.Key, err
}

// startAgent starts honest agent number i: every third pooled, every
// fourth presenting a GPU.
func (d *day) startAgent(ctx context.Context, name string, i int) (*agent, error) {
	a := &agent{name: name, pooled: i%3 != 0, gpu: i%4 == 3, log: filepath.Join(d.dir, name+".log")}
	url, key, err := d.agentURL(ctx, name, a.pooled)
	if err != nil {
		return nil, err
	}
	args := []string{"run", "--name", name, "--heartbeat", "2s", "--no-gpu", "--runtime", "sim",
		"--sim-ttft", "const:15ms", "--sim-itl", "const:3ms", "--sim-output-tokens", "const:12", "--sim-batch", "64"}
	if a.pooled {
		args = append(args, "--pgbouncer")
	}
	if a.gpu {
		args = append(args, "--sim-gpu", "NVIDIA L4:24:1")
	}
	if i == 1 && d.agentMetrics == "" {
		if d.agentMetrics, err = benchkit.FreeAddr(); err != nil {
			return nil, err
		}
		args = append(args, "--metrics-addr", d.agentMetrics)
	}
	f, err := os.OpenFile(a.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	a.Proc, err = benchkit.Start(benchkit.Spec{Name: name, Argv: append([]string{d.o.agentd}, args...),
		Env: []string{"DATABASE_URL=" + url, "RUCKUS_AGENT_KEY=" + key}, OwnGroup: true, Stderr: f})
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.agents = append(d.agents, a)
	d.mu.Unlock()
	return a, nil
}

// killAgents kills n live agents with SIGKILL and starts as many new ones.
func (d *day) killAgents(ctx context.Context, n int) error {
	var victims []*agent
	d.mu.Lock()
	for _, a := range d.agents {
		// The agent serving /metrics stays, for the scraper.
		if !a.killed && !a.Exited() && len(victims) < n && a.name != "day-agent-01" {
			victims = append(victims, a)
		}
	}
	total := len(d.agents)
	d.mu.Unlock()
	for _, a := range victims {
		a.killed = true
		a.Signal(syscall.SIGKILL)
	}
	for i, a := range victims {
		idx, _ := strconv.Atoi(a.name[len(a.name)-2:])
		if _, err := d.startAgent(ctx, fmt.Sprintf("day-agent-r%02d", total+i), idx); err != nil {
			return err
		}
	}
	d.note("killed %d agents with SIGKILL, started %d", len(victims), len(victims))
	return nil
}

// waitOnline waits until n agents are online.
func (d *day) waitOnline(ctx context.Context, n int) error {
	return benchkit.WaitFor(ctx, nil, 2*time.Minute, 250*time.Millisecond, fmt.Sprintf("%d agents online", n), func() (bool, error) {
		as, err := d.st.ListAgents(ctx)
		if err != nil {
			return false, err
		}
		online := 0
		for _, a := range as {
			if a.State == store.AgentOnline && a.Profile != "" {
				online++
			}
		}
		return online >= n, nil
	})
}

// close stops every process and the cluster, and removes the directory
// unless --keep.
func (d *day) close() {
	d.mu.Lock()
	ps := []*benchkit.Proc{d.server}
	for _, a := range d.agents {
		ps = append(ps, a.Proc)
	}
	ps = append(ps, d.others...)
	d.mu.Unlock()
	benchkit.StopAll(ps, 15*time.Second)
	if d.att != nil {
		d.att.close()
	}
	if d.hooks != nil {
		d.hooks.close()
	}
	if d.pool != nil {
		d.pool.Close()
	}
	if d.cluster != nil {
		_ = d.cluster.Stop(context.Background())
	}
	if d.o.keep {
		fmt.Fprintf(d.out, "kept %s\n", d.dir)
		return
	}
	_ = os.RemoveAll(d.dir)
}
