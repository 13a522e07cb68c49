// Package agent is agentd's body: it detects the machine's hardware,
// registers with Ruckus through PostgreSQL, heartbeats, and works the
// benchmark runs of the queues it can serve. The agentd program is Run.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/agentd/gpu"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/migrations"
)

// version is the program's, set by Run from agentd's build-time version.
var version = "dev"

const usage = `agentd — the Ruckus agent for GPU nodes.

Usage:
  agentd run --database-url URL [--name NAME] [--runtime sim|openai] [flags]
  agentd sim [--listen 127.0.0.1:8000] [--sim-… flags]
  agentd version

agentd run registers the machine and its runtime with Ruckus (through the
same PostgreSQL database the server uses), heartbeats, and works the
benchmark runs queued for its hardware profile and runtime: it sends the
requests, measures them and writes results and progress as it goes. On
SIGINT or SIGTERM it stops sending, hands an unfinished run back for
another agent to resume, and marks itself offline.

  --runtime sim     the simulated runtime built in (distributions and faults:
                    agentd run --help lists the --sim-… flags)
  --runtime openai  any OpenAI-compatible server: --endpoint URL, the key in
                    $OPENAI_API_KEY (--api-key-env), --serves vllm|sglang|tgi|…
  --runtime anthropic  Anthropic's Messages API (--endpoint, default
                    https://api.anthropic.com), the key in $ANTHROPIC_API_KEY
  --provider NAME   a remote provider of the provider table (--providers FILE):
                    its base URL, key variable and dialect; it takes the runs
                    of the fleets' "NAME:model" targets

agentd sim serves the simulated runtime on its own (--dialect anthropic: the
Messages API).
`

// Run is agentd: it runs the command in args (without the program name)
// until ctx ends and returns the process's exit code. buildVersion is the
// program's version, set at build time.
func Run(ctx context.Context, buildVersion string, args []string, stdout, stderr io.Writer) int {
	version = buildVersion
	return run(ctx, args, stdout, stderr)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "version", "--version":
		fmt.Fprintln(stdout, "agentd", version, "protocol", jobs.ProtocolVersion)
		return 0
	case "sim":
		return simCommand(ctx, args[1:], stdout, stderr)
	case "run":
		cfg, err := parseRunFlags(args[1:], stdout)
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if err != nil {
			fmt.Fprintln(stderr, "agentd:", err)
			return 2
		}
		logger := slog.New(slog.NewTextHandler(stderr, nil))
		if err := runAgent(ctx, cfg, logger); err != nil {
			fmt.Fprintln(stderr, "agentd:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "agentd: unknown command %q\n\n%s", args[0], usage)
	return 2
}

// openPool opens at most cfg.DBPoolSize connections. Behind PgBouncer in
// transaction mode the next transaction may run on another server
// connection than the last, so no statement is prepared and kept there:
// queries go as unnamed statements (their descriptions cached here, on
// the client), and no session state (LISTEN, SET, prepared statements) is
// relied on. Not the simple protocol: it would write the agent's key into
// the statement's text, which pg_stat_activity shows.
func openPool(ctx context.Context, cfg runConfig) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("--database-url: %w", err)
	}
	pc.MaxConns, pc.MinConns = int32(cfg.DBPoolSize), 0
	if cfg.PgBouncer {
		pc.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
		pc.ConnConfig.StatementCacheCapacity = 0
		// A query whose context ends is given a second to finish, then its
		// connection is closed: no cancel request is sent. Through
		// PgBouncer one is of little use (it reaches whichever query the
		// server connection runs by then), and many of them crash
		// Debian 12's PgBouncer 1.18 ("bad client state" in
		// disconnect_client), which the agent soak ran into.
		pc.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
			return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn(), DeadlineDelay: time.Second}
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("--database-url: %w", err)
	}
	return pool, nil
}

// closePool closes pool, waiting at most wait for the statements still
// out to give their connections back: through PgBouncer, those of an agent
// whose role was dropped wait for a server login that never comes, until
// PgBouncer's query_timeout, and the agent is to stop without them.
func closePool(pool *pgxpool.Pool, wait time.Duration) {
	closed := make(chan struct{})
	go func() {
		pool.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(wait):
	}
}

