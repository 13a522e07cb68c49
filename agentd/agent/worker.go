package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/ruckus/ruckus/agentd/gpu"
	"github.com/ruckus/ruckus/agentd/load"
	"github.com/ruckus/ruckus/agentd/openai"
	"github.com/ruckus/ruckus/agentd/report"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/jobs"
)

// runWorker works benchmark runs: it takes the run under a fenced lease,
// prepares the runtime, sends the run's pending items with the load
// generator and reports results, progress and samples as it goes.
type runWorker struct {
	river.WorkerDefaults[jobs.RunArgs]
	st      *store.Store
	agentID int64
	cfg     runConfig
	backend backend
	nv      *gpu.NVML // nil or without GPUs on a CPU-only machine
	gpus    int
	logger  *slog.Logger
	// metrics counts the requests sent (nil: no --metrics-addr).
	metrics *agentMetrics

	// river queues follow-up jobs (scoring); set when the client starts.
	river *river.Client[pgx.Tx]

	drainOnce sync.Once
	drain     chan struct{}

	// writes bounds the retries of a run's last writes (its results, its
	// end, its hand-back), which otherwise go on while the database is
	// away: ended stopWriteGrace after the agent is asked to stop, and at
	// once when PostgreSQL no longer accepts the agent (abandon).
	writes     context.Context
	stopWrites context.CancelFunc
}

// stopWriteGrace is how long a stopping agent keeps trying to record its
// run: enough for a healthy database to take the last results and the
// hand-back, short enough that a signal is obeyed even when every write
// fails (the reaper then reassigns the run).
const stopWriteGrace = 5 * time.Second

// init makes w ready to work runs.
func (w *runWorker) init() *runWorker {
	w.drain = make(chan struct{})
	w.writes, w.stopWrites = context.WithCancel(context.Background())
	return w
}

// beginDrain asks a run in progress to stop sending, finish what is in
// flight and go back to the queue, trying for stopWriteGrace at most.
func (w *runWorker) beginDrain() {
	w.drainOnce.Do(func() {
		close(w.drain)
		time.AfterFunc(stopWriteGrace, w.stopWrites)
	})
}

// abandon stops a run in progress without writing anything more: the
// database refuses this agent now, and the reaper reassigns the run.
func (w *runWorker) abandon() {
	w.stopWrites()
	w.beginDrain()
}

// Timeout lets a run go on for the longest allowed run; its own limits
// (max duration, max requests) and cancellation end it sooner.
func (w *runWorker) Timeout(*river.Job[jobs.RunArgs]) time.Duration { return jobs.MaxRunTime }

// Work runs one run (or the rest of it, when resumed).
func (w *runWorker) Work(ctx context.Context, job *river.Job[jobs.RunArgs]) error {
	a := job.Args
	log := w.logger.With("run", a.RunID, "job", job.ID)
	if err := checkJob(a); err != nil {
		return w.refuse(ctx, job, err, log)
	}
	claim, err := w.st.ClaimRun(ctx, a.RunID, w.agentID, job.ID, w.backend.Mode(w.gpus > 0))
	if errors.Is(err, store.ErrStaleJob) {
		log.Info("job no longer drives its run; dropping it")
		return river.JobCancel(err)
	}
	if err != nil {
		return err // the database may be away: River tries again
	}
	log.Info("working run", "model", a.Model, "total", claim.Total, "done", claim.Completed, "resumed", claim.Resumed)

	tgt, err := w.backend.Prepare(ctx, modelRef{Registry: a.Model, Served: w.cfg.servedModel(a.Model), AdapterOf: a.AdapterOf,
		Engine: a.Engine})
	if err != nil {
		log.Error("runtime not ready", "err", err)
		f := store.Finish{State: "failed", StoppedBy: "runtime", Error: err.Error()}
		if tgt != nil {
			f.RuntimeLog = tgt.LogTail()
		}
		return w.finish(claim.Lease, f, log)
	}
	defer func() {
		if err := tgt.Stop(); err != nil {
			log.Warn("stopping the runtime", "err", err)
		}
	}()

	s, err := w.planSegment(ctx, a, claim, tgt, log)
	if err != nil {
		return err
	}
	s.startReporting(ctx)
	defer s.stopLoad(nil)
	out, err := s.sendLoad()
	gpuSum, nodeSum, fenceErr := s.stopReporting()
	if err != nil {
		// The load profile cannot be honoured (the manifest's validation
		// should have refused it): nothing was sent.
		return w.finish(claim.Lease, store.Finish{State: "failed", StoppedBy: "invalid_load", Error: err.Error(), RuntimeLog: tgt.LogTail()}, log)
	}
	return s.conclude(ctx, out, fenceErr, figures{gpu: gpuSum, node: nodeSum})
}

