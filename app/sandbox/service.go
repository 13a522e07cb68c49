package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// ExecOptions are a benchmark's execution settings (the manifest's
// scorer_options.exec).
type ExecOptions struct {
	// Timeout per program; zero is human-eval's 3 s.
	// Its rule's max is MaxTimeout in nanoseconds.
	Timeout jobs.Duration `json:"timeout,omitempty" yaml:"timeout,omitempty" validate:"min=0,max=60000000000" msg:"valid.sandbox_timeout"`
	// Truncate is none (default: the completion as it is, as human-eval)
	// or stop_words (bigcode-evaluation-harness's stop words of the
	// suite).
	Truncate string `json:"truncate,omitempty" yaml:"truncate,omitempty" validate:"omitempty,oneof=none stop_words"`
}

// MaxTimeout bounds ExecOptions.Timeout.
const MaxTimeout = 60 * time.Second

// Store is the part of the store execution needs.
type Store interface {
	ExecItems(ctx context.Context, runID int64) ([]store.ExecItem, error)
	RunExecOptions(ctx context.Context, runID int64) (json.RawMessage, error)
	SaveExecOutcomes(ctx context.Context, runID int64, outs []store.ExecOutcome) error
	SetExecState(ctx context.Context, runID int64, state, msg string) error
	FinishExecution(ctx context.Context, runID int64, sum store.ExecSummary, q store.RunQuality) error
}

// Executor executes runs' answers (the sandbox worker's execute_run job).
type Executor struct {
	Store  Store
	Runner *Runner
	// Slots bounds the programs running at once across all jobs of this
	// process (its capacity is the worker's concurrency).
	Slots chan struct{}
	Log   *slog.Logger
	// Conclusions, when set, queues the conclusion of a run whose
	// execution is done: its quality exists only now, so its regression
	// check and webhooks come after it (jobs.ConcludeRunArgs).
	Conclusions ConclusionQueue
}

// ConclusionQueue queues a run's conclusion on the server (*Queue).
type ConclusionQueue interface {
	QueueConclusion(ctx context.Context, runID int64) error
}

var _ jobs.RunExecutor = (*Executor)(nil)

// NewExecutor runs at most concurrency programs at once.
func NewExecutor(st Store, r *Runner, concurrency int, log *slog.Logger) *Executor {
	return &Executor{Store: st, Runner: r, Slots: make(chan struct{}, max(concurrency, 1)), Log: log}
}

// suiteOf is the suite an execution scorer requires ("" for exec: either,
// recognised per item).
func suiteOf(scorer string) string {
	switch scorer {
	case SuiteHumanEval, SuiteMBPP:
		return scorer
	}
	return ""
}

// ExecuteRun executes every answer of a run not executed yet, stores each
// outcome as it comes, then the run's pass@k and class counts. A
// cancelled context leaves what was executed stored; the next attempt
// continues from there.
func (e *Executor) ExecuteRun(ctx context.Context, runID int64, scorer string) error {
	if !score.IsExecution(scorer) {
		return fmt.Errorf("run %d: %q is not an execution scorer", runID, scorer)
	}
	if err := e.Store.SetExecState(ctx, runID, "running", ""); err != nil {
		return err
	}
	var opts ExecOptions
	if raw, err := e.Store.RunExecOptions(ctx, runID); err != nil {
		return err
	} else if err := json.Unmarshal(raw, &opts); err != nil {
		return e.fail(ctx, runID, fmt.Errorf("scorer_options.exec: %w", err))
	}
	items, err := e.Store.ExecItems(ctx, runID)
	if err != nil {
		return err
	}
	out := &outcomes{ctx: context.WithoutCancel(ctx), st: e.Store, runID: runID, items: items}
	e.executeItems(ctx, out, suiteOf(scorer), opts)
	if err := out.close(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	sum, q := Summarise(items, runID)
	q.Scorer = scorer
	if e.Log != nil {
		e.Log.Info("executed run", "run", runID, "pass_at", sum.PassAt, "counts", sum.Counts)
	}
	if err := e.Store.FinishExecution(ctx, runID, sum, q); err != nil {
		return err
	}
	if e.Conclusions == nil {
		return nil
	}
	// After the quality's transaction: should queueing fail, the job's
	// retry finds every answer executed, stores the same quality and
	// queues the conclusion again.
	return e.Conclusions.QueueConclusion(ctx, runID)
}

// executeItems executes the items of out not done yet, as many at a time
// as there are slots, and records each outcome; it returns when all have
// finished or ctx is done.
func (e *Executor) executeItems(ctx context.Context, out *outcomes, suite string, opts ExecOptions) {
	lim := e.Runner.Limits
	if opts.Timeout > 0 {
		lim.Timeout = time.Duration(opts.Timeout)
		lim.CPU = lim.Timeout + time.Second
	}
	var wg sync.WaitGroup
	for i, it := range out.items {
		if it.Done {
			continue
		}
		task, err := ParseTask(it.Reference, it.Prompt, suite)
		if errors.Is(err, ErrNotExecutable) {
			continue // not a code item: left unscored
		}
		if err != nil {
			out.record(i, store.ExecOutcome{Idx: it.Idx, Sample: it.Sample, Status: string(Exception), Stderr: "cannot execute this item: " + err.Error()})
			continue
		}
		if it.Status != jobs.StatusOK {
			out.record(i, store.ExecOutcome{Idx: it.Idx, Sample: it.Sample, Status: string(Failed), Stderr: "no answer to execute: the request failed"})
			continue
		}
		select {
		case e.Slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-e.Slots; wg.Done() }()
			program := task.Program(Truncate(task.Suite, opts.Truncate, it.Output))
			res := e.Runner.RunWith(ctx, program, lim)
			if ctx.Err() != nil {
				return // stopped, not a verdict on the program
			}
			out.record(i, store.ExecOutcome{Idx: it.Idx, Sample: it.Sample, Status: string(res.Class), Stderr: res.StderrTail, Duration: res.Duration})
		}()
	}
	wg.Wait()
}

