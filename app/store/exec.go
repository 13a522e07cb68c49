package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ExecItem is one answer of a run to execute: the result, its item's
// reference and (HumanEval) the prompt the answer continues.
type ExecItem struct {
	Idx, Sample int
	Status      string
	Output      string
	Prompt      string
	Reference   json.RawMessage
	// Done is set when the answer was executed already (a retried job
	// continues from there).
	Done       bool
	ExecStatus string
}

// ExecItems returns every result of a run with what executing it needs,
// in item and sample order.
func (q *Queries) ExecItems(ctx context.Context, runID int64) ([]ExecItem, error) {
	rows, _ := q.db.Query(ctx, `SELECT r.idx, r.sample, r.status, r.output,
			coalesce(i.request->'body'->>'prompt', ''), coalesce(i.reference, 'null'), r.exec_status
		FROM results r JOIN runs ru ON ru.id = r.run_id JOIN benchmarks b ON b.id = ru.benchmark_id
		LEFT JOIN dataset_items i ON i.dataset_id = b.dataset_id AND i.idx = r.idx
		WHERE r.run_id = @run ORDER BY r.idx, r.sample`, pgx.NamedArgs{"run": runID})
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ExecItem, error) {
		var it ExecItem
		err := row.Scan(&it.Idx, &it.Sample, &it.Status, &it.Output, &it.Prompt, &it.Reference, &it.ExecStatus)
		it.Done = it.ExecStatus != ""
		return it, err
	})
	return out, mapErr(err, "exec items")
}

// RunExecOptions returns the execution settings of a run's benchmark
// (the manifest's scorer_options.exec; null when none).
func (q *Queries) RunExecOptions(ctx context.Context, runID int64) (json.RawMessage, error) {
	var raw json.RawMessage
	err := q.db.QueryRow(ctx, `SELECT coalesce(b.manifest->'scorer_options'->'exec', 'null')
		FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.id = @run`, pgx.NamedArgs{"run": runID}).Scan(&raw)
	return raw, mapErr(err, "run exec options")
}

// ExecOutcome is what the sandbox made of one answer.
type ExecOutcome struct {
	Idx, Sample int
	Status      string
	Stderr      string
	Duration    time.Duration
}

// SaveExecOutcomes stores a batch of outcomes. Writing one again
// overwrites it, so a retried job never duplicates anything.
func (q *Queries) SaveExecOutcomes(ctx context.Context, runID int64, outs []ExecOutcome) error {
	n := len(outs)
	idx, sample, status, stderr, ms := make([]int32, n), make([]int32, n), make([]string, n), make([]string, n), make([]float64, n)
	for i, o := range outs {
		idx[i], sample[i], status[i], stderr[i] = int32(o.Idx), int32(o.Sample), o.Status, o.Stderr
		ms[i] = float64(o.Duration) / float64(time.Millisecond)
	}
	_, err := q.db.Exec(ctx, `UPDATE results r SET exec_status = u.status, exec_stderr = u.stderr, exec_ms = u.ms
		FROM unnest(@idx::int4[], @sample::int4[], @status::text[], @stderr::text[], @ms::float8[]) AS u(idx, sample, status, stderr, ms)
		WHERE r.run_id = @run AND r.idx = u.idx AND r.sample = u.sample`,
		pgx.NamedArgs{"run": runID, "idx": idx, "sample": sample, "status": status, "stderr": stderr, "ms": ms})
	return mapErr(err, "save exec outcomes")
}

// SetExecState records where a run's execution stands (queued, running,
// failed with msg).
func (q *Queries) SetExecState(ctx context.Context, runID int64, state, msg string) error {
	_, err := q.db.Exec(ctx, `UPDATE runs SET exec_state = @state, exec_error = @msg WHERE id = @run`,
		pgx.NamedArgs{"run": runID, "state": state, "msg": msg})
	return mapErr(err, "set exec state")
}

// QueueExecution prepares a run for a fresh execution, in the transaction
// that queues its job: earlier outcomes and scores are cleared and the
// state is queued.
func (q *Queries) QueueExecution(ctx context.Context, runID int64, scorer string) error {
	tag, err := q.db.Exec(ctx, `UPDATE runs SET exec_state = 'queued', exec_error = '', exec_pass = NULL, exec_counts = NULL,
		exec_at = NULL, scorer = @scorer WHERE id = @run`, pgx.NamedArgs{"run": runID, "scorer": scorer})
	if err != nil {
		return mapErr(err, "queue execution")
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("queue execution of run %d: %w", runID, ErrNotFound)
	}
	_, err = q.db.Exec(ctx, `UPDATE results SET exec_status = '', exec_stderr = '', exec_ms = NULL WHERE run_id = @run AND exec_status <> ''`,
		pgx.NamedArgs{"run": runID})
	return mapErr(err, "queue execution")
}

// ExecSummary is a run's execution: pass@k by k and results by class.
type ExecSummary struct {
	PassAt map[string]float64 `json:"pass_at"`
	Counts map[string]int     `json:"counts"`
}

// FinishExecution stores a run's pass@k and counts and, as its quality,
// each executed answer's score (1 passed, 0 not) with their mean and
// interval, in one transaction.
func (s *Store) FinishExecution(ctx context.Context, runID int64, sum ExecSummary, q RunQuality) error {
	pass, err := json.Marshal(sum.PassAt)
	if err != nil {
		return err
	}
	counts, err := json.Marshal(sum.Counts)
	if err != nil {
		return err
	}
	return s.InTx(ctx, func(tx *Queries) error {
		if _, err := tx.db.Exec(ctx, `UPDATE results SET score = CASE WHEN exec_status = 'passed' THEN 1 ELSE 0 END
			WHERE run_id = @run AND exec_status <> ''`, pgx.NamedArgs{"run": runID}); err != nil {
			return mapErr(err, "execution scores")
		}
		_, err := tx.db.Exec(ctx, `UPDATE runs SET exec_state = 'done', exec_error = '', exec_pass = @pass, exec_counts = @counts,
			exec_at = now(), scorer = @scorer, scored = @scored, quality = @mean, quality_lo = @lo, quality_hi = @hi, scored_at = now()
			WHERE id = @run`, pgx.NamedArgs{"run": runID, "pass": pass, "counts": counts, "scorer": q.Scorer, "scored": q.Scored,
			"mean": q.Mean, "lo": q.Low, "hi": q.High})
		if err != nil {
			return mapErr(err, "finish execution")
		}
		return tx.saveRunQuality(ctx, runID, q)
	})
}

// RunExecution is a run's execution as pages and the API show it.
type RunExecution struct {
	State   string
	Error   string
	Samples int
	Summary *ExecSummary
	At      *time.Time
}

// RunExecution reads a run's execution state and figures.
func (q *Queries) RunExecution(ctx context.Context, runID int64) (RunExecution, error) {
	var e RunExecution
	var pass, counts []byte
	err := q.db.QueryRow(ctx, `SELECT exec_state, exec_error, samples, exec_pass, exec_counts, exec_at FROM runs WHERE id = @run`,
		pgx.NamedArgs{"run": runID}).Scan(&e.State, &e.Error, &e.Samples, &pass, &counts, &e.At)
	if err != nil {
		return e, mapErr(err, "run execution")
	}
	if pass != nil || counts != nil {
		e.Summary = &ExecSummary{}
		_ = json.Unmarshal(pass, &e.Summary.PassAt)
		_ = json.Unmarshal(counts, &e.Summary.Counts)
	}
	return e, nil
}