// checkJob refuses what the job says when this agent must not act on it.
// The job comes from the database, which this node does not trust: a model
// name that is not a registry id (one renamed "--trust-remote-code") never
// reaches a runtime, its command line above all.
func checkJob(a jobs.RunArgs) error {
	if err := jobs.CheckProtocol(a.ProtocolVersion); err != nil {
		return err
	}
	if err := jobs.CheckModelName(a.Model); err != nil {
		return fmt.Errorf("the job's model: %w", err)
	}
	if a.AdapterOf != "" {
		if err := jobs.CheckModelName(a.AdapterOf); err != nil {
			return fmt.Errorf("the job's base model of adapter %s: %w", a.Model, err)
		}
	}
	// Engine settings become options only as the table's flags with
	// checked values (docs/benchmarks.md#engine-settings).
	if _, _, err := a.Engine.Args(a.Runtime); err != nil {
		return fmt.Errorf("the job's %w", err)
	}
	return nil
}

// segment is this agent's share of one run: the items it sends, keyed as
// the load generator sends them, and what measures and reports on them.
type segment struct {
	w     *runWorker
	args  jobs.RunArgs
	claim store.ClaimedRun
	lease store.Lease
	tgt   target
	log   *slog.Logger

	// The load generator sends keys: the item's index, or with several
	// samples per item idx × MaxSamples + sample (conversations and trace
	// times, keyed by item, then do not apply).
	samples int
	byKey   map[int]store.PendingItem
	keys    []int
	convs   *conversations
	answers map[int]string
	// lengths makes a length sweep's prompts in place of the items' own
	// (nil for the other profiles).
	lengths *lengthPrompts
	// before is what earlier segments of a resumed run used: limits count it.
	before load.Progress

	// inFlight is the requests sent and not yet answered (warm-up too):
	// the simulated GPUs' load.
	inFlight atomic.Int64

	mon      *monitor
	rep      *report.Reporter
	loadCtx  context.Context
	stopLoad context.CancelCauseFunc
	stopRep  context.CancelFunc
	repDone  chan error
}

// planSegment reads the items still to send and plans their conversations
// and simulated answers.
func (w *runWorker) planSegment(ctx context.Context, a jobs.RunArgs, claim store.ClaimedRun, tgt target, log *slog.Logger) (*segment, error) {
	s := &segment{w: w, args: a, claim: claim, lease: claim.Lease, tgt: tgt, log: log}
	items, err := w.st.PendingItems(ctx, s.lease.RunID, claim.DatasetID, claim.Total)
	if err != nil {
		return nil, err
	}
	if s.convs, err = w.planConversations(ctx, s.lease.RunID, claim, items); err != nil {
		return nil, err
	}
	s.answers = w.simAnswers(ctx, s.lease.RunID, log)
	s.samples = max(claim.Samples, 1)
	key := func(it store.PendingItem) int { return it.Idx }
	if s.samples > 1 {
		key = func(it store.PendingItem) int { return it.Idx*jobs.MaxSamples + it.Sample }
	}
	s.byKey = make(map[int]store.PendingItem, len(items))
	s.keys = make([]int, len(items))
	for i, it := range items {
		s.byKey[key(it)], s.keys[i] = it, key(it)
	}
	s.before = load.Progress{Requests: claim.Completed, Errors: claim.Errors, Measured: claim.Measured}
	return s, nil
}

// startReporting starts the GPU and runtime monitor, the reporter, and the
// watch that stops the load on a cancel or a reassignment within a control
// poll, whatever River's notifications do.
func (s *segment) startReporting(ctx context.Context) {
	w := s.w
	s.mon = startMonitor(ctx, s.monitorConfig(), s.log)
	s.rep = report.New(w.st, s.lease, len(s.keys), report.Options{ProgressInterval: w.cfg.ProgressInterval, Sample: s.mon.Latest,
		Load: s.args.Load, Before: s.before}, s.log)
	s.loadCtx, s.stopLoad = context.WithCancelCause(ctx)
	go w.watchRun(s.loadCtx, s.lease, s.stopLoad, s.log)
	var repCtx context.Context
	repCtx, s.stopRep = context.WithCancel(context.Background())
	s.repDone = make(chan error, 1)
	go func() {
		err := s.rep.Run(repCtx)
		if errors.Is(err, store.ErrFenced) {
			s.stopLoad(err) // the run was reassigned: stop sending at once
		}
		s.repDone <- err
	}()
}

