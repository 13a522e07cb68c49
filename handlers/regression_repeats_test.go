package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/notify"
	"github.com/ruckus/ruckus/app/regress"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/jobs"
)

// A repeated target is decided once every repeat's quality is in: a
// repeat whose score job has kept its figures and is still scoring it
// holds the decision, though the other repeats concluded first; when it is
// scored the target is decided with its quality, and run.regression goes
// out once, naming every metric (docs/verdict.md#regression-flags).
func TestRegressionOfARepeatedTargetWaitsForEveryRepeatsQuality(t *testing.T) {
	t.Parallel()
	h := newHistFixture(t)
	e := h.e
	ctx := context.Background()
	if r := e.api(http.MethodPost, "/api/v1/webhooks", h.tok, strings.NewReader(
		`{"url":"https://hooks.example.com/all","secret":"sixteen bytes or more","events":["benchmark.finished","run.regression"]}`), "application/json"); r.status != 201 {
		t.Fatalf("webhook: %d %v", r.status, r.body)
	}
	good := func(day float64) spec { return spec{right: below(40), tps: 100, e2e: 200, day: day} }
	h.repeated(t, spec{model: "m/a", hw: "cpu-2c", day: 0}, []spec{good(0), good(0.1), good(0.2)})

	// The next benchmark of the target (told to the webhook): every
	// repeat half as fast, twice as slow to answer, right on half the items.
	r := e.api(http.MethodPost, "/api/v1/benchmarks", h.tok, strings.NewReader(fmt.Sprintf(`{"name":"again","dataset":%d,
		"targets":[{"model":"m/a","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":8},
		"scorer":"exact","repeats":3}`, h.ds)), "application/json")
	if r.status != 201 {
		t.Fatalf("create: %d %v", r.status, r.body)
	}
	var runs []int64
	for _, x := range r.body["runs"].([]any) {
		runs = append(runs, int64(x.(map[string]any)["run_id"].(float64)))
	}
	worse := func(day float64) spec { return spec{right: below(20), tps: 50, e2e: 400, day: day} }
	rc := insertOnly(t, e)
	w := &jobs.ScoreRunWorker{Scorer: &score.Service{Store: e.store}, Regressions: &regress.Checker{Store: e.store},
		Stats: conclude.Keeper{Store: e.store}, Notifier: &notify.Notifier{Store: e.store, River: rc}}
	work := func(run, job int64) {
		t.Helper()
		if err := w.Work(ctx, &river.Job[jobs.ScoreRunArgs]{JobRow: &rivertype.JobRow{ID: job}, Args: jobs.ScoreRunArgs{RunID: run}}); err != nil {
			t.Fatal(err)
		}
	}
	// The first repeat ends; its score job keeps its figures and is
	// still scoring it when the other two are scored and concluded.
	h.end(t, runs[0], "cpu-2c", worse(1))
	if err := (conclude.Keeper{Store: e.store}).ComputeRunStats(ctx, runs[0]); err != nil {
		t.Fatal(err)
	}
	scoring, err := rc.Insert(ctx, jobs.ScoreRunArgs{RunID: runs[0]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, run := range runs[1:] {
		work(run, h.end(t, run, "cpu-2c", worse(1.1+0.1*float64(i))))
	}
	count := func(query string, args ...any) int {
		t.Helper()
		var n int
		if err := e.store.Pool().QueryRow(ctx, query, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const flags = `SELECT count(*) FROM run_regressions WHERE run_id = ANY($1)`
	const told = `SELECT count(*) FROM webhook_deliveries WHERE event = $1`
	if n, m := count(flags, runs), count(told, "run.regression"); n != 0 || m != 0 {
		t.Fatalf("decided before the first repeat's quality: %d flags, %d run.regression", n, m)
	}
	work(runs[0], scoring.Job.ID)
	for _, run := range runs {
		var metrics string
		if err := e.store.Pool().QueryRow(ctx, `SELECT string_agg(metric, ',' ORDER BY metric) FROM run_regressions WHERE run_id = $1`, run).
			Scan(&metrics); err != nil || metrics != "latency_p95,quality,throughput" {
			t.Errorf("run %d flagged %q (%v), want every metric", run, metrics, err)
		}
	}
	if n := count(told, "run.regression"); n != 1 {
		t.Errorf("run.regression told %d times, want once", n)
	}
	// Told again for the same target with the same flags (a rescoring of
	// the first repeat, and the other two concluding again): not again.
	for _, run := range runs {
		job, err := rc.Insert(ctx, jobs.ScoreRunArgs{RunID: run}, nil)
		if err != nil {
			t.Fatal(err)
		}
		work(run, job.Job.ID)
	}
	if n := count(told, "run.regression"); n != 1 {
		t.Errorf("run.regression told %d times after concluding each repeat again, want once", n)
	}
	if n := count(told, "benchmark.finished"); n != 1 {
		t.Errorf("benchmark.finished told %d times, want once", n)
	}
}
