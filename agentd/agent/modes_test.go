package agent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/agentd/sim"
	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// White-box: agentd starts the runtime from its command for the run, waits
// until it answers, records the load time and keeps its log, and stops it.
// The runtime here is agentd's own simulated server launched as a process
// under the vllm template (same /health and OpenAI API).
func TestWhiteBoxLaunchesTheRuntimePerRun(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 20)
	startAgent(t, w.agentURL("node-w"), "node-w", "--runtime", "launch", "--serves", "vllm", "--ready-timeout", "30s", "--stop-grace", "5s",
		"--command", os.Args[0]+" sim --listen {{.Host}}:{{.Port}} --sim-ttft const:2ms --sim-itl const:1ms --sim-output-tokens const:5")
	testkit.WaitFor(t, "agent online", func() bool { return w.online() == 1 })
	id := w.launchTarget(bench.Target{Model: "sim/tiny", Runtime: "vllm", Hardware: "cpu"}, jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 4})
	testkit.WaitWithin(t, 60*time.Second, "the run to finish", func() bool { s := w.run(id).State; return s == "completed" || s == "failed" })
	r := w.run(id)
	var loadMS *float64
	var log string
	if err := w.st.Pool().QueryRow(context.Background(), `SELECT load_time_ms, runtime_log FROM runs WHERE id = $1`, r.ID).Scan(&loadMS, &log); err != nil {
		t.Fatal(err)
	}
	if r.State != "completed" || r.Mode != "white-box" || r.Completed != 20 || r.Errors != 0 {
		t.Fatalf("run %+v", r)
	}
	if loadMS == nil || *loadMS <= 0 || !strings.Contains(log, "simulated runtime") {
		t.Fatalf("load time %v, log %q", loadMS, log)
	}
	w.exactlyOnce(r.ID, 20)
}

const vllmMetrics = `# HELP vllm:num_requests_running Number of requests running.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="sim/tiny"} 3
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="sim/tiny"} 7
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{model_name="sim/tiny"} 0.25
`

// Gray-box: an endpoint already running, with a Prometheus /metrics that
// agentd scrapes during the run into the chart samples.
func TestGrayBoxScrapesTheRuntimesMetrics(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.TTFT, cfg.ITL, cfg.OutputTokens = sim.MustParseDist("const:5ms"), sim.MustParseDist("const:5ms"), sim.MustParseDist("const:10")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	addr, _, err := sim.Listen(ctx, "127.0.0.1:0", cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = fmt.Fprint(w, vllmMetrics)
	}))
	t.Cleanup(metrics.Close)

	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 60)
	startAgent(t, w.agentURL("node-g"), "node-g", "--runtime", "openai", "--endpoint", "http://"+addr, "--serves", "vllm",
		"--metrics-url", metrics.URL+"/metrics", "--progress-interval", "100ms")
	testkit.WaitFor(t, "agent online", func() bool { return w.online() == 1 })
	id := w.launchTarget(bench.Target{Model: "sim/tiny", Runtime: "vllm", Hardware: "cpu"}, jobs.LoadProfile{Profile: jobs.LoadSequential})
	testkit.WaitWithin(t, 60*time.Second, "the run to finish", func() bool { return w.run(id).State == "completed" })
	r := w.run(id)
	var n int
	var running, waiting, kv float64
	if err := w.st.Pool().QueryRow(context.Background(), `SELECT count(*), max(running), max(waiting), max(kv_cache)
		FROM run_samples WHERE run_id = $1 AND running IS NOT NULL`, r.ID).Scan(&n, &running, &waiting, &kv); err != nil {
		t.Fatal(err)
	}
	if r.Mode != "gray-box" || n == 0 || running != 3 || waiting != 7 || kv != 0.25 {
		t.Fatalf("mode %q, %d samples: running %v waiting %v kv %v", r.Mode, n, running, waiting, kv)
	}
}