// monitorConfig is what the segment's monitor samples: the node and the
// runtime's process; the GPUs NVML measures, or, on the simulated runtime
// with --sim-gpu, GPUs simulated from the requests in flight.
func (s *segment) monitorConfig() monitorConfig {
	w := s.w
	pid, process := s.tgt.Process()
	mc := monitorConfig{metricsURL: s.tgt.MetricsURL(), pid: pid, process: process, interval: w.cfg.ProgressInterval}
	if w.nv != nil && w.gpus > 0 {
		mc.gpus, mc.count = w.nv, w.gpus
	}
	if sim, _ := parseSimGPU(w.cfg.SimGPU); w.cfg.Runtime == modeSim && len(sim) > 0 {
		batch := float64(max(w.cfg.Sim.Batch, 1))
		mc.gpus, mc.count, mc.simulated = gpu.Simulated{GPUs: sim, Load: func() float64 { return float64(s.inFlight.Load()) / batch }}, len(sim), true
	}
	return mc
}

// stopReporting stops the reporter and the monitor, and returns the GPUs'
// and the node's figures and the reporter's error (a fence means the run
// was reassigned).
func (s *segment) stopReporting() (*gpuSummary, jobs.NodeSummary, error) {
	s.stopRep()
	fenceErr := <-s.repDone
	g, n := s.mon.Stop()
	return g, n, fenceErr
}

// sendLoad sends the items with the load generator as the run's load
// profile says, each through the runtime's client.
func (s *segment) sendLoad() (load.Outcome, error) {
	client := s.w.backend.Client(s.tgt)
	model := s.w.cfg.servedModel(s.args.Model)
	if m := s.tgt.RequestModel(); m != "" {
		model = m // a launched adapter, under its runtime's name for it
	}
	if s.args.Load.Profile == jobs.LoadLengthSweep {
		s.lengths = calibrateLengths(s.loadCtx, client, model, s.args, s.log)
	}
	return load.Run(s.loadCtx, load.Config{
		Indices: s.keys,
		Profile: s.args.Load,
		Seed:    uint64(s.args.RunID),
		Drain:   s.w.drain,
		OnStart: s.rep.Start,
		Done:    s.before,
		Send: func(ctx context.Context, k int, phase string) jobs.Result {
			s.inFlight.Add(1)
			defer s.inFlight.Add(-1)
			if phase != load.PhaseWarmup {
				defer s.rep.Sending()() // what is in flight, for the ETA
			}
			return s.send(ctx, client, model, s.byKey[k], phase)
		},
		// The load generator labels what it records with the key it
		// sent (results it made itself, such as cancelled ones, too).
		Record: func(r jobs.Result) {
			if s.samples > 1 {
				r.Idx, r.Sample = r.Idx/jobs.MaxSamples, r.Idx%jobs.MaxSamples
			}
			s.rep.Add(r)
		},

		// The multi-turn order and trace times of synthetic items.
		Prev:     convsOf(s.samples, s.convs.prev),
		Arrivals: convsOf(s.samples, s.convs.arrivals),
	})
}

// send sends one item (its turn of a conversation, with the simulated
// answer when there is one) and labels the result with the item.
func (s *segment) send(ctx context.Context, client *openai.Client, model string, it store.PendingItem, phase string) jobs.Result {
	idx := it.Idx
	var res jobs.Result
	request := it.Request
	if s.lengths != nil {
		request = s.lengths.request(idx*jobs.MaxSamples+it.Sample, phase)
	}
	req, err := openai.BuildRequest(s.convs.request(idx, request), model, itemSampling(request, s.args.Sampling))
	if err != nil {
		res = jobs.Result{Status: jobs.StatusError, ErrorClass: jobs.ErrInvalidReq, Error: err.Error()}
	} else {
		ans, ok := s.answers[idx]
		ok = ok && s.lengths == nil // a generated prompt has no scripted answer
		req.Body = withSimAnswer(req.Body, ans, ok)
		back := s.w.metrics.sending(phase)
		res = client.Do(ctx, req)
		back(res)
	}
	s.convs.answered(idx, res)
	res.Idx, res.Sample, res.CustomID, res.Phase = idx, it.Sample, it.CustomID, phase
	return res
}

