package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// AddRunEvent appends to a run's story.
func (q *Queries) AddRunEvent(ctx context.Context, runID int64, agentID *int64, kind, message string) error {
	_, err := q.db.Exec(ctx, `INSERT INTO run_events (run_id, agent_id, kind, message) VALUES (@run, @agent, @kind, @msg)`,
		pgx.NamedArgs{"run": runID, "agent": agentID, "kind": kind, "msg": message})
	return mapErr(err, "add run event")
}

// RunEvent is one line of a run's story.
type RunEvent struct {
	At        time.Time
	AgentName string
	Kind      string
	Message   string
}

// RunEvents returns a run's story, oldest first.
func (q *Queries) RunEvents(ctx context.Context, runID int64) ([]RunEvent, error) {
	rows, _ := q.db.Query(ctx, `SELECT e.at, coalesce(a.name, ''), e.kind, e.message
		FROM run_events e LEFT JOIN agents a ON a.id = e.agent_id WHERE e.run_id = @run ORDER BY e.id`, pgx.NamedArgs{"run": runID})
	es, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (RunEvent, error) {
		var e RunEvent
		err := row.Scan(&e.At, &e.AgentName, &e.Kind, &e.Message)
		return e, err
	})
	return es, mapErr(err, "run events")
}
