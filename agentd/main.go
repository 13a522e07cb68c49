// Command agentd runs on a GPU node: it detects the machine's hardware,
// registers with Ruckus through PostgreSQL, heartbeats, and (as the job
// protocol grows) works benchmark runs from the queues it can serve.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/ruckus/ruckus/agentd/gpu"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/migrations"
)

// version is set at build time with -ldflags "-X main.version=…".
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

agentd sim serves the simulated runtime on its own.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
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
// connection than the last, so no statement is prepared and cached there:
// every query goes in the simple protocol, and no session state (LISTEN,
// SET, prepared statements) is relied on.
func openPool(ctx context.Context, cfg runConfig) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("--database-url: %w", err)
	}
	pc.MaxConns, pc.MinConns = int32(cfg.DBPoolSize), 0
	if cfg.PgBouncer {
		pc.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		pc.ConnConfig.StatementCacheCapacity, pc.ConnConfig.DescriptionCacheCapacity = 0, 0
		// A query whose context ends is given a second to finish, then its
		// connection is closed: no cancel request is sent. Through
		// PgBouncer one is of little use (it reaches whichever query the
		// server connection runs by then), and many of them crash
		// Debian 12's PgBouncer 1.18 ("bad client state" in
		// disconnect_client), which the fleet soak ran into.
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

func runAgent(ctx context.Context, cfg runConfig, logger *slog.Logger) error {
	pool, err := openPool(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)
	// The job protocol travels with the schema: refuse a database of
	// another release rather than misread its rows.
	mig, err := migrations.New(pool)
	if err != nil {
		return err
	}
	if err := mig.Check(ctx); err != nil {
		return err
	}
	// An agent's own role (ruckus agent create) registers only as that
	// agent: PostgreSQL refuses any other row; say so plainly first.
	if bound, err := st.BoundAgentName(ctx); err != nil {
		return err
	} else if bound != "" && bound != cfg.Name {
		return fmt.Errorf("this database role belongs to agent %q, not %q: run agentd with --name %s", bound, cfg.Name, bound)
	}

	var nv *gpu.NVML
	if !cfg.NoGPU {
		lib := cfg.nvml
		if lib == nil {
			lib = gpu.Default()
		}
		// After a failed Init no other NVML call is made: Open returns an
		// NVML that reports no GPUs.
		if nv, err = gpu.Open(lib); err != nil {
			return fmt.Errorf("NVML: %w", err)
		}
		defer nv.Close()
		if !nv.Available() {
			logger.Info("no GPUs found; running CPU-only", "reason", nv.Err())
		}
	}
	hw, err := detectHardware(nv)
	if err != nil {
		return err
	}
	// The GPUs NVML measures; a simulated GPU machine's are never sampled.
	measured := len(hw.GPUs)
	if cfg.SimGPU != "" {
		hw.GPUs, _ = parseSimGPU(cfg.SimGPU) // validated with the flags
	}
	be, err := newBackend(context.WithoutCancel(ctx), cfg, logger)
	if err != nil {
		return err
	}
	defer be.Close()

	host, _ := os.Hostname()
	caps := jobs.Capabilities{ProtocolVersion: jobs.ProtocolVersion, Hardware: hw, Runtimes: []string{cfg.Serves}}
	capsJSON, err := json.Marshal(caps)
	if err != nil {
		return err
	}
	a, err := st.RegisterAgent(ctx, store.AgentRegistration{
		Name: cfg.Name, Host: host, Version: version, ProtocolVersion: jobs.ProtocolVersion,
		Runtimes: caps.Runtimes, Capabilities: capsJSON, Profile: profileOf(caps.Hardware),
	})
	if err != nil {
		return fmt.Errorf("register: %w", err)
	}
	if a.DeactivatedAt != nil {
		_ = st.SetAgentOffline(ctx, a.ID)
		return fmt.Errorf("the agent %q is deactivated by an administrator (Agents page); reactivate it there to run it", a.Name)
	}
	queue := jobs.Queue(hw.ProfileSlug(), cfg.Serves)
	logger.Info("registered", "agent", a.Name, "id", a.ID, "profile", hw.ProfileSlug(), "runtime", cfg.Runtime,
		"serves", cfg.Serves, "queue", queue, "gpus", len(hw.GPUs))

	w := &runWorker{st: st, agentID: a.ID, cfg: cfg, backend: be, nv: nv, gpus: measured, logger: logger, drain: make(chan struct{})}
	var rc *river.Client[pgx.Tx]
	startWorking := func() error {
		workers := river.NewWorkers()
		river.AddWorker(workers, w)
		rc, err = river.NewClient(riverpgxv5.New(pool), &river.Config{
			Logger: logger,
			// One run at a time: a benchmark must not share the machine.
			Queues:                 map[string]river.QueueConfig{queue: {MaxWorkers: 1}},
			Workers:                workers,
			LeaderElectionDisabled: true,
			FetchOnlyKnownKinds:    true,
			// The agent queues score_run jobs for the server to work.
			SkipUnknownJobCheck: true,
			FetchPollInterval:   time.Second,
			// PgBouncer in transaction mode hands each transaction any
			// server connection, so a LISTEN would not stay: River polls.
			PollOnly: cfg.PgBouncer,
		})
		if err != nil {
			return fmt.Errorf("river client: %w", err)
		}
		w.river = rc
		// The client is stopped explicitly (draining first), not by the
		// signal context, which would cancel the run in progress.
		return rc.Start(context.WithoutCancel(ctx))
	}
	// stopWorking stops taking runs; a run in progress finishes (drain) or,
	// when handBack, stops sending and goes back to the queue for another
	// agent to resume.
	stop := func(c *river.Client[pgx.Tx], handBack bool) {
		if handBack {
			w.beginDrain()
		}
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.Stop(sctx); err != nil {
			logger.Warn("stopping the job client", "err", err)
			_ = c.StopAndCancel(context.Background())
		}
	}
	// draining is closed when a drain's client has stopped (its run done).
	var draining chan struct{}
	stopWorking := func(handBack bool) {
		if handBack {
			w.beginDrain()
		}
		if draining != nil {
			<-draining
		}
		if rc != nil {
			stop(rc, handBack)
			rc = nil
		}
	}
	if !a.Drained {
		if err := startWorking(); err != nil {
			return err
		}
	}

	t := time.NewTicker(cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			logger.Info("stopping: taking no more runs; a run in progress is handed back")
			stopWorking(true)
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := st.SetAgentOffline(sctx, a.ID); err != nil {
				return fmt.Errorf("mark offline: %w", err)
			}
			logger.Info("stopped", "agent", a.Name)
			return nil
		case <-t.C:
			hb, err := st.AgentHeartbeat(ctx, a.ID)
			if err != nil {
				if ctx.Err() != nil {
					continue
				}
				// A missed beat is not fatal: the database may be restarting.
				logger.Warn("heartbeat failed", "err", err)
				continue
			}
			switch {
			case hb.DeactivatedAt != nil:
				logger.Warn("deactivated by an administrator; stopping")
				stopWorking(true)
				return st.SetAgentOffline(context.Background(), a.ID)
			case hb.Drained && rc != nil:
				logger.Info("drained by an administrator: finishing the current run, taking no more")
				c, done := rc, make(chan struct{})
				rc, draining = nil, done
				go func() { stop(c, false); close(done) }()
			case !hb.Drained && rc == nil:
				if draining != nil {
					select {
					case <-draining:
						draining = nil
					default:
						continue // the drained run is still finishing
					}
				}
				logger.Info("undrained: taking runs again")
				if err := startWorking(); err != nil {
					return err
				}
			}
		}
	}
}
