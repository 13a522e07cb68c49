package bench_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertest"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/dataset/synth"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// fixture is a database with a user, a dataset, a model and an agent
// serving cpu_sim.
func fixture(t *testing.T) (*store.Store, store.Viewer, bench.Manifest) {
	t.Helper()
	ctx := t.Context()
	st := testkit.Store(t)
	u := testkit.User(ctx, t, st, nil)
	ds := testkit.Dataset(ctx, t, st, &testkit.DatasetOpts{Owner: u.ID, Content: "{\"prompt\":\"a\"}\n{\"prompt\":\"b\"}\n"})
	testkit.Model(ctx, t, st, &testkit.ModelOpts{Name: "m/small", Quantization: "bf16"})
	testkit.Agent(ctx, t, st, &testkit.AgentOpts{Name: "cpu-1"})
	m := bench.Manifest{Name: "b", Dataset: bench.DatasetRef{ID: ds.ID},
		Targets: []bench.Target{{Model: "m/small", Runtime: "sim", Hardware: "cpu"}},
		Load:    jobs.LoadProfile{Profile: jobs.LoadSequential}, Sampling: jobs.Sampling{MaxTokens: 8}}
	return st, store.Viewer{UserID: u.ID}, m
}

// recordingQueue inserts through the real client and lets the test see the
// transaction the insert happened in.
type recordingQueue struct {
	*river.Client[pgx.Tx]
	onInsert func(tx pgx.Tx)
}

func (q recordingQueue) InsertTx(ctx context.Context, tx pgx.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	res, err := q.Client.InsertTx(ctx, tx, args, opts)
	if err == nil && q.onInsert != nil {
		q.onInsert(tx)
	}
	return res, err
}

func TestCreateInsertsRunJobsInTheTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, v, m := fixture(t)
	rc := testkit.RiverClient(t.Context(), t, st.Pool(), nil)
	q := recordingQueue{Client: rc, onInsert: func(tx pgx.Tx) {
		// Seen from inside the transaction, before the commit.
		rivertest.RequireInsertedTx[*riverpgxv5.Driver](ctx, t, tx, &jobs.RunArgs{}, &rivertest.RequireInsertedOpts{Queue: "cpu_sim"})
	}}
	p := testkit.Service(ctx, t, st, &testkit.ServiceOpts{River: q})
	created, err := p.Create(ctx, v, m)
	if err != nil || len(created.Runs) != 1 {
		t.Fatalf("create: %+v %v", created, err)
	}
}

type blockingRunWorker struct {
	river.WorkerDefaults[jobs.RunArgs]
	started   chan int64
	cancelled atomic.Bool
}

func (w *blockingRunWorker) Work(ctx context.Context, job *river.Job[jobs.RunArgs]) error {
	w.started <- job.Args.RunID
	<-ctx.Done()
	w.cancelled.Store(true)
	return ctx.Err()
}

// The server cancels through its client; an agent's client working the run
// sees its context end.
func TestCancelReachesTheAgentWorkingTheRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, v, m := fixture(t)
	server := testkit.RiverClient(t.Context(), t, st.Pool(), nil)
	w := &blockingRunWorker{started: make(chan int64, 1)}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	testkit.RiverClient(ctx, t, st.Pool(), &testkit.RiverOpts{Start: true, Config: &river.Config{
		Queues:                 map[string]river.QueueConfig{jobs.Queue("cpu", "sim"): {MaxWorkers: 1}},
		Workers:                workers,
		LeaderElectionDisabled: true,
		FetchCooldown:          20 * time.Millisecond,
		FetchPollInterval:      50 * time.Millisecond,
	}})

	p := testkit.Service(ctx, t, st, &testkit.ServiceOpts{River: server})
	created, err := p.Create(ctx, v, m)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-w.started:
		if id != created.Runs[0].RunID {
			t.Fatalf("agent works run %d, want %d", id, created.Runs[0].RunID)
		}
	case <-time.After(testkit.Timeout()):
		t.Fatal("the agent's client never started the run")
	}
	if err := p.CancelRun(ctx, v, created.BenchmarkID, created.Runs[0].RunID); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the agent's worker to see the cancellation", w.cancelled.Load)
}

// Few-shot settings the dataset cannot serve are refused at the field
// that asked, before anything is written: a dataset that is no standard
// suite, a synthetic one (for one target), an ARC file uploaded with
// shots, and a k the dataset has too few items for.
func TestPlanRefusesFewShotTheDatasetCannotServe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, v, m := fixture(t)
	p := testkit.Service(ctx, t, st, nil)
	check := func(what string, m bench.Manifest, path, msg string) {
		t.Helper()
		_, err := p.Plan(ctx, v, m)
		var errs bench.Errors
		if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Path != path || !strings.Contains(errs[0].Message, msg) {
			t.Errorf("%s: %v, want %s: …%s…", what, err, path, msg)
		}
	}
	m.FewShot = &bench.FewShot{K: 2}
	check("a dataset whose items lack references", m, "fewshot.k", "a prompt and a reference")

	syn := m
	syn.FewShot, syn.Dataset = nil, bench.DatasetRef{}
	syn.Synthetic = &synth.Spec{Kind: "random", Count: 4, Input: synth.Dist{Kind: synth.DistFixed, Value: 8}, Output: synth.Dist{Kind: synth.DistFixed, Value: 8}}
	syn.Targets = []bench.Target{{Model: "m/small", Runtime: "sim", Hardware: "cpu", FewShot: &bench.FewShot{K: 1}}}
	check("a synthetic dataset", syn, "targets[0].fewshot.k", "synthetic")

	var arc strings.Builder
	for i := range 4 {
		arc.WriteString(`{"question":"q` + string(rune('a'+i)) + `","choices":{"text":["x","y"],"label":["A","B"]},"answerKey":"A"}` + "\n")
	}
	for _, shots := range []int{1, 0} {
		ds := testkit.Dataset(ctx, t, st, &testkit.DatasetOpts{Owner: v.UserID, Content: arc.String(), FileName: "arc.jsonl", Shots: shots, AllowDuplicate: true})
		m.Dataset = bench.DatasetRef{ID: ds.ID}
		if shots == 1 {
			check("a dataset uploaded 1-shot", m, "fewshot.k", "are already 1-shot")
			continue
		}
		m.FewShot = &bench.FewShot{K: 4}
		check("more shots than items", m, "fewshot.k", "at least 5 items")
		m.FewShot = &bench.FewShot{K: 3}
		if plan, err := p.Plan(ctx, v, m); err != nil || plan.Runs[0].FewShotK != 3 || plan.Runs[0].FewShotSeed != bench.DefaultFewShotSeed {
			t.Errorf("3-shot of 4 items: %+v %v", plan.Runs, err)
		}
	}
}
