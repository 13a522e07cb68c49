package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// Why Run stopped (Outcome.StoppedBy); agentd stores it with the run so a
// user can tell a finished run from one cut short by a limit.
const (
	// StoppedCompleted: every item was sent and answered. A limit or a
	// drain that came after the last item was sent does not change it,
	// since nothing was left unsent.
	StoppedCompleted = "completed"
	// StoppedMaxRequests: every item within MaxRequests was sent; the
	// rest were not.
	StoppedMaxRequests = "max_requests"
	// StoppedMaxDuration: the measured window reached MaxDuration.
	StoppedMaxDuration = "max_duration"
	// StoppedMaxErrors: more than MaxErrors measured requests failed.
	StoppedMaxErrors = "max_errors"
	// StoppedCancelled: ctx ended while items were unsent or in flight;
	// the requests it cut short were not recorded.
	StoppedCancelled = "cancelled"
	// StoppedDrained: Config.Drain was closed (agentd is stopping);
	// requests in flight finished and were recorded, the rest were not
	// sent.
	StoppedDrained = "drained"
)

// DefaultSweepConcurrency is the concurrency of a sweep's "max" step when
// the profile sets none: enough to saturate a batching runtime on one GPU.
// OpenLoopCeiling bounds the requests in flight of a rate profile without
// a concurrency, so an overloaded runtime cannot make the agent open
// connections without end.
const (
	DefaultSweepConcurrency = 32
	OpenLoopCeiling         = 1024
)

// Phase names passed to Send and set in Result.Phase, so results and
// figures can be grouped by the step of a sweep that produced them.
const (
	// PhaseWarmup is passed to Send for warm-up requests, whose results
	// are dropped.
	PhaseWarmup     = "warmup"
	PhaseSequential = "sequential"
	PhaseMax        = "max"
)

// ratePhase names a sweep's constant-rate step.
func ratePhase(rate float64) string { return fmt.Sprintf("rate %.2f/s", rate) }

// concurrencyPhase names a sweep's closed-loop step at a concurrency.
func concurrencyPhase(n int) string { return fmt.Sprintf("concurrency %d", n) }

// Config is one segment of a run: the whole run, or what is left of it
// when it is resumed.
type Config struct {
	// Indices are the dataset items to send, in the order to send them; a
	// resumed run passes only those without a result.
	Indices []int
	Profile jobs.LoadProfile
	// Seed makes Poisson arrivals repeatable: the same seed gives the
	// same schedule.
	Seed uint64
	// Send sends item idx and returns its record. It is called from many
	// goroutines at once and must return promptly when ctx ends (with
	// Status error; ErrorClass jobs.ErrCancelled is expected). phase is
	// the sweep step (empty for other profiles, PhaseWarmup for warm-up);
	// Run sets Idx, Phase and StartOffset on what it returns.
	Send func(ctx context.Context, idx int, phase string) jobs.Result
	// Record receives every measured result: never warm-up ones, never
	// those cut short by cancellation. Calls are serialised (one at a
	// time, in completion order), and each happens before the request's
	// slot is given to the next one, so Record needs no lock of its own
	// and a slow Record slows the load rather than queueing results.
	Record func(jobs.Result)
	// OnStart, when set, is told when the measured window starts (after
	// warm-up), before any measured send: StartOffsets count from there.
	OnStart func(time.Time)
	// Drain, when closed, stops sending without cancelling anything:
	// requests in flight finish and are recorded. Nil never drains.
	Drain <-chan struct{}
	// Done is what earlier segments of a resumed run already used of its
	// limits; zero for a fresh run.
	Done Progress
	// Prev orders multi-turn conversations: Prev[idx] is the item (the
	// previous turn) that must have finished before idx is sent. Nil when
	// the items are independent.
	Prev map[int]int
	// Arrivals are the items' send times from the start of the measured
	// window, for the trace profile.
	Arrivals map[int]time.Duration
}

