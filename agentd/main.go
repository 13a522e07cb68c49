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

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/migrations"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `agentd — the Ruckus agent for GPU nodes.

Usage:
  agentd run --database-url URL [--name NAME] [--runtime sim] [--heartbeat 5s]
  agentd version

agentd registers its hardware and runtimes with Ruckus (through the same
PostgreSQL database the server uses), heartbeats, and marks itself offline
when stopped with SIGINT or SIGTERM.
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

// runConfig is agentd run's settings.
type runConfig struct {
	DatabaseURL string
	Name        string
	Runtime     string
	Heartbeat   time.Duration
}

// runtimes agentd can drive in this version.
var knownRuntimes = map[string]bool{"sim": true}

func parseRunFlags(args []string, out io.Writer) (runConfig, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(out)
	host, _ := os.Hostname()
	var c runConfig
	fs.StringVar(&c.DatabaseURL, "database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL shared with the server (default $DATABASE_URL)")
	fs.StringVar(&c.Name, "name", host, "agent name, unique in the fleet")
	fs.StringVar(&c.Runtime, "runtime", "sim", "inference runtime to drive: sim")
	fs.DurationVar(&c.Heartbeat, "heartbeat", 5*time.Second, "heartbeat interval")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case c.DatabaseURL == "":
		return c, errors.New("--database-url (or DATABASE_URL) is required")
	case c.Name == "":
		return c, errors.New("--name must not be empty")
	case !knownRuntimes[c.Runtime]:
		return c, fmt.Errorf("--runtime %q is not available in this version (available: sim)", c.Runtime)
	case c.Heartbeat < time.Second || c.Heartbeat > time.Minute:
		return c, fmt.Errorf("--heartbeat must be between 1s and 1m (got %s)", c.Heartbeat)
	}
	return c, nil
}

func runAgent(ctx context.Context, cfg runConfig, logger *slog.Logger) error {
	pool, err := pgxpool.New(ctx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("--database-url: %w", err)
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

	host, _ := os.Hostname()
	caps := jobs.Capabilities{ProtocolVersion: jobs.ProtocolVersion, Hardware: detectHardware(), Runtimes: []string{cfg.Runtime}}
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
	logger.Info("registered", "agent", a.Name, "id", a.ID, "profile", caps.Hardware.ProfileSlug(), "runtimes", caps.Runtimes)

	t := time.NewTicker(cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
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
			if hb.DeactivatedAt != nil {
				logger.Warn("deactivated by an administrator; stopping")
				return st.SetAgentOffline(ctx, a.ID)
			}
		}
	}
}
