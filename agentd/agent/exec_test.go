package agent

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/sandbox"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/results"
)

// A sim run on HumanEval items, two answers per item scripted per item
// (the canonical solution for even items, a body returning None for odd
// ones), scored by execution: scoring queues the execute_run job, a
// sandbox worker (a River client on the sandbox queue only) executes
// every answer, and the run page shows pass@1 = 0.5 with the counts.
func TestSimHumanEvalRunIsExecuted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 1)

	ds, canonical := uploadHumanEval(t, w, 6)

	// The hardware profile exists once an agent of it registered; the
	// agent that works the run starts after its answers are scripted.
	testkit.Agent(ctx, t, w.st, &testkit.AgentOpts{Name: "placeholder"})
	c, err := w.svc.Create(ctx, w.viewer, bench.Manifest{Name: "code", Dataset: bench.DatasetRef{ID: ds},
		Targets:  []bench.Target{{Model: "sim/tiny", Runtime: "sim", Hardware: "cpu"}},
		Load:     jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 4},
		Sampling: jobs.Sampling{MaxTokens: 512, N: 2}})
	if err != nil {
		t.Fatal(err)
	}
	runID := c.Runs[0].RunID
	// The scripted answers, before any agent takes the run.
	for idx, sol := range canonical {
		answer := sol
		if idx%2 == 1 {
			answer = "    return None\n"
		}
		if _, err := pool.Exec(ctx, `INSERT INTO sim_answers (run_id, idx, answer) VALUES ($1, $2, $3)
			ON CONFLICT (run_id, idx) DO UPDATE SET answer = excluded.answer`, runID, idx, answer); err != nil {
			t.Fatal(err)
		}
	}
	startAgent(t, w.agentURL("node-x"), "node-x")
	run := func() store.Run {
		b, err := w.st.BenchmarkByID(ctx, w.viewer, c.BenchmarkID)
		if err != nil {
			t.Fatal(err)
		}
		return b.Runs[0]
	}
	testkit.WaitWithin(t, 60*time.Second, "the run to finish", func() bool { r := run(); return r.State == "completed" || r.State == "failed" })
	if r := run(); r.State != "completed" || r.Completed != 12 || r.Total != 12 || r.Samples != 2 {
		t.Fatalf("run: %s, %d of %d done, %d samples", r.State, r.Completed, r.Total, r.Samples)
	}

	// Scoring (the server's score_run job) queues the execution.
	queue := &sandbox.Queue{Store: w.st, River: w.svc.River}
	if err := (&score.Service{Store: w.st, Exec: queue}).ScoreRun(ctx, runID, ""); err != nil {
		t.Fatal(err)
	}
	if r := run(); r.Exec.State != "queued" {
		t.Fatalf("execution %q after scoring, want queued", r.Exec.State)
	}
	exec := startSandbox(t, w, pool)
	testkit.WaitWithin(t, 60*time.Second, "the execution", func() bool { s := run().Exec.State; return s == "done" || s == "failed" })

	check := func(when string) {
		r := run()
		if r.Exec.State != "done" || math.Abs(r.Exec.PassAt["1"]-0.5) > 1e-12 || r.Exec.Counts["passed"] != 6 ||
			r.Exec.Counts["failed"]+r.Exec.Counts["exception"] != 6 {
			t.Fatalf("%s: execution %s %q, pass@k %v, counts %v", when, r.Exec.State, r.Exec.Error, r.Exec.PassAt, r.Exec.Counts)
		}
		if _, ok := r.Exec.PassAt["10"]; ok {
			t.Errorf("%s: pass@10 with 2 samples per item", when)
		}
		if r.Scorer != "humaneval" || r.Quality == nil || math.Abs(*r.Quality-0.5) > 1e-12 || r.Scored != 12 {
			t.Errorf("%s: quality %v over %d with %q, want 0.5 over 12 with humaneval", when, r.Quality, r.Scored, r.Scorer)
		}
		var rows, wrong int
		if err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE (exec_status = 'passed') <> (idx % 2 = 0) OR score IS NULL)
			FROM results WHERE run_id = $1`, runID).Scan(&rows, &wrong); err != nil || rows != 12 || wrong != 0 {
			t.Errorf("%s: %d results, %d classed against their script (%v)", when, rows, wrong, err)
		}
		// The run page.
		var page bytes.Buffer
		if err := results.Page(results.Data{Benchmark: store.Benchmark{ID: c.BenchmarkID}, Run: r}).Render(ctx, &page); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(page.String(), "pass@1 0.500") || !strings.Contains(page.String(), "passed 6") {
			t.Errorf("%s: the run page does not show pass@1 0.500 and the counts", when)
		}
	}
	check("first execution")
	t.Logf("run %d: pass@k %v, counts %v", runID, run().Exec.PassAt, run().Exec.Counts)

	// A retried job (the same job again) finds every answer executed and
	// changes nothing; a forced re-run of every answer gives the same.
	if err := exec.ExecuteRun(ctx, runID, "humaneval"); err != nil {
		t.Fatal(err)
	}
	check("retried job")
	if _, err := pool.Exec(ctx, `UPDATE results SET exec_status = '' WHERE run_id = $1`, runID); err != nil {
		t.Fatal(err)
	}
	if err := exec.ExecuteRun(ctx, runID, "humaneval"); err != nil {
		t.Fatal(err)
	}
	check("executed again")
}

// uploadHumanEval uploads the first n HumanEval items as the release
// has them and returns the dataset and each item's canonical solution.
func uploadHumanEval(t *testing.T, w *world, n int) (int64, map[int]string) {
	t.Helper()
	raw, err := os.ReadFile("../../../shared/datasets/humaneval/HumanEval.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	z, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var upload strings.Builder
	canonical := map[int]string{}
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 1<<20)
	for i := 0; i < n && sc.Scan(); i++ {
		var it struct {
			Canonical string `json:"canonical_solution"`
		}
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatal(err)
		}
		canonical[i] = it.Canonical
		upload.WriteString(sc.Text() + "\n")
	}
	res := testkit.Dataset(context.Background(), t, w.st, &testkit.DatasetOpts{Owner: w.viewer.UserID, Content: upload.String(), FileName: "humaneval.jsonl"})
	if res.DefaultScorer != "humaneval" {
		t.Fatalf("a HumanEval dataset's default scorer is %q, want humaneval", res.DefaultScorer)
	}
	return res.ID, canonical
}

// startSandbox starts the sandbox worker as `ruckus sandbox` runs it: a
// River client on the sandbox queue only.
func startSandbox(t *testing.T, w *world, pool *pgxpool.Pool) *sandbox.Executor {
	t.Helper()
	exec := sandbox.NewExecutor(w.st, sandbox.NewRunner(), 2, nil)
	workers := river.NewWorkers()
	river.AddWorker(workers, &jobs.ExecuteRunWorker{Executor: exec})
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{Queues: map[string]river.QueueConfig{jobs.SandboxQueue: {MaxWorkers: 1}},
		Workers: workers, LeaderElectionDisabled: true, FetchOnlyKnownKinds: true, FetchPollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Stop(context.Background()) })
	return exec
}

// A sim run on HumanEval at a stated accuracy answers the items it gets
// right with their canonical solutions: executed in the sandbox, exactly
// those pass, so pass@1 is the accuracy realised over the items (each an
// independent draw: within a binomial interval of the accuracy), and the
// others fail their tests.
func TestSimHumanEvalPassAtKTracksTheAccuracy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 1)
	const items = 40
	ds, _ := uploadHumanEval(t, w, items)
	testkit.Model(ctx, t, w.st, &testkit.ModelOpts{Name: "acme/coder-7b", ParamsB: 7, Quantization: "bf16"})
	startAgent(t, w.agentURL("node-c"), "node-c", "--sim-ttft", "const:1ms", "--sim-itl", "const:0ms")
	testkit.WaitFor(t, "agent online", func() bool { return w.online() == 1 })
	const acc = 0.6
	c, err := w.svc.Create(ctx, w.viewer, bench.Manifest{Name: "code at 0.6", Dataset: bench.DatasetRef{ID: ds},
		Targets:  []bench.Target{{Model: "acme/coder-7b", Runtime: "sim", Hardware: "cpu"}},
		Load:     jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 8},
		Sampling: jobs.Sampling{MaxTokens: 512, N: 2},
		Sim:      &bench.SimSettings{Accuracy: map[string]float64{"acme/coder-7b": acc}, Seed: 5}})
	if err != nil {
		t.Fatal(err)
	}
	runID := c.Runs[0].RunID
	run := func() store.Run { return w.run(c.BenchmarkID) }
	testkit.WaitWithin(t, 60*time.Second, "the run to finish", func() bool { r := run(); return r.State == "completed" || r.State == "failed" })
	if r := run(); r.State != "completed" || r.Completed != 2*items {
		t.Fatalf("run: %s, %d of %d done", r.State, r.Completed, r.Total)
	}
	queue := &sandbox.Queue{Store: w.st, River: w.svc.River}
	if err := (&score.Service{Store: w.st, Exec: queue}).ScoreRun(ctx, runID, ""); err != nil {
		t.Fatal(err)
	}
	startSandbox(t, w, pool)
	testkit.WaitWithin(t, 120*time.Second, "the execution", func() bool { s := run().Exec.State; return s == "done" || s == "failed" })

	right := 0
	for i := range items {
		if bench.SimRight(5, c.BenchmarkID, "acme/coder-7b", i, acc) {
			right++
		}
	}
	r := run()
	want := float64(right) / items
	if r.Exec.State != "done" || math.Abs(r.Exec.PassAt["1"]-want) > 1e-12 ||
		math.Abs(float64(right)-items*acc) > 3.29*math.Sqrt(items*acc*(1-acc)) || r.Exec.Counts["passed"] != 2*right {
		t.Fatalf("execution %s %q: pass@1 %v, counts %v; want pass@1 %v (%d of %d items right at accuracy %v)",
			r.Exec.State, r.Exec.Error, r.Exec.PassAt, r.Exec.Counts, want, right, items, acc)
	}
	var wrong int
	if err := pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE (exec_status = 'passed') <> (a.answer = (i.reference->>'canonical_solution')))
		FROM results r JOIN sim_answers a USING (run_id, idx) JOIN dataset_items i ON i.dataset_id = $2 AND i.idx = r.idx
		WHERE r.run_id = $1`, runID, ds).Scan(&wrong); err != nil || wrong != 0 {
		t.Errorf("%d answers passed without being the canonical solution, or failed being it (%v)", wrong, err)
	}
	t.Logf("pass@k %v, counts %v at accuracy %v", r.Exec.PassAt, r.Exec.Counts, acc)
}