// Progress is a run's use of its limits before this segment, so that
// max_requests, max_duration and max_errors bound the whole run rather
// than each agent's share of it.
type Progress struct {
	Requests int           // measured requests already recorded
	Errors   int           // of which failed
	Measured time.Duration // measured window already spent
}

// Phase is the figures of one step of a sweep, which a sweep exists to
// compare: the rate and throughput each load achieved.
type Phase struct {
	Name string `json:"name"`
	// OfferedRate is the rate a constant-rate step aimed at; zero for the
	// sequential and max steps.
	OfferedRate float64 `json:"offered_rate,omitempty"`
	Sent        int     `json:"sent"`
	Requests    int     `json:"requests"` // recorded
	Errors      int     `json:"errors"`
	// Window runs from the step's first send to its last recorded
	// completion.
	Window           time.Duration `json:"window"`
	RequestsPerS     float64       `json:"requests_per_s"`
	OutputTokensPerS float64       `json:"output_tokens_per_s"`
	CapDelays        int           `json:"cap_delays,omitempty"`
}

// Outcome is what Run did, for the run's log, its stop reason and the
// sweep's table.
type Outcome struct {
	Sent     int // measured requests sent (warm-up excluded)
	Recorded int // results passed to Record
	// Dropped counts requests cut short by cancellation: sent, not
	// recorded, to be sent again by whoever resumes the run.
	Dropped int
	Errors  int // recorded results with Status error
	Warmup  int // warm-up requests sent
	// Window is the measured window: first measured send → last recorded
	// completion.
	Window time.Duration
	// RequestsPerS and OutputTokensPerS are the achieved rates over Window
	// (recorded requests; their CompletionTokens).
	RequestsPerS     float64
	OutputTokensPerS float64
	StoppedBy        string
	// CapDelays counts sends of an open loop that had to wait for a slot
	// under the in-flight cap: the offered rate was not achieved.
	CapDelays int
	// Phases are the steps of a sweep, in order; nil for other profiles,
	// whose figures are the ones above.
	Phases []Phase
}

// phaseStat accumulates one step's figures; guarded by gen.mu.
type phaseStat struct {
	name                              string
	offered                           float64
	first, last                       time.Time
	sent, recorded, errors, capDelays int
	tokens                            int64
}

func (p *phaseStat) window() time.Duration {
	if p.first.IsZero() || p.last.IsZero() {
		return 0
	}
	return p.last.Sub(p.first)
}

// rate is the step's recorded requests per second; zero when nothing was
// recorded.
func (p *phaseStat) rate() float64 {
	if w := p.window().Seconds(); w > 0 {
		return float64(p.recorded) / w
	}
	return 0
}

// gen is one Run's shared state.
type gen struct {
	cfg      Config
	ctx      context.Context
	start    time.Time // measured window start
	deadline time.Time // zero: no max_duration
	wg       sync.WaitGroup

	// whyMu guards why and the closing of stop; it may be taken under mu,
	// never the other way round.
	whyMu sync.Mutex
	why   string
	stop  chan struct{} // closed by the first halt

	recordMu sync.Mutex // serialises Record

	// ord is the current loop's order (sweep steps run one at a time);
	// guarded by mu.
	ord *order

	mu          sync.Mutex
	out         Outcome
	first, last time.Time
	tokens      int64
	errors      int // including Done.Errors, for max_errors
	phases      []*phaseStat
}

