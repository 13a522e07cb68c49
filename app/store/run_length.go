package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/ruckus/ruckus/jobs"
)

// runStepStates reads, per step of a run, the runtime's readings taken
// while the step ran: from its first send until the next step's first
// send (the steps of a length sweep follow each other; a reading just
// after a step's last answer still tells of that step), the last step
// until its last answer and one reading interval more. Preemptions are
// the counter's rise over the step, from its last reading before the
// step (or, for the first, its first reading in it).
const runStepStates = `WITH w AS (
		SELECT phase, min(sent_at) AS t0, max(sent_at + make_interval(secs => coalesce(e2e_ms, 0) / 1000)) AS t1
		FROM results WHERE run_id = @run AND phase <> '' GROUP BY phase),
	b AS (SELECT phase, t0, coalesce(lead(t0) OVER (ORDER BY t0), t1 + interval '5 seconds') AS t1 FROM w)
	SELECT b.phase, count(s.t)::int, max(s.waiting), max(s.kv_cache),
		max(s.preemptions) - coalesce((SELECT p.preemptions FROM run_samples p
			WHERE p.run_id = @run AND p.t < b.t0 AND p.preemptions IS NOT NULL ORDER BY p.t DESC LIMIT 1), min(s.preemptions))
	FROM b LEFT JOIN run_samples s ON s.run_id = @run AND s.t >= b.t0 AND s.t < b.t1
	GROUP BY b.phase, b.t0 ORDER BY b.t0`

// RunStepStates is what the runtime's /metrics said during each step of a
// run (a length sweep's, docs/metrics.md#length-sweeps), by step name:
// the most requests waiting, the highest KV-cache usage and the
// preemptions made, nil where no reading measured them.
func (q *Queries) RunStepStates(ctx context.Context, runID int64) (map[string]jobs.RuntimeState, error) {
	rows, err := q.db.Query(ctx, runStepStates, pgx.NamedArgs{"run": runID})
	if err != nil {
		return nil, mapErr(err, "run step states")
	}
	out := map[string]jobs.RuntimeState{}
	var phase string
	var st jobs.RuntimeState
	_, err = pgx.ForEachRow(rows, []any{&phase, &st.Readings, &st.MaxWaiting, &st.MaxKVCache, &st.Preemptions}, func() error {
		out[phase] = st
		st = jobs.RuntimeState{}
		return nil
	})
	return out, mapErr(err, "run step states")
}
