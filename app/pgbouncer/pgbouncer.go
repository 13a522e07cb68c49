// Package pgbouncer puts Debian's PgBouncer, in transaction pooling mode,
// between agents and PostgreSQL, so that the connections PostgreSQL holds
// for all agents together stay within one budget (max_db_connections)
// however many agents there are. `ruckus pgbouncer` writes the
// configuration and runs it; `ruckus dev --pgbouncer` and the agent soak
// start it the same way.
//
// Agents authenticate to PgBouncer with their own role's password: PgBouncer
// looks the role's SCRAM secret up with auth_query, through a function that
// answers only for agents' login roles (SetupAuth). PgBouncer keeps one
// small pool per agent (AgentConnections server connections) and logs in
// to PostgreSQL as that agent's own role, with the SCRAM keys the agent
// proved at its own login: no server connection is ever lent to another
// agent, and no role is shared between agents. What an agent may do to
// its own role (ALTER ROLE … SET, a new password) reaches its own sessions
// alone (docs/scaling.md#one-pool-login-per-agent). The server and the
// administrator connect to PostgreSQL directly.
package pgbouncer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ruckus/ruckus/app/devdb"
	"github.com/ruckus/ruckus/app/store"
)

// AuthRole is the role PgBouncer logs in as to look agents' secrets up.
const AuthRole = "ruckus_pgbouncer"

// Config is one PgBouncer for the agents.
type Config struct {
	// Dir holds pgbouncer.ini, the auth file, the log and the pid file.
	Dir string
	// Listen is the address agents connect to, such as 127.0.0.1:6432.
	Listen string
	// Upstream is PostgreSQL's host:port and Database the database agents
	// use (the only one PgBouncer serves).
	Upstream string
	Database string
	// MaxDBConnections is how many PostgreSQL connections PgBouncer opens
	// for all agents together; a transaction that finds none free waits
	// in PgBouncer, which closes another agent's idle one to make room.
	MaxDBConnections int
	// AgentConnections is how many of them one agent's pool may hold
	// (0: DefaultAgentConnections; never more than MaxDBConnections).
	AgentConnections int
	// MaxClients is how many agent connections PgBouncer accepts
	// (agents × their --db-pool-size).
	MaxClients int
	// AuthPassword is the password of PgBouncer's lookup role, AuthRole
	// (SetupAuth sets it); it lives in PgBouncer's auth file alone.
	AuthPassword string
}

// How soon PgBouncer tries PostgreSQL again after a failed login or
// connection, and how long it waits for a connection to be made: a
// PostgreSQL restart of a few seconds keeps agents away from the database
// only that long.
const (
	ServerLoginRetrySeconds     = 1
	ServerConnectTimeoutSeconds = 5
)

// Defaults for a fleet of up to a few hundred agents. An agent's own
// pool of two lets its heartbeat pass while it writes results; agents idle
// between transactions give their connections back to the budget.
const (
	DefaultMaxDBConnections = 20
	DefaultAgentConnections = 2
	DefaultMaxClients       = 5000
)

// agentConnections is AgentConnections with its default, within the budget.
func (c Config) agentConnections() int {
	n := c.AgentConnections
	if n == 0 {
		n = DefaultAgentConnections
	}
	return min(n, max(c.MaxDBConnections, 1))
}

// Validate checks the settings before anything is written.
func (c Config) Validate() error {
	if c.Dir == "" {
		return errors.New("pgbouncer: a directory for its files is needed")
	}
	for _, a := range []struct{ name, v string }{{"listen address", c.Listen}, {"upstream", c.Upstream}} {
		if _, port, err := net.SplitHostPort(a.v); err != nil || port == "" {
			return fmt.Errorf("pgbouncer: the %s must be host:port (got %q)", a.name, a.v)
		}
	}
	if !safeWord(c.Database) {
		return fmt.Errorf("pgbouncer: database name %q: use letters, digits, '_' and '-'", c.Database)
	}
	switch {
	case c.MaxDBConnections < 1 || c.MaxDBConnections > 1000:
		return fmt.Errorf("pgbouncer: max database connections must be between 1 and 1000 (got %d)", c.MaxDBConnections)
	case c.AgentConnections < 0 || c.AgentConnections > 1000:
		return fmt.Errorf("pgbouncer: connections per agent must be between 1 and 1000 (got %d)", c.AgentConnections)
	case c.MaxClients < 1 || c.MaxClients > 100000:
		return fmt.Errorf("pgbouncer: max clients must be between 1 and 100000 (got %d)", c.MaxClients)
	case len(c.AuthPassword) < 16 || strings.ContainsAny(c.AuthPassword, "\"\\\n\r"):
		return errors.New("pgbouncer: the auth role's password must be 16 characters or more, without quotes, backslashes or line breaks")
	}
	return nil
}