// Run sends cfg.Indices following cfg.Profile and returns once every
// request it sent has finished. The error reports an unusable Config, in
// which case nothing was sent; every other ending is told by
// Outcome.StoppedBy.
func Run(ctx context.Context, cfg Config) (Outcome, error) {
	if err := check(cfg); err != nil {
		return Outcome{}, err
	}
	g := &gen{cfg: cfg, ctx: ctx, stop: make(chan struct{})}
	p := cfg.Profile

	items := cfg.Indices
	truncated := false
	if p.MaxRequests > 0 {
		budget := max(p.MaxRequests-cfg.Done.Requests, 0)
		if budget < len(items) {
			items, truncated = items[:budget], true
		}
	}
	g.errors = cfg.Done.Errors
	if p.MaxErrors > 0 && g.errors > p.MaxErrors {
		g.halt(StoppedMaxErrors)
	}
	var budget time.Duration
	if p.MaxDuration > 0 {
		budget = time.Duration(p.MaxDuration) - cfg.Done.Measured
		if budget <= 0 {
			g.halt(StoppedMaxDuration)
		}
	}

	if len(items) > 0 && !g.stopping() {
		g.warmup(items)
	}
	g.start = time.Now()
	if budget > 0 {
		g.deadline = g.start.Add(budget)
		// The timer wakes a dispatcher waiting for a slot or a send time;
		// the deadline itself is checked at every send.
		t := time.AfterFunc(budget, func() { g.halt(StoppedMaxDuration) })
		defer t.Stop()
	}
	if cfg.OnStart != nil {
		cfg.OnStart(g.start)
	}

	switch p.Profile {
	case jobs.LoadConcurrency:
		g.closedLoop(items, p.Concurrency, g.newPhase("", 0))
	case jobs.LoadConstant, jobs.LoadPoisson:
		g.openLoop(items, newArrivals(p.Rate, p.Profile == jobs.LoadPoisson, cfg.Seed), openCap(p.Concurrency), g.newPhase("", 0))
	case jobs.LoadSweep:
		g.sweep(items)
	case jobs.LoadLengthSweep:
		g.lengthSweep(items)
	case jobs.LoadTrace:
		g.traceLoop(items, g.newPhase("", 0))
	default: // sequential, or unset
		g.closedLoop(items, 1, g.newPhase("", 0))
	}
	g.wg.Wait()
	return g.outcome(len(items), truncated), nil
}

