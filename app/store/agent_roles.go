package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
)

// AgentGroupRole is the PostgreSQL role every agent's login role belongs
// to; migration 0010 limits it to what an agent does.
const AgentGroupRole = "ruckus_agent"

// agentName is what an agent may be called: it becomes part of a
// PostgreSQL role name and of log lines.
var agentName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$`)

// ErrAgentName is returned for a name agentName refuses.
var ErrAgentName = errors.New("an agent name is 1–40 letters, digits, '.', '_' or '-', starting with a letter or digit")

// CheckAgentName says whether name may name an agent.
func CheckAgentName(name string) error {
	if !agentName.MatchString(name) {
		return fmt.Errorf("agent name %q: %w", name, ErrAgentName)
	}
	return nil
}

// agentRoleName is the login role of agent name in database db: readable
// ("agent_gpu-7@ruckus"), unique across the databases of a cluster (roles
// are cluster-wide), and within PostgreSQL's 63 bytes.
func agentRoleName(name, db string) string {
	role := "agent_" + name + "@" + db
	if len(role) <= 63 {
		return role
	}
	h := sha256.Sum256([]byte(role))
	return "agent_" + name + "@" + hex.EncodeToString(h[:])[:63-len("agent_")-len(name)-1]
}

// AgentRole is an agent's own PostgreSQL login.
type AgentRole struct {
	Agent string
	Role  string
	// Key is the agent's key (made by CreateAgentRole; only its hash is
	// kept). Through PgBouncer an agent is its own role too (PgBouncer
	// logs in as it, docs/scaling.md#one-pool-login-per-agent); the key
	// is what agentd's transactions carry besides.
	Key string
}

// AgentGrant is what the server lets an agent serve: a hardware profile
// and runtimes, whose queues (jobs.Queue) it works. The zero grant
// changes nothing: a new agent serves nothing until an administrator
// approves what it declares (ApproveAgent).
type AgentGrant struct {
	Profile  string
	Runtimes []string
	// OnFirstRegistration grants what the agent declares when it next
	// registers, once: for an agent the server starts itself (`ruckus dev`).
	OnFirstRegistration bool
}

// grantName is what a granted profile or runtime may be called (as
// jobs.Queue joins them).
var grantName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{0,62}$`)

// Check says whether the grant names a profile and runtimes as queues do.
func (g AgentGrant) Check() error {
	if (g.Profile == "") != (len(g.Runtimes) == 0) {
		return errors.New("a grant names both a hardware profile and at least one runtime")
	}
	for _, v := range append([]string{g.Profile}, g.Runtimes...) {
		if v != "" && !grantName.MatchString(v) {
			return fmt.Errorf("%q: a hardware profile or runtime is lower-case letters, digits, '.' and '-'", v)
		}
	}
	return nil
}

