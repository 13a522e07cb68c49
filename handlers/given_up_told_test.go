package handlers_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/notify"
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
// as failed scoring) but runs no step that would tell it: the reaper
// finds it and tells benchmark.finished once, however often it looks;
// a benchmark still waiting for another run's scoring is not told.
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
	svc := testkit.Service(ctx, t, e.store, nil)
	svc.Notifier = &notify.Notifier{Store: e.store, River: rc}
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
	if _, err := svc.TellGivenUp(ctx); err != nil {
		t.Fatal(err)
	}
	if got := deliveries(t, e, "benchmark.finished"); got != 0 {
		t.Fatalf("told while run %d is still to be scored: %d", runs[1], got)
	}
	giveUp(scoring[1])
	for range 2 {
		if _, err := svc.TellGivenUp(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := deliveries(t, e, "benchmark.finished"); got != 1 {
		t.Fatalf("benchmark.finished told %d times, want once", got)
	}
	if n, err := svc.TellGivenUp(ctx); err != nil || n != 0 {
		t.Fatalf("once told, %d runs looked at again (%v)", n, err)
	}
	b := fmt.Sprint(r.body["benchmark_id"])
	if v := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", h.tok, nil, ""); v.body["pending"] != false {
		t.Fatalf("verdict: %v", v.body)
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