// check refuses a Config Run cannot honour, rather than sending a load
// that is not the one asked for.
func check(cfg Config) error {
	p := cfg.Profile
	var errs []error
	if cfg.Send == nil || cfg.Record == nil {
		errs = append(errs, errors.New("load: Send and Record are required"))
	}
	switch p.Profile {
	case "", jobs.LoadSequential, jobs.LoadSweep:
	case jobs.LoadLengthSweep:
		if len(p.Lengths.Steps()) == 0 {
			errs = append(errs, errors.New("the length-sweep profile needs input lengths"))
		}
	case jobs.LoadTrace:
		for _, why := range checkTrace(cfg) {
			errs = append(errs, errors.New(why))
		}
	case jobs.LoadConcurrency:
		if p.Concurrency < 1 {
			errs = append(errs, fmt.Errorf("the concurrency profile needs a concurrency of at least 1 (got %d)", p.Concurrency))
		}
	case jobs.LoadConstant, jobs.LoadPoisson:
		if !(p.Rate > 0) || math.IsInf(p.Rate, 0) {
			errs = append(errs, fmt.Errorf("the %s profile needs a rate above 0 (got %v)", p.Profile, p.Rate))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown load profile %q", p.Profile))
	}
	for _, r := range p.Rates {
		if !(r > 0) || math.IsInf(r, 0) {
			errs = append(errs, fmt.Errorf("a sweep's rates must be above 0 (got %v)", r))
		}
	}
	for _, c := range p.Concurrencies {
		if c < 1 {
			errs = append(errs, fmt.Errorf("a sweep's concurrencies must be at least 1 (got %d)", c))
		}
	}
	if p.Concurrency < 0 || p.Steps < 0 || p.Warmup < 0 || p.MaxRequests < 0 || p.MaxDuration < 0 || p.MaxErrors < 0 {
		errs = append(errs, errors.New("concurrency, steps, warmup and the limits cannot be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	return nil
}

// openCap is the in-flight cap of an open loop.
func openCap(concurrency int) int {
	if concurrency > 0 {
		return concurrency
	}
	return OpenLoopCeiling
}

// halt stops sending; the first reason given is kept.
func (g *gen) halt(why string) {
	g.whyMu.Lock()
	defer g.whyMu.Unlock()
	if g.why == "" {
		g.why = why
		close(g.stop)
	}
}

func (g *gen) reason() string {
	g.whyMu.Lock()
	defer g.whyMu.Unlock()
	return g.why
}

// stopping reports whether nothing more may be sent, noting why.
func (g *gen) stopping() bool {
	select {
	case <-g.ctx.Done():
		g.halt(StoppedCancelled)
		return true
	case <-g.cfg.Drain:
		g.halt(StoppedDrained)
		return true
	case <-g.stop:
		return true
	default:
		return false
	}
}

// acquire takes a slot of sem, or reports false when the generator must
// stop first.
func (g *gen) acquire(sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
	case <-g.stop:
		return false
	case <-g.ctx.Done():
		g.halt(StoppedCancelled)
		return false
	case <-g.cfg.Drain:
		g.halt(StoppedDrained)
		return false
	}
	if g.stopping() { // select picks at random among ready cases
		<-sem
		return false
	}
	return true
}

// sleepUntil waits for t, or reports false when the generator must stop
// first.
func (g *gen) sleepUntil(t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return !g.stopping()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return !g.stopping()
	case <-g.stop:
	case <-g.ctx.Done():
		g.halt(StoppedCancelled)
	case <-g.cfg.Drain:
		g.halt(StoppedDrained)
	}
	return false
}

// warmup sends the first items cyclically before the measured window and
// drops their results: the runtime's first requests pay for loading,
// compiling and filling caches, which is not what the benchmark measures.
func (g *gen) warmup(items []int) {
	p := g.cfg.Profile
	conc := 1
	if p.Profile == jobs.LoadConcurrency {
		conc = p.Concurrency // warm the batch shapes the run will use
	}
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := range p.Warmup {
		if !g.acquire(sem) {
			break
		}
		g.out.Warmup++ // only this goroutine touches it
		wg.Add(1)
		go func(idx int) {
			defer wg.Done()
			defer func() { <-sem }()
			_ = g.cfg.Send(g.ctx, idx, PhaseWarmup)
		}(items[i%len(items)])
	}
	wg.Wait()
}

func (g *gen) newPhase(name string, offered float64) *phaseStat {
	ph := &phaseStat{name: name, offered: offered}
	g.mu.Lock()
	g.phases = append(g.phases, ph)
	g.mu.Unlock()
	return ph
}

// send starts one measured request holding a slot of sem, which it frees
// once the result is counted and recorded. It reports false, freeing the
// slot, when the generator must stop: checked here, at the last moment,
// so that no request leaves at or after the max_duration deadline and a
// halt from another goroutine is seen as early as possible.
func (g *gen) send(idx int, ph *phaseStat, sem chan struct{}) bool {
	at := time.Now()
	if !g.deadline.IsZero() && !at.Before(g.deadline) {
		g.halt(StoppedMaxDuration)
	}
	if g.stopping() {
		<-sem
		return false
	}
	g.mu.Lock()
	g.out.Sent++
	ph.sent++
	if g.first.IsZero() {
		g.first = at
	}
	if ph.first.IsZero() {
		ph.first = at
	}
	g.mu.Unlock()

	g.mu.Lock()
	ord := g.ord
	g.mu.Unlock()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer func() { <-sem }()
		defer ord.done(idx) // before the slot is freed
		res := g.cfg.Send(g.ctx, idx, ph.name)
		end := time.Now()
		if res.Status == jobs.StatusError && g.ctx.Err() != nil {
			// Cut short by the cancellation, whatever class the transport
			// gave it: not the runtime's failure, and whoever resumes the
			// run sends the item again.
			g.mu.Lock()
			g.out.Dropped++
			g.mu.Unlock()
			return
		}
		res.Idx, res.Phase, res.StartOffset = idx, ph.name, at.Sub(g.start)

		g.mu.Lock()
		g.out.Recorded++
		ph.recorded++
		g.tokens += int64(res.CompletionTokens)
		ph.tokens += int64(res.CompletionTokens)
		if end.After(g.last) {
			g.last = end
		}
		if end.After(ph.last) {
			ph.last = end
		}
		if res.Status == jobs.StatusError {
			g.out.Errors++
			ph.errors++
			g.errors++
			if limit := g.cfg.Profile.MaxErrors; limit > 0 && g.errors > limit {
				g.halt(StoppedMaxErrors) // before the slot is freed
			}
		}
		g.mu.Unlock()

		g.recordMu.Lock()
		defer g.recordMu.Unlock()
		g.cfg.Record(res)
	}()
	return true
}

// closedLoop keeps conc requests in flight until items run out; false
// means it stopped early.
func (g *gen) closedLoop(items []int, conc int, ph *phaseStat) bool {
	sem := make(chan struct{}, conc)
	o := g.useOrder(items)
	for {
		if !g.acquire(sem) {
			return false
		}
		idx, ok := o.next(g)
		if !ok {
			<-sem
			return o.exhausted()
		}
		if !g.send(idx, ph, sem) {
			return false
		}
	}
}

// useOrder makes a loop's order over items the current one.
func (g *gen) useOrder(items []int) *order {
	o := newOrder(items, g.cfg.Prev)
	g.mu.Lock()
	g.ord = o
	g.mu.Unlock()
	return o
}

// openLoop sends items on the arrivals' schedule, whatever the answers,
// with at most ceiling in flight; false means it stopped early.
func (g *gen) openLoop(items []int, arr *arrivals, ceiling int, ph *phaseStat) bool {
	sem := make(chan struct{}, ceiling)
	next := time.Now()
	o := g.useOrder(items)
	for {
		if !g.sleepUntil(next) {
			return false
		}
		idx, ok := o.next(g)
		if !ok {
			return o.exhausted()
		}
		if !g.sendOpen(idx, ph, sem) {
			return false
		}
		next = next.Add(arr.next())
	}
}

// sendOpen sends idx for an open loop (rate, Poisson, trace): at once
// when a slot of sem is free, else counted as a cap delay and sent when a
// slot frees (docs/benchmarks.md#load-profiles). False means the generator
// must stop.
func (g *gen) sendOpen(idx int, ph *phaseStat, sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
	default:
		g.mu.Lock()
		g.out.CapDelays++
		ph.capDelays++
		g.mu.Unlock()
		if !g.acquire(sem) {
			return false
		}
	}
	return g.send(idx, ph, sem)
}

