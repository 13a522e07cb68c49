package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/ruckus/ruckus/jobs"
)

// Serving is the simulated runtime's serving model: a batch cap with a
// queue, a KV cache of a fixed number of tokens with preemption, prefill
// time per prompt token and tensor parallelism. Without it (nil in
// Config) requests are never queued and only Batch slows them down. The
// formulas are in docs/simulated-runtime.md#serving-model.
type Serving struct {
	// MaxNumSeqs is how many requests are generated at once; more wait,
	// first come first served (vLLM's max_num_seqs).
	MaxNumSeqs int `yaml:"max_num_seqs"`
	// GPUMemoryGB is each GPU's memory, GPUMemoryUtilization the share of
	// it the runtime takes, WeightsGB what the weights take of that; the
	// rest holds the KV cache at KVBytesPerToken a token.
	GPUMemoryGB          float64 `yaml:"gpu_memory_gb"`
	GPUMemoryUtilization float64 `yaml:"gpu_memory_utilization"`
	WeightsGB            float64 `yaml:"weights_gb"`
	KVBytesPerToken      int     `yaml:"kv_bytes_per_token"`
	// PrefillPerToken is the time prefill takes per prompt token on one
	// GPU (before TimeScale).
	PrefillPerToken time.Duration `yaml:"prefill_per_token"`
	// TensorParallel is the GPUs the model is split over; decode and
	// prefill run TensorParallel^TPExponent times as fast.
	TensorParallel int     `yaml:"tensor_parallel_size"`
	TPExponent     float64 `yaml:"tp_exponent"`
	// MaxModelLen, when set, caps prompt and answer together: the answer
	// ends ("length") where the context is full.
	MaxModelLen int `yaml:"max_model_len"`
}

// DefaultServing is a 7B-class model's cache on one 24 GB GPU: vLLM's
// defaults of 256 sequences and 90 % of the memory, 2 GB of weights,
// 128 KiB of KV cache per token (about 150,000 tokens), prefill at 20,000
// tokens/s, tensor parallelism's speed-up tp^0.8.
func DefaultServing() Serving {
	return Serving{MaxNumSeqs: 256, GPUMemoryGB: 24, GPUMemoryUtilization: 0.9, WeightsGB: 2, KVBytesPerToken: 128 << 10,
		PrefillPerToken: 50 * time.Microsecond, TensorParallel: 1, TPExponent: 0.8}
}

// KVTokens is the KV cache's budget in tokens:
// (gpu_memory_utilization × gpu_memory_gb × tp − weights_gb) × 10⁹ /
// kv_bytes_per_token, at least 0.
func (v Serving) KVTokens() int {
	free := v.GPUMemoryUtilization*v.GPUMemoryGB*float64(max(v.TensorParallel, 1)) - v.WeightsGB
	return int(max(0, free*1e9/float64(max(v.KVBytesPerToken, 1))))
}

// Speedup is how much faster decode and prefill run on TensorParallel
// GPUs than on one: tp^TPExponent (sub-linear below an exponent of 1).
func (v Serving) Speedup() float64 {
	return math.Pow(float64(max(v.TensorParallel, 1)), v.TPExponent)
}

// Validate checks the model's settings.
func (v Serving) Validate() error {
	var errs []error
	if v.MaxNumSeqs < 1 || v.MaxNumSeqs > 1_000_000 {
		errs = append(errs, fmt.Errorf("serving.max_num_seqs must be 1 to 1000000 (got %d)", v.MaxNumSeqs))
	}
	if !(v.GPUMemoryGB > 0) || !(v.GPUMemoryUtilization > 0 && v.GPUMemoryUtilization <= 1) || !(v.WeightsGB >= 0) {
		errs = append(errs, errors.New("serving: gpu_memory_gb must be above 0, gpu_memory_utilization in (0, 1], weights_gb at least 0"))
	}
	if v.KVBytesPerToken < 1 || v.PrefillPerToken < 0 || v.MaxModelLen < 0 {
		errs = append(errs, errors.New("serving: kv_bytes_per_token must be at least 1, prefill_per_token and max_model_len at least 0"))
	}
	if v.TensorParallel < 1 || v.TensorParallel > 64 || !(v.TPExponent > 0 && v.TPExponent <= 1) {
		errs = append(errs, errors.New("serving: tensor_parallel_size must be 1 to 64 and tp_exponent in (0, 1]"))
	}
	return errors.Join(errs...)
}

// ApplyEngine turns on the serving model (DefaultServing's unless the
// config has one) and sets it from a run's engine settings, the vLLM
// names (jobs.EngineParamsOf("sim")). quantization and
// enable_prefix_caching are taken and change nothing here.
func (c Config) ApplyEngine(e jobs.Engine) Config {
	v := DefaultServing()
	if c.Serving != nil {
		v = *c.Serving
	}
	v.MaxNumSeqs = e.Int("max_num_seqs", v.MaxNumSeqs)
	v.GPUMemoryUtilization = e.Float("gpu_memory_utilization", v.GPUMemoryUtilization)
	v.TensorParallel = e.Int("tensor_parallel_size", v.TensorParallel)
	v.MaxModelLen = e.Int("max_model_len", v.MaxModelLen)
	c.Serving = &v
	return c
}

