package jobs

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Kinds of engine setting values.
const (
	EngineInt   = "int"
	EngineFloat = "float"
	EngineBool  = "bool"
	EngineEnum  = "enum"
)

// EngineParam is one engine setting a runtime takes: its type, its range
// and what it becomes when agentd launches the runtime
// (docs/benchmarks.md#engine-settings). Exactly one of Flag and Env is
// set.
type EngineParam struct {
	Runtime string
	Name    string
	Kind    string
	// Min and Max bound an int or float, both inclusive.
	Min, Max float64
	// Choices are an enum's values.
	Choices []string
	// Flag is the runtime's option: "--flag=value" on the command line
	// (a bool's true is the flag alone, its false FlagFalse).
	Flag      string
	FlagFalse string
	// Separate: the runtime's parser takes no --flag=value form, so the
	// value is the next argument (llama-server; the value is a checked
	// number, never text of the user's).
	Separate bool
	// Env is the environment variable the value is given in instead.
	Env string
	// GPUs: the value is a count of GPUs the model is split over, at most
	// the hardware profile's.
	GPUs bool
}

// vllmParams are vLLM's settings; the simulated runtime takes the same
// names (docs/simulated-runtime.md#serving-model).
func vllmParams(runtime string) []EngineParam {
	return []EngineParam{
		{Runtime: runtime, Name: "max_num_seqs", Kind: EngineInt, Min: 1, Max: 4096, Flag: "--max-num-seqs"},
		{Runtime: runtime, Name: "gpu_memory_utilization", Kind: EngineFloat, Min: 0.05, Max: 1, Flag: "--gpu-memory-utilization"},
		{Runtime: runtime, Name: "max_model_len", Kind: EngineInt, Min: 16, Max: 1 << 20, Flag: "--max-model-len"},
		{Runtime: runtime, Name: "tensor_parallel_size", Kind: EngineInt, Min: 1, Max: 64, Flag: "--tensor-parallel-size", GPUs: true},
		{Runtime: runtime, Name: "quantization", Kind: EngineEnum, Flag: "--quantization",
			Choices: []string{"awq", "awq_marlin", "bitsandbytes", "compressed-tensors", "fp8", "gguf", "gptq", "gptq_marlin"}},
		{Runtime: runtime, Name: "enable_prefix_caching", Kind: EngineBool, Flag: "--enable-prefix-caching", FlagFalse: "--no-enable-prefix-caching"},
	}
}

// EngineParams is the one table of engine settings, per runtime: what a
// target's engine: may set, how it is checked, and the option agentd
// launches the runtime with. A runtime missing here takes none.
func EngineParams() []EngineParam {
	t := vllmParams("vllm")
	t = append(t,
		EngineParam{Runtime: "sglang", Name: "max_running_requests", Kind: EngineInt, Min: 1, Max: 4096, Flag: "--max-running-requests"},
		EngineParam{Runtime: "sglang", Name: "mem_fraction_static", Kind: EngineFloat, Min: 0.05, Max: 0.99, Flag: "--mem-fraction-static"},
		EngineParam{Runtime: "sglang", Name: "tp", Kind: EngineInt, Min: 1, Max: 64, Flag: "--tp-size", GPUs: true},
		EngineParam{Runtime: "tgi", Name: "max_batch_total_tokens", Kind: EngineInt, Min: 1, Max: 10_000_000, Flag: "--max-batch-total-tokens"},
		EngineParam{Runtime: "llama-cpp", Name: "parallel", Kind: EngineInt, Min: 1, Max: 256, Flag: "--parallel", Separate: true},
		EngineParam{Runtime: "llama-cpp", Name: "ctx_size", Kind: EngineInt, Min: 0, Max: 1 << 20, Flag: "--ctx-size", Separate: true},
		EngineParam{Runtime: "ollama", Name: "num_parallel", Kind: EngineInt, Min: 1, Max: 64, Env: "OLLAMA_NUM_PARALLEL"},
		EngineParam{Runtime: "ollama", Name: "num_ctx", Kind: EngineInt, Min: 256, Max: 1 << 20, Env: "OLLAMA_CONTEXT_LENGTH"},
	)
	return append(t, vllmParams("sim")...)
}

