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
	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/dataset/synth"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// fixture is a database with a user, a dataset, a model and an agent
// serving cpu_sim.
func fixture(t *testing.T) (*store.Store, store.Viewer, bench.Manifest) {
	t.Helper()
	ctx := context.Background()
	st := store.New(pgtest.NewDB(t))
	u, err := st.CreateUser(ctx, store.NewUser{Email: "a@example.com", PasswordHash: "x", Role: store.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	v := store.Viewer{UserID: u.ID}
	up := &ingest.Uploader{Store: st, Limits: dataset.DefaultLimits()}
	res, err := up.Upload(ctx, strings.NewReader("{\"prompt\":\"a\"}\n{\"prompt\":\"b\"}\n"), ingest.Request{Viewer: v, FileName: "d.jsonl"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateModel(ctx, store.ModelFields{Name: "m/small", ParamsB: 0.5, Quantization: "bf16", ContextLength: 4096}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RegisterAgent(ctx, store.AgentRegistration{Name: "cpu-1", ProtocolVersion: jobs.ProtocolVersion, Runtimes: []string{"sim"},
		Profile: store.HardwareProfile{Slug: "cpu", CPUCores: 2}}); err != nil {
		t.Fatal(err)
	}
	m := bench.Manifest{Name: "b", Dataset: bench.DatasetRef{ID: res.Dataset.ID},
		Targets: []bench.Target{{Model: "m/small", Runtime: "sim", Hardware: "cpu"}},
		Load:    jobs.LoadProfile{Profile: jobs.LoadSequential}, Sampling: jobs.Sampling{MaxTokens: 8}}
	return st, v, m
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
	rc, err := river.NewClient(riverpgxv5.New(st.Pool()), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	q := recordingQueue{Client: rc, onInsert: func(tx pgx.Tx) {
		// Seen from inside the transaction, before the commit.
		rivertest.RequireInsertedTx[*riverpgxv5.Driver](ctx, t, tx, &jobs.RunArgs{}, &rivertest.RequireInsertedOpts{Queue: "cpu_sim"})
	}}
	p := &bench.Service{Store: st, River: q, StaleAfter: time.Minute}
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
	server, err := river.NewClient(riverpgxv5.New(st.Pool()), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	w := &blockingRunWorker{started: make(chan int64, 1)}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	agent, err := river.NewClient(riverpgxv5.New(st.Pool()), &river.Config{
		Queues:                 map[string]river.QueueConfig{jobs.Queue("cpu", "sim"): {MaxWorkers: 1}},
		Workers:                workers,
		LeaderElectionDisabled: true,
		FetchCooldown:          20 * time.Millisecond,
		FetchPollInterval:      50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Stop(context.Background()) })

	p := &bench.Service{Store: st, River: server, StaleAfter: time.Minute}
	created, err := p.Create(ctx, v, m)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-w.started:
		if id != created.Runs[0].RunID {
			t.Fatalf("agent works run %d, want %d", id, created.Runs[0].RunID)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the agent's client never started the run")
	}
	if err := p.CancelRun(ctx, v, created.BenchmarkID, created.Runs[0].RunID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !w.cancelled.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the agent's worker never saw the cancellation")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Few-shot settings the dataset cannot serve are refused at the field
// that asked, before anything is written: a dataset that is no standard
// suite, a synthetic one (for one target), an ARC file uploaded with
// shots, and a k the dataset has too few items for.
func TestPlanRefusesFewShotTheDatasetCannotServe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, v, m := fixture(t)
	p := &bench.Service{Store: st, StaleAfter: time.Minute}
	check := func(what string, m bench.Manifest, path, msg string) {
		t.Helper()
		_, err := p.Plan(ctx, v, m)
		var errs bench.Errors
		if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Path != path || !strings.Contains(errs[0].Message, msg) {
			t.Errorf("%s: %v, want %s: …%s…", what, err, path, msg)
		}
	}
	m.FewShot = &bench.FewShot{K: 2}
	check("a simple dataset", m, "fewshot.k", "standard suites")

	syn := m
	syn.FewShot, syn.Dataset = nil, bench.DatasetRef{}
	syn.Synthetic = &synth.Spec{Kind: "random", Count: 4, Input: synth.Dist{Kind: synth.DistFixed, Value: 8}, Output: synth.Dist{Kind: synth.DistFixed, Value: 8}}
	syn.Targets = []bench.Target{{Model: "m/small", Runtime: "sim", Hardware: "cpu", FewShot: &bench.FewShot{K: 1}}}
	check("a synthetic dataset", syn, "targets[0].fewshot.k", "synthetic")

	up := &ingest.Uploader{Store: st, Limits: dataset.DefaultLimits()}
	var arc strings.Builder
	for i := range 4 {
		arc.WriteString(`{"question":"q` + string(rune('a'+i)) + `","choices":{"text":["x","y"],"label":["A","B"]},"answerKey":"A"}` + "\n")
	}
	for _, shots := range []int{1, 0} {
		res, err := up.Upload(ctx, strings.NewReader(arc.String()), ingest.Request{Viewer: v, FileName: "arc.jsonl", Shots: shots, AllowDuplicate: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		m.Dataset = bench.DatasetRef{ID: res.Dataset.ID}
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