// scheduler admits requests to the batch and the KV cache.
type scheduler struct {
	mu       sync.Mutex
	cap      int
	budget   int
	running  int
	kvUsed   int
	queue    []*waiter
	preempts int64
	// peakWaiting is the longest the queue has been.
	peakWaiting int
}

type waiter struct {
	need  int
	ready chan struct{}
}

func newScheduler(v Serving) *scheduler { return &scheduler{cap: v.MaxNumSeqs, budget: v.KVTokens()} }

// fits says whether a request holding need tokens may run now; one
// request alone always may, so a context larger than the cache still
// ends. s.mu is held.
func (s *scheduler) fits(need int) bool {
	return s.running == 0 || (s.running < s.cap && s.kvUsed+need <= s.budget)
}

// admit waits until the request, holding need tokens of KV cache, runs:
// at once when nobody waits and it fits, else in its turn (first, when
// front: a preempted request goes back to the head of the queue). It
// returns false when ctx ends first.
func (s *scheduler) admit(ctx context.Context, need int, front bool) bool {
	s.mu.Lock()
	if len(s.queue) == 0 && s.fits(need) {
		s.running++
		s.kvUsed += need
		s.mu.Unlock()
		return true
	}
	w := &waiter{need: need, ready: make(chan struct{})}
	if front {
		s.queue = append([]*waiter{w}, s.queue...)
	} else {
		s.queue = append(s.queue, w)
	}
	s.peakWaiting = max(s.peakWaiting, len(s.queue))
	s.mu.Unlock()
	select {
	case <-w.ready:
		return true
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, q := range s.queue {
		if q == w {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			return false
		}
	}
	// Admitted while ctx ended: give the place back.
	s.running--
	s.kvUsed -= need
	s.dispatch()
	return false
}

// dispatch starts waiting requests in order while the head fits. s.mu
// is held.
func (s *scheduler) dispatch() {
	for len(s.queue) > 0 && s.fits(s.queue[0].need) {
		w := s.queue[0]
		s.queue = s.queue[1:]
		s.running++
		s.kvUsed += w.need
		close(w.ready)
	}
}

// release ends a running request that held held tokens.
func (s *scheduler) release(held int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	s.kvUsed -= held
	s.dispatch()
}

// grow adds k tokens to a running request holding held. When the cache
// is full and others run, the request is preempted instead (vLLM's
// recompute): its cache is freed, it leaves the batch and grow returns
// false; it must be admitted again and recompute its context.
func (s *scheduler) grow(held, k int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kvUsed+k <= s.budget || s.running == 1 {
		s.kvUsed += k
		return true
	}
	s.running--
	s.kvUsed -= held
	s.preempts++
	s.dispatch()
	return false
}

// state is the figures /metrics serves.
func (s *scheduler) state() (running, waiting int, usage float64, preempts int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.budget > 0 {
		usage = min(float64(s.kvUsed)/float64(s.budget), 1)
	}
	return s.running, len(s.queue), usage, s.preempts
}

// runningNow is how many requests are in the batch.
func (s *scheduler) runningNow() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(s.running)
}

// seat is one request's place in the batch: held is the KV cache it
// holds (prompt and tokens generated). Without a serving model it is a
// place that costs nothing.
type seat struct {
	s    *scheduler
	held int
	in   bool
}

// take admits a request of prompt tokens; nil when ctx ended first.
func (s *Server) take(ctx context.Context, prompt int) *seat {
	st := &seat{s: s.sched, held: prompt, in: true}
	if st.s != nil && !st.s.admit(ctx, prompt, false) {
		return nil
	}
	return st
}

// grow adds k generated tokens. It returns false when the request was
// preempted; it has then been admitted again (its context to recompute,
// held tokens) unless ctx ended.
func (st *seat) grow(ctx context.Context, k int) bool {
	if st.s == nil {
		return true
	}
	if st.s.grow(st.held, k) {
		st.held += k
		return true
	}
	st.held += k
	st.in = st.s.admit(ctx, st.held, true)
	return false
}

// leave gives the place back.
func (st *seat) leave() {
	if st.s != nil && st.in {
		st.s.release(st.held)
	}
}

// prefill is the time to read n prompt tokens, in nanoseconds before
// TimeScale: 0 without a serving model.
func (s *Server) prefill(n int) float64 {
	if s.cfg.Serving == nil {
		return 0
	}
	return float64(s.cfg.Serving.PrefillPerToken) * float64(n) / s.cfg.Serving.Speedup()
}

// speedup is tensor parallelism's speed-up of decoding, 1 without a
// serving model.
func (s *Server) speedup() float64 {
	if s.cfg.Serving == nil {
		return 1
	}
	return s.cfg.Serving.Speedup()
}