// EngineParamsOf is runtime's part of the table, in the table's order.
func EngineParamsOf(runtime string) []EngineParam {
	var out []EngineParam
	for _, p := range EngineParams() {
		if p.Runtime == runtime {
			out = append(out, p)
		}
	}
	return out
}

// Engine is a target's engine settings as checked canonical text, name
// to value ("128", "0.9", "true", "awq"): part of the target's identity
// and of its run's job. Nil or empty: the runtime's defaults.
type Engine map[string]string

// Key is the settings as one comparable text, sorted by name
// ("max_num_seqs=128 tensor_parallel_size=2"); "" for none.
func (e Engine) Key() string {
	names := make([]string, 0, len(e))
	for n := range e {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + e[n]
	}
	return strings.Join(parts, " ")
}

// Int is the integer setting name, or def when it is not set.
func (e Engine) Int(name string, def int) int {
	if v, err := strconv.Atoi(e[name]); err == nil {
		return v
	}
	return def
}

// Float is the number setting name, or def when it is not set.
func (e Engine) Float(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(e[name], 64); err == nil {
		return v
	}
	return def
}

// TensorParallel is how many GPUs the settings split the model over (the
// runtime's tensor_parallel_size or tp), 1 when unset.
func (e Engine) TensorParallel() int {
	return max(e.Int("tensor_parallel_size", e.Int("tp", 1)), 1)
}

// EngineFault is one refused setting: its name and why.
type EngineFault struct {
	Name string
	Err  *Error
}

// CheckEngine checks raw settings (as decoded from a manifest: numbers,
// bools or text) against runtime's part of the table and returns them as
// canonical text. gpus is the hardware profile's GPU count that a GPU
// setting may not exceed; below 0 it is not known yet and not checked.
// Faults come sorted by name.
func CheckEngine(runtime string, raw map[string]any, gpus int) (Engine, []EngineFault) {
	params := EngineParamsOf(runtime)
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	slices.Sort(names)
	out := Engine{}
	var faults []EngineFault
	for _, n := range names {
		i := slices.IndexFunc(params, func(p EngineParam) bool { return p.Name == n })
		if i < 0 {
			faults = append(faults, EngineFault{n, unknownSetting(runtime, n, params)})
			continue
		}
		v, err := params[i].value(raw[n])
		if err == nil && params[i].GPUs && gpus >= 0 {
			if k, _ := strconv.Atoi(v); k > max(gpus, 1) {
				err = codeError(fmt.Sprintf("%s is %d but the hardware has %d GPUs", n, k, gpus),
					"valid.engine_gpus", "Name", n, "Value", k, "GPUs", gpus)
			}
		}
		if err != nil {
			faults = append(faults, EngineFault{n, err})
			continue
		}
		out[n] = v
	}
	return out, faults
}

// unknownSetting is the error for a name runtime does not take.
func unknownSetting(runtime, name string, params []EngineParam) *Error {
	q := strconv.Quote(name)
	if len(params) == 0 {
		return codeError(fmt.Sprintf("%s: the runtime %s takes no engine settings", q, runtime),
			"valid.engine_none", "Name", q, "Runtime", runtime)
	}
	known := make([]string, len(params))
	for i, p := range params {
		known[i] = p.Name
	}
	k := strings.Join(known, ", ")
	return codeError(fmt.Sprintf("%s is not an engine setting of %s (it takes %s)", q, runtime, k),
		"valid.engine_unknown", "Name", q, "Runtime", runtime, "Known", k)
}

// value checks one raw value and writes it canonically.
func (p EngineParam) value(raw any) (string, *Error) {
	switch p.Kind {
	case EngineBool:
		switch v := raw.(type) {
		case bool:
			return strconv.FormatBool(v), nil
		case string:
			if t := strings.TrimSpace(v); t == "true" || t == "false" {
				return t, nil
			}
		}
		return "", codeError(p.Name+" must be true or false", "valid.engine_bool", "Name", p.Name)
	case EngineEnum:
		if s, ok := raw.(string); ok && slices.Contains(p.Choices, s) {
			return s, nil
		}
		c := strings.Join(p.Choices, ", ")
		return "", codeError(fmt.Sprintf("%s must be one of %s", p.Name, c), "valid.engine_choice", "Name", p.Name, "Choices", c)
	}
	x, ok := number(raw)
	if !ok || (p.Kind == EngineInt && x != math.Trunc(x)) {
		if p.Kind == EngineInt {
			return "", codeError(p.Name+" must be a whole number", "valid.engine_int", "Name", p.Name)
		}
		return "", codeError(p.Name+" must be a number", "valid.engine_number", "Name", p.Name)
	}
	if x < p.Min || x > p.Max {
		lo, hi := strconv.FormatFloat(p.Min, 'g', -1, 64), strconv.FormatFloat(p.Max, 'g', -1, 64)
		return "", codeError(fmt.Sprintf("%s must be between %s and %s", p.Name, lo, hi),
			"valid.engine_range", "Name", p.Name, "Min", lo, "Max", hi)
	}
	return strconv.FormatFloat(x, 'f', -1, 64), nil
}