// CreateAgentRole gives agent name a PostgreSQL login role of its own with
// password, a member of AgentGroupRole, binds the agent's row to it
// (creating the row, offline until the agent starts), gives it a new key,
// and grants it what grant says. Creating it again sets a new password and
// key (the old ones stop working), lifts a deactivation and keeps an
// earlier grant unless grant gives one. It needs a role allowed to create
// roles (the one that ran the migrations).
func (s *Store) CreateAgentRole(ctx context.Context, name, password string, grant AgentGrant) (AgentRole, error) {
	if err := CheckAgentName(name); err != nil {
		return AgentRole{}, err
	}
	if err := grant.Check(); err != nil {
		return AgentRole{}, err
	}
	if password == "" || strings.ContainsAny(password, "'\\\x00") {
		return AgentRole{}, errors.New("the password must be non-empty, without quotes, backslashes or NUL")
	}
	var out AgentRole
	err := s.InTxWith(ctx, func(tx pgx.Tx, _ *Queries) error {
		var db string
		if err := tx.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
			return err
		}
		role := agentRoleName(name, db)
		ident := pgx.Identifier{role}.Sanitize()
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = @role)`, pgx.NamedArgs{"role": role}).Scan(&exists); err != nil {
			return err
		}
		// Utility statements take no parameters; the password holds none
		// of the characters a literal would need escaped (checked above).
		stmt := "CREATE ROLE " + ident + " LOGIN PASSWORD '" + password + "' IN ROLE " + AgentGroupRole
		if exists {
			stmt = "ALTER ROLE " + ident + " LOGIN PASSWORD '" + password + "'"
		}
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("create the agent's role (the server's role needs CREATEROLE): %w", err)
		}
		if exists {
			if _, err := tx.Exec(ctx, "GRANT "+AgentGroupRole+" TO "+ident); err != nil {
				return err
			}
		}
		// Bounded time for an honest agent; SweepStalledAgents and
		// PgBouncer's timeouts bind the others (the role may change its
		// own defaults, which reach its own sessions alone, pooled or not).
		if _, err := tx.Exec(ctx, fmt.Sprintf("ALTER ROLE %s SET idle_in_transaction_session_timeout = %d", ident, AgentIdleInTransaction.Milliseconds())); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf("ALTER ROLE %s SET statement_timeout = %d", ident, AgentStatementTimeout.Milliseconds())); err != nil {
			return err
		}
		key, hash := NewAgentKey()
		_, err := tx.Exec(ctx, `INSERT INTO agents (name, protocol_version, state, db_role, key_hash) VALUES (@name, 0, 'offline', @role, @hash)
			ON CONFLICT (name) DO UPDATE SET db_role = excluded.db_role, key_hash = excluded.key_hash, deactivated_at = NULL`,
			pgx.NamedArgs{"name": name, "role": role, "hash": hash})
		if err != nil {
			return err
		}
		if grant.Profile != "" {
			// A profile granted before any agent reported it.
			if _, err := tx.Exec(ctx, `INSERT INTO hardware_profiles (slug) VALUES (@slug) ON CONFLICT (slug) DO NOTHING`,
				pgx.NamedArgs{"slug": grant.Profile}); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE agents SET hardware_profile = @profile, runtimes = @runtimes, grant_on_register = false
				WHERE name = @name`, pgx.NamedArgs{"name": name, "profile": grant.Profile, "runtimes": grant.Runtimes}); err != nil {
				return err
			}
		}
		if grant.OnFirstRegistration {
			if _, err := tx.Exec(ctx, `UPDATE agents SET grant_on_register = true WHERE name = @name`, pgx.NamedArgs{"name": name}); err != nil {
				return err
			}
		}
		out = AgentRole{Agent: name, Role: role, Key: key}
		return nil
	})
	return out, mapErr(err, "create agent role")
}

// RevokeAgentRole ends agent name's access: its row is unbound, its key
// forgotten, and it is deactivated (the agent stops at its next heartbeat, if it still can),
// its open connections are closed where this role may close them, and its
// login role is dropped. The reaper reassigns its run.
func (q *Queries) RevokeAgentRole(ctx context.Context, name string) (AgentRole, error) {
	var role *string
	err := q.db.QueryRow(ctx, `WITH old AS (SELECT id, db_role FROM agents WHERE name = @name FOR UPDATE)
		UPDATE agents a SET db_role = NULL, key_hash = NULL, deactivated_at = coalesce(a.deactivated_at, now())
		FROM old WHERE a.id = old.id RETURNING old.db_role`, pgx.NamedArgs{"name": name}).Scan(&role)
	if err != nil {
		return AgentRole{}, mapErr(err, "revoke agent role")
	}
	if role == nil {
		return AgentRole{}, fmt.Errorf("agent %q has no role of its own: %w", name, ErrNotFound)
	}
	// Best effort: closing another role's sessions needs pg_signal_backend.
	_, _ = q.db.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = @role`, pgx.NamedArgs{"role": *role})
	if _, err := q.db.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{*role}.Sanitize()); err != nil {
		return AgentRole{}, fmt.Errorf("drop the agent's role %s: %w", *role, err)
	}
	return AgentRole{Agent: name, Role: *role}, nil
}

// BoundAgentName is the agent the caller is to PostgreSQL: the one its
// login role belongs to or, through PgBouncer, the one whose key it
// carries; empty when it is none.
func (q *Queries) BoundAgentName(ctx context.Context) (string, error) {
	var name string
	err := q.db.QueryRow(ctx, `SELECT coalesce((SELECT name FROM agents WHERE id = ruckus_agent_id()), '')`).Scan(&name)
	return name, mapErr(err, "bound agent name")
}

// AgentDatabaseURL is serverURL (a postgres:// URL) with the agent's role
// and password in place of the server's credentials: what agentd on a GPU
// node is given. Its host is the server's view of the database; a node
// that reaches PostgreSQL by another address changes it.
func AgentDatabaseURL(serverURL string, role AgentRole, password string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("DATABASE_URL must be a postgres:// URL to derive an agent's URL from it")
	}
	u.User = url.UserPassword(role.Role, password)
	return u.String(), nil
}