// outcomes collects a run's outcomes from the executions running at once
// and stores them in batches.
type outcomes struct {
	ctx   context.Context // not cancelled: what was executed is kept
	st    Store
	runID int64

	mu      sync.Mutex
	items   []store.ExecItem
	batch   []store.ExecOutcome
	saveErr error
}

// record marks item i done with outcome o, storing a full batch.
func (o *outcomes) record(i int, out store.ExecOutcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.items[i].Done, o.items[i].ExecStatus = true, out.Status
	o.batch = append(o.batch, out)
	o.flush(false)
}

// flush stores the batch when it is full, or when force; called with mu
// held. After an error nothing more is stored.
func (o *outcomes) flush(force bool) {
	if len(o.batch) == 0 || (!force && len(o.batch) < 32) || o.saveErr != nil {
		return
	}
	o.saveErr = o.st.SaveExecOutcomes(o.ctx, o.runID, o.batch)
	o.batch = nil
}

// close stores what is left and returns the first error storing.
func (o *outcomes) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flush(true)
	return o.saveErr
}

// fail records that runID's execution failed for good and queues the
// run's conclusion: its score job returned when it queued the execution
// (its quality was to come from here), so nothing else would check its
// target for a regression or tell its owner; concluding a run without a
// quality draws its conclusions without it (docs/verdict.md#when-a-verdict-is-final).
// The job is cancelled: another attempt would fail alike.
func (e *Executor) fail(ctx context.Context, runID int64, err error) error {
	ctx = context.WithoutCancel(ctx)
	if serr := e.Store.SetExecState(ctx, runID, "failed", err.Error()); serr != nil {
		return serr
	}
	if e.Conclusions != nil {
		if qerr := e.Conclusions.QueueConclusion(ctx, runID); qerr != nil {
			return qerr
		}
	}
	return river.JobCancel(err)
}

// Summarise computes a run's pass@k (k in ReportedK, where every item has
// at least k samples) over its executed items, the count of answers by
// class, and its quality: the mean of the answers' scores (1 passed, 0
// not) with the 95 % bootstrap interval, seeded with the run id.
func Summarise(items []store.ExecItem, runID int64) (store.ExecSummary, store.RunQuality) {
	sum := store.ExecSummary{PassAt: map[string]float64{}, Counts: map[string]int{}}
	for _, c := range Classes {
		sum.Counts[string(c)] = 0
	}
	type nc struct{ n, c int }
	per := map[int]*nc{}
	var order []int
	var scores []float64
	for _, it := range items {
		if !it.Done {
			continue
		}
		sum.Counts[it.ExecStatus]++
		p := per[it.Idx]
		if p == nil {
			p = &nc{}
			per[it.Idx] = p
			order = append(order, it.Idx)
		}
		p.n++
		v := 0.0
		if it.ExecStatus == string(Passed) {
			p.c++
			v = 1
		}
		scores = append(scores, v)
	}
	n, c := make([]int, len(order)), make([]int, len(order))
	for i, idx := range order {
		n[i], c[i] = per[idx].n, per[idx].c
	}
	for _, k := range ReportedK {
		if v, ok := PassAtKMean(n, c, k); ok {
			sum.PassAt[strconv.Itoa(k)] = v
		}
	}
	q := store.RunQuality{Scored: len(scores)}
	if len(scores) > 0 {
		mean, lo, hi := score.MeanCI(scores, uint64(runID))
		q.Mean, q.Low, q.High = &mean, &lo, &hi
	}
	return sum, q
}