func safeWord(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// ResetQuery is what PgBouncer runs on a server connection after every
// transaction. A server connection serves one agent only, but that
// agent's clients share it: what one transaction leaves in its session (a
// setting, a role, a prepared statement or open cursor, a LISTEN, an
// advisory lock, a temporary table) is wiped before the next, so that
// each transaction starts as on a connection of its own. It is DISCARD
// ALL without DISCARD PLANS: the plans that the agents' row-level security
// functions keep for the session are PostgreSQL's own, and throwing them
// away after every transaction made each statement plan them again.
const ResetQuery = "SET SESSION AUTHORIZATION DEFAULT; RESET ALL; CLOSE ALL; DEALLOCATE ALL; UNLISTEN *; " +
	"SELECT pg_advisory_unlock_all(); DISCARD TEMP; DISCARD SEQUENCES"

// Ini is pgbouncer.ini.
func (c Config) Ini() string {
	lhost, lport, _ := net.SplitHostPort(c.Listen)
	uhost, uport, _ := net.SplitHostPort(c.Upstream)
	var b strings.Builder
	fmt.Fprintf(&b, "; Written by `ruckus pgbouncer`: agents -> PgBouncer (transaction pooling) -> PostgreSQL.\n")
	// No user=: each agent's pool logs in to PostgreSQL as the agent's own
	// role (SCRAM pass-through of the keys its client proved), so the
	// defaults and password an agent may give its role reach its own
	// sessions alone (docs/scaling.md#one-pool-login-per-agent).
	fmt.Fprintf(&b, "[databases]\n%s = host=%s port=%s dbname=%s\n\n", c.Database, uhost, uport, c.Database)
	fmt.Fprintf(&b, "[pgbouncer]\n")
	fmt.Fprintf(&b, "listen_addr = %s\nlisten_port = %s\nunix_socket_dir =\n", lhost, lport)
	fmt.Fprintf(&b, "pool_mode = transaction\n")
	// A small pool per agent, the budget over all of them: PgBouncer
	// closes an idle connection of another agent's pool when the budget
	// is spent.
	fmt.Fprintf(&b, "max_client_conn = %d\ndefault_pool_size = %d\nmin_pool_size = 0\nreserve_pool_size = 0\n", c.MaxClients, c.agentConnections())
	fmt.Fprintf(&b, "max_user_connections = %d\nmax_db_connections = %d\n", c.agentConnections(), c.MaxDBConnections)
	fmt.Fprintf(&b, "server_idle_timeout = 30\nserver_lifetime = 3600\n")
	// No pooled agent may hold a server connection (and the rows it
	// locked) idle in a transaction or in one query past the agents'
	// bounds, whatever it SETs: PgBouncer, which the server configures,
	// ends such a client (docs/gpu-nodes.md#locks-an-agent-may-hold-and-its-time).
	fmt.Fprintf(&b, "idle_transaction_timeout = %d\nquery_timeout = %d\n",
		int(store.AgentIdleInTransaction.Seconds()), int(store.AgentStatementTimeout.Seconds()))
	// After PostgreSQL restarts, PgBouncer's first logins fail and it waits
	// server_login_retry before the next: its default, 15 s, is the agents'
	// whole stale period, in which no agent could heartbeat.
	fmt.Fprintf(&b, "server_login_retry = %d\nserver_connect_timeout = %d\n", ServerLoginRetrySeconds, ServerConnectTimeoutSeconds)
	fmt.Fprintf(&b, "server_reset_query = %s\nserver_reset_query_always = 1\n", ResetQuery)
	fmt.Fprintf(&b, "auth_type = scram-sha-256\nauth_file = %s\n", filepath.Join(c.Dir, "userlist.txt"))
	fmt.Fprintf(&b, "auth_user = %s\nauth_query = SELECT usename, passwd FROM ruckus_pgbouncer_lookup($1)\n", AuthRole)
	fmt.Fprintf(&b, "logfile = %s\npidfile = %s\n", filepath.Join(c.Dir, "pgbouncer.log"), filepath.Join(c.Dir, "pgbouncer.pid"))
	fmt.Fprintf(&b, "log_connections = 0\nlog_disconnections = 0\n")
	return b.String()
}

// Write writes pgbouncer.ini and the auth file (the password of
// PgBouncer's lookup role only) into Dir, readable by owner alone; owner,
// when not nil, is the user PgBouncer runs as (it refuses to run as root).
func (c Config) Write(owner *user.User) (string, error) {
	if err := c.Validate(); err != nil {
		return "", err
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return "", fmt.Errorf("pgbouncer: %w", err)
	}
	ini := filepath.Join(c.Dir, "pgbouncer.ini")
	files := []struct{ path, body string }{
		{filepath.Join(c.Dir, "userlist.txt"), fmt.Sprintf("%q %q\n", AuthRole, c.AuthPassword)},
		{ini, c.Ini()},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, []byte(f.body), 0o600); err != nil {
			return "", fmt.Errorf("pgbouncer: %w", err)
		}
	}
	if owner != nil {
		uid, _ := strconv.Atoi(owner.Uid)
		gid, _ := strconv.Atoi(owner.Gid)
		for _, p := range []string{c.Dir, files[0].path, files[1].path} {
			if err := os.Chown(p, uid, gid); err != nil {
				return "", fmt.Errorf("pgbouncer: %w", err)
			}
		}
	}
	return ini, nil
}

