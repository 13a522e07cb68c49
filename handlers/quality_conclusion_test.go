package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/notify"
	"github.com/ruckus/ruckus/app/regress"
	"github.com/ruckus/ruckus/app/sandbox"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// A run scored by the benchmark's judge is concluded when its judging
// ends, not when its own score job starts the judging: a drop in quality
// against the target's previous run is flagged, run.regression goes out
// after the judging, and benchmark.finished only then
// (docs/verdict.md#when-a-verdict-is-final).
func TestJudgeScoredRegressionIsFlaggedAfterTheJudging(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ada := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	tok := e.token(ada)
	if r := e.api(http.MethodPost, "/api/v1/webhooks", tok, strings.NewReader(
		`{"url":"https://hooks.example.com/all","secret":"sixteen bytes or more","events":["benchmark.finished","run.regression"]}`), "application/json"); r.status != 201 {
		t.Fatalf("webhook: %d %v", r.status, r.body)
	}
	const items = 12
	_, a := runWithResults(t, e, tok, items, func(i int) string { return fmt.Sprint(i) })
	var ds int64
	if err := e.store.Pool().QueryRow(ctx, `SELECT b.dataset_id FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.id = $1`, a).Scan(&ds); err != nil {
		t.Fatal(err)
	}
	rc := insertOnly(t, e)
	svc := testkit.Service(ctx, t, e.store, &testkit.ServiceOpts{StaleAfter: 15 * time.Second})
	w := &jobs.ScoreRunWorker{Scorer: &score.Service{Store: e.store, Judge: svc}, Regressions: &regress.Checker{Store: e.store},
		Stats: conclude.Keeper{Store: e.store}, Notifier: &notify.Notifier{Store: e.store, River: rc}}
	// score queues a run's score job as its agent does when it ends (the
	// row stays to run: the worker's Work is called here) and works it.
	score := func(run int64) {
		t.Helper()
		res, err := rc.Insert(ctx, jobs.ScoreRunArgs{RunID: run}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Work(ctx, &river.Job[jobs.ScoreRunArgs]{JobRow: &rivertype.JobRow{ID: res.Job.ID}, Args: jobs.ScoreRunArgs{RunID: run}}); err != nil {
			t.Fatal(err)
		}
	}
	events := func() []string {
		t.Helper()
		got, err := e.store.WebhookDeliveries(ctx, ada.ID, 20)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range slices.Backward(got) {
			out = append(out, d.Event)
		}
		return out
	}
	// judged runs a benchmark of the target judged by m/small and returns
	// it with its run, concluded up to its judging.
	judged := func() (string, int64) {
		t.Helper()
		r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(fmt.Sprintf(`{"name":"judged","dataset":%d,
			"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":8},
			"scorer":"judge","scorer_options":{"judge":{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}}}`, ds)), "application/json")
		if r.status != 201 {
			t.Fatalf("judged benchmark: %d %v", r.status, r.body)
		}
		run := int64(r.body["runs"].([]any)[0].(map[string]any)["run_id"].(float64))
		finishAsAgent(t, e, run, func(i int, _ string) string { return fmt.Sprint(i) })
		// Its figures, as its agent sums them up when it ends.
		sum, err := summary.Run(ctx, e.store, run, jobs.SLO{}, 6*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(sum)
		if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET summary = $2 WHERE id = $1`, run, raw); err != nil {
			t.Fatal(err)
		}
		score(run)
		return fmt.Sprint(r.body["benchmark_id"]), run
	}
	// judge answers run's judging with ratings lo or lo+1 (of 1–10).
	judge := func(run int64, lo int) {
		t.Helper()
		judgeRun, _ := judgeRunOf(t, e, run, "single")
		finishAsAgent(t, e, judgeRun, func(_ int, customID string) string {
			item := 0
			fmt.Sscanf(customID, "%d/", &item)
			return fmt.Sprintf("Rating: [[%d]]", lo+item%2)
		})
		score(judgeRun)
	}

	_, first := judged()
	judge(first, 9)
	if got := events(); !slices.Equal(got, []string{"benchmark.finished"}) {
		t.Fatalf("after the first judging: %v", got)
	}
	b2, second := judged()
	// Its score job started the judging: nothing is concluded yet.
	if got := events(); len(got) != 1 {
		t.Fatalf("told before the judging: %v", got)
	}
	v := e.api(http.MethodGet, "/api/v1/benchmarks/"+b2+"/verdict", tok, nil, "")
	if v.body["pending"] != true || !strings.Contains(fmt.Sprint(v.body["reason"]), "judged") {
		t.Fatalf("verdict while judging: %v", v.body)
	}
	judge(second, 4)
	var flagged int
	if err := e.store.Pool().QueryRow(ctx, `SELECT count(*) FROM run_regressions WHERE run_id = $1 AND metric = 'quality'`, second).Scan(&flagged); err != nil || flagged != 1 {
		t.Fatalf("quality regression of run %d: %d (%v)", second, flagged, err)
	}
	if got := events(); !slices.Equal(got, []string{"benchmark.finished", "run.regression", "benchmark.finished"}) {
		t.Fatalf("after the second judging: %v", got)
	}
	if v := e.api(http.MethodGet, "/api/v1/benchmarks/"+b2+"/verdict", tok, nil, ""); v.body["pending"] != false {
		t.Fatalf("verdict after the judging: %v", v.body)
	}
}

// A judge-scored run that cannot be judged (here its judge model was
// retired; as well when no answer succeeded or no judge is named) is
// concluded inside its own score job, which is still live: the check must
// not wait for the run it is checking, or its target is never decided and
// a model version slower than the last is never flagged
// (docs/verdict.md#regression-flags).
func TestUnjudgedRunIsCheckedForRegressions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ada := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	tok := e.token(ada)
	_, a := runWithResults(t, e, tok, 80, func(i int) string { return fmt.Sprint(i) })
	var ds int64
	if err := e.store.Pool().QueryRow(ctx, `SELECT b.dataset_id FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.id = $1`, a).Scan(&ds); err != nil {
		t.Fatal(err)
	}
	rc := insertOnly(t, e)
	svc := testkit.Service(ctx, t, e.store, &testkit.ServiceOpts{StaleAfter: 15 * time.Second})
	w := &jobs.ScoreRunWorker{Scorer: &score.Service{Store: e.store, Judge: svc}, Regressions: &regress.Checker{Store: e.store},
		Stats: conclude.Keeper{Store: e.store}, Notifier: &notify.Notifier{Store: e.store, River: rc}}
	score := func(run int64) {
		t.Helper()
		res, err := rc.Insert(ctx, jobs.ScoreRunArgs{RunID: run}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Work(ctx, &river.Job[jobs.ScoreRunArgs]{JobRow: &rivertype.JobRow{ID: res.Job.ID}, Args: jobs.ScoreRunArgs{RunID: run}}); err != nil {
			t.Fatal(err)
		}
	}
	judged := func(slower float64) int64 {
		t.Helper()
		r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(fmt.Sprintf(`{"name":"judged","dataset":%d,
			"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":8},
			"scorer":"judge","scorer_options":{"judge":{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}}}`, ds)), "application/json")
		if r.status != 201 {
			t.Fatalf("judged benchmark: %d %v", r.status, r.body)
		}
		run := int64(r.body["runs"].([]any)[0].(map[string]any)["run_id"].(float64))
		finishAsAgent(t, e, run, func(i int, _ string) string { return fmt.Sprint(i) })
		if _, err := e.store.Pool().Exec(ctx, `UPDATE results SET ttft_ms = ttft_ms * $2 + idx % 3, e2e_ms = e2e_ms * $2 + idx % 3
			WHERE run_id = $1`, run, slower); err != nil {
			t.Fatal(err)
		}
		if slower > 1 {
			// Its judge is retired before its score job starts the judging.
			if _, err := e.store.Pool().Exec(ctx, `UPDATE models SET retired_at = now() WHERE name = 'm/small'`); err != nil {
				t.Fatal(err)
			}
		}
		sum, err := summary.Run(ctx, e.store, run, jobs.SLO{}, 6*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(sum)
		if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET summary = $2 WHERE id = $1`, run, raw); err != nil {
			t.Fatal(err)
		}
		score(run)
		return run
	}
	first := judged(1)
	judgeRun, _ := judgeRunOf(t, e, first, "single")
	finishAsAgent(t, e, judgeRun, func(_ int, _ string) string { return "Rating: [[9]]" })
	score(judgeRun)
	second := judged(20)
	var flags []string
	rows, err := e.store.Pool().Query(ctx, `SELECT metric FROM run_regressions WHERE run_id = $1 ORDER BY metric`, second)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			t.Fatal(err)
		}
		flags = append(flags, m)
	}
	if rows.Err() != nil || len(flags) == 0 {
		t.Fatalf("run %d, slower than run %d and not judged: flags %v (%v)", second, first, flags, rows.Err())
	}
}

