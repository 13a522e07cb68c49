package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/jobs"
)

// TestMatrixExpandsATarget: matrix: {max_num_seqs: [64,128,256],
// tensor_parallel_size: [1,2]} is six configurations, each with the
// target's own engine settings and one combination, listed with the last
// setting varying fastest; a target without a matrix stays one.
func TestMatrixExpandsATarget(t *testing.T) {
	t.Parallel()
	m, err := Decode(strings.NewReader(`
name: grid
dataset: 4
targets:
  - {model: m, runtime: vllm, hardware: h, engine: {gpu_memory_utilization: 0.9}, matrix: {max_num_seqs: [64, 128, 256], tensor_parallel_size: [1, 2]}}
  - {model: m, runtime: sim, hardware: h}
sampling: {max_tokens: 16}
load: {profile: sequential}
`))
	if err != nil {
		t.Fatal(err)
	}
	if errs := m.Validate(); len(errs) != 0 {
		t.Fatalf("valid: %v", errs)
	}
	var got []string
	for _, c := range m.Configurations() {
		e, faults := c.Target.EngineSettings(2)
		if len(faults) > 0 || c.Target.Matrix != nil {
			t.Fatalf("%+v: %v", c, faults)
		}
		got = append(got, fmt.Sprintf("%d %s", c.Index, e.Key()))
	}
	want := []string{
		"0 gpu_memory_utilization=0.9 max_num_seqs=64 tensor_parallel_size=1",
		"0 gpu_memory_utilization=0.9 max_num_seqs=64 tensor_parallel_size=2",
		"0 gpu_memory_utilization=0.9 max_num_seqs=128 tensor_parallel_size=1",
		"0 gpu_memory_utilization=0.9 max_num_seqs=128 tensor_parallel_size=2",
		"0 gpu_memory_utilization=0.9 max_num_seqs=256 tensor_parallel_size=1",
		"0 gpu_memory_utilization=0.9 max_num_seqs=256 tensor_parallel_size=2",
		"1 ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("configurations:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if m.Targets[0].Engine["max_num_seqs"] != nil {
		t.Fatal("expanding changed the target's own settings")
	}
}

// TestMatrixValuesAreRefusedNamingThem: every value of a matrix is
// checked as an engine setting of its runtime, refused at
// targets[i].matrix.NAME[j]; an empty list, a value twice, a setting
// both fixed and in the matrix and too many configurations are refused,
// named.
func TestMatrixValuesAreRefusedNamingThem(t *testing.T) {
	t.Parallel()
	m, err := Decode(strings.NewReader(`
name: bad
dataset: 4
targets:
  - {model: m, runtime: vllm, hardware: h, matrix: {max_num_seqs: [64, 0, 128, 64], quantization: [fp8, "awq --trust-remote-code"], max_batch: [3]}}
  - {model: m, runtime: ollama, hardware: h, engine: {num_parallel: 2}, matrix: {num_parallel: [1, 4], num_ctx: []}}
  - {model: m, runtime: sim, hardware: h, matrix: {max_num_seqs: [1, 2, 3, 4, 5, 6, 7, 8, 9], max_model_len: [16, 32, 64, 128, 256, 512, 1024, 2048]}}
sampling: {max_tokens: 16}
load: {profile: sequential}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := m.Validate().Map()
	for path, want := range map[string]string{
		"targets[0].matrix.max_num_seqs[1]": "max_num_seqs must be between 1 and 4096",
		"targets[0].matrix.max_num_seqs[3]": "the same value as max_num_seqs[0]",
		"targets[0].matrix.quantization[1]": "quantization must be one of awq,",
		"targets[0].matrix.max_batch[0]":    `"max_batch" is not an engine setting of vllm`,
		"targets[1].matrix.num_parallel":    "num_parallel is set in engine too",
		"targets[1].matrix.num_ctx":         "give num_ctx at least one value",
		"targets[2].matrix":                 "a matrix makes at most 64 configurations",
	} {
		if !strings.Contains(got[path], want) {
			t.Errorf("%s: %q, want %q (all %v)", path, got[path], want, got)
		}
	}
	if len(got) != 7 {
		t.Errorf("%d errors, want 7: %v", len(got), got)
	}
	if _, refused := got["targets[0].matrix.max_num_seqs[0]"]; refused {
		t.Error("a valid value refused")
	}
}

// TestConfigurationsAreBoundedOverTheBenchmark: the bound holds over all
// targets together, named at targets; 64 pass.
func TestConfigurationsAreBoundedOverTheBenchmark(t *testing.T) {
	t.Parallel()
	target := func(from int) Target {
		var seqs []any
		for i := range 8 {
			seqs = append(seqs, from+i)
		}
		return Target{Model: "m", Runtime: "sim", Hardware: "h", Matrix: map[string][]any{"max_num_seqs": seqs}}
	}
	m := Manifest{Name: "n", Dataset: DatasetRef{ID: 1}, Sampling: validSampling(), Load: validLoad()}
	for i := range 8 {
		m.Targets = append(m.Targets, target(1+8*i))
	}
	if errs := m.Validate(); len(errs) != 0 {
		t.Fatalf("64 configurations refused: %v", errs)
	}
	m.Targets = append(m.Targets, target(100))
	if got := m.Validate().Map()["targets"]; !strings.Contains(got, "more than 64 configurations") {
		t.Fatalf("72 configurations: %v", m.Validate())
	}
}

// TestSearchNeedsConfigurationsAndRuns: a search is refused, named, with
// one configuration, with repeats, with a sweep, and with fewer runs
// than configurations.
func TestSearchNeedsConfigurationsAndRuns(t *testing.T) {
	t.Parallel()
	m := Manifest{Name: "n", Dataset: DatasetRef{ID: 1}, Sampling: validSampling(), Load: validLoad(),
		Targets: []Target{{Model: "m", Runtime: "sim", Hardware: "h"}}, Search: &Search{BudgetRuns: 5}}
	if got := m.Validate().Map()["search"]; !strings.Contains(got, "give a matrix or at least two targets") {
		t.Fatalf("one configuration: %v", m.Validate())
	}
	m.Targets[0].Matrix = map[string][]any{"max_num_seqs": {1, 2, 4, 8, 16, 32}}
	if errs := m.Validate(); len(errs) != 1 || errs[0].Path != "search.budget_runs" ||
		errs[0].Message != "a search over 6 configurations needs at least 6 runs (its first rung runs each once)" {
		t.Fatalf("5 runs for 6: %v", errs)
	}
	m.Search.BudgetRuns = 6
	m.Repeats = 3
	m.Load.Profile, m.Load.Concurrency, m.Load.Steps = "sweep", 8, 3
	got := m.Validate().Map()
	if len(got) != 2 || got["repeats"] == "" || got["load.profile"] == "" {
		t.Fatalf("repeats and sweep: %v", got)
	}
	m.Repeats, m.Load = 0, validLoad()
	if errs := m.Validate(); len(errs) != 0 {
		t.Fatalf("valid search: %v", errs)
	}
}

func validSampling() jobs.Sampling { return jobs.Sampling{MaxTokens: 16} }

func validLoad() jobs.LoadProfile { return jobs.LoadProfile{Profile: jobs.LoadSequential} }

// FuzzMatrix: any matrix text a manifest may carry is decoded and checked
// without panicking; when accepted, its configurations are the product of
// its lists, at most MaxConfigurations, each of whose settings its
// runtime takes, all distinct.
func FuzzMatrix(f *testing.F) {
	for _, s := range []string{`{max_num_seqs: [64, 128, 256], tensor_parallel_size: [1, 2]}`, `{max_num_seqs: []}`,
		`{max_num_seqs: [1, 1]}`, `{quantization: [fp8, awq], enable_prefix_caching: [true, false]}`, `{num_parallel: [1, 4]}`,
		`{max_num_seqs: [.nan, .inf, -1, 1e99]}`, `{max_num_seqs: [[1], {a: 1}, null]}`, `{"": [1]}`} {
		f.Add("sim", s)
		f.Add("ollama", s)
	}
	f.Fuzz(func(t *testing.T, runtime, matrix string) {
		in := fmt.Sprintf("name: n\ndataset: 1\nsampling: {max_tokens: 4}\nload: {profile: sequential}\ntargets:\n  - {model: m, runtime: %q, hardware: h, matrix: %s}\n", runtime, matrix)
		m, err := Decode(strings.NewReader(in))
		if err != nil || len(m.Targets) != 1 {
			return
		}
		if errs := m.Validate(); len(errs) > 0 {
			return
		}
		want := 1
		for _, list := range m.Targets[0].Matrix {
			want *= len(list)
		}
		cs := m.Configurations()
		if len(cs) != want || len(cs) > MaxConfigurations {
			t.Fatalf("%d configurations, want %d", len(cs), want)
		}
		seen := map[string]bool{}
		for _, c := range cs {
			e, faults := c.Target.EngineSettings(-1)
			if len(faults) > 0 || seen[e.Key()] {
				t.Fatalf("%q: faults %v, seen %v", e.Key(), faults, seen[e.Key()])
			}
			seen[e.Key()] = true
		}
	})
}
