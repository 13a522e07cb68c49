package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ruckus/ruckus/app/attest"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// secondAgent registers another agent of x's world on its queue and has it
// take a run there.
func secondAgent(t *testing.T, x *agentAtWork, name string) *agentAtWork {
	t.Helper()
	url, _ := pgtest.AgentLogin(t, x.w.pool, name)
	y := &agentAtWork{agentDB: connectAs(t, url, ""), w: x.w}
	var err error
	y.agent, err = y.RegisterAgent(context.Background(), store.AgentRegistration{Name: name, ProtocolVersion: jobs.ProtocolVersion,
		Runtimes: []string{"sim"}, Profile: store.HardwareProfile{Slug: "cpu", CPUCores: 2}})
	if err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
	y.claim, y.jobID = y.takeRun(t)
	return y
}

// silence makes the agents' runs look abandoned: no heartbeat, no
// progress, for an hour.
func silence(t *testing.T, w *world, xs ...*agentAtWork) {
	t.Helper()
	for _, x := range xs {
		if _, err := w.pool.Exec(context.Background(), `UPDATE agents SET last_heartbeat_at = now() - interval '1 hour' WHERE id = $1`, x.agent.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := w.pool.Exec(context.Background(), `UPDATE runs SET progress_at = now() - interval '1 hour',
			segment_started_at = now() - interval '2 hours' WHERE id = $1`, x.claim.RunID); err != nil {
			t.Fatal(err)
		}
	}
}

func runState(t *testing.T, w *world, runID int64) string {
	t.Helper()
	var state string
	if err := w.pool.QueryRow(context.Background(), `SELECT state FROM runs WHERE id = $1`, runID).Scan(&state); err != nil {
		t.Fatal(err)
	}
	return state
}

// An agent that keeps the row of its run locked (SELECT … FOR UPDATE in a
// transaction it leaves open) does not keep the reaper from handing
// another dead agent's run on, and the reaper's sweep ends its transaction
// once it has been idle past the agents' bound; its role starts with that
// bound as a default too.
func TestHeldRunLockDoesNotStallTheReaper(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	x := startWork(t, false)
	y := secondAgent(t, x, "node-b")
	var idle string
	if err := x.Store.Pool().QueryRow(ctx, `SHOW idle_in_transaction_session_timeout`).Scan(&idle); err != nil || idle != "30s" {
		t.Fatalf("the agent role's idle_in_transaction_session_timeout: %q %v, want 30s", idle, err)
	}

	silence(t, x.w, x, y)
	held, err := x.Store.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Rollback(ctx) }()
	if _, err := held.Exec(ctx, `SELECT id FROM runs WHERE id = $1 FOR UPDATE`, x.claim.RunID); err != nil {
		t.Fatalf("the agent locks its run: %v", err)
	}

	start := time.Now()
	n, err := x.w.svc.ReassignStaleRuns(ctx)
	took := time.Since(start)
	if err != nil || n != 1 {
		t.Fatalf("reaper beside a held lock: %d runs reassigned, %v; want the other agent's", n, err)
	}
	if limit := testkit.Scaled(3 * store.RowLockTimeout); took > limit {
		t.Fatalf("the reaper took %v beside a held lock, want within %v", took, limit)
	}
	if a, b := runState(t, x.w, x.claim.RunID), runState(t, x.w, y.claim.RunID); a != "running" || b != "queued" {
		t.Fatalf("after the reaper: locked run %s, other run %s; want running and queued", a, b)
	}

	// The server ends the transaction idle past the bound (here 100 ms,
	// the agents' 30 s in production), and the run is reassigned next.
	testkit.WaitFor(t, "the sweep to end the idle transaction", func() bool {
		var ended int
		if err := x.w.pool.QueryRow(ctx, `SELECT ruckus_agent_sweep_stalled('100 ms', '1 hour')`).Scan(&ended); err != nil {
			t.Fatal(err)
		}
		return ended > 0
	})
	if _, err := held.Exec(ctx, `SELECT 1`); err == nil {
		t.Fatal("the agent's held transaction still works after the sweep")
	}
	if n, err := x.w.svc.ReassignStaleRuns(ctx); err != nil || n != 1 {
		t.Fatalf("reaper after the sweep: %d %v", n, err)
	}
}

// insertScoreJob queues a score_run job for runID as an agent may (the
// insert policy of migration 0010), through db.
func insertScoreJob(ctx context.Context, db store.DBTX, runID int64) error {
	_, err := db.Exec(ctx, `INSERT INTO river_job (kind, args, queue, max_attempts, state, priority, created_at)
		VALUES ('score_run', jsonb_build_object('run_id', $1::bigint), 'server', 3, 'available', 1, now() - interval '1 day')`, runID)
	return err
}

