package store

import (
	"context"
	"encoding/json"
	"slices"
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
	// Runtimes and Profile are what the agent serves: granted by the
	// server (migration 0023), never taken from the agent. Its queues and
	// the targets offered follow them alone.
	Runtimes []string
	Profile  string
	// DeclaredRuntimes and DeclaredProfile are what the agent reports it
	// detects, for an administrator to approve.
	DeclaredRuntimes []string
	DeclaredProfile  string
	Capabilities     json.RawMessage
	// CurrentRun is the run the agent is working, if any, and its benchmark.
	CurrentRun          *int64
	CurrentRunBenchmark *int64
	State               string
	Drained             bool
	DeactivatedAt       *time.Time
	StartedAt           time.Time
	LastHeartbeatAt     time.Time
	RegisteredAt        time.Time
}

// Agent statuses as shown to people. Only online and offline are stored;
// stale is derived from the heartbeat's age.
const (
	AgentOnline      = "online"
	AgentStale       = "stale"
	AgentOffline     = "offline"
	AgentDrained     = "drained"
	AgentDeactivated = "deactivated"
	// AgentIncompatible: alive, but speaking another job protocol, so
	// its runs would be refused.
	AgentIncompatible = "incompatible"
)

// Status is what the agent is doing as of now: an agent whose last
// heartbeat is older than staleAfter is stale, whatever it last said; one
// of another protocol than protocol is incompatible.
func (a Agent) Status(now time.Time, staleAfter time.Duration, protocol int) string {
	switch {
	case a.DeactivatedAt != nil:
		return AgentDeactivated
	case a.State == AgentOffline:
		return AgentOffline
	case a.ProtocolVersion != protocol:
		return AgentIncompatible
	case now.Sub(a.LastHeartbeatAt) > staleAfter:
		return AgentStale
	case a.Drained:
		return AgentDrained
	}
	return AgentOnline
}

const agentColumns = `id, name, host, version, protocol_version, runtimes, capabilities, coalesce(hardware_profile, ''),
	declared_runtimes, coalesce(declared_profile, ''), state, drained,
	deactivated_at, started_at, last_heartbeat_at, registered_at,
	(SELECT r.id FROM runs r WHERE r.agent_id = agents.id AND r.state = 'running' ORDER BY r.id DESC LIMIT 1),
	(SELECT r.benchmark_id FROM runs r WHERE r.agent_id = agents.id AND r.state = 'running' ORDER BY r.id DESC LIMIT 1)`

func scanAgent(row pgx.CollectableRow) (Agent, error) {
	var a Agent
	err := row.Scan(&a.ID, &a.Name, &a.Host, &a.Version, &a.ProtocolVersion, &a.Runtimes, &a.Capabilities, &a.Profile,
		&a.DeclaredRuntimes, &a.DeclaredProfile, &a.State, &a.Drained, &a.DeactivatedAt, &a.StartedAt, &a.LastHeartbeatAt, &a.RegisteredAt, &a.CurrentRun, &a.CurrentRunBenchmark)
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
	Profile         HardwareProfile
}

