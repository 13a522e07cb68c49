// Package load is agentd's load generator: it sends a run's items to the
// runtime following the benchmark's load profile — sequential, fixed
// concurrency, constant rate, Poisson rate or a sweep — with warm-up
// excluded from the figures and the limits applied (max duration, max
// errors; max requests is applied earlier, when the run's items are
// chosen, so that a resumed run keeps the same budget).
package load

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// Why the generator stopped.
const (
	StoppedCompleted   = "completed"
	StoppedMaxDuration = "max_duration"
	StoppedMaxErrors   = "max_errors"
	StoppedCancelled   = "cancelled"
	// StoppedDrained: asked to stop (agentd shutting down); in-flight
	// requests finished and were recorded, the rest were not sent.
	StoppedDrained = "drained"
)

// DefaultSweepConcurrency is the concurrency of a sweep's "max" step when
// the profile sets none; OpenLoopCeiling bounds requests in flight for
// rate profiles without a concurrency.
const (
	DefaultSweepConcurrency = 32
	OpenLoopCeiling         = 1024
)

// Config is one segment of a run.
type Config struct {
	// Indices are the dataset items to send, in order (a resumed run
	// passes only those without a result).
	Indices []int
	Profile jobs.LoadProfile
	// Seed makes Poisson arrivals repeatable.
	Seed uint64
	// Send sends item idx and returns its record; it must return promptly
	// when ctx ends.
	Send func(ctx context.Context, idx int, phase string) jobs.Result
	// Record receives every measured result (never warm-up ones, never
	// requests cut short by cancellation); calls are serialised.
	Record func(jobs.Result)
	// OnStart is told when the measured window starts (after warm-up).
	OnStart func(time.Time)
	// Drain, when closed, stops sending; requests in flight finish and are
	// recorded.
	Drain <-chan struct{}
}

// Phase is one step of a sweep (or the whole run for other profiles).
type Phase struct {
	Name             string        `json:"name"`
	Requests         int           `json:"requests"`
	Window           time.Duration `json:"window"`
	RequestsPerS     float64       `json:"requests_per_s"`
	OutputTokensPerS float64       `json:"output_tokens_per_s"`
}

// Outcome is what the generator did.
type Outcome struct {
	Sent      int
	Recorded  int
	Errors    int
	Warmup    int
	Window    time.Duration // first measured send → last measured completion
	StoppedBy string
	// CapDelays counts sends of a rate profile that waited for a free slot:
	// the offered rate was not achieved.
	CapDelays int
	Phases    []Phase
}

// gen is one Run's shared state.
type gen struct {
	cfg   Config
	ctx   context.Context
	stop  chan struct{} // closed: send nothing more
	once  sync.Once
	whyMu sync.Mutex // why is written by halt from any goroutine
	why   string
	wg    sync.WaitGroup
	mu    sync.Mutex
	out   Outcome
	start time.Time
	last  time.Time
	// Per-phase figures.
	phaseN      map[string]int
	phaseTokens map[string]int64
	phaseFirst  map[string]time.Time
	phaseLast   map[string]time.Time
}

func (g *gen) halt(why string) {
	g.once.Do(func() {
		g.whyMu.Lock()
		g.why = why
		g.whyMu.Unlock()
		close(g.stop)
	})
}

func (g *gen) stopped() bool {
	if g.ctx.Err() != nil {
		return true
	}
	select {
	case <-g.stop:
		return true
	default:
		return false
	}
}