// runAgent is `agentd run`: it checks the database, detects the machine,
// registers, and then heartbeats and works runs until ctx ends, the agent
// is deactivated, or something fails.
func runAgent(ctx context.Context, cfg runConfig, logger *slog.Logger) error {
	pool, err := openPool(ctx, cfg)
	if err != nil {
		return err
	}
	defer closePool(pool, 2*time.Second)
	st, err := store.NewAgent(pool, cfg.Key)
	if err != nil {
		return err
	}
	if err := checkDatabase(ctx, pool, st, cfg); err != nil {
		return err
	}
	nv, err := openNVML(cfg, logger)
	if err != nil {
		return err
	}
	if nv != nil {
		defer nv.Close()
	}
	hw, measured, err := machineHardware(nv, cfg)
	if err != nil {
		return err
	}
	be, err := newBackend(context.WithoutCancel(ctx), cfg, logger)
	if err != nil {
		return err
	}
	defer be.Close()

	a, err := register(ctx, st, cfg, hw)
	if err != nil {
		return err
	}
	queue := jobs.Queue(hw.ProfileSlug(), cfg.Serves)
	logger.Info("registered", "agent", a.Name, "id", a.ID, "profile", hw.ProfileSlug(), "runtime", cfg.Runtime,
		"serves", cfg.Serves, "queue", queue, "gpus", len(hw.GPUs))

	var m *agentMetrics
	if cfg.MetricsAddr != "" {
		m = newAgentMetrics()
		if err := serveMetrics(ctx, cfg.MetricsAddr, m, logger); err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
	}
	w := (&runWorker{st: st, agentID: a.ID, cfg: cfg, backend: be, nv: nv, gpus: measured, logger: logger, metrics: m}).init()
	jc := &jobClient{ctx: ctx, driver: newKeyedDriver(pool, st), cfg: cfg, queue: queue, profile: hw.ProfileSlug(), worker: w, logger: logger}
	if err := jc.follow(a); err != nil {
		return err
	}
	return heartbeat(ctx, st, a, jc, cfg.Heartbeat, logger)
}

// checkDatabase refuses a database this agent cannot work with: one of
// another release (the job protocol travels with the schema, and its rows
// would be misread), or a role bound to another agent.
func checkDatabase(ctx context.Context, pool *pgxpool.Pool, st *store.Store, cfg runConfig) error {
	mig, err := migrations.New(pool)
	if err != nil {
		return err
	}
	if err := mig.Check(ctx); err != nil {
		return err
	}
	// An agent's own role (ruckus agent create) registers only as that
	// agent: PostgreSQL refuses any other row; say so plainly first.
	bound, err := st.BoundAgentName(ctx)
	switch {
	case err != nil:
		return err
	case bound != "" && bound != cfg.Name:
		// Through PgBouncer the agent is known by its key, else by its role.
		by := "database role"
		if cfg.PgBouncer {
			by = "key"
		}
		return fmt.Errorf("this %s belongs to agent %q, not %q: run agentd with --name %s", by, bound, cfg.Name, bound)
	case bound == "" && cfg.PgBouncer:
		return fmt.Errorf("PostgreSQL knows no agent by this key: run `ruckus agent create %s` again for a new one (it replaces the old), or check that the URL leads to Ruckus's PgBouncer", cfg.Name)
	}
	return nil
}

// openNVML opens NVML unless --no-gpu; nil then. A machine without GPUs
// (or without the library) gets an NVML that reports none.
func openNVML(cfg runConfig, logger *slog.Logger) (*gpu.NVML, error) {
	if cfg.NoGPU {
		return nil, nil
	}
	lib := cfg.nvml
	if lib == nil {
		lib = gpu.Default()
	}
	// After a failed Init no other NVML call is made: Open returns an
	// NVML that reports no GPUs.
	nv, err := gpu.Open(lib)
	if err != nil {
		return nil, fmt.Errorf("NVML: %w", err)
	}
	if !nv.Available() {
		logger.Info("no GPUs found; running CPU-only", "reason", nv.Err())
	}
	return nv, nil
}

// machineHardware is the hardware the agent reports, and how many of its
// GPUs NVML measures: a simulated GPU machine's are never sampled.
func machineHardware(nv *gpu.NVML, cfg runConfig) (jobs.Hardware, int, error) {
	hw, err := detectHardware(nv)
	if err != nil {
		return hw, 0, err
	}
	measured := len(hw.GPUs)
	if cfg.SimGPU != "" {
		hw.GPUs, _ = parseSimGPU(cfg.SimGPU) // validated with the flags
	}
	return hw, measured, nil
}

