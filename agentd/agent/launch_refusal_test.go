package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/agentd/launch"
	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// fakeRuntimeLogEnv names the file to which this test binary, started under
// the name of a runtime's executable, appends the arguments it was given
// (and then fails): the proof of whether a runtime was started, and how.
const fakeRuntimeLogEnv = "RUCKUS_TEST_RUNTIME_LOG"

// fakeRuntimeNames are the executables of the shipped launch templates.
var fakeRuntimeNames = map[string]bool{"vllm": true, "python3": true, "text-generation-launcher": true, "llama-server": true, "ollama": true}

func fakeRuntime(log string) int {
	f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake runtime:", err)
		return 3
	}
	fmt.Fprintf(f, "%q\n", os.Args)
	f.Close()
	fmt.Fprintln(os.Stderr, "fake runtime: not a real runtime")
	return 1
}

// A model renamed "--trust-remote-code" in the database (and so in the
// job) never reaches a runtime's command line: for every shipped launch
// template the agent refuses the run, which fails saying why, and no
// runtime is started. The runtimes' executables are this test binary
// under their names, first on the agent's PATH, recording any start.
func TestHostileModelNameNeverReachesTheRuntime(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 3)
	env, started := fakeRuntimes(t)

	// The agents start only once the jobs are tampered with; the profile
	// they will register must exist for the benchmarks to be planned.
	ctx := context.Background()
	if _, err := w.st.Pool().Exec(ctx, `INSERT INTO hardware_profiles (slug) VALUES ('cpu')`); err != nil {
		t.Fatal(err)
	}
	runtimes := launch.Runtimes()
	benchmarks := map[string]int64{}
	for _, rt := range runtimes {
		benchmarks[rt] = w.launchTarget(bench.Target{Model: "sim/tiny", Runtime: rt, Hardware: "cpu"}, jobs.LoadProfile{Profile: jobs.LoadSequential})
	}
	// What a hostile or mistaken writer of the database could do once the
	// runs are queued: rename the model, in the registry and in the jobs.
	const hostile = "--trust-remote-code"
	if _, err := w.st.Pool().Exec(ctx, `UPDATE models SET name = $1 WHERE name = 'sim/tiny'`, hostile); err != nil {
		t.Fatal(err)
	}
	tag, err := w.st.Pool().Exec(ctx, `UPDATE river_job SET args = jsonb_set(args, '{model}', to_jsonb($1::text)) WHERE kind = 'benchmark_run'`, hostile)
	if err != nil || tag.RowsAffected() != int64(len(runtimes)) {
		t.Fatalf("tampering with the jobs: %v, %d rows", err, tag.RowsAffected())
	}

	for _, rt := range runtimes {
		startAgentWithEnv(t, env, w.url, "node-"+rt, "--runtime", "launch", "--serves", rt, "--ready-timeout", "10s", "--stop-grace", "1s",
			"--model-path", "sim/tiny=/models/tiny.gguf", "--model-path", hostile+"=/models/tiny.gguf")
	}
	for _, rt := range runtimes {
		t.Run(rt, func(t *testing.T) {
			id := benchmarks[rt]
			testkit.WaitWithin(t, 60*time.Second, "the run to fail", func() bool { return w.run(id).State == "failed" })
			r := w.run(id)
			if !strings.Contains(r.Error, "refused the run") || !strings.Contains(r.Error, `"--trust-remote-code" is not a model id`) {
				t.Errorf("run error %q, want the refusal naming the model", r.Error)
			}
			if r.Completed != 0 {
				t.Errorf("%d requests were sent", r.Completed)
			}
		})
	}
	if b, err := os.ReadFile(started); err == nil || !os.IsNotExist(err) {
		t.Fatalf("a runtime was started: %s (%v)", b, err)
	}
}

// fakeRuntimes puts this test binary first on a PATH under the names of
// the shipped templates' executables, recording each start (its argv) in
// the file started: the environment to start agents with, and that file.
func fakeRuntimes(t *testing.T) (env []string, started string) {
	t.Helper()
	bin := t.TempDir()
	for name := range fakeRuntimeNames {
		if err := os.Symlink(os.Args[0], filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	if abs, err := filepath.Abs(os.Args[0]); err != nil || abs != os.Args[0] {
		// The symlinks must reach the test binary from any directory.
		for name := range fakeRuntimeNames {
			_ = os.Remove(filepath.Join(bin, name))
			if err := os.Symlink(abs, filepath.Join(bin, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	started = filepath.Join(t.TempDir(), "started.log")
	return []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), fakeRuntimeLogEnv + "=" + started}, started
}
