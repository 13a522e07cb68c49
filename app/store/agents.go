package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// Agent is a registered agentd process.
type Agent struct {
	ID              int64
	Name            string
	Host            string
	Version         string
	ProtocolVersion int
	Runtimes        []string
	Capabilities    json.RawMessage
	State           string
	Drained         bool
	DeactivatedAt   *time.Time
	StartedAt       time.Time
	LastHeartbeatAt time.Time
	RegisteredAt    time.Time
}

// Agent statuses as shown to people. Only online and offline are stored;
// stale is derived from the heartbeat's age.
const (
	AgentOnline      = "online"
	AgentStale       = "stale"
	AgentOffline     = "offline"
	AgentDrained     = "drained"
	AgentDeactivated = "deactivated"
)

// Status is what the agent is doing as of now: an agent whose last
// heartbeat is older than staleAfter is stale, whatever it last said.
func (a Agent) Status(now time.Time, staleAfter time.Duration) string {
	switch {
	case a.DeactivatedAt != nil:
		return AgentDeactivated
	case a.State == AgentOffline:
		return AgentOffline
	case now.Sub(a.LastHeartbeatAt) > staleAfter:
		return AgentStale
	case a.Drained:
		return AgentDrained
	}
	return AgentOnline
}

const agentColumns = `id, name, host, version, protocol_version, runtimes, capabilities, state, drained,
	deactivated_at, started_at, last_heartbeat_at, registered_at`

func scanAgent(row pgx.CollectableRow) (Agent, error) {
	var a Agent
	err := row.Scan(&a.ID, &a.Name, &a.Host, &a.Version, &a.ProtocolVersion, &a.Runtimes, &a.Capabilities,
		&a.State, &a.Drained, &a.DeactivatedAt, &a.StartedAt, &a.LastHeartbeatAt, &a.RegisteredAt)
	return a, err
}

// AgentRegistration is what an agent says about itself when it starts.
type AgentRegistration struct {
	Name            string
	Host            string
	Version         string
	ProtocolVersion int
	Runtimes        []string
	Capabilities    json.RawMessage
}

// RegisterAgent creates the agent or, for a name seen before, records the
// new process's facts and marks it online. Drain and deactivation persist
// across restarts: an admin's decision outlives the process.
func (q *Queries) RegisterAgent(ctx context.Context, r AgentRegistration) (Agent, error) {
	caps := r.Capabilities
	if len(caps) == 0 {
		caps = json.RawMessage(`{}`)
	}
	rows, _ := q.db.Query(ctx, `INSERT INTO agents (name, host, version, protocol_version, runtimes, capabilities)
		VALUES (@name, @host, @version, @protocol, @runtimes, @caps)
		ON CONFLICT (name) DO UPDATE SET host = excluded.host, version = excluded.version,
			protocol_version = excluded.protocol_version, runtimes = excluded.runtimes,
			capabilities = excluded.capabilities, state = 'online', started_at = now(), last_heartbeat_at = now()
		RETURNING `+agentColumns,
		pgx.NamedArgs{"name": r.Name, "host": r.Host, "version": r.Version, "protocol": r.ProtocolVersion,
			"runtimes": r.Runtimes, "caps": caps})
	a, err := pgx.CollectExactlyOneRow(rows, scanAgent)
	return a, mapErr(err, "register agent")
}

// AgentHeartbeat records that the agent is alive and returns its row, so
// the agent learns of a drain or deactivation at its next beat.
func (q *Queries) AgentHeartbeat(ctx context.Context, id int64) (Agent, error) {
	rows, _ := q.db.Query(ctx, `UPDATE agents SET last_heartbeat_at = now(), state = 'online'
		WHERE id = @id RETURNING `+agentColumns, pgx.NamedArgs{"id": id})
	a, err := pgx.CollectExactlyOneRow(rows, scanAgent)
	return a, mapErr(err, "agent heartbeat")
}

// SetAgentOffline records a clean shutdown.
func (q *Queries) SetAgentOffline(ctx context.Context, id int64) error {
	_, err := q.db.Exec(ctx, `UPDATE agents SET state = 'offline' WHERE id = @id`, pgx.NamedArgs{"id": id})
	return mapErr(err, "set agent offline")
}

// ListAgents returns every agent by name.
func (q *Queries) ListAgents(ctx context.Context) ([]Agent, error) {
	rows, _ := q.db.Query(ctx, `SELECT `+agentColumns+` FROM agents ORDER BY name`)
	as, err := pgx.CollectRows(rows, scanAgent)
	return as, mapErr(err, "list agents")
}
