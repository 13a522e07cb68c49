package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A target's engine settings: the API refuses one the runtime lacks, one
// out of range and a tensor_parallel_size beyond the hardware's GPUs with
// 422 naming each; a valid one reaches the planned run. The form shows
// the runtime's settings as fields and says the same refusals in German.
func TestEngineSettingsAreRefusedNamingThem(t *testing.T) {
	t.Parallel()
	e, c, ds := formEnv(t)
	u, err := e.store.UserByEmail(context.Background(), "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	tok := e.token(u)
	post := func(engine string) apiResult {
		m := fmt.Sprintf(`{"name":"cfg","dataset":%s,"targets":[{"model":"acme/small-1b","runtime":"vllm","hardware":"l4-24gb-x1","engine":%s}],
			"load":{"profile":"sequential"},"sampling":{"max_tokens":16}}`, ds, engine)
		return e.api(http.MethodPost, "/api/v1/benchmarks?dry_run=true", tok, strings.NewReader(m), "application/json")
	}
	for engine, want := range map[string]string{
		`{"tensor_parallel_size":2}`: "tensor_parallel_size is 2 but the hardware has 1 GPUs",
		`{"max_num_seqs":0}`:         "max_num_seqs must be between 1 and 4096",
		`{"num_parallel":4}`:         `"num_parallel" is not an engine setting of vllm`,
	} {
		res := post(engine)
		if got := fmt.Sprint(res.body); res.status != 422 || !strings.Contains(got, want) || !strings.Contains(got, "targets[0].engine.") {
			t.Errorf("%s: %d %s, want 422 saying %q", engine, res.status, got, want)
		}
	}
	if res := post(`{"max_num_seqs":64,"enable_prefix_caching":false}`); res.status >= 300 ||
		!strings.Contains(fmt.Sprint(res.body), "enable_prefix_caching:false max_num_seqs:64") {
		t.Errorf("valid settings: %d %v", res.status, res.body)
	}

	row := c.get("/benchmarks/new/target?i=0&target_0_runtime=vllm&target_0_model=acme/small-1b")
	if row.doc.Find(`input[name="target_0_engine_max_num_seqs"][min="1"][max="4096"]`).Length() != 1 ||
		row.doc.Find(`select[name="target_0_engine_quantization"] option[value="fp8"]`).Length() != 1 {
		t.Fatalf("the vllm row has no engine fields")
	}
	if c.get("/benchmarks/new/target?i=0&target_0_runtime=ollama").doc.Find(`input[name="target_0_engine_num_parallel"]`).Length() != 1 {
		t.Errorf("the ollama row has no num_parallel field")
	}
	form := url.Values{"name": {"Zwei"}, "dataset_id": {ds}, "max_tokens": {"64"}, "load_kind": {"sequential"}, "action": {"preview"},
		"target_0_model": {"acme/small-1b"}, "target_0_runtime": {"vllm"}, "target_0_hardware": {"l4-24gb-x1"},
		"target_0_engine_tensor_parallel_size": {"2"}, "target_0_engine_bogus": {"--x"}}
	c.getIn("/benchmarks/new", "de")
	de := c.postIn("/benchmarks/new", "de", form)
	if got := de.text(`[data-testid="target-0-engine"]`); de.status != 422 || !strings.Contains(got, "tensor_parallel_size ist 2, aber die Hardware hat 1 GPUs") {
		t.Errorf("German form: %d %q", de.status, got)
	}
}