// Run sends the items and returns when every request sent has finished.
func Run(ctx context.Context, cfg Config) (Outcome, error) {
	if cfg.Send == nil || cfg.Record == nil {
		return Outcome{}, fmt.Errorf("load: Send and Record are required")
	}
	g := &gen{cfg: cfg, ctx: ctx, stop: make(chan struct{}),
		phaseN: map[string]int{}, phaseTokens: map[string]int64{}, phaseFirst: map[string]time.Time{}, phaseLast: map[string]time.Time{}}
	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() {
		select {
		case <-ctx.Done():
			g.halt(StoppedCancelled)
		case <-cfg.Drain:
			g.halt(StoppedDrained)
		case <-watchDone:
		}
	}()

	p := cfg.Profile
	g.warmup(p)
	g.start = time.Now()
	if cfg.OnStart != nil {
		cfg.OnStart(g.start)
	}
	if p.MaxDuration > 0 {
		t := time.AfterFunc(time.Duration(p.MaxDuration), func() { g.halt(StoppedMaxDuration) })
		defer t.Stop()
	}

	items := cfg.Indices
	switch p.Profile {
	case jobs.LoadConcurrency:
		g.closedLoop(items, max(p.Concurrency, 1), "")
	case jobs.LoadConstant, jobs.LoadPoisson:
		g.openLoop(items, p.Rate, p.Profile == jobs.LoadPoisson, p.Concurrency, "")
	case jobs.LoadSweep:
		g.sweep(items, p)
	default: // sequential
		g.closedLoop(items, 1, "")
	}
	g.wg.Wait()

	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.out
	out.StoppedBy = StoppedCompleted
	g.whyMu.Lock()
	if g.why != "" {
		out.StoppedBy = g.why
	}
	g.whyMu.Unlock()
	if ctx.Err() != nil {
		out.StoppedBy = StoppedCancelled
	}
	if !g.last.IsZero() {
		out.Window = g.last.Sub(g.start)
	}
	for _, name := range g.phaseOrder() {
		ph := Phase{Name: name, Requests: g.phaseN[name]}
		if last, ok := g.phaseLast[name]; ok {
			ph.Window = last.Sub(g.phaseFirst[name])
		}
		if s := ph.Window.Seconds(); s > 0 {
			ph.RequestsPerS = float64(ph.Requests) / s
			ph.OutputTokensPerS = float64(g.phaseTokens[name]) / s
		}
		out.Phases = append(out.Phases, ph)
	}
	return out, nil
}

func (g *gen) phaseOrder() []string {
	names := make([]string, 0, len(g.phaseFirst))
	for n := range g.phaseFirst {
		names = append(names, n)
	}
	// Order by first send.
	for i := 1; i < len(names); i++ {
		for j := i; j > 0 && g.phaseFirst[names[j]].Before(g.phaseFirst[names[j-1]]); j-- {
			names[j], names[j-1] = names[j-1], names[j]
		}
	}
	return names
}

// warmup sends the first items (cyclically) before the measured window,
// at the profile's concurrency, and throws their results away.
func (g *gen) warmup(p jobs.LoadProfile) {
	if p.Warmup <= 0 || len(g.cfg.Indices) == 0 {
		return
	}
	conc := 1
	if p.Profile == jobs.LoadConcurrency {
		conc = max(p.Concurrency, 1)
	}
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := 0; i < p.Warmup && !g.stopped(); i++ {
		select {
		case sem <- struct{}{}:
		case <-g.stop:
			continue
		}
		wg.Add(1)
		idx := g.cfg.Indices[i%len(g.cfg.Indices)]
		go func() {
			defer wg.Done()
			_ = g.cfg.Send(g.ctx, idx, "warmup")
			<-sem
		}()
		g.mu.Lock()
		g.out.Warmup++
		g.mu.Unlock()
	}
	wg.Wait()
}

// send starts one measured request in its own goroutine; release is
// called when it finishes.
func (g *gen) send(idx int, phase string, release func()) {
	sentAt := time.Now()
	g.mu.Lock()
	g.out.Sent++
	if _, ok := g.phaseFirst[phase]; !ok {
		g.phaseFirst[phase] = sentAt
	}
	g.mu.Unlock()
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		res := g.cfg.Send(g.ctx, idx, phase)
		release()
		done := time.Now()
		if g.ctx.Err() != nil && res.Status == jobs.StatusError {
			return // cut short by cancellation: whoever resumes sends it again
		}
		res.StartOffset, res.Phase = sentAt.Sub(g.start), phase
		g.mu.Lock()
		defer g.mu.Unlock()
		g.out.Recorded++
		if res.Status == jobs.StatusError {
			g.out.Errors++
			if limit := g.cfg.Profile.MaxErrors; limit > 0 && g.out.Errors > limit {
				g.halt(StoppedMaxErrors)
			}
		}
		g.last = done
		g.phaseN[phase]++
		g.phaseTokens[phase] += int64(res.CompletionTokens)
		g.phaseLast[phase] = done
		g.cfg.Record(res)
	}()
}

