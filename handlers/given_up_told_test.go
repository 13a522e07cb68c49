package handlers_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/notify"
	"github.com/ruckus/ruckus/app/regress"
	"github.com/ruckus/ruckus/app/sandbox"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// An execution that fails for good concludes its run: the sandbox worker
// queues the run's conclusion (its score job returned when it queued the
// execution), the job is cancelled rather than retried, and the
// benchmark's verdict is drawn without the run's quality, saying so, with
// benchmark.finished told (docs/verdict.md#when-a-verdict-is-final).
func TestFailedExecutionIsConcluded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHistFixture(t)
	e := h.e
	if r := e.api(http.MethodPost, "/api/v1/webhooks", h.tok, strings.NewReader(
		`{"url":"https://hooks.example.com/done","secret":"sixteen bytes or more","events":["benchmark.finished"]}`), "application/json"); r.status != 201 {
		t.Fatalf("webhook: %d %v", r.status, r.body)
	}
	r := e.api(http.MethodPost, "/api/v1/benchmarks", h.tok, strings.NewReader(fmt.Sprintf(`{"name":"code","dataset":%d,
		"targets":[{"model":"m/a","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":8},
		"scorer":"exec"}`, h.ds)), "application/json")
	if r.status != 201 {
		t.Fatalf("create: %d %v", r.status, r.body)
	}
	b := fmt.Sprint(r.body["benchmark_id"])
	run := int64(r.body["runs"].([]any)[0].(map[string]any)["run_id"].(float64))
	// Execution settings no execution can read (a manifest from before
	// their rule, say).
	if _, err := e.store.Pool().Exec(ctx, `UPDATE benchmarks SET manifest = jsonb_set(manifest, '{scorer_options}', '{"exec":"fast"}')
		WHERE id = $1`, b); err != nil {
		t.Fatal(err)
	}
	job := h.end(t, run, "cpu-2c", spec{right: below(40), tps: 100, e2e: 200})
	rc := insertOnly(t, e)
	queue := &sandbox.Queue{Store: e.store, River: rc}
	n := &notify.Notifier{Store: e.store, River: rc}
	w := &jobs.ScoreRunWorker{Scorer: &score.Service{Store: e.store, Exec: queue}, Stats: conclude.Keeper{Store: e.store}, Notifier: n}
	if err := w.Work(ctx, &river.Job[jobs.ScoreRunArgs]{JobRow: &rivertype.JobRow{ID: job}, Args: jobs.ScoreRunArgs{RunID: run}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE river_job SET state = 'cancelled', finalized_at = now()
		WHERE kind = 'execute_run' AND args @> jsonb_build_object('run_id', $1::bigint)`, run); err != nil {
		t.Fatal(err)
	}
	ex := sandbox.NewExecutor(e.store, sandbox.NewRunner(), 1, nil)
	ex.Conclusions = queue
	var cancel *river.JobCancelError
	if err := ex.ExecuteRun(ctx, run, "exec"); !errors.As(err, &cancel) {
		t.Fatalf("a failed execution: %v, want the job cancelled", err)
	}
	var concludeJob int64
	if err := e.store.Pool().QueryRow(ctx, `SELECT id FROM river_job WHERE kind = 'conclude_run' AND args @> jsonb_build_object('run_id', $1::bigint)`, run).
		Scan(&concludeJob); err != nil {
		t.Fatalf("the failed execution queued no conclusion: %v", err)
	}
	cw := &jobs.ConcludeRunWorker{Stats: conclude.Keeper{Store: e.store}, Notifier: n}
	if err := cw.Work(ctx, &river.Job[jobs.ConcludeRunArgs]{JobRow: &rivertype.JobRow{ID: concludeJob}, Args: jobs.ConcludeRunArgs{RunID: run}}); err != nil {
		t.Fatal(err)
	}
	v := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", h.tok, nil, "")
	if v.body["pending"] != false || !strings.Contains(fmt.Sprint(v.body["reason"]), fmt.Sprintf("scoring failed for run %d", run)) {
		t.Fatalf("verdict after the execution failed: %v", v.body)
	}
	if got := deliveries(t, e, "benchmark.finished"); got != 1 {
		t.Fatalf("benchmark.finished told %d times", got)
	}
}

// A scoring River gives up leaves its benchmark concluded (the run listed
// as failed scoring) but runs no step that would tell it: the periodic
// look queues the run's conclusion once, however often it looks, and
// benchmark.finished goes out once; a benchmark still waiting for another
// run's scoring is not told.
func TestWebhookToldWhenAScoringIsGivenUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHistFixture(t)
	e := h.e
	if r := e.api(http.MethodPost, "/api/v1/webhooks", h.tok, strings.NewReader(
		`{"url":"https://hooks.example.com/done","secret":"sixteen bytes or more","events":["benchmark.finished"]}`), "application/json"); r.status != 201 {
		t.Fatalf("webhook: %d %v", r.status, r.body)
	}
	r := e.api(http.MethodPost, "/api/v1/benchmarks", h.tok, strings.NewReader(fmt.Sprintf(`{"name":"two","dataset":%d,
		"targets":[{"model":"m/a","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":8},
		"scorer":"exact","repeats":2}`, h.ds)), "application/json")
	if r.status != 201 {
		t.Fatalf("create: %d %v", r.status, r.body)
	}
	var runs []int64
	for _, x := range r.body["runs"].([]any) {
		runs = append(runs, int64(x.(map[string]any)["run_id"].(float64)))
	}
	rc := insertOnly(t, e)
	svc := testkit.Service(ctx, t, e.store, &testkit.ServiceOpts{River: rc})
	n := &notify.Notifier{Store: e.store, River: rc}
	var scoring []int64
	for _, run := range runs {
		h.end(t, run, "cpu-2c", spec{right: below(40), tps: 100, e2e: 200})
		j, err := rc.Insert(ctx, jobs.ScoreRunArgs{RunID: run}, nil)
		if err != nil {
			t.Fatal(err)
		}
		scoring = append(scoring, j.Job.ID)
	}
	giveUp := func(job int64) {
		t.Helper()
		if _, err := e.store.Pool().Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = now() WHERE id = $1`, job); err != nil {
			t.Fatal(err)
		}
	}
	giveUp(scoring[0])
	concludeGivenUp(t, e, svc, n)
	if got := deliveries(t, e, "benchmark.finished"); got != 0 {
		t.Fatalf("told while run %d is still to be scored: %d", runs[1], got)
	}
	giveUp(scoring[1])
	for range 2 {
		concludeGivenUp(t, e, svc, n)
	}
	if got := deliveries(t, e, "benchmark.finished"); got != 1 {
		t.Fatalf("benchmark.finished told %d times, want once", got)
	}
	if got, err := svc.ConcludeGivenUp(ctx); err != nil || got != 0 {
		t.Fatalf("once concluded, %d runs queued again (%v)", got, err)
	}
	b := fmt.Sprint(r.body["benchmark_id"])
	if v := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", h.tok, nil, ""); v.body["pending"] != false {
		t.Fatalf("verdict: %v", v.body)
	}
}