// Binary finds pgbouncer: $PGBOUNCER, then PATH, then Debian's
// /usr/sbin/pgbouncer.
func Binary() (string, error) {
	if p := os.Getenv("PGBOUNCER"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/pgbouncer"); err == nil {
		return "/usr/sbin/pgbouncer", nil
	}
	return "", errors.New("pgbouncer is not installed: `apt-get install pgbouncer` (Debian), or set PGBOUNCER to its path")
}

// Command runs PgBouncer in the foreground on the written ini; as root it
// drops to owner (PgBouncer refuses to run as root).
func Command(ctx context.Context, ini string, owner *user.User) (*exec.Cmd, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	args := []string{ini}
	if owner != nil {
		args = []string{"-u", owner.Username, ini}
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	return cmd, nil
}

// Start writes the configuration, starts PgBouncer (it stops with ctx;
// its output goes to logTo) and waits until it listens; its log says why
// when it does not.
func Start(ctx context.Context, c Config, logTo io.Writer) (*exec.Cmd, error) {
	owner, err := RunAs()
	if err != nil {
		return nil, err
	}
	ini, err := c.Write(owner)
	if err != nil {
		return nil, err
	}
	cmd, err := Command(ctx, ini, owner)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logTo, logTo
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start pgbouncer: %w", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", c.Listen, time.Second)
		if err == nil {
			conn.Close()
			return cmd, nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			log, _ := os.ReadFile(filepath.Join(c.Dir, "pgbouncer.log"))
			return nil, fmt.Errorf("pgbouncer did not listen on %s within 10 s:\n%s", c.Listen, devdb.Tail(string(log), 10))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// AgentURL is an agent's database URL (ruckus agent create) pointed at
// PgBouncer's listen address.
func AgentURL(agentURL, listen string) (string, error) {
	u, err := url.Parse(agentURL)
	if err != nil {
		return "", errors.New("the agent's database URL does not parse")
	}
	u.Host = listen
	return u.String(), nil
}

// RunAs is the user PgBouncer runs as: nil for a non-root user (itself),
// else "postgres", which Debian's PostgreSQL and PgBouncer packages create.
func RunAs() (*user.User, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, PgBouncer must run as another user, and there is no 'postgres' user: %w", err)
	}
	return u, nil
}

// DB runs SQL: a pool, a connection or a transaction.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// SetupAuth creates (or updates) the role PgBouncer logs in as to look
// agents up, with password, and the lookup function its auth_query calls:
// it returns the SCRAM secret of an agent's own login role (a member of
// ruckus_agent other than the pool role), and nothing for any other role,
// so PgBouncer lets agents through and no one else. The agents' former
// shared pool role (store.AgentPoolRole, made by migration 0020) may log
// in no more: PgBouncer logs in as each agent's own role. It must run as
// a superuser (the function reads pg_authid).
func SetupAuth(ctx context.Context, conn DB, password string) error {
	if len(password) < 16 || strings.ContainsAny(password, "'\\") {
		return errors.New("pgbouncer: the auth role's password must be 16 characters or more, without quotes or backslashes")
	}
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, AuthRole).Scan(&exists); err != nil {
		return fmt.Errorf("pgbouncer auth role: %w", err)
	}
	verb := "CREATE"
	if exists {
		verb = "ALTER"
	}
	stmts := []string{
		fmt.Sprintf(`%s ROLE %s LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT PASSWORD '%s'`, verb, AuthRole, password),
		fmt.Sprintf(`ALTER ROLE %s NOLOGIN PASSWORD NULL`, store.AgentPoolRole),
		`CREATE OR REPLACE FUNCTION ruckus_pgbouncer_lookup(p_user text, OUT usename name, OUT passwd text)
			RETURNS SETOF record LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
			AS $$ SELECT a.rolname, a.rolpassword FROM pg_authid a
			      WHERE a.rolname = p_user AND a.rolcanlogin AND NOT a.rolsuper
			        AND (a.rolvaliduntil IS NULL OR a.rolvaliduntil > now())
			        AND pg_has_role(a.oid, 'ruckus_agent', 'MEMBER') AND a.rolname <> '` + store.AgentPoolRole + `' $$`,
		`REVOKE ALL ON FUNCTION ruckus_pgbouncer_lookup(text) FROM PUBLIC`,
		fmt.Sprintf(`GRANT EXECUTE ON FUNCTION ruckus_pgbouncer_lookup(text) TO %s`, AuthRole),
	}
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("pgbouncer auth setup: %w", err)
		}
	}
	return nil
}