// register records the agent, its machine and its runtime, and refuses to
// go on when an administrator has deactivated it.
func register(ctx context.Context, st *store.Store, cfg runConfig, hw jobs.Hardware) (store.Agent, error) {
	host, _ := os.Hostname()
	caps := jobs.Capabilities{ProtocolVersion: jobs.ProtocolVersion, Hardware: hw, Runtimes: []string{cfg.Serves}}
	capsJSON, err := json.Marshal(caps)
	if err != nil {
		return store.Agent{}, err
	}
	a, err := st.RegisterAgent(ctx, store.AgentRegistration{
		Name: cfg.Name, Host: host, Version: version, ProtocolVersion: jobs.ProtocolVersion,
		Runtimes: caps.Runtimes, Capabilities: capsJSON, Profile: profileOf(caps.Hardware),
	})
	if err != nil {
		return a, fmt.Errorf("register: %w", err)
	}
	if a.DeactivatedAt != nil {
		_ = st.SetAgentOffline(ctx, a.ID)
		return a, fmt.Errorf("the agent %q is deactivated by an administrator (Agents page); reactivate it there to run it", a.Name)
	}
	return a, nil
}

// revoked says whether a heartbeat's failure means that PostgreSQL no
// longer accepts this agent, rather than that it is away for a while: its
// own row is gone from its sight, its role may no longer touch it, or its
// login is refused (for a pooled agent, see loginRefused).
func revoked(err error) bool {
	if errors.Is(err, store.ErrNotFound) {
		return true
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "42501", // insufficient_privilege: the role left ruckus_agent
		"28000", // invalid_authorization_specification: no such role
		"28P01": // invalid_password
		return true
	}
	return false
}

// beat is one heartbeat, given at most twice the interval (at least 2 s):
// through PgBouncer, the statements of an agent whose role was dropped
// wait for a server login that never succeeds (PgBouncer logs in as the
// agent's own role, docs/scaling.md#one-pool-login-per-agent) until
// PgBouncer's query_timeout.
func beat(ctx context.Context, st *store.Store, id int64, interval time.Duration) (store.Agent, error) {
	bctx, cancel := context.WithTimeout(ctx, max(2*interval, 2*time.Second))
	defer cancel()
	return st.AgentHeartbeat(bctx, id)
}

// loginRefused says, after a failed heartbeat, whether a new login with
// the agent's credentials is refused as a revoked one is: by PostgreSQL
// (revoked), or by PgBouncer, which no longer finds the agent's role
// ("no such user") or its password ("SASL authentication failed"). A
// database that is away refuses no login this way.
func loginRefused(ctx context.Context, st *store.Store) bool {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(lctx, st.Pool().Config().ConnConfig.Copy())
	if err == nil {
		_ = conn.Close(context.Background())
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "08P01" && (pe.Message == "no such user" || pe.Message == "SASL authentication failed") {
		return true
	}
	return revoked(err)
}

// heartbeat beats every interval and follows what an administrator
// decided (drain, undrain, deactivate) until ctx ends; then it hands a run
// in progress back and marks the agent offline.
func heartbeat(ctx context.Context, st *store.Store, a store.Agent, jc *jobClient, interval time.Duration, logger *slog.Logger) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			logger.Info("stopping: taking no more runs; a run in progress is handed back")
			jc.stopWorking(true)
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := st.SetAgentOffline(sctx, a.ID); err != nil {
				return fmt.Errorf("mark offline: %w", err)
			}
			logger.Info("stopped", "agent", a.Name)
			return nil
		case <-t.C:
			hb, err := beat(ctx, st, a.ID, interval)
			if err != nil {
				if ctx.Err() != nil {
					continue
				}
				if revoked(err) || loginRefused(ctx, st) {
					logger.Error("PostgreSQL no longer accepts this agent: its role or key was revoked (ruckus agent revoke) or replaced (ruckus agent create); stopping without writing more, the server reassigns its run", "err", err)
					jc.abandon()
					return fmt.Errorf("agent %q: its database credentials were revoked or replaced: %w", a.Name, err)
				}
				// A missed beat is not fatal: the database may be restarting.
				logger.Warn("heartbeat failed", "err", err)
				continue
			}
			if hb.DeactivatedAt != nil {
				logger.Warn("deactivated by an administrator; stopping")
				jc.stopWorking(true)
				return st.SetAgentOffline(context.Background(), a.ID)
			}
			if err := jc.follow(hb); err != nil {
				return err
			}
		}
	}
}
