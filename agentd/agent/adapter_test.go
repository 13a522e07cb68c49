package agent

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/agentd/launch"
	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

// A run of a LoRA adapter (the registry's adapter of a base model): the
// job names the base, and the launching agent starts vLLM, SGLang and
// llama.cpp on the base's weights with the adapter's own arguments; TGI
// and Ollama refuse the run, which fails saying which runtimes take an
// adapter, and never start. The runtimes' executables are this test
// binary under their names, recording each start and then failing.
func TestAdapterReachesTheRuntimesThatTakeOne(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDB(t)
	w := newWorld(t, pool, pgtest.URL(t, pool), 3)
	env, started := fakeRuntimes(t)
	ctx := context.Background()
	base := testkit.Model(ctx, t, w.st, &testkit.ModelOpts{Name: "acme/base", ParamsB: 0.1, Quantization: "bf16"})
	if _, err := w.st.CreateModel(ctx, store.ModelFields{Name: "acme/sql-lora", ParamsB: 0.1, Quantization: "bf16", ContextLength: 4096,
		BaseModelID: &base, Adapter: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.Pool().Exec(ctx, `INSERT INTO hardware_profiles (slug) VALUES ('cpu')`); err != nil {
		t.Fatal(err)
	}
	runtimes := launch.Runtimes()
	benchmarks := map[string]int64{}
	for _, rt := range runtimes {
		benchmarks[rt] = w.launchTarget(bench.Target{Model: "acme/sql-lora", Runtime: rt, Hardware: "cpu"}, jobs.LoadProfile{Profile: jobs.LoadSequential})
	}
	var adapterOf int
	if err := w.st.Pool().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'benchmark_run' AND args->>'adapter_of' = 'acme/base'`).Scan(&adapterOf); err != nil ||
		adapterOf != len(runtimes) {
		t.Fatalf("jobs naming the base: %d of %d (%v)", adapterOf, len(runtimes), err)
	}
	for _, rt := range runtimes {
		startAgentWithEnv(t, env, w.url, "node-"+rt, "--runtime", "launch", "--serves", rt, "--ready-timeout", "10s", "--stop-grace", "1s",
			"--model-path", "acme/base=/models/base.gguf", "--model-path", "acme/sql-lora=/adapters/sql.gguf")
	}
	for _, rt := range runtimes {
		id := benchmarks[rt]
		testkit.WaitWithin(t, 60*time.Second, rt+"'s run to fail", func() bool { return w.run(id).State == "failed" })
		r := w.run(id)
		switch rt {
		case launch.TGI, launch.Ollama:
			if !strings.Contains(r.Error, rt+` cannot serve "acme/sql-lora": it is a LoRA adapter of "acme/base"`) {
				t.Errorf("%s: run error %q, want the refusal", rt, r.Error)
			}
		default:
			if r.Error == "" || strings.Contains(r.Error, "cannot serve") {
				t.Errorf("%s: run error %q, want the fake runtime's exit", rt, r.Error)
			}
		}
	}
	b, err := os.ReadFile(started)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, want := range []string{
		`"vllm" "serve" "/models/base.gguf"`, `"--served-model-name=acme/base" "--enable-lora" "--lora-modules=acme/sql-lora=/adapters/sql.gguf"`,
		`"--model-path=/models/base.gguf"`, `"--lora-paths=adapter=/adapters/sql.gguf"`,
		`"llama-server" "-m" "/models/base.gguf"`, `"--alias" "acme/sql-lora" "--metrics" "--lora" "/adapters/sql.gguf"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("no start with %s in:\n%s", want, log)
		}
	}
	for _, never := range []string{"text-generation-launcher", "ollama"} {
		if strings.Contains(log, never) {
			t.Errorf("%s was started:\n%s", never, log)
		}
	}
}