// conclude ends the segment once the load has stopped: the last results
// go in (even if the run was cancelled: partial results are kept), and the
// run is finished, cancelled or handed back, unless another agent has it.
func (s *segment) conclude(ctx context.Context, out load.Outcome, fenceErr error, m figures) error {
	w, log := s.w, s.log
	cctx, cancel := context.WithTimeout(w.writes, 2*time.Minute)
	defer cancel()
	if fenceErr == nil {
		fenceErr = s.rep.Close(cctx)
	}
	if fenceErr == nil && errors.Is(context.Cause(s.loadCtx), store.ErrFenced) {
		fenceErr = context.Cause(s.loadCtx)
	}
	if errors.Is(fenceErr, store.ErrFenced) {
		log.Warn("the run was reassigned to another agent; stopping")
		return river.JobCancel(fenceErr)
	}

	switch {
	case errors.Is(context.Cause(ctx), river.ErrJobCancelledRemotely), errors.Is(context.Cause(s.loadCtx), store.ErrRunCancelled):
		// The user cancelled the run (or the reaper took it, and the fence
		// will refuse what follows).
		f := w.finishFigures(cctx, s.lease, s.args, s.rep, m, s.tgt, log)
		f.State, f.StoppedBy = "cancelled", load.StoppedCancelled
		if err := w.finish(s.lease, f, log); err != nil {
			return err
		}
		return river.JobCancel(errors.New("run cancelled"))
	case out.StoppedBy == load.StoppedDrained || ctx.Err() != nil:
		// agentd is stopping: what was sent is stored; another agent (or
		// this one, restarted) resumes from there.
		_, _, segment := s.rep.Figures()
		if err := w.st.HandBackRun(cctx, s.lease, segment, "agent "+w.cfg.Name+" is stopping"); err != nil {
			log.Warn("handing the run back", "err", err)
			return err
		}
		log.Info("run handed back for another agent to resume")
		return river.JobSnooze(time.Second)
	}
	f := w.finishFigures(cctx, s.lease, s.args, s.rep, m, s.tgt, log)
	f.State, f.StoppedBy = "completed", out.StoppedBy
	if errs := s.claim.Errors + out.Errors; out.StoppedBy == load.StoppedMaxErrors || (s.args.Load.MaxErrors > 0 && errs > s.args.Load.MaxErrors) {
		f.State, f.StoppedBy = "failed", load.StoppedMaxErrors
		f.Error = fmt.Sprintf("%d requests failed, more than max_errors (%d)", errs, s.args.Load.MaxErrors)
	} else if why := noSuccess(f.Summary); why != "" {
		f.State, f.Error = "failed", why
	}
	return w.finish(s.lease, f, log)
}

// watchRun reads every ControlPoll whether the run was cancelled or handed
// on, and stops the load with that cause; a failed read is tried again at
// the next poll (the database may be restarting).
func (w *runWorker) watchRun(ctx context.Context, l store.Lease, stop context.CancelCauseFunc, log *slog.Logger) {
	t := time.NewTicker(w.cfg.ControlPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := w.st.CheckLease(ctx, l)
		switch {
		case errors.Is(err, store.ErrRunCancelled), errors.Is(err, store.ErrFenced):
			log.Info("stopping the run", "why", err)
			stop(err)
			return
		case err != nil && ctx.Err() == nil:
			log.Warn("reading whether the run goes on", "err", err)
		}
	}
}

// noSuccess says why a run whose load ran to its end still failed: not one
// request succeeded (every one refused, rate limited, cut or malformed),
// so it measured nothing. Empty when some request succeeded, or when the
// summary could not be read (the run then keeps the load's verdict).
func noSuccess(summary []byte) string {
	var s jobs.RunSummary
	if summary == nil || json.Unmarshal(summary, &s) != nil || s.OK > 0 {
		return ""
	}
	if s.Requests == 0 {
		return "no request was sent: nothing was measured"
	}
	classes := make([]string, 0, len(s.ErrorsByClass))
	for class, n := range s.ErrorsByClass {
		classes = append(classes, fmt.Sprintf("%d %s", n, class))
	}
	slices.Sort(classes)
	return fmt.Sprintf("no request succeeded (%d sent: %s): nothing was measured", s.Requests, strings.Join(classes, ", "))
}

// refuse fails a run this agent will not work, saying why, and cancels its
// job so that no other agent of the same release takes it either.
func (w *runWorker) refuse(ctx context.Context, job *river.Job[jobs.RunArgs], why error, log *slog.Logger) error {
	log.Error("refusing run", "err", why)
	if err := w.st.SetRunRefused(ctx, job.Args.RunID, job.ID, fmt.Sprintf("agent %s refused the run: %v", w.cfg.Name, why)); err != nil {
		log.Warn("recording the refusal", "err", err)
	}
	return river.JobCancel(why)
}

// figures is what a segment's monitor measured: the GPUs' (nil without
// GPUs) and the node's.
type figures struct {
	gpu  *gpuSummary
	node jobs.NodeSummary
}