// An agent queues the scoring of its run once, when it ends it: before the
// end it may not, and a flood after it (here 200 inserts from 8
// connections) adds nothing, each refused by name.
func TestScoreJobFloodIsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	x := startWork(t, false)
	run := x.claim.RunID
	if err := insertScoreJob(ctx, x.Store.Pool(), run); !refusedOnce(err) {
		t.Fatalf("scoring a run still running: %v, want refused", err)
	}
	// The honest end: the run's end and its scoring in one transaction.
	if err := x.Store.InTxWith(ctx, func(tx pgx.Tx, q *store.Queries) error {
		if err := q.FinishRun(ctx, x.claim.Lease, store.Finish{State: "completed"}); err != nil {
			return err
		}
		return insertScoreJob(ctx, tx, run)
	}); err != nil {
		t.Fatalf("finish and queue the scoring: %v", err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var accepted, other int
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				err := insertScoreJob(ctx, x.Store.Pool(), run)
				mu.Lock()
				switch {
				case err == nil:
					accepted++
				case !refusedOnce(err):
					other++
					t.Log(err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var queued int
	var newest time.Time
	if err := x.w.pool.QueryRow(ctx, `SELECT count(*), max(created_at) FROM river_job WHERE kind = 'score_run' AND args ->> 'run_id' = $1`,
		fmt.Sprint(run)).Scan(&queued, &newest); err != nil {
		t.Fatal(err)
	}
	if accepted != 0 || other != 0 || queued != 1 {
		t.Fatalf("flood: %d accepted, %d refused otherwise, %d score_run jobs queued; want 0, 0, 1", accepted, other, queued)
	}
	if time.Since(newest) > time.Hour {
		t.Fatalf("the agent's scoring job is dated %v: the agent chose its date", newest)
	}
}

// refusedOnce says whether err is migration 0032's refusal of an agent's
// score_run job.
func refusedOnce(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.ConstraintName == "ruckus_agent_score_job_once"
}

// The figures an agent writes at a run's end are not what pages show: the
// server computes them again from the result rows it signs, and a figure
// changed after that fails verification by name.
func TestHeadlineFiguresFollowTheSignedRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	x := startWork(t, false)
	var rows []store.ResultRecord
	for i := range 5 {
		r := jobs.Result{Idx: i, CustomID: "x", Status: jobs.StatusOK, CompletionTokens: 10, PromptTokens: 3, ContentEvents: 10,
			TTFT: time.Duration(50+i) * time.Millisecond, E2E: time.Duration(400+i) * time.Millisecond}
		rows = append(rows, store.ResultRecord{Result: r, SentAt: time.Now()})
	}
	if _, err := x.WriteResults(ctx, x.claim.Lease, rows); err != nil {
		t.Fatal(err)
	}
	if err := x.FinishRun(ctx, x.claim.Lease, store.Finish{State: "completed", Segment: 2 * time.Second,
		Throughput: 777777, RequestsPerS: 777777, Summary: []byte(`{"requests": 5, "ttft_ms": {"p50": 0.001}}`)}); err != nil {
		t.Fatal(err)
	}
	signer, err := attest.NewSigner([]byte("a test seed of thirty-two bytes!"))
	if err != nil {
		t.Fatal(err)
	}
	svc := &attest.Service{Store: x.w.st, Signer: signer}
	if err := svc.AttestRun(ctx, x.claim.RunID); err != nil {
		t.Fatal(err)
	}
	var tps float64
	if err := x.w.pool.QueryRow(ctx, `SELECT throughput FROM runs WHERE id = $1`, x.claim.RunID).Scan(&tps); err != nil {
		t.Fatal(err)
	}
	if tps != 25 { // 50 tokens in 2 s
		t.Fatalf("throughput after signing: %g, want 25 from the rows", tps)
	}
	if _, v, err := svc.VerifyRun(ctx, x.claim.RunID); err != nil || !v.Valid {
		t.Fatalf("verify the signed run: %+v %v", v, err)
	}
	for _, tamper := range []string{`UPDATE runs SET throughput = 777777 WHERE id = $1`,
		`UPDATE runs SET throughput = 25, summary = jsonb_set(summary, '{ttft_ms,p95}', '0.5') WHERE id = $1`} {
		if _, err := x.w.pool.Exec(ctx, tamper, x.claim.RunID); err != nil {
			t.Fatal(err)
		}
		if _, v, err := svc.VerifyRun(ctx, x.claim.RunID); err != nil || v.Valid || v.Problem == "" {
			t.Fatalf("verify after %q: %+v %v, want a problem named", tamper, v, err)
		} else {
			t.Log(v.Problem)
		}
	}
}
