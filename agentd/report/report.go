// Package report writes what an agent measures into PostgreSQL: results in
// batches, progress and samples every interval, all under the agent's
// lease on the run. Writes that fail because the database is away are
// kept and tried again, so a PostgreSQL restart loses nothing; a write
// refused because the lease is gone stops the run at once.
package report

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/ruckus/ruckus/agentd/load"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Writer is the part of the store the reporter needs.
type Writer interface {
	WriteResults(ctx context.Context, l store.Lease, rs []store.ResultRecord) (int, error)
	UpdateProgress(ctx context.Context, l store.Lease, p store.Progress, s store.Sample) error
}

// Options tune the reporter; zero values take the defaults.
type Options struct {
	// FlushInterval is the longest a result waits before it is written
	// (default 500 ms); BatchSize writes sooner when that many are waiting
	// (default 500).
	FlushInterval time.Duration
	BatchSize     int
	// ProgressInterval is how often the live figures and a chart sample are
	// written (default 1 s; the pages promise at least every 2 s).
	ProgressInterval time.Duration
	// Sample returns the latest GPU and runtime readings for the chart
	// sample; nil gives progress-only samples.
	Sample func() store.Sample
	// Now is the clock (tests); defaults to time.Now.
	Now func() time.Time
	// Load is the run's load profile and Before what earlier segments of
	// a resumed run used of its limits: the ETA is paced by the one and
	// bounded by both.
	Load   jobs.LoadProfile
	Before load.Progress
}

// Reporter batches one run segment's results and progress.
type Reporter struct {
	w      Writer
	lease  store.Lease
	opts   Options
	logger *slog.Logger

	mu      sync.Mutex
	pending []store.ResultRecord
	kick    chan struct{}
	fenced  chan struct{}
	fenceMu sync.Once
	// Figures of this segment's measured window.
	start      time.Time // wall clock of the window start; zero until known
	done       int
	tokens     int64
	lastWriteE error
	eta        *ETA
}

// New returns a reporter for the run held under lease that has remaining
// items to send in this segment.
func New(w Writer, lease store.Lease, remaining int, opts Options, logger *slog.Logger) *Reporter {
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 500 * time.Millisecond
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 500
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Reporter{w: w, lease: lease, opts: opts, logger: logger,
		kick: make(chan struct{}, 1), fenced: make(chan struct{}),
		eta: NewETA(Plan{Items: remaining, Load: opts.Load, Before: opts.Before})}
}

// Start marks the start of the measured window (after warm-up): the
// send times of results are taken from it.
func (r *Reporter) Start(at time.Time) {
	r.mu.Lock()
	r.start = at
	r.eta.Start(at)
	r.mu.Unlock()
}

// Sending notes a measured request leaving, for the ETA (warm-up ones
// are not to be noted); call the function it returns when the request
// comes back, answered, failed or cut short. Safe from any goroutine.
func (r *Reporter) Sending() (back func()) {
	r.mu.Lock()
	id := r.eta.Sent(r.opts.Now())
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		r.eta.Ended(id, r.opts.Now())
		r.mu.Unlock()
	}
}

// Add queues a result for writing. It may be called from any goroutine.
func (r *Reporter) Add(res jobs.Result) {
	if cut := res.Bound(); len(cut) > 0 && r.logger != nil {
		r.logger.Warn("a result was longer than the database keeps; cut to its limits (jobs/limits.go)",
			"run", r.lease.RunID, "idx", res.Idx, "cut", strings.Join(cut, ", "))
	}
	r.mu.Lock()
	if r.start.IsZero() {
		r.start = r.opts.Now().Add(-res.StartOffset - res.E2E)
	}
	r.pending = append(r.pending, store.ResultRecord{Result: res, SentAt: r.start.Add(res.StartOffset)})
	r.done++
	r.tokens += int64(res.CompletionTokens)
	full := len(r.pending) >= r.opts.BatchSize
	r.mu.Unlock()
	if full {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

// Fenced is closed when a write was refused because the lease is gone.
func (r *Reporter) Fenced() <-chan struct{} { return r.fenced }

// Run writes batches and progress until ctx ends. It returns
// store.ErrFenced as soon as the lease is gone, else nil when ctx ends;
// call Close afterwards for the last batch.
func (r *Reporter) Run(ctx context.Context) error {
	flush := time.NewTicker(r.opts.FlushInterval)
	defer flush.Stop()
	progress := time.NewTicker(r.opts.ProgressInterval)
	defer progress.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return nil
		case <-flush.C:
			err = r.flush(ctx)
		case <-r.kick:
			err = r.flush(ctx)
		case <-progress.C:
			err = r.progress(ctx)
		}
		if errors.Is(err, store.ErrFenced) {
			return err
		}
	}
}

// Close writes what is still waiting, trying again while the database is
// away, until ctx ends; then the remaining results are lost to this
// segment (they will be sent again by whoever resumes the run).
func (r *Reporter) Close(ctx context.Context) error {
	backoff := 200 * time.Millisecond
	for {
		err := r.flush(ctx)
		if err == nil {
			r.mu.Lock()
			left := len(r.pending)
			r.mu.Unlock()
			if left == 0 {
				return r.progress(ctx)
			}
			continue
		}
		if errors.Is(err, store.ErrFenced) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
			backoff = min(2*backoff, 5*time.Second)
		}
	}
}

// flush writes up to one batch. A failure other than the fence keeps the
// batch for the next try.
func (r *Reporter) flush(ctx context.Context) error {
	r.mu.Lock()
	n := min(len(r.pending), r.opts.BatchSize)
	batch := r.pending[:n:n]
	r.mu.Unlock()
	if n == 0 {
		return nil
	}
	_, err := r.w.WriteResults(ctx, r.lease, batch)
	if err != nil {
		r.noteErr(err)
		return err
	}
	r.mu.Lock()
	r.pending = r.pending[n:]
	r.lastWriteE = nil
	more := len(r.pending) >= r.opts.BatchSize
	r.mu.Unlock()
	if more {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// Figures returns the segment's measured window so far: results, output
// tokens and elapsed time.
func (r *Reporter) Figures() (done int, tokens int64, elapsed time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.start.IsZero() {
		elapsed = r.opts.Now().Sub(r.start)
	}
	return r.done, r.tokens, elapsed
}

func (r *Reporter) progress(ctx context.Context) error {
	done, tokens, elapsed := r.Figures()
	var p store.Progress
	if secs := elapsed.Seconds(); secs > 0 {
		p.Throughput = float64(tokens) / secs
		p.RequestsPerS = float64(done) / secs
	}
	r.mu.Lock()
	if eta, ok := r.eta.Estimate(r.opts.Now()); ok {
		p.ETA = &eta
	}
	r.mu.Unlock()
	s := store.Sample{}
	if r.opts.Sample != nil {
		s = r.opts.Sample()
	}
	s.At = r.opts.Now().Truncate(time.Millisecond)
	err := r.w.UpdateProgress(ctx, r.lease, p, s)
	if err != nil {
		r.noteErr(err)
	}
	return err
}

// noteErr closes Fenced on a fence refusal and logs the first of a run of
// other failures (the database may be restarting).
func (r *Reporter) noteErr(err error) {
	if errors.Is(err, store.ErrFenced) {
		r.fenceMu.Do(func() { close(r.fenced) })
		return
	}
	r.mu.Lock()
	first := r.lastWriteE == nil
	r.lastWriteE = err
	r.mu.Unlock()
	if first && r.logger != nil {
		r.logger.Warn("writing to the database failed; keeping results and trying again", "run", r.lease.RunID, "err", err)
	}
}
