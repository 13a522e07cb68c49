package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// A quick start never sends a model to a remote provider that does not
// serve it: an Anthropic agent is no target for an open-weight model, the
// simulated runtime is; a model an administrator priced at Anthropic goes
// there.
func TestQuickStartSkipsProvidersThatDoNotServeTheModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	up := e.upload(tok, "batch.jsonl", []byte(batchJSONL), nil)
	if up.status != 201 {
		t.Fatalf("dataset: %d %v", up.status, up.body)
	}
	ds := int64(up.body["dataset_id"].(float64))
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "Qwen/Qwen2.5-0.5B-Instruct", ParamsB: 0.5, Quantization: "bf16"})
	testkit.Model(ctx, t, e.store, &testkit.ModelOpts{Name: "claude-3-haiku", Quantization: "bf16"})
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "claude", Runtimes: []string{"anthropic"}})

	r := postJSON(e, "/api/v1/benchmarks?dry_run=true", tok, fmt.Sprintf(`{"model_id":"Qwen/Qwen2.5-0.5B-Instruct","dataset_id":%d}`, ds))
	if path, msg := firstError(r); r.status != 422 || path != "model_id" || !strings.Contains(msg, "no live agent serves") {
		t.Fatalf("an open-weight model with only an Anthropic agent: %d %v", r.status, r.body)
	}
	testkit.Agent(ctx, t, e.store, &testkit.AgentOpts{Name: "sim"})
	if got := quickTarget(t, e, tok, "Qwen/Qwen2.5-0.5B-Instruct", ds); got != "sim" {
		t.Fatalf("an open-weight model beside a simulated agent runs on %q, want sim", got)
	}
	if err := e.store.SetProviderPrice(ctx, store.ProviderPrice{Provider: "anthropic", Model: "claude-3-haiku", InputPer1M: 0.25, OutputPer1M: 1.25}); err != nil {
		t.Fatal(err)
	}
	if got := quickTarget(t, e, tok, "claude-3-haiku", ds); got != "anthropic" {
		t.Fatalf("a model priced at Anthropic runs on %q, want anthropic", got)
	}
}

// quickTarget is the runtime a dry-run quick start of model picks.
func quickTarget(t *testing.T, e *env, tok, model string, ds int64) string {
	t.Helper()
	r := postJSON(e, "/api/v1/benchmarks?dry_run=true", tok, fmt.Sprintf(`{"model_id":%q,"dataset_id":%d}`, model, ds))
	if r.status != 200 {
		t.Fatalf("quick start of %s: %d %v", model, r.status, r.body)
	}
	targets, _ := r.body["manifest"].(map[string]any)["targets"].([]any)
	if len(targets) != 1 {
		t.Fatalf("quick start of %s: %v", model, r.body)
	}
	return fmt.Sprint(targets[0].(map[string]any)["runtime"])
}
