package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/ruckus/ruckus/agentd/gpu"
	"github.com/ruckus/ruckus/agentd/load"
	"github.com/ruckus/ruckus/agentd/openai"
	"github.com/ruckus/ruckus/agentd/report"
	"github.com/ruckus/ruckus/app/store"
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

	// river queues follow-up jobs (scoring); set when the client starts.
	river *river.Client[pgx.Tx]

	drainOnce sync.Once
	drain     chan struct{}
}

// beginDrain asks a run in progress to stop sending, finish what is in
// flight and go back to the queue.
func (w *runWorker) beginDrain() { w.drainOnce.Do(func() { close(w.drain) }) }

// Timeout lets a run go on for the longest allowed run; its own limits
// (max duration, max requests) and cancellation end it sooner.
func (w *runWorker) Timeout(*river.Job[jobs.RunArgs]) time.Duration { return jobs.MaxRunTime }

// Work runs one run (or the rest of it, when resumed).
func (w *runWorker) Work(ctx context.Context, job *river.Job[jobs.RunArgs]) error {
	a := job.Args
	log := w.logger.With("run", a.RunID, "job", job.ID)
	if err := jobs.CheckProtocol(a.ProtocolVersion); err != nil {
		return w.refuse(ctx, job, err, log)
	}
	// The job comes from the database, which this node does not trust: a
	// model name that is not a registry id (one renamed "--trust-remote-code")
	// never reaches a runtime, its command line above all.
	if err := jobs.CheckModelName(a.Model); err != nil {
		return w.refuse(ctx, job, fmt.Errorf("the job's model: %w", err), log)
	}
	claim, err := w.st.ClaimRun(ctx, a.RunID, w.agentID, job.ID, w.backend.Mode(w.gpus > 0))
	if errors.Is(err, store.ErrStaleJob) {
		log.Info("job no longer drives its run; dropping it")
		return river.JobCancel(err)
	}
	if err != nil {
		return err // the database may be away: River tries again
	}
	lease := claim.Lease
	log.Info("working run", "model", a.Model, "total", claim.Total, "done", claim.Completed, "resumed", claim.Resumed)

	tgt, err := w.backend.Prepare(ctx, a.Model, w.cfg.servedModel(a.Model))
	if err != nil {
		log.Error("runtime not ready", "err", err)
		f := store.Finish{State: "failed", StoppedBy: "runtime", Error: err.Error()}
		if tgt != nil {
			f.RuntimeLog = tgt.LogTail()
		}
		return w.finish(lease, f, log)
	}
	defer func() {
		if err := tgt.Stop(); err != nil {
			log.Warn("stopping the runtime", "err", err)
		}
	}()

	items, err := w.st.PendingItems(ctx, lease.RunID, claim.DatasetID, claim.Total)
	if err != nil {
		return err
	}
	convs, err := w.planConversations(ctx, lease.RunID, claim, items)
	if err != nil {
		return err
	}
	answers := w.simAnswers(ctx, lease.RunID, log)
	// The load generator sends keys: the item's index, or with several
	// samples per item idx × MaxSamples + sample (conversations and trace
	// times, keyed by item, then do not apply).
	samples := max(claim.Samples, 1)
	key := func(it store.PendingItem) int { return it.Idx }
	if samples > 1 {
		key = func(it store.PendingItem) int { return it.Idx*jobs.MaxSamples + it.Sample }
	}
	byIdx := make(map[int]store.PendingItem, len(items))
	indices := make([]int, len(items))
	for i, it := range items {
		byIdx[key(it)], indices[i] = it, key(it)
	}

	client := w.backend.Client(tgt)
	mon := startMonitor(ctx, w.nv, w.gpus, tgt.MetricsURL(), w.cfg.ProgressInterval, log)
	// Limits count what earlier segments of a resumed run used.
	before := load.Progress{Requests: claim.Completed, Errors: claim.Errors, Measured: claim.Measured}
	rep := report.New(w.st, lease, len(items), report.Options{ProgressInterval: w.cfg.ProgressInterval, Sample: mon.Latest,
		Load: a.Load, Before: before}, log)

	// A cancel or a hand-on stops the load within a control poll, whatever
	// River's notifications do.
	loadCtx, stopLoad := context.WithCancelCause(ctx)
	defer stopLoad(nil)
	go w.watchRun(loadCtx, lease, stopLoad, log)
	repCtx, stopRep := context.WithCancel(context.Background())
	repDone := make(chan error, 1)
	go func() {
		err := rep.Run(repCtx)
		if errors.Is(err, store.ErrFenced) {
			stopLoad(err) // the run was handed on: stop sending at once
		}
		repDone <- err
	}()

	model := w.cfg.servedModel(a.Model)
	out, err := load.Run(loadCtx, load.Config{
		Indices: indices,
		Profile: a.Load,
		Seed:    uint64(a.RunID),
		Drain:   w.drain,
		OnStart: rep.Start,
		Done:    before,
		Send: func(ctx context.Context, k int, phase string) jobs.Result {
			if phase != load.PhaseWarmup {
				defer rep.Sending()() // what is in flight, for the ETA
			}
			it := byIdx[k]
			idx := it.Idx
			var res jobs.Result
			req, err := openai.BuildRequest(convs.request(idx, it.Request), model, itemSampling(it.Request, a.Sampling))
			if err != nil {
				res = jobs.Result{Status: jobs.StatusError, ErrorClass: jobs.ErrInvalidReq, Error: err.Error()}
			} else {
				ans, ok := answers[idx]
				req.Body = withSimAnswer(req.Body, ans, ok)
				res = client.Do(ctx, req)
			}
			convs.answered(idx, res)
			res.Idx, res.Sample, res.CustomID, res.Phase = idx, it.Sample, it.CustomID, phase
			return res
		},
		// The load generator labels what it records with the key it
		// sent (results it made itself, such as cancelled ones, too).
		Record: func(r jobs.Result) {
			if samples > 1 {
				r.Idx, r.Sample = r.Idx/jobs.MaxSamples, r.Idx%jobs.MaxSamples
			}
			rep.Add(r)
		},

		// The multi-turn order and trace times of synthetic items.
		Prev:     convsOf(samples, convs.prev),
		Arrivals: convsOf(samples, convs.arrivals),
	})
	stopRep()
	fenceErr := <-repDone
	gpuSum := mon.Stop()
	if err != nil {
		// The load profile cannot be honoured (the manifest's validation
		// should have refused it): nothing was sent.
		return w.finish(lease, store.Finish{State: "failed", StoppedBy: "invalid_load", Error: err.Error(), RuntimeLog: tgt.LogTail()}, log)
	}

	// The last results go in even if the run was cancelled: partial
	// results are kept.
	cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if fenceErr == nil {
		fenceErr = rep.Close(cctx)
	}
	if fenceErr == nil && errors.Is(context.Cause(loadCtx), store.ErrFenced) {
		fenceErr = context.Cause(loadCtx)
	}
	if errors.Is(fenceErr, store.ErrFenced) {
		log.Warn("the run was handed on to another agent; stopping")
		return river.JobCancel(fenceErr)
	}

	switch {
	case errors.Is(context.Cause(ctx), river.ErrJobCancelledRemotely), errors.Is(context.Cause(loadCtx), store.ErrRunCancelled):
		// The user cancelled the run (or the reaper took it, and the fence
		// will refuse what follows).
		f := w.finishFigures(cctx, lease, a, rep, gpuSum, tgt, log)
		f.State, f.StoppedBy = "cancelled", load.StoppedCancelled
		if err := w.finish(lease, f, log); err != nil {
			return err
		}
		return river.JobCancel(errors.New("run cancelled"))
	case out.StoppedBy == load.StoppedDrained || ctx.Err() != nil:
		// agentd is stopping: what was sent is stored; another agent (or
		// this one, restarted) resumes from there.
		_, _, segment := rep.Figures()
		if err := w.st.HandBackRun(cctx, lease, segment, "agent "+w.cfg.Name+" is stopping"); err != nil {
			log.Warn("handing the run back", "err", err)
			return err
		}
		log.Info("run handed back for another agent to resume")
		return river.JobSnooze(time.Second)
	}
	f := w.finishFigures(cctx, lease, a, rep, gpuSum, tgt, log)
	f.State, f.StoppedBy = "completed", out.StoppedBy
	if errs := claim.Errors + out.Errors; out.StoppedBy == load.StoppedMaxErrors || (a.Load.MaxErrors > 0 && errs > a.Load.MaxErrors) {
		f.State, f.StoppedBy = "failed", load.StoppedMaxErrors
		f.Error = fmt.Sprintf("%d requests failed, more than max_errors (%d)", errs, a.Load.MaxErrors)
	} else if why := noSuccess(f.Summary); why != "" {
		f.State, f.Error = "failed", why
	}
	return w.finish(lease, f, log)
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
		err := w.st.RunControl(ctx, l)
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

// finishFigures computes the run's summary over all its stored results
// (every agent's share) plus this segment's GPU figures.
func (w *runWorker) finishFigures(ctx context.Context, l store.Lease, a jobs.RunArgs, rep *report.Reporter, gpu *gpuSummary, tgt target, log *slog.Logger) store.Finish {
	_, tokens, segment := rep.Figures()
	f := store.Finish{Segment: segment, LoadTime: tgt.LoadTime(), RuntimeLog: tgt.LogTail()}
	if gpu != nil {
		// Energy is this segment's, so per token it is over this segment's
		// output tokens.
		if tokens > 0 {
			gpu.JoulesPerToken = gpu.EnergyJ / float64(tokens)
		}
		f.GPUSummary, _ = json.Marshal(gpu)
	}
	sum, err := w.st.RunAggregate(ctx, l.RunID, a.SLO, segment)
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
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
			return err
		case <-time.After(backoff):
			backoff = min(2*backoff, 5*time.Second)
		}
	}
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