// RegisterAgent creates the agent or, for a name seen before, records the
// new process's facts and marks it online. Drain and deactivation persist
// across restarts: an admin's decision outlives the process. The runtimes
// and profile go in as declared: what the agent serves is the server's to
// grant (AgentGrant, ApproveAgent), and the returned row says what that is.
func (q *Queries) RegisterAgent(ctx context.Context, r AgentRegistration) (Agent, error) {
	caps := r.Capabilities
	if len(caps) == 0 {
		caps = json.RawMessage(`{}`)
	}
	p := r.Profile
	if r.Runtimes == nil {
		r.Runtimes = []string{}
	}
	// The profile is added the first time an agent reports it, for an
	// administrator to see and grant; its facts and price are not the
	// agent's to change afterwards.
	rows, _ := q.db.Query(ctx, `WITH hp AS (
			INSERT INTO hardware_profiles (slug, gpu_name, gpu_count, gpu_memory_bytes, cpu_cores)
			SELECT @slug::text, @gpu_name::text, @gpu_count::int, @gpu_mem::bigint, @cores::int WHERE @slug::text <> ''
			ON CONFLICT (slug) DO NOTHING)
		INSERT INTO agents (name, host, version, protocol_version, declared_runtimes, capabilities, declared_profile, db_role)
		VALUES (@name, @host, @version, @protocol, @runtimes, @caps, nullif(@slug::text, ''),
			-- PostgreSQL checks the row proposed for insertion even when it
			-- updates instead: an agent's own role proposes its own binding.
			(SELECT db_role FROM agents WHERE name = @name))
		ON CONFLICT (name) DO UPDATE SET host = excluded.host, version = excluded.version,
			protocol_version = excluded.protocol_version, declared_runtimes = excluded.declared_runtimes,
			capabilities = excluded.capabilities, declared_profile = excluded.declared_profile,
			state = 'online', started_at = now(), last_heartbeat_at = now()
		RETURNING `+agentColumns,
		pgx.NamedArgs{"name": r.Name, "host": r.Host, "version": r.Version, "protocol": r.ProtocolVersion,
			"runtimes": r.Runtimes, "caps": caps, "slug": p.Slug, "gpu_name": p.GPUName, "gpu_count": p.GPUCount,
			"gpu_mem": p.GPUMemoryBytes, "cores": p.CPUCores})
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

// Granted says whether the server lets the agent serve runtime on
// profile (its queue, jobs.Queue(profile, runtime)).
func (a Agent) Granted(profile, runtime string) bool {
	return profile != "" && a.Profile == profile && slices.Contains(a.Runtimes, runtime)
}

// Pending says whether the agent declares something it is not granted,
// for an administrator to approve.
func (a Agent) Pending() bool {
	return a.DeclaredProfile != "" && (a.DeclaredProfile != a.Profile || !slices.Equal(a.DeclaredRuntimes, a.Runtimes))
}

// ApproveAgent grants an agent what it declares: its declared hardware
// profile and runtimes become what it serves (its queues). Like draining
// and deactivating, it waits at most RowLockTimeout for the agent's row,
// which the agent itself may hold, in one of the Store's lock-waiting
// slots (docs/gpu-nodes.md#locks-an-agent-may-hold-and-its-time).
func (s *Store) ApproveAgent(ctx context.Context, id int64) error {
	tag, err := s.execWithLockTimeout(ctx, `UPDATE agents SET hardware_profile = declared_profile, runtimes = declared_runtimes
		WHERE id = @id AND declared_profile IS NOT NULL`, pgx.NamedArgs{"id": id})
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapErr(err, "approve agent")
}

// SetAgentDrained drains an agent (it finishes its run and takes no new
// ones) or undrains it.
func (s *Store) SetAgentDrained(ctx context.Context, id int64, drained bool) error {
	tag, err := s.execWithLockTimeout(ctx, `UPDATE agents SET drained = @drained WHERE id = @id`, pgx.NamedArgs{"id": id, "drained": drained})
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapErr(err, "drain agent")
}

// SetAgentDeactivated deactivates an agent (it stops at its next heartbeat
// and may not work until reactivated) or reactivates it.
func (s *Store) SetAgentDeactivated(ctx context.Context, id int64, deactivated bool) error {
	tag, err := s.execWithLockTimeout(ctx, `UPDATE agents SET deactivated_at = CASE WHEN @off THEN coalesce(deactivated_at, now()) END
		WHERE id = @id`, pgx.NamedArgs{"id": id, "off": deactivated})
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapErr(err, "deactivate agent")
}

// HardwareProfile is a kind of machine agents run on.
type HardwareProfile struct {
	Slug           string
	GPUName        string
	GPUCount       int
	GPUMemoryBytes int64
	CPUCores       int
	PricePerHour   *float64
	Agents         int // agents registered with this profile
	OnlineAgents   int // of which heartbeating recently
}

// ListHardwareProfiles returns the profiles with their agent counts; an
// agent counts as online when it beat within staleAfter. The "imported"
// profile, which imported runs name for want of hardware, is no hardware
// to list or price.
func (q *Queries) ListHardwareProfiles(ctx context.Context, staleAfter time.Duration) ([]HardwareProfile, error) {
	rows, _ := q.db.Query(ctx, `SELECT h.slug, h.gpu_name, h.gpu_count, h.gpu_memory_bytes, h.cpu_cores, h.price_per_hour::float8,
			count(a.id), count(a.id) FILTER (WHERE a.state = 'online' AND a.deactivated_at IS NULL
				AND a.last_heartbeat_at > now() - @stale::interval)
		FROM hardware_profiles h LEFT JOIN agents a ON a.hardware_profile = h.slug
		WHERE h.slug <> 'imported'
		GROUP BY h.slug ORDER BY h.slug`, pgx.NamedArgs{"stale": staleAfter})
	hs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (HardwareProfile, error) {
		var h HardwareProfile
		err := row.Scan(&h.Slug, &h.GPUName, &h.GPUCount, &h.GPUMemoryBytes, &h.CPUCores, &h.PricePerHour, &h.Agents, &h.OnlineAgents)
		return h, err
	})
	return hs, mapErr(err, "list hardware profiles")
}

// SetHardwarePrice sets (or with nil clears) a profile's price per hour.
func (q *Queries) SetHardwarePrice(ctx context.Context, slug string, price *float64) error {
	tag, err := q.db.Exec(ctx, `UPDATE hardware_profiles SET price_per_hour = @price, updated_at = now() WHERE slug = @slug AND slug <> 'imported'`,
		pgx.NamedArgs{"slug": slug, "price": price})
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return mapErr(err, "set hardware price")
}

// HardwareProfileBySlug returns one profile (without agent counts).
func (q *Queries) HardwareProfileBySlug(ctx context.Context, slug string) (HardwareProfile, error) {
	var h HardwareProfile
	err := q.db.QueryRow(ctx, `SELECT slug, gpu_name, gpu_count, gpu_memory_bytes, cpu_cores, price_per_hour::float8
		FROM hardware_profiles WHERE slug = @slug`, pgx.NamedArgs{"slug": slug}).
		Scan(&h.Slug, &h.GPUName, &h.GPUCount, &h.GPUMemoryBytes, &h.CPUCores, &h.PricePerHour)
	return h, mapErr(err, "hardware profile")
}

// CountServingAgents counts agents that could take a run now: online,
// heartbeating within staleAfter, not drained or deactivated, with this
// hardware profile and runtime.
// Agents of another protocol version do not count.
func (q *Queries) CountServingAgents(ctx context.Context, profile, runtime string, protocol int, staleAfter time.Duration) (int, error) {
	var n int
	err := q.db.QueryRow(ctx, `SELECT count(*) FROM agents WHERE hardware_profile = @profile AND @runtime = ANY (runtimes)
		AND protocol_version = @protocol
		AND state = 'online' AND NOT drained AND deactivated_at IS NULL AND last_heartbeat_at > now() - @stale::interval`,
		pgx.NamedArgs{"profile": profile, "runtime": runtime, "protocol": protocol, "stale": staleAfter}).Scan(&n)
	return n, mapErr(err, "count serving agents")
}