// closedLoop keeps conc requests in flight.
func (g *gen) closedLoop(items []int, conc int, phase string) {
	sem := make(chan struct{}, conc)
	for _, idx := range items {
		select {
		case sem <- struct{}{}:
		case <-g.stop:
			return
		}
		if g.stopped() {
			<-sem
			return
		}
		g.send(idx, phase, func() { <-sem })
	}
}

// openLoop sends at rate per second, evenly spaced or with exponential
// gaps (Poisson), whatever the answers; at most ceiling requests are in
// flight.
func (g *gen) openLoop(items []int, rate float64, poisson bool, ceiling int, phase string) {
	if rate <= 0 {
		g.closedLoop(items, 1, phase)
		return
	}
	if ceiling <= 0 {
		ceiling = OpenLoopCeiling
	}
	sem := make(chan struct{}, ceiling)
	arrivals := newArrivals(rate, poisson, g.cfg.Seed)
	next := time.Now()
	for _, idx := range items {
		if wait := time.Until(next); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-g.stop:
				t.Stop()
				return
			}
		}
		select {
		case sem <- struct{}{}:
		default:
			g.mu.Lock()
			g.out.CapDelays++
			g.mu.Unlock()
			select {
			case sem <- struct{}{}:
			case <-g.stop:
				return
			}
		}
		if g.stopped() {
			<-sem
			return
		}
		g.send(idx, phase, func() { <-sem })
		next = next.Add(arrivals.next())
	}
}

// arrivals yields the gaps between sends.
type arrivals struct {
	mean    time.Duration
	poisson bool
	rng     *rand.Rand
}

func newArrivals(rate float64, poisson bool, seed uint64) *arrivals {
	return &arrivals{mean: time.Duration(float64(time.Second) / rate), poisson: poisson, rng: rand.New(rand.NewPCG(seed, 0x5eed))}
}

func (a *arrivals) next() time.Duration {
	if !a.poisson {
		return a.mean
	}
	return time.Duration(a.rng.ExpFloat64() * float64(a.mean))
}

// sweep splits the items into equal shares: sequential, then the highest
// throughput (closed loop at the profile's concurrency), then Steps
// constant rates evenly spaced strictly between the two rates measured.
// Each step waits for the previous one to finish.
func (g *gen) sweep(items []int, p jobs.LoadProfile) {
	steps := max(p.Steps, 0)
	shares := split(items, 2+steps)
	conc := p.Concurrency
	if conc <= 0 {
		conc = DefaultSweepConcurrency
	}
	g.closedLoop(shares[0], 1, "sequential")
	g.wg.Wait()
	g.closedLoop(shares[1], conc, "max")
	g.wg.Wait()
	g.mu.Lock()
	rate := func(name string) float64 {
		w := g.phaseLast[name].Sub(g.phaseFirst[name]).Seconds()
		if w <= 0 {
			return 0
		}
		return float64(g.phaseN[name]) / w
	}
	lo, hi := rate("sequential"), rate("max")
	g.mu.Unlock()
	for i := 1; i <= steps && !g.stopped(); i++ {
		r := lo + (hi-lo)*float64(i)/float64(steps+1)
		g.openLoop(shares[1+i], r, false, conc, fmt.Sprintf("rate %.2f/s", r))
		g.wg.Wait()
	}
}

// split divides items into n consecutive shares of near-equal size.
func split(items []int, n int) [][]int {
	out := make([][]int, n)
	for i := range n {
		out[i] = items[len(items)*i/n : len(items)*(i+1)/n]
	}
	return out
}
