package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// QueueCount is how many River jobs of one queue are in one state.
type QueueCount struct {
	Queue string
	State string
	Jobs  int64
}

// QueueCounts counts the River jobs not yet finished (available,
// scheduled, retryable, running) per queue and state, for the metrics an
// autoscaler reads.
func (q *Queries) QueueCounts(ctx context.Context) ([]QueueCount, error) {
	rows, _ := q.db.Query(ctx, `SELECT queue, state::text, count(*) FROM river_job
		WHERE state IN ('available', 'scheduled', 'retryable', 'running', 'pending')
		GROUP BY queue, state ORDER BY queue, state`)
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (QueueCount, error) {
		var c QueueCount
		return c, r.Scan(&c.Queue, &c.State, &c.Jobs)
	})
	return cs, mapErr(err, "count queued jobs")
}

// RunStateCounts counts runs per state.
func (q *Queries) RunStateCounts(ctx context.Context) (map[string]int64, error) {
	rows, _ := q.db.Query(ctx, `SELECT state, count(*) FROM runs GROUP BY state`)
	out := map[string]int64{}
	var state string
	var n int64
	_, err := pgx.ForEachRow(rows, []any{&state, &n}, func() error {
		out[state] = n
		return nil
	})
	return out, mapErr(err, "count runs by state")
}

// RunLapse is one run's lease latency (queued until an agent took it)
// or duration (taken until finished), with the time it was observed at.
type RunLapse struct {
	Seconds float64
	At      time.Time
}

// DatabaseNow is the database's clock, the one every run timestamp uses.
func (q *Queries) DatabaseNow(ctx context.Context) (time.Time, error) {
	var t time.Time
	err := q.db.QueryRow(ctx, `SELECT now()`).Scan(&t)
	return t, mapErr(err, "read the database clock")
}

// RunsStartedAfter returns the lease latency of the runs first taken by an
// agent after since (at most limit, oldest first).
func (q *Queries) RunsStartedAfter(ctx context.Context, since time.Time, limit int) ([]RunLapse, error) {
	return q.runTimings(ctx, `SELECT greatest(extract(epoch FROM started_at - created_at), 0)::float8, started_at
		FROM runs WHERE started_at > @since AND mode <> 'imported' ORDER BY started_at LIMIT @limit`, since, limit)
}

// RunsFinishedAfter returns the duration of the runs that finished after
// since (at most limit, oldest first).
func (q *Queries) RunsFinishedAfter(ctx context.Context, since time.Time, limit int) ([]RunLapse, error) {
	return q.runTimings(ctx, `SELECT greatest(extract(epoch FROM finished_at - started_at), 0)::float8, finished_at
		FROM runs WHERE finished_at > @since AND started_at IS NOT NULL AND mode <> 'imported' ORDER BY finished_at LIMIT @limit`, since, limit)
}

func (q *Queries) runTimings(ctx context.Context, sql string, since time.Time, limit int) ([]RunLapse, error) {
	rows, _ := q.db.Query(ctx, sql, pgx.NamedArgs{"since": since, "limit": limit})
	ts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RunLapse, error) {
		var t RunLapse
		return t, r.Scan(&t.Seconds, &t.At)
	})
	return ts, mapErr(err, "read run timings")
}
