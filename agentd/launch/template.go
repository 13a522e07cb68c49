package launch

import (
	"encoding/json"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Vars are the values a template argument may use, as {{.Model}} and so
// on. Templates also have two functions: json (a JSON string literal, for
// request bodies) and hostport (host and port joined as in a URL, with
// brackets around an IPv6 address).
type Vars struct {
	// Model is the name the runtime serves and requests name, such as
	// Qwen/Qwen2.5-0.5B-Instruct; for a LoRA adapter, the adapter's.
	Model string
	// BaseModel is the name the loaded weights are served under: Model,
	// or for an adapter its base model's.
	BaseModel string
	// AdapterPath is a LoRA adapter's weights (empty without one).
	AdapterPath string
	// ModelPath is where the weights are, when they are local: a
	// directory, or a GGUF file for llama.cpp and Ollama. Empty means the
	// runtime resolves Model itself (a Hugging Face id, Ollama's store).
	ModelPath string
	// Modelfile is an Ollama Modelfile.
	Modelfile string
	Host      string
	Port      int
	WorkDir   string
}

// Step is a command run once the server answers its ready path.
type Step struct {
	// If, rendered, must be non-empty for the step to run.
	If   string   `yaml:"if" json:"if,omitempty"`
	Argv []string `yaml:"argv" json:"argv"`
}

// Request is an HTTP request sent to the runtime.
type Request struct {
	Method string `yaml:"method" json:"method"`
	Path   string `yaml:"path" json:"path"`
	// Body is a template; it is sent as application/json.
	Body string `yaml:"body" json:"body,omitempty"`
}

// Template says how to run one kind of runtime. Command, Env, Step argv
// and Request bodies are text/templates over Vars.
type Template struct {
	Command []string `yaml:"command" json:"command"`
	// Env is added to agentd's environment (KEY=VALUE); later entries win.
	Env []string `yaml:"env" json:"env,omitempty"`
	// NeedsModelPath: the runtime cannot fetch a model by name.
	NeedsModelPath bool `yaml:"needs_model_path" json:"needs_model_path,omitempty"`
	// WriteModelfile: when the spec has a ModelPath but no Modelfile,
	// Start writes "FROM <ModelPath>" to a Modelfile (Ollama).
	WriteModelfile bool `yaml:"write_modelfile" json:"write_modelfile,omitempty"`
	// ReadyPath answers 2xx once the server is up.
	ReadyPath string `yaml:"ready_path" json:"ready_path"`
	// Prepare runs, in order, after ReadyPath answered.
	Prepare []Step `yaml:"prepare" json:"prepare,omitempty"`
	// ModelsPath, when set, is an OpenAI model list polled after Prepare
	// until it lists the model.
	ModelsPath string `yaml:"models_path" json:"models_path,omitempty"`
	// Load, when set, is sent once the model is listed, to load weights
	// that the runtime would otherwise load at the first request.
	Load *Request `yaml:"load" json:"load,omitempty"`
	// MetricsPath serves Prometheus text format; empty when there is none.
	MetricsPath string `yaml:"metrics_path" json:"metrics_path,omitempty"`
	// MetricsFlag, when set, is the argument without which the runtime
	// serves no metrics (llama-server's --metrics).
	MetricsFlag string `yaml:"metrics_flag" json:"metrics_flag,omitempty"`
	// APIPath is the OpenAI-compatible API's root under the server's.
	APIPath string `yaml:"api_path" json:"api_path"`
	// LoRA are the arguments that load a LoRA adapter (over Vars'
	// AdapterPath), appended to the command; nil: the runtime takes no
	// adapter here, and a spec with one is refused.
	LoRA []string `yaml:"lora" json:"lora,omitempty"`
	// LoRAModel is the model name requests give to reach the adapter
	// (empty: Model).
	LoRAModel string `yaml:"lora_model" json:"lora_model,omitempty"`
}

// Runtime names of the shipped templates. They match the runtime names of
// jobs and agents.
const (
	VLLM     = "vllm"
	SGLang   = "sglang"
	TGI      = "tgi"
	LlamaCpp = "llama-cpp"
	Ollama   = "ollama"
)

// shipped builds the shipped templates afresh each time, so a caller that
// changes its copy changes nobody else's.
//
// Values that reach a command line (the model name, paths) are passed so
// that none can be read as an option: as --flag=value where the runtime's
// parser takes that form (vLLM's and SGLang's argparse, TGI's clap,
// Ollama's cobra), or as the word after a flag that always consumes the
// next argument (llama-server), or after "--" (ollama create). Render
// refuses values that begin with "-" besides (see CheckArgValue), which
// covers the one positional that has neither: vllm serve's model.
func shipped() map[string]Template {
	const modelOrPath = "{{or .ModelPath .BaseModel}}"
	return map[string]Template{
		// vllm serve takes a Hugging Face id or a local directory; the
		// served name is always the base's, and an adapter is a LoRA
		// module named Model, so that requests naming Model reach it.
		VLLM: {
			Command: []string{"vllm", "serve", modelOrPath,
				"--host={{.Host}}", "--port={{.Port}}", "--served-model-name={{.BaseModel}}"},
			ReadyPath:   "/health",
			MetricsPath: "/metrics",
			APIPath:     "/v1",
			LoRA:        []string{"--enable-lora", "--lora-modules={{.Model}}={{.AdapterPath}}"},
		},
		// SGLang serves /metrics only with --enable-metrics. An adapter
		// loaded with --lora-paths NAME=PATH is asked for as model
		// "BASE:NAME".
		SGLang: {
			Command: []string{"python3", "-m", "sglang.launch_server", "--model-path=" + modelOrPath,
				"--host={{.Host}}", "--port={{.Port}}", "--served-model-name={{.BaseModel}}", "--enable-metrics"},
			ReadyPath:   "/health",
			MetricsPath: "/metrics",
			MetricsFlag: "--enable-metrics",
			APIPath:     "/v1",
			LoRA:        []string{"--lora-paths=adapter={{.AdapterPath}}"},
			LoRAModel:   "{{.BaseModel}}:adapter",
		},
		TGI: {
			Command: []string{"text-generation-launcher", "--model-id=" + modelOrPath,
				"--hostname={{.Host}}", "--port={{.Port}}"},
			ReadyPath:   "/health",
			MetricsPath: "/metrics",
			APIPath:     "/v1",
		},
		// llama-server answers /health with 503 while it loads, and serves
		// /metrics only with --metrics; --alias makes it serve Model. Its
		// parser has no --flag=value form, but a flag that takes a value
		// takes the next argument whatever it looks like.
		// An adapter (a GGUF LoRA file, --lora) applies to every request,
		// which name it by the alias.
		LlamaCpp: {
			Command: []string{"llama-server", "-m", "{{.ModelPath}}",
				"--host", "{{.Host}}", "--port", "{{.Port}}", "--alias", "{{.Model}}", "--metrics"},
			NeedsModelPath: true,
			ReadyPath:      "/health",
			MetricsPath:    "/metrics",
			MetricsFlag:    "--metrics",
			APIPath:        "/v1",
			LoRA:           []string{"--lora", "{{.AdapterPath}}"},
		},
		// ollama serve takes its address from OLLAMA_HOST, which also
		// points the `ollama create` step at this server. OLLAMA_KEEP_ALIVE
		// -1 keeps the model loaded for the server's whole life (it is
		// ours, and stopped after the run) instead of unloading it after
		// five idle minutes in the middle of a sweep.
		Ollama: {
			Command:        []string{"ollama", "serve"},
			Env:            []string{"OLLAMA_HOST={{hostport .Host .Port}}", "OLLAMA_KEEP_ALIVE=-1"},
			WriteModelfile: true,
			ReadyPath:      "/api/version",
			Prepare: []Step{{If: "{{.Modelfile}}",
				Argv: []string{"ollama", "create", "--file={{.Modelfile}}", "--", "{{.Model}}"}}},
			ModelsPath: "/v1/models",
			Load:       &Request{Method: "POST", Path: "/api/generate", Body: `{"model":{{json .Model}}}`},
			APIPath:    "/v1",
		},
	}
}

// aliases are other spellings of the shipped runtime names.
func aliases() map[string]string {
	return map[string]string{"llama.cpp": LlamaCpp, "llamacpp": LlamaCpp, "llama-server": LlamaCpp, "llama_cpp": LlamaCpp}
}

// Runtimes lists the shipped templates' names, sorted.
func Runtimes() []string {
	var names []string
	for name := range shipped() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Lookup returns the shipped template for a runtime name (case-insensitive;
// llama.cpp, llamacpp and llama-server name llama-cpp) and its canonical
// name.
func Lookup(runtime string) (Template, string, bool) {
	name := strings.ToLower(strings.TrimSpace(runtime))
	if a, ok := aliases()[name]; ok {
		name = a
	}
	t, ok := shipped()[name]
	return t, name, ok
}

// genericTemplate serves a runtime that has no shipped template but a
// command of the user's: any OpenAI-compatible server.
func genericTemplate() Template {
	return Template{ReadyPath: "/v1/models", APIPath: "/v1"}
}

func jsonString(s string) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}

func hostPort(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}
