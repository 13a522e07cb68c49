package bench

import (
	"strings"
	"testing"
)

// TestManifestEngineSettings: a target's engine: is read from YAML and
// JSON, checked against its runtime's allow-list with each refusal at
// targets[i].engine.NAME naming the setting, and two targets that differ
// only in their settings are two targets.
func TestManifestEngineSettings(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`
name: two configurations
dataset: 4
targets:
  - {model: m, runtime: vllm, hardware: h, engine: {max_num_seqs: 128, gpu_memory_utilization: 0.9, enable_prefix_caching: true}}
  - {model: m, runtime: vllm, hardware: h, engine: {max_num_seqs: 256, quantization: fp8}}
  - {model: m, runtime: vllm, hardware: h}
sampling: {max_tokens: 16}
load: {profile: sequential}
`, `{"name":"j","dataset":4,"targets":[{"model":"m","runtime":"vllm","hardware":"h","engine":{"max_num_seqs":128,"gpu_memory_utilization":0.9,"enable_prefix_caching":true}},
	{"model":"m","runtime":"vllm","hardware":"h","engine":{"max_num_seqs":256,"quantization":"fp8"}},{"model":"m","runtime":"vllm","hardware":"h"}],
	"load":{"profile":"sequential"},"sampling":{"max_tokens":16}}`} {
		m, err := Decode(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if errs := m.Validate(); len(errs) != 0 {
			t.Fatalf("valid: %v", errs)
		}
		e, _ := m.Targets[0].EngineSettings(1)
		if k := e.Key(); k != "enable_prefix_caching=true gpu_memory_utilization=0.9 max_num_seqs=128" {
			t.Errorf("key %q", k)
		}
	}
	bad, err := Decode(strings.NewReader(`
name: bad
dataset: 4
targets:
  - {model: m, runtime: vllm, hardware: h, engine: {max_num_seqs: 0, max_batch: 3, quantization: "awq --trust-remote-code"}}
  - {model: m, runtime: ollama, hardware: h, engine: {tensor_parallel_size: 2}}
  - {model: m, runtime: sim, hardware: h, engine: {max_num_seqs: 2}}
  - {model: m, runtime: sim, hardware: h, engine: {max_num_seqs: 2.0}}
sampling: {max_tokens: 16}
load: {profile: sequential}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := bad.Validate().Map()
	for path, want := range map[string]string{
		"targets[0].engine.max_num_seqs":         "max_num_seqs must be between 1 and 4096",
		"targets[0].engine.max_batch":            `"max_batch" is not an engine setting of vllm (it takes max_num_seqs, gpu_memory_utilization, max_model_len, tensor_parallel_size, quantization, enable_prefix_caching)`,
		"targets[0].engine.quantization":         "quantization must be one of awq, awq_marlin, bitsandbytes, compressed-tensors, fp8, gguf, gptq, gptq_marlin",
		"targets[1].engine.tensor_parallel_size": `"tensor_parallel_size" is not an engine setting of ollama (it takes num_parallel, num_ctx)`,
		"targets[3]":                             "the same target as targets[2]",
	} {
		if !strings.Contains(got[path], want) {
			t.Errorf("%s: %q, want %q (all %v)", path, got[path], want, got)
		}
	}
}