// finishFigures computes the run's summary over all its stored results
// (every agent's share) plus this segment's GPU and node figures.
func (w *runWorker) finishFigures(ctx context.Context, l store.Lease, a jobs.RunArgs, rep *report.Reporter, m figures, tgt target, log *slog.Logger) store.Finish {
	_, tokens, segment := rep.Figures()
	f := store.Finish{Segment: segment, LoadTime: tgt.LoadTime(), RuntimeLog: tgt.LogTail()}
	if m.node.Samples > 0 {
		f.NodeSummary, _ = json.Marshal(m.node)
	}
	if gpu := m.gpu; gpu != nil {
		// Energy is this segment's, so per token it is over this segment's
		// output tokens.
		if tokens > 0 {
			gpu.JoulesPerToken = gpu.EnergyJ / float64(tokens)
		}
		f.GPUSummary, _ = json.Marshal(gpu)
	}
	sum, err := summary.Run(ctx, w.st, l.RunID, a.SLO, segment)
	if err != nil {
		log.Warn("summarising the run", "err", err)
		return f
	}
	f.Summary, _ = json.Marshal(sum)
	f.Throughput, f.RequestsPerS = sum.OutputTokensPerS, sum.RequestsPerS
	return f
}

// finish closes the run under the lease and queues its scoring on the
// server; a lost lease means another agent has it, which is not this job's
// failure.
func (w *runWorker) finish(l store.Lease, f store.Finish, log *slog.Logger) error {
	if cut := boundFinish(&f); len(cut) > 0 {
		log.Warn("the run's end was longer than the database keeps; cut to its limits (jobs/limits.go)", "cut", strings.Join(cut, ", "))
	}
	ctx, cancel := context.WithTimeout(w.writes, time.Minute)
	defer cancel()
	backoff := 200 * time.Millisecond
	for {
		// The end and the scoring job in one transaction: an agent that
		// dies in between leaves neither a run that is never scored nor a
		// scoring of a run that has not ended.
		err := w.st.InTxWith(ctx, func(tx pgx.Tx, q *store.Queries) error {
			if err := q.FinishRun(ctx, l, f); err != nil {
				return err
			}
			if w.river == nil {
				return nil
			}
			_, err := w.river.InsertTx(ctx, tx, jobs.ScoreRunArgs{RunID: l.RunID}, nil)
			return err
		})
		if err == nil {
			log.Info("run finished", "state", f.State, "stopped_by", f.StoppedBy)
			return nil
		}
		if errors.Is(err, store.ErrFenced) {
			return river.JobCancel(err)
		}
		log.Warn("recording the run's end", "err", err)
		select {
		case <-ctx.Done():
			log.Error("gave up recording the run's end; the server reassigns the run", "err", err)
			return err
		case <-time.After(backoff):
			backoff = min(2*backoff, 5*time.Second)
		}
	}
}

// boundFinish cuts a run's end to what the database keeps and names what
// it cut: the error and how it stopped from their start, the runtime log
// from its end; a summary over its limit (JSON, which cannot be cut) is
// left out, and the run then keeps the summary it had. The database
// measures JSON as its own text, which adds a space after every ':' and
// ',' (at most half again as long as Go's): a summary is kept within two
// thirds of its limit here.
func boundFinish(f *store.Finish) []string {
	var cut []string
	var c bool
	if f.Error, c = jobs.CutTo(f.Error, jobs.MaxRunErrorBytes); c {
		cut = append(cut, "error")
	}
	if f.StoppedBy, c = jobs.CutTo(f.StoppedBy, jobs.MaxShortTextBytes); c {
		cut = append(cut, "stopped_by")
	}
	if f.RuntimeLog, c = jobs.CutToTail(f.RuntimeLog, jobs.MaxRuntimeLogBytes); c {
		cut = append(cut, "runtime_log")
	}
	if len(f.Summary) > jobs.MaxSummaryBytes*2/3 {
		f.Summary, cut = nil, append(cut, "summary (left out)")
	}
	if len(f.GPUSummary) > jobs.MaxGPUSummaryBytes*2/3 {
		f.GPUSummary, cut = nil, append(cut, "gpu_summary (left out)")
	}
	if len(f.NodeSummary) > jobs.MaxNodeSummaryBytes*2/3 {
		f.NodeSummary, cut = nil, append(cut, "node_summary (left out)")
	}
	return cut
}

// convsOf is m for a run of one answer per item; with several samples the
// load generator's keys are not item indices, and multi-turn order and
// trace times do not apply.
func convsOf[V any](samples int, m map[int]V) map[int]V {
	if samples > 1 {
		return nil
	}
	return m
}
