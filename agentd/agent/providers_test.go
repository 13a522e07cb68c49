package agent

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ruckus/ruckus/agentd/sim"
	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

func startSim(t *testing.T, dialect string) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.TTFT, cfg.ITL, cfg.OutputTokens = sim.MustParseDist("const:5ms"), sim.MustParseDist("const:2ms"), sim.MustParseDist("const:10")
	cfg.Dialect = dialect
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	addr, _, err := sim.Listen(ctx, "127.0.0.1:0", cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

func (w *world) providerConfig(name, value string) {
	w.t.Helper()
	var n int
	if err := w.st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM agents WHERE name = $1 AND $2 = ANY(runtimes)`, name, value).Scan(&n); err != nil || n != 1 {
		w.t.Fatalf("agent %s serving %s: %d %v", name, value, n, err)
	}
}

// An agent with --runtime anthropic takes the anthropic runtime's runs
// and measures them black-box through the Messages API (served here by
// the simulated runtime in that dialect); an agent with --provider takes
// a configured provider's runs in its dialect, from the provider table.
func TestRemoteProvidersAreServedInTheirDialects(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 12)
	table := filepath.Join(t.TempDir(), "providers.yaml")
	openaiSim := startSim(t, sim.DialectOpenAI)
	if err := os.WriteFile(table, []byte("providers:\n  together: {base_url: '"+openaiSim+"', api_key_env: TOGETHER_API_KEY, dialect: openai}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	startAgent(t, w.agentURL("claude"), "claude", "--runtime", "anthropic", "--endpoint", startSim(t, sim.DialectAnthropic))
	startAgent(t, w.agentURL("together"), "together", "--provider", "together", "--providers", table)
	testkit.WaitFor(t, "agents online", func() bool { return w.online() == 2 })
	w.providerConfig("claude", "anthropic")
	w.providerConfig("together", "together")

	for _, rt := range []string{"anthropic", "together"} {
		id := w.launchTarget(bench.Target{Model: "sim/tiny", Runtime: rt, Hardware: "cpu", Remote: true}, jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 3})
		testkit.WaitWithin(t, 60*time.Second, rt+" run finished", func() bool { s := w.run(id).State; return s == "completed" || s == "failed" })
		r := w.run(id)
		if r.State != "completed" || r.Mode != "gray-box" || r.Completed != 12 || r.Errors != 0 || r.OutputTokens != 120 {
			t.Fatalf("%s run %+v", rt, r)
		}
		// The runtime waits 5 ms before the first token and 2 ms before
		// each of the 9 others. The client stamps an event when it reads
		// it, so on a loaded machine a late read shortens the gap before
		// the next one: each request's E2E holds the 23 ms whatever the
		// reads, and its gaps were measured (streamed, not one burst).
		var ttft, e2e, itl float64
		var estimated bool
		if err := w.st.Pool().QueryRow(context.Background(), `SELECT min(ttft_ms), min(e2e_ms), avg(itl_mean_ms), bool_or(tokens_estimated)
			FROM results WHERE run_id = $1`, r.ID).Scan(&ttft, &e2e, &itl, &estimated); err != nil {
			t.Fatal(err)
		}
		if ttft < 5 || e2e < 23 || itl <= 0 || estimated {
			t.Fatalf("%s: ttft %v e2e %v mean itl %v estimated %v", rt, ttft, e2e, itl, estimated)
		}
		w.exactlyOnce(r.ID, 12)
	}
}
