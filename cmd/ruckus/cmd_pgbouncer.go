package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/app/pgbouncer"
	"github.com/ruckus/ruckus/app/store"
)

// bouncerOptions are `ruckus pgbouncer`'s settings.
type bouncerOptions struct {
	listen           string
	dir              string
	maxDBConnections int
	agentConnections int
	maxClients       int
	// setupAuth creates the auth role and lookup function first (needs a
	// superuser's DATABASE_URL).
	setupAuth bool
}

const bouncerPasswordEnv = "RUCKUS_PGBOUNCER_AUTH_PASSWORD"

// cmdPgBouncer runs PgBouncer in transaction mode between agents and the
// database DATABASE_URL names, until interrupted.
func cmdPgBouncer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("pgbouncer", "ruckus pgbouncer [--listen HOST:PORT] [--dir DIR] [--max-db-connections N] [--agent-connections N] [--max-clients N] [--setup-auth]", stdout)
	var o bouncerOptions
	fs.StringVar(&o.listen, "listen", "127.0.0.1:6432", "address agents connect to")
	fs.StringVar(&o.dir, "dir", envOr("RUCKUS_PGBOUNCER_DIR", ".data/pgbouncer"), "directory for its configuration, log and pid file (RUCKUS_PGBOUNCER_DIR)")
	fs.IntVar(&o.maxDBConnections, "max-db-connections", pgbouncer.DefaultMaxDBConnections, "PostgreSQL connections for all agents together")
	fs.IntVar(&o.agentConnections, "agent-connections", pgbouncer.DefaultAgentConnections, "PostgreSQL connections of one agent's own pool, logged in as its own role")
	fs.IntVar(&o.maxClients, "max-clients", pgbouncer.DefaultMaxClients, "agent connections accepted (agents × their --db-pool-size)")
	fs.BoolVar(&o.setupAuth, "setup-auth", false, "create or update the "+pgbouncer.AuthRole+" role and the lookup function first, and make the former shared role "+store.AgentPoolRole+" NOLOGIN (DATABASE_URL must be a superuser's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	dbURL := os.Getenv("DATABASE_URL")
	if dbURL == "" {
		return fmt.Errorf("%w: DATABASE_URL must name the database (a superuser's, with --setup-auth)", errUsage)
	}
	password := os.Getenv(bouncerPasswordEnv)
	if password == "" {
		return fmt.Errorf("%w: set %s to the password of PgBouncer's lookup role %s (16 characters or more)", errUsage, bouncerPasswordEnv, pgbouncer.AuthRole)
	}
	cmd, err := startBouncer(ctx, dbURL, password, o, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "PgBouncer (transaction pooling) on %s for the agents; run agentd with --pgbouncer and this address in its DATABASE_URL\n", o.listen)
	return cmd.Wait()
}

// startBouncer sets up the auth lookup when asked, writes the
// configuration and starts PgBouncer; it stops with ctx.
func startBouncer(ctx context.Context, dbURL, password string, o bouncerOptions, logTo io.Writer) (*exec.Cmd, error) {
	cc, err := pgx.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if o.setupAuth {
		conn, err := pgx.ConnectConfig(ctx, cc)
		if err != nil {
			return nil, err
		}
		err = pgbouncer.SetupAuth(ctx, conn, password)
		conn.Close(context.Background())
		if err != nil {
			return nil, err
		}
	}
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return nil, err
	}
	cfg := pgbouncer.Config{Dir: dir, Listen: o.listen, Upstream: net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port))),
		Database: cc.Database, MaxDBConnections: o.maxDBConnections, AgentConnections: o.agentConnections, MaxClients: o.maxClients,
		AuthPassword: password}
	return pgbouncer.Start(ctx, cfg, logTo)
}

func newBouncerPassword() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
