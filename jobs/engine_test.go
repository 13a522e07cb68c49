package jobs_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/jobs"
)

// TestEngineSettingsAreCheckedPerRuntime: each refusal names the setting
// and says why; what passes comes out as canonical text.
func TestEngineSettingsAreCheckedPerRuntime(t *testing.T) {
	t.Parallel()
	got, faults := jobs.CheckEngine("vllm", map[string]any{"max_num_seqs": 128, "gpu_memory_utilization": 0.9,
		"enable_prefix_caching": true, "quantization": "awq", "tensor_parallel_size": float64(2)}, 2)
	if len(faults) > 0 {
		t.Fatalf("faults %v", faults)
	}
	if k := got.Key(); k != "enable_prefix_caching=true gpu_memory_utilization=0.9 max_num_seqs=128 quantization=awq tensor_parallel_size=2" {
		t.Errorf("Key = %q", k)
	}
	for _, tc := range []struct {
		runtime string
		raw     map[string]any
		gpus    int
		name    string
		key     string
	}{
		{"vllm", map[string]any{"max_batch": 4}, 1, "max_batch", "valid.engine_unknown"},
		{"vllm", map[string]any{"tp": 2}, 4, "tp", "valid.engine_unknown"}, // SGLang's name
		{"ollama", map[string]any{"max_num_seqs": 8}, 1, "max_num_seqs", "valid.engine_unknown"},
		{"openai", map[string]any{"max_num_seqs": 8}, 1, "max_num_seqs", "valid.engine_none"},
		{"vllm", map[string]any{"max_num_seqs": 0}, 1, "max_num_seqs", "valid.engine_range"},
		{"vllm", map[string]any{"max_num_seqs": 1.5}, 1, "max_num_seqs", "valid.engine_int"},
		{"vllm", map[string]any{"max_num_seqs": "--trust-remote-code"}, 1, "max_num_seqs", "valid.engine_int"},
		{"vllm", map[string]any{"gpu_memory_utilization": 1.2}, 1, "gpu_memory_utilization", "valid.engine_range"},
		{"vllm", map[string]any{"quantization": "awq --x"}, 1, "quantization", "valid.engine_choice"},
		{"vllm", map[string]any{"enable_prefix_caching": "yes"}, 1, "enable_prefix_caching", "valid.engine_bool"},
		{"vllm", map[string]any{"tensor_parallel_size": 4}, 2, "tensor_parallel_size", "valid.engine_gpus"},
		{"sglang", map[string]any{"tp": 2}, 0, "tp", "valid.engine_gpus"},
		{"sim", map[string]any{"tensor_parallel_size": 8}, 4, "tensor_parallel_size", "valid.engine_gpus"},
	} {
		_, faults := jobs.CheckEngine(tc.runtime, tc.raw, tc.gpus)
		if len(faults) != 1 || faults[0].Name != tc.name || faults[0].Err.Key != tc.key {
			t.Errorf("%s %v: faults %+v, want one on %s (%s)", tc.runtime, tc.raw, faults, tc.name, tc.key)
			continue
		}
		if !strings.Contains(faults[0].Err.Error(), tc.name) {
			t.Errorf("%s: %q does not name the setting", tc.name, faults[0].Err.Error())
		}
	}
	if _, faults := jobs.CheckEngine("vllm", map[string]any{"tensor_parallel_size": 8}, -1); len(faults) > 0 {
		t.Errorf("GPU count unknown: %v", faults)
	}
}

// TestEngineArgsComeFromTheTable: settings become the table's flags in
// --flag=value form (llama-server's as two words), Ollama's environment,
// and a value that is not the table's is refused before it is written.
func TestEngineArgsComeFromTheTable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		runtime   string
		e         jobs.Engine
		argv, env []string
	}{
		{"vllm", jobs.Engine{"max_num_seqs": "64", "enable_prefix_caching": "false", "tensor_parallel_size": "2"}, []string{"--max-num-seqs=64", "--tensor-parallel-size=2", "--no-enable-prefix-caching"}, nil},
		{"vllm", jobs.Engine{"enable_prefix_caching": "true"}, []string{"--enable-prefix-caching"}, nil},
		{"sglang", jobs.Engine{"tp": "2", "mem_fraction_static": "0.8"}, []string{"--mem-fraction-static=0.8", "--tp-size=2"}, nil},
		{"tgi", jobs.Engine{"max_batch_total_tokens": "32000"}, []string{"--max-batch-total-tokens=32000"}, nil},
		{"llama-cpp", jobs.Engine{"parallel": "4", "ctx_size": "8192"}, []string{"--parallel", "4", "--ctx-size", "8192"}, nil},
		{"ollama", jobs.Engine{"num_parallel": "4", "num_ctx": "4096"}, nil, []string{"OLLAMA_NUM_PARALLEL=4", "OLLAMA_CONTEXT_LENGTH=4096"}},
	} {
		argv, env, err := tc.e.Args(tc.runtime)
		if err != nil || !slices.Equal(argv, tc.argv) || !slices.Equal(env, tc.env) {
			t.Errorf("%s %v: argv %q env %q err %v, want %q %q", tc.runtime, tc.e, argv, env, err, tc.argv, tc.env)
		}
	}
	if _, _, err := (jobs.Engine{"quantization": "awq --trust-remote-code"}).Args("vllm"); err == nil {
		t.Error("a value outside the table reached the arguments")
	}
}