// concludeGivenUp looks for runs given up as the periodic job does and
// works the conclusions it queued, as the server's queue would.
func concludeGivenUp(t *testing.T, e *env, svc *bench.Service, n jobs.RunNotifier) int {
	t.Helper()
	ctx := context.Background()
	queued, err := svc.ConcludeGivenUp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := e.store.Pool().Query(ctx, `SELECT id, (args->>'run_id')::bigint FROM river_job
		WHERE kind = 'conclude_run' AND state = 'available' AND 'given_up' = ANY(tags) ORDER BY id`)
	type job struct{ id, run int64 }
	todo, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (job, error) {
		var j job
		return j, r.Scan(&j.id, &j.run)
	})
	if err != nil {
		t.Fatal(err)
	}
	w := &jobs.ConcludeRunWorker{Regressions: &regress.Checker{Store: e.store}, Stats: conclude.Keeper{Store: e.store}, Notifier: n}
	for _, j := range todo {
		if err := w.Work(ctx, &river.Job[jobs.ConcludeRunArgs]{JobRow: &rivertype.JobRow{ID: j.id}, Args: jobs.ConcludeRunArgs{RunID: j.run}}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.store.Pool().Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now() WHERE id = $1`, j.id); err != nil {
			t.Fatal(err)
		}
	}
	return queued
}

// A target whose last repeat's scoring River gives up is still checked
// for regressions, whoever listens: the first repeat's check waited for
// the last, the last's job never concluded it, and the conclusion queued
// for it decides the target on the repeat measured. It is queued once,
// and not again when that conclusion is given up in turn
// (docs/verdict.md#when-a-verdict-is-final).
func TestRegressionDecidedWhenTheLastRepeatIsGivenUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHistFixture(t)
	e := h.e
	h.run(t, spec{model: "m/a", hw: "cpu-2c", day: 1, right: below(40), tps: 100, e2e: 200})
	r := e.api(http.MethodPost, "/api/v1/benchmarks", h.tok, strings.NewReader(fmt.Sprintf(`{"name":"slower","dataset":%d,
		"targets":[{"model":"m/a","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":8},
		"scorer":"exact","repeats":2}`, h.ds)), "application/json")
	if r.status != 201 {
		t.Fatalf("create: %d %v", r.status, r.body)
	}
	var runs []int64
	for _, x := range r.body["runs"].([]any) {
		runs = append(runs, int64(x.(map[string]any)["run_id"].(float64)))
	}
	slow := spec{model: "m/a", hw: "cpu-2c", day: 2, right: below(40), tps: 20, e2e: 1000}
	h.finish(t, runs[0], "cpu-2c", slow)
	flags := func() int {
		t.Helper()
		var n int
		if err := e.store.Pool().QueryRow(ctx, `SELECT count(*) FROM run_regressions WHERE run_id = $1`, runs[0]).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := flags(); got != 0 {
		t.Fatalf("decided while run %d is to run: %d flags", runs[1], got)
	}
	h.end(t, runs[1], "cpu-2c", slow)
	rc := insertOnly(t, e)
	j, err := rc.Insert(ctx, jobs.ScoreRunArgs{RunID: runs[1]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = now() WHERE id = $1`, j.Job.ID); err != nil {
		t.Fatal(err)
	}
	svc := testkit.Service(ctx, t, e.store, &testkit.ServiceOpts{River: rc})
	if got := concludeGivenUp(t, e, svc, nil); got != 1 {
		t.Fatalf("%d conclusions queued, want 1", got)
	}
	if got := flags(); got == 0 {
		t.Fatalf("run %d, five times slower than its target's previous run, carries no flag", runs[0])
	}
	if got := concludeGivenUp(t, e, svc, nil); got != 0 {
		t.Fatalf("queued again: %d", got)
	}
	if _, err := e.store.Pool().Exec(ctx, `UPDATE river_job SET state = 'discarded' WHERE kind = 'conclude_run'`); err != nil {
		t.Fatal(err)
	}
	if got := concludeGivenUp(t, e, svc, nil); got != 0 {
		t.Fatalf("queued again after its conclusion was given up: %d", got)
	}
}

// deliveries counts the webhook deliveries of event recorded.
func deliveries(t *testing.T, e *env, event string) int {
	t.Helper()
	var n int
	if err := e.store.Pool().QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries WHERE event = $1`, event).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
