package sim_test

import (
	"context"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ruckus/ruckus/agentd/promscrape"
	"github.com/ruckus/ruckus/agentd/sim"
	"github.com/ruckus/ruckus/jobs"
)

// burst sends n streaming requests at once and returns how long they
// took together.
func burst(t *testing.T, n int, tweak func(*sim.Config)) (*sim.Server, time.Duration, string) {
	t.Helper()
	srv, ts := newServer(t, tweak)
	var wg sync.WaitGroup
	start := time.Now()
	for range n {
		wg.Go(func() { stream(t, ts, chatPath, body(chatPath, "")) })
	}
	wg.Wait()
	return srv, time.Since(start), ts.URL
}

// TestBatchCapQueues: eight requests at once on max_num_seqs 2 queue (six
// wait) and take about four times as long as on max_num_seqs 8, which
// runs them all in one batch.
func TestBatchCapQueues(t *testing.T) {
	t.Parallel()
	run := func(seqs int) (sim.Stats, float64) {
		srv, took, _ := burst(t, 8, func(c *sim.Config) {
			c.TTFT, c.ITL, c.OutputTokens = sim.MustParseDist("const:0s"), sim.MustParseDist("const:3ms"), sim.MustParseDist("const:40")
			*c = c.ApplyEngine(jobs.Engine{"max_num_seqs": strconv.Itoa(seqs)})
		})
		st := srv.Stats()
		return st, float64(st.TokensSent) / took.Seconds()
	}
	st2, tps2 := run(2)
	st8, tps8 := run(8)
	if st2.PeakWaiting < 1 || st8.PeakWaiting != 0 {
		t.Errorf("peak waiting: %d on max_num_seqs 2, %d on 8", st2.PeakWaiting, st8.PeakWaiting)
	}
	if st2.TokensSent != 320 || st8.TokensSent != 320 || st2.Waiting != 0 {
		t.Fatalf("stats %+v / %+v", st2, st8)
	}
	t.Logf("max_num_seqs 2: %.0f tokens/s, peak waiting %d; max_num_seqs 8: %.0f tokens/s", tps2, st2.PeakWaiting, tps8)
	if !(tps2 < 0.6*tps8) {
		t.Errorf("throughput %.0f tokens/s on max_num_seqs 2, %.0f on 8: the cap costs nothing", tps2, tps8)
	}
}

// smallCache is a KV cache of 100 tokens.
func smallCache(c *sim.Config) {
	c.TTFT, c.ITL, c.OutputTokens = sim.MustParseDist("const:0s"), sim.MustParseDist("const:1ms"), sim.MustParseDist("const:40")
	v := sim.DefaultServing()
	v.GPUMemoryGB, v.GPUMemoryUtilization, v.WeightsGB, v.KVBytesPerToken = 1, 1, 0, 10_000_000
	c.Serving = &v
}

// TestSmallKVCachePreempts: four requests of about 50 tokens each in a
// cache of 100 preempt one another, and every answer still ends whole.
func TestSmallKVCachePreempts(t *testing.T) {
	t.Parallel()
	if v := sim.DefaultServing(); v.KVTokens() != 149536 {
		t.Fatalf("default budget %d tokens", v.KVTokens())
	}
	srv, _, _ := burst(t, 4, smallCache)
	if st := srv.Stats(); st.Preemptions == 0 || st.Completed != 4 || st.TokensSent != 160 {
		t.Fatalf("stats %+v", st)
	}
	// Without the serving model nothing is preempted.
	srv, _, _ = burst(t, 4, nil)
	if st := srv.Stats(); st.Preemptions != 0 {
		t.Fatalf("preempted without a serving model: %+v", st)
	}
}

// TestMetricsSpeakVLLM: /metrics serves the serving model's states under
// vLLM's names, which agentd's scraper reads.
func TestMetricsSpeakVLLM(t *testing.T) {
	t.Parallel()
	_, _, url := burst(t, 4, smallCache)
	snap, err := promscrape.Scrape(context.Background(), nil, url+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Runtime != "vllm" || snap.Preemptions == nil || *snap.Preemptions == 0 || snap.Waiting == nil || snap.Running == nil ||
		snap.KVCacheUsage == nil || snap.GenerationTokens == nil || *snap.GenerationTokens != 160 {
		t.Fatalf("snapshot %+v", snap)
	}
}

// TestTensorParallelIsSubLinear: tp GPUs decode tp^0.8 times as fast and
// hold tp GPUs' cache; engine settings set the model.
func TestTensorParallelIsSubLinear(t *testing.T) {
	t.Parallel()
	c := sim.DefaultConfig().ApplyEngine(jobs.Engine{"tensor_parallel_size": "2", "gpu_memory_utilization": "0.5", "max_num_seqs": "16"})
	v := *c.Serving
	if v.TensorParallel != 2 || v.MaxNumSeqs != 16 || v.GPUMemoryUtilization != 0.5 {
		t.Fatalf("serving %+v", v)
	}
	if s := v.Speedup(); math.Abs(s-math.Pow(2, 0.8)) > 1e-12 || s >= 2 {
		t.Errorf("speed-up %v", s)
	}
	free := 0.5*24*2 - 2.0
	if got := v.KVTokens(); got != int(free*1e9/(128<<10)) {
		t.Errorf("budget %d", got)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}