// TestEngineTextParses: the form's text becomes raw settings.
func TestEngineTextParses(t *testing.T) {
	t.Parallel()
	raw, err := jobs.ParseEngineText(" max_num_seqs = 8,\nenable_prefix_caching=true; ")
	if err != nil || len(raw) != 2 || raw["max_num_seqs"] != "8" || raw["enable_prefix_caching"] != "true" {
		t.Fatalf("raw %v err %v", raw, err)
	}
	for _, bad := range []string{"max_num_seqs", "=3", "a=1,a=2"} {
		if _, err := jobs.ParseEngineText(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// FuzzEngineText: whatever the form sends, parsing and checking never
// panic, and every setting that passes becomes a table flag with a value
// that cannot be read as an option or hold a space.
func FuzzEngineText(f *testing.F) {
	for _, s := range []string{"max_num_seqs=8", "tensor_parallel_size=2, quantization=fp8", "enable_prefix_caching=false", "a=b=c", ",,;", "num_ctx=1e3", "parallel=-1"} {
		f.Add(s)
	}
	runtimes := []string{"vllm", "sglang", "tgi", "llama-cpp", "ollama", "sim"}
	f.Fuzz(func(t *testing.T, s string) {
		raw, err := jobs.ParseEngineText(s)
		if err != nil {
			return
		}
		for _, rt := range runtimes {
			e, _ := jobs.CheckEngine(rt, raw, 8)
			argv, env, err := e.Args(rt)
			if err != nil {
				t.Fatalf("%s: checked settings %v refused: %v", rt, e, err)
			}
			for _, a := range append(argv, env...) {
				if strings.ContainsAny(a, " \t\n") {
					t.Fatalf("%s: argument %q holds a space", rt, a)
				}
			}
			for i, a := range argv {
				if !strings.HasPrefix(a, "--") && (i == 0 || strings.HasPrefix(a, "-")) {
					t.Fatalf("%s: argument %q is not a table flag or its value", rt, a)
				}
			}
		}
	})
}

// TestEngineErrorsSayTheCataloguesEnglish: the engine errors are codes
// whose English is the catalogue's, and whose German differs.
func TestEngineErrorsSayTheCataloguesEnglish(t *testing.T) {
	t.Parallel()
	de := i18n.Default().Lang("de")
	var errs []error
	for _, raw := range []map[string]any{{"x": 1}, {"max_num_seqs": 0}, {"max_num_seqs": 1.5}, {"gpu_memory_utilization": "a"},
		{"quantization": "q"}, {"enable_prefix_caching": 1}, {"tensor_parallel_size": 3}} {
		_, faults := jobs.CheckEngine("vllm", raw, 2)
		for _, f := range faults {
			errs = append(errs, f.Err)
		}
	}
	_, faults := jobs.CheckEngine("openai", map[string]any{"x": 1}, 1)
	errs = append(errs, faults[0].Err)
	_, err := jobs.ParseEngineText("x")
	errs = append(errs, err)
	_, err = jobs.ParseEngineText("x=1,x=2")
	errs = append(errs, err)
	if len(errs) != 10 {
		t.Fatalf("%d errors: %v", len(errs), errs)
	}
	for _, err := range errs {
		var je *jobs.Error
		if !errors.As(err, &je) {
			t.Fatalf("%v is not a *jobs.Error", err)
		}
		m, ok := i18n.MessageOf(err)
		if !ok {
			t.Fatalf("%q: no catalogue message", err)
		}
		if m.English() != err.Error() {
			t.Errorf("%s: catalogue %q, contract %q", je.Key, m.English(), err.Error())
		}
		if m.In(de) == err.Error() {
			t.Errorf("%s: German is the English", je.Key)
		}
	}
}

// TestParseMatrixText: the form's matrix field, lists of settings.
func TestParseMatrixText(t *testing.T) {
	t.Parallel()
	got, err := jobs.ParseMatrixText(" max_num_seqs = 64, 128 ;\ntensor_parallel_size=1,2; ")
	if err != nil || fmt.Sprint(got) != "map[max_num_seqs:[64 128] tensor_parallel_size:[1 2]]" {
		t.Fatalf("%v %v", got, err)
	}
	for in, want := range map[string]string{
		"max_num_seqs":         `"max_num_seqs" is not name=value,value`,
		"a=1;a=2":              `"a" is given twice`,
		"max_num_seqs=64,,128": `"max_num_seqs=64,,128" has an empty value`,
		"max_num_seqs=":        `"max_num_seqs=" has an empty value`,
		"=1":                   `"=1" is not name=value,value`,
	} {
		if _, err := jobs.ParseMatrixText(in); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// FuzzMatrixText: any text reads without panicking into lists of trimmed,
// non-empty values under trimmed, distinct, non-empty names.
func FuzzMatrixText(f *testing.F) {
	for _, s := range []string{"max_num_seqs=64,128;tensor_parallel_size=1,2", "a", "a=;b=1", "=", "a=1\nb=2,3\r\n", ";;", "a=1,\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := jobs.ParseMatrixText(s)
		if err != nil {
			return
		}
		for name, list := range got {
			if name == "" || name != strings.TrimSpace(name) || len(list) == 0 {
				t.Fatalf("name %q list %v", name, list)
			}
			for _, v := range list {
				if v == "" || v != strings.TrimSpace(v.(string)) || strings.ContainsAny(v.(string), ",;\n\r") {
					t.Fatalf("%q: value %q", name, v)
				}
			}
		}
	})
}