// outcome sums up once every request has finished; n is the number of
// items this Run meant to send.
func (g *gen) outcome(n int, truncated bool) Outcome {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.out
	unsent := n - out.Sent
	switch {
	case g.ctx.Err() != nil && (unsent > 0 || out.Dropped > 0):
		out.StoppedBy = StoppedCancelled
	case unsent > 0:
		out.StoppedBy = g.reason() // only a halt leaves items unsent
	case truncated:
		out.StoppedBy = StoppedMaxRequests
	default:
		out.StoppedBy = StoppedCompleted
	}
	if out.Recorded > 0 {
		out.Window = g.last.Sub(g.first)
		if s := out.Window.Seconds(); s > 0 {
			out.RequestsPerS = float64(out.Recorded) / s
			out.OutputTokensPerS = float64(g.tokens) / s
		}
	}
	if p := g.cfg.Profile.Profile; p == jobs.LoadSweep || p == jobs.LoadLengthSweep {
		for _, ph := range g.phases {
			if ph.sent == 0 {
				continue // a step never reached
			}
			f := Phase{Name: ph.name, OfferedRate: ph.offered, Sent: ph.sent, Requests: ph.recorded,
				Errors: ph.errors, Window: ph.window(), CapDelays: ph.capDelays}
			if s := f.Window.Seconds(); s > 0 {
				f.RequestsPerS = float64(ph.recorded) / s
				f.OutputTokensPerS = float64(ph.tokens) / s
			}
			out.Phases = append(out.Phases, f)
		}
	}
	return out
}