// A run scored in the sandbox is concluded when its execution is done:
// its score job only queues the execution, the sandbox worker queues the
// conclusion once the quality is stored, and benchmark.finished goes out
// from that (docs/verdict.md#when-a-verdict-is-final).
func TestExecutedRunIsConcludedAfterItsExecution(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t)
	ada := e.createUser("ada@example.com", "correct horse", store.RoleUser)
	tok := e.token(ada)
	if r := e.api(http.MethodPost, "/api/v1/webhooks", tok, strings.NewReader(
		`{"url":"https://hooks.example.com/done","secret":"sixteen bytes or more","events":["benchmark.finished"]}`), "application/json"); r.status != 201 {
		t.Fatalf("webhook: %d %v", r.status, r.body)
	}
	const ds = `{"task_id":"H/0","prompt":"def inc(x):\n","test":"def check(f):\n    assert f(1) == 2\n","entry_point":"inc","canonical_solution":"    return x + 1\n"}
{"task_id":"H/1","prompt":"def dbl(x):\n","test":"def check(f):\n    assert f(2) == 4\n","entry_point":"dbl","canonical_solution":"    return 2 * x\n"}
`
	up := e.upload(tok, "he.jsonl", []byte(ds), nil)
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "m/small", Quantization: "bf16"})
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "cpu-1", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	r := e.api(http.MethodPost, "/api/v1/benchmarks", tok, strings.NewReader(fmt.Sprintf(`{"name":"code","dataset":%v,
		"targets":[{"model":"m/small","runtime":"sim","hardware":"cpu-2c"}],"load":{"profile":"sequential"},"sampling":{"max_tokens":64},
		"scorer":"humaneval"}`, up.body["dataset_id"])), "application/json")
	if r.status != 201 {
		t.Fatalf("create: %v", r.body)
	}
	b := fmt.Sprint(r.body["benchmark_id"])
	run := int64(r.body["runs"].([]any)[0].(map[string]any)["run_id"].(float64))
	finishAsAgent(t, e, run, func(idx int, _ string) string { return []string{"    return x + 1\n", "    return x[0]\n"}[idx] })
	rc := insertOnly(t, e)
	queue := &sandbox.Queue{Store: e.store, River: rc}
	n := &notify.Notifier{Store: e.store, River: rc}
	w := &jobs.ScoreRunWorker{Scorer: &score.Service{Store: e.store, Exec: queue}, Stats: conclude.Keeper{Store: e.store}, Notifier: n}
	job, err := rc.Insert(ctx, jobs.ScoreRunArgs{RunID: run}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Work(ctx, &river.Job[jobs.ScoreRunArgs]{JobRow: &rivertype.JobRow{ID: job.Job.ID}, Args: jobs.ScoreRunArgs{RunID: run}}); err != nil {
		t.Fatal(err)
	}
	done := func(kind string) {
		t.Helper()
		if _, err := e.store.Pool().Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now()
			WHERE kind = $1 AND args @> jsonb_build_object('run_id', $2::bigint)`, kind, run); err != nil {
			t.Fatal(err)
		}
	}
	told := func() int {
		t.Helper()
		got, err := e.store.WebhookDeliveries(ctx, ada.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	done("score_run")
	v := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", tok, nil, "")
	if v.body["pending"] != true || !strings.Contains(fmt.Sprint(v.body["reason"]), "sandbox") || told() != 0 {
		t.Fatalf("while its execution is queued: %v, %d told", v.body, told())
	}
	ex := sandbox.NewExecutor(e.store, sandbox.NewRunner(), 2, nil)
	ex.Conclusions = queue
	if err := ex.ExecuteRun(ctx, run, "humaneval"); err != nil {
		t.Fatal(err)
	}
	done("execute_run")
	var concludeJob int64
	if err := e.store.Pool().QueryRow(ctx, `SELECT id FROM river_job WHERE kind = 'conclude_run' AND args @> jsonb_build_object('run_id', $1::bigint)`, run).
		Scan(&concludeJob); err != nil {
		t.Fatalf("the execution queued no conclusion: %v", err)
	}
	if v := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", tok, nil, ""); v.body["pending"] != true || told() != 0 {
		t.Fatalf("executed, not concluded: %v, %d told", v.body, told())
	}
	cw := &jobs.ConcludeRunWorker{Stats: conclude.Keeper{Store: e.store}, Notifier: n}
	if err := cw.Work(ctx, &river.Job[jobs.ConcludeRunArgs]{JobRow: &rivertype.JobRow{ID: concludeJob}, Args: jobs.ConcludeRunArgs{RunID: run}}); err != nil {
		t.Fatal(err)
	}
	if v := e.api(http.MethodGet, "/api/v1/benchmarks/"+b+"/verdict", tok, nil, ""); v.body["pending"] != false || told() != 1 {
		t.Fatalf("concluded: %v, %d told", v.body, told())
	}
}
