package agent

import (
	"context"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// A simulated run with engine settings gets a runtime of its own whose
// serving model they set; its vLLM-named /metrics are scraped into the
// run's stored samples: with max_num_seqs 4 at concurrency 8 requests
// wait, and a KV cache of about 120 tokens (gpu_memory_utilization 0.084
// of 24 GB, less 2 GB of weights) preempts. The run keeps its settings.
func TestSimEngineSettingsReachTheStoredMetrics(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 24)
	startAgent(t, w.agentURL("node-e"), "node-e", "--sim-itl", "const:4ms", "--sim-output-tokens", "const:60", "--progress-interval", "100ms")
	testkit.WaitFor(t, "agent online", func() bool { return w.online() == 1 })
	target := bench.Target{Model: "sim/tiny", Runtime: "sim", Hardware: "cpu",
		Engine: map[string]any{"max_num_seqs": 4, "gpu_memory_utilization": 0.084}}
	c, err := w.svc.Create(context.Background(), w.viewer, bench.Manifest{Name: "engine", Dataset: bench.DatasetRef{ID: w.dataset},
		Targets: []bench.Target{target}, Load: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 8}, Sampling: jobs.Sampling{MaxTokens: 100}})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitWithin(t, 90*time.Second, "the run to finish", func() bool { s := w.run(c.BenchmarkID).State; return s == "completed" || s == "failed" })
	r := w.run(c.BenchmarkID)
	if r.State != "completed" || r.Completed != 24 || r.Engine.Key() != "gpu_memory_utilization=0.084 max_num_seqs=4" {
		t.Fatalf("run %+v", r)
	}
	var n int
	var waiting, preempts, kv float64
	if err := w.st.Pool().QueryRow(context.Background(), `SELECT count(*), coalesce(max(waiting), 0), coalesce(max(preemptions), 0),
		coalesce(max(kv_cache), 0) FROM run_samples WHERE run_id = $1 AND running IS NOT NULL`, r.ID).Scan(&n, &waiting, &preempts, &kv); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d samples: max waiting %v, preemptions %v, max KV-cache usage %v", n, waiting, preempts, kv)
	if n == 0 || waiting < 1 || preempts < 1 || kv <= 0 {
		t.Fatalf("%d samples: waiting %v preemptions %v kv %v", n, waiting, preempts, kv)
	}
}