// number reads a decoded number (JSON's float64, YAML's int) or its text
// (a form's), finite only.
func number(raw any) (float64, bool) {
	var x float64
	switch v := raw.(type) {
	case int:
		x = float64(v)
	case int64:
		x = float64(v)
	case uint64:
		x = float64(v)
	case float64:
		x = v
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, false
		}
		x = f
	default:
		return 0, false
	}
	return x, !math.IsNaN(x) && !math.IsInf(x, 0)
}

// ParseEngineText reads settings written as text, "name=value" pairs
// separated by commas, semicolons or new lines (the form's field), into
// raw values for CheckEngine. A pair without "=" or a name given twice is
// an error; names and values are trimmed.
func ParseEngineText(s string) (map[string]any, error) {
	out := map[string]any{}
	for part := range strings.FieldsFuncSeq(s, func(r rune) bool { return r == ',' || r == ';' || r == '\n' || r == '\r' }) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			q := strconv.Quote(part)
			return nil, codeError(q+" is not name=value", "valid.engine_pair", "Pair", q)
		}
		if _, dup := out[name]; dup {
			q := strconv.Quote(name)
			return nil, codeError(q+" is given twice", "valid.engine_twice", "Name", q)
		}
		out[name] = value
	}
	return out, nil
}

// ParseMatrixText reads a matrix written as text, "name=v1,v2" lists
// separated by semicolons or new lines (the form's matrix field), into
// raw value lists for a target's matrix; each value is then checked as an
// engine setting. A list without "=", a name given twice or a list with
// an empty value is an error; names and values are trimmed.
func ParseMatrixText(s string) (map[string][]any, error) {
	out := map[string][]any{}
	for part := range strings.FieldsFuncSeq(s, func(r rune) bool { return r == ';' || r == '\n' || r == '\r' }) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, values, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			q := strconv.Quote(part)
			return nil, codeError(q+" is not name=value,value", "valid.matrix_list", "List", q)
		}
		if _, dup := out[name]; dup {
			q := strconv.Quote(name)
			return nil, codeError(q+" is given twice", "valid.engine_twice", "Name", q)
		}
		var list []any
		for v := range strings.SplitSeq(values, ",") {
			if v = strings.TrimSpace(v); v == "" {
				q := strconv.Quote(part)
				return nil, codeError(q+" has an empty value", "valid.matrix_empty_value", "List", q)
			}
			list = append(list, v)
		}
		out[name] = list
	}
	return out, nil
}

// Args are the command-line arguments and environment entries the
// settings become for runtime, in the table's order. Each setting is
// checked again here, so nothing but a table flag and a checked value
// reaches a command line.
func (e Engine) Args(runtime string) (argv, env []string, err error) {
	raw := make(map[string]any, len(e))
	for n, v := range e {
		raw[n] = v
	}
	checked, faults := CheckEngine(runtime, raw, -1)
	if len(faults) > 0 {
		return nil, nil, fmt.Errorf("engine setting %s: %w", faults[0].Name, faults[0].Err)
	}
	for _, p := range EngineParamsOf(runtime) {
		v, ok := checked[p.Name]
		switch {
		case !ok:
		case p.Env != "":
			env = append(env, p.Env+"="+v)
		case p.Kind == EngineBool && v == "false":
			argv = append(argv, p.FlagFalse)
		case p.Kind == EngineBool:
			argv = append(argv, p.Flag)
		case p.Separate:
			argv = append(argv, p.Flag, v)
		default:
			argv = append(argv, p.Flag+"="+v)
		}
	}
	return argv, env, nil
}
