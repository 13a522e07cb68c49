package agent

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/ruckus/ruckus/agentd/launch"
	"github.com/ruckus/ruckus/agentd/sim"
	"github.com/ruckus/ruckus/app/valid"
	"github.com/ruckus/ruckus/jobs"
)

// Agent runtimes: how agentd reaches the inference server.
const (
	// modeSim serves runs with the simulated runtime built into agentd.
	modeSim = "sim"
	// modeOpenAI sends runs to an OpenAI-compatible endpoint already
	// running (gray-box on this node or with --metrics-url or GPUs, else
	// black-box).
	modeOpenAI = "openai"
	// modeLaunch starts the runtime itself for every run (white-box).
	modeLaunch = "launch"
	// modeAnthropic sends runs to Anthropic's Messages API (black-box),
	// or to a server speaking it (--endpoint).
	modeAnthropic = "anthropic"
)

// servable runtime names an openai-mode agent may advertise.
var servable = []string{"openai", "vllm", "sglang", "tgi", "llama-cpp", "ollama"}

// runConfig is agentd run's settings, from flags and an optional YAML file
// (--config); flags win.
type runConfig struct {
	DatabaseURL string        `yaml:"database_url"`
	Name        string        `yaml:"name"`
	Runtime     string        `yaml:"runtime"`
	Heartbeat   time.Duration `yaml:"heartbeat"`
	// Serves is the runtime name the agent advertises (the runs it takes):
	// "sim" for --runtime sim, the endpoint's kind for openai, the launched
	// runtime for launch.
	Serves string `yaml:"serves"`
	// Provider takes the runs of a provider in the provider table
	// (ProvidersFile, or the built-in openai and anthropic): its
	// dialect sets Runtime, its base URL the Endpoint unless one is
	// given, its key variable the APIKeyEnv unless one is given, and it
	// serves the runs of the runtime named after it.
	Provider      string `yaml:"provider"`
	ProvidersFile string `yaml:"providers_file"`
	// openai and anthropic modes.
	Endpoint    string `yaml:"endpoint"`
	APIKeyEnv   string `yaml:"api_key_env"`
	MetricsURL  string `yaml:"metrics_url"`
	TLSCA       string `yaml:"tls_ca"`
	TLSInsecure bool   `yaml:"tls_insecure"`
	// launch mode: the shipped template (or Command), and per model the
	// weights' path for runtimes that load files.
	Command      launch.Argv       `yaml:"command"`
	ExtraArgs    launch.Argv       `yaml:"extra_args"`
	ModelPaths   map[string]string `yaml:"model_paths"`
	ReadyTimeout time.Duration     `yaml:"ready_timeout"`
	StopGrace    time.Duration     `yaml:"stop_grace"`
	LogDir       string            `yaml:"log_dir"`
	// ModelAliases maps registry names to the names the runtime serves
	// (Ollama's "qwen2.5:0.5b" for Qwen/Qwen2.5-0.5B-Instruct).
	ModelAliases map[string]string `yaml:"model_aliases"`
	// Requests.
	RequestTimeout time.Duration `yaml:"request_timeout"`
	StallTimeout   time.Duration `yaml:"stall_timeout"`
	// NoGPU skips NVML even where it is present.
	NoGPU bool `yaml:"no_gpu"`
	// nvml replaces NVIDIA's library (tests use go-nvml's mocks).
	nvml nvml.Interface
	// ProgressInterval is how often progress and samples are written.
	ProgressInterval time.Duration `yaml:"progress_interval"`
	Sim              sim.Config    `yaml:"sim"`
	// SimGPU makes a simulated agent present itself as a GPU machine
	// (NAME:GIB:COUNT), so that one machine can stand in for a fleet of
	// several hardware profiles; sim only.
	SimGPU string `yaml:"sim_gpu"`

	// DBPoolSize is the most connections the agent opens to the database
	// (or to PgBouncer): see docs/scaling.md#the-connection-budget.
	DBPoolSize int `yaml:"db_pool_size"`
	// PgBouncer says the database URL leads to PgBouncer in transaction
	// pooling mode: no LISTEN (River polls), no prepared statements, and
	// every transaction carries the agent's key.
	PgBouncer bool `yaml:"pgbouncer"`
	// Key is the agent's key (ruckus agent create prints it), from
	// $RUCKUS_AGENT_KEY or KeyFile; never a setting in the file itself.
	Key     string `yaml:"-"`
	KeyFile string `yaml:"key_file"`
	// ControlPoll is how often a run in progress reads whether it was
	// cancelled or reassigned.
	ControlPoll time.Duration `yaml:"control_poll"`
	// MetricsAddr, when set, is where agentd serves its Prometheus
	// /metrics (requests in flight, sent, errors by class).
	MetricsAddr string `yaml:"metrics_addr"`
}

// DefaultDBPoolSize is what an agent needs: River's fetch and completion,
// the run's batched writes, the control poll and the heartbeat, with one
// to spare.
const DefaultDBPoolSize = 4

func defaultRunConfig() runConfig {
	host, _ := os.Hostname()
	return runConfig{
		DatabaseURL: os.Getenv("DATABASE_URL"), Name: host, Runtime: modeSim, Heartbeat: 5 * time.Second,
		RequestTimeout: 10 * time.Minute,
		ReadyTimeout:   launch.DefaultReadyTimeout, StopGrace: launch.DefaultStopGrace,
		StallTimeout: 2 * time.Minute, ProgressInterval: time.Second, Sim: sim.DefaultConfig(),
		DBPoolSize: DefaultDBPoolSize, ControlPoll: 250 * time.Millisecond,
		Key: os.Getenv("RUCKUS_AGENT_KEY"),
	}
}

// mapFlag is a repeatable KEY=VALUE flag.
type mapFlag struct{ m *map[string]string }

func (f mapFlag) String() string { return "" }
func (f mapFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" || v == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", s)
	}
	if *f.m == nil {
		*f.m = map[string]string{}
	}
	(*f.m)[k] = v
	return nil
}

// configPath finds --config FILE before the flags are defined, so the
// file's values become the flags' defaults.
func configPath(args []string) string {
	for i, a := range args {
		for _, p := range []string{"--config", "-config"} {
			if a == p && i+1 < len(args) {
				return args[i+1]
			}
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				return v
			}
		}
	}
	return ""
}

func parseRunFlags(args []string, out io.Writer) (runConfig, error) {
	c := defaultRunConfig()
	if path := configPath(args); path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("--config: %w", err)
		}
		if errs := valid.DecodeYAML(b, &c); errs != nil {
			return c, fmt.Errorf("--config %s: %w", path, errs)
		}
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.String("config", "", "YAML file with these settings (keys as in docs/gpu-nodes.md); flags win")
	fs.StringVar(&c.DatabaseURL, "database-url", c.DatabaseURL, "PostgreSQL URL shared with the server (default $DATABASE_URL)")
	fs.StringVar(&c.Name, "name", c.Name, "agent name, unique in the fleet")
	fs.StringVar(&c.Runtime, "runtime", c.Runtime, "how to reach the inference runtime: sim (built in), openai (an endpoint already running), anthropic (Anthropic's Messages API) or launch (started for every run)")
	fs.StringVar(&c.Provider, "provider", c.Provider, "take the runs of this remote provider (\"provider:model\" fleet targets): its base URL, key variable and dialect come from the provider table")
	fs.StringVar(&c.ProvidersFile, "providers", c.ProvidersFile, "the provider table, a YAML file (the server's RUCKUS_PROVIDERS_FILE); default: openai and anthropic only")
	fs.DurationVar(&c.Heartbeat, "heartbeat", c.Heartbeat, "heartbeat interval")
	fs.StringVar(&c.Serves, "serves", c.Serves, "runtime name to take runs for: with openai one of "+strings.Join(servable, ", ")+"; with launch one of "+strings.Join(launch.Runtimes(), ", "))
	fs.StringVar(&c.MetricsURL, "metrics-url", c.MetricsURL, "openai: the runtime's Prometheus /metrics, scraped during runs (gray-box); launch finds it itself")
	fs.Var(&c.Command, "command", "launch: the runtime's command instead of the shipped template, as one string (Go templates: {{.Model}} {{.ModelPath}} {{.Host}} {{.Port}})")
	fs.Var(&c.ExtraArgs, "extra-args", "launch: arguments added to the runtime's command, as one string")
	fs.Var(mapFlag{&c.ModelPaths}, "model-path", "launch: NAME=PATH of a model's weights, for runtimes that load files (repeatable)")
	fs.DurationVar(&c.ReadyTimeout, "ready-timeout", c.ReadyTimeout, "launch: how long the runtime may take to load the model and answer")
	fs.DurationVar(&c.StopGrace, "stop-grace", c.StopGrace, "launch: how long the runtime gets to stop after SIGTERM before SIGKILL")
	fs.StringVar(&c.LogDir, "log-dir", c.LogDir, "launch: where runtime logs are kept (default: only the tail, stored with the run)")
	fs.StringVar(&c.Endpoint, "endpoint", c.Endpoint, "openai: base URL of the OpenAI-compatible server, such as http://127.0.0.1:8000")
	fs.StringVar(&c.APIKeyEnv, "api-key-env", c.APIKeyEnv, "environment variable holding the endpoint's API key, sent as a Bearer token (x-api-key for anthropic) when set (default OPENAI_API_KEY, ANTHROPIC_API_KEY for anthropic, the provider's with --provider)")
	fs.StringVar(&c.TLSCA, "tls-ca", c.TLSCA, "PEM file of a CA to trust for https endpoints")
	fs.BoolVar(&c.TLSInsecure, "tls-insecure", c.TLSInsecure, "do not verify the endpoint's certificate (testing only)")
	fs.Var(mapFlag{&c.ModelAliases}, "model-alias", "NAME=SERVED: the name the runtime knows a registry model by (repeatable)")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", c.RequestTimeout, "longest one request may take")
	fs.DurationVar(&c.StallTimeout, "stall-timeout", c.StallTimeout, "longest a stream may stay silent")
	fs.BoolVar(&c.NoGPU, "no-gpu", c.NoGPU, "do not look for GPUs through NVML")
	fs.DurationVar(&c.ProgressInterval, "progress-interval", c.ProgressInterval, "how often progress and samples are written")
	fs.IntVar(&c.DBPoolSize, "db-pool-size", c.DBPoolSize, "most database connections this agent opens (2 to 32)")
	fs.BoolVar(&c.PgBouncer, "pgbouncer", c.PgBouncer, "the database URL leads to PgBouncer in transaction mode: River polls instead of LISTEN, nothing is prepared on a server connection, and every transaction carries the agent's key")
	fs.StringVar(&c.KeyFile, "key-file", c.KeyFile, "file holding the agent's key (default $RUCKUS_AGENT_KEY); needed with --pgbouncer")
	fs.DurationVar(&c.ControlPoll, "control-poll", c.ControlPoll, "how often a run in progress checks whether it was cancelled or reassigned (50ms to 1s)")
	fs.StringVar(&c.SimGPU, "sim-gpu", c.SimGPU, "sim: present this machine as NAME:GIB:COUNT GPUs (such as \"NVIDIA A100-SXM4-80GB:80:1\"), to stand in for a GPU node; their samples are simulated from the load and labelled so")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", c.MetricsAddr, "serve Prometheus /metrics on this host:port (such as 127.0.0.1:9465); empty serves none")
	c.Sim.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return c, c.validate()
}

// validate checks the flags and fills the defaults that depend on the
// runtime: bounds first, then the key, the simulated GPUs, the provider
// table, and last what the chosen runtime needs.
func (c *runConfig) validate() error {
	if err := c.validateBounds(); err != nil {
		return err
	}
	if err := c.readKey(); err != nil {
		return err
	}
	if err := c.validateSimGPU(); err != nil {
		return err
	}
	if err := c.applyProvider(); err != nil {
		return err
	}
	return c.validateRuntime()
}

// validateBounds checks the flags every runtime has.
func (c *runConfig) validateBounds() error {
	switch {
	case c.DatabaseURL == "":
		return errors.New("--database-url (or DATABASE_URL) is required")
	case c.Name == "":
		return errors.New("--name must not be empty")
	case c.Heartbeat < time.Second || c.Heartbeat > time.Minute:
		return fmt.Errorf("--heartbeat must be between 1s and 1m (got %s)", c.Heartbeat)
	case c.ProgressInterval < 100*time.Millisecond || c.ProgressInterval > 2*time.Second:
		return fmt.Errorf("--progress-interval must be between 100ms and 2s (got %s)", c.ProgressInterval)
	case c.RequestTimeout <= 0 || c.StallTimeout <= 0:
		return errors.New("--request-timeout and --stall-timeout must be positive")
	case c.DBPoolSize < 2 || c.DBPoolSize > 32:
		return fmt.Errorf("--db-pool-size must be between 2 and 32 (got %d)", c.DBPoolSize)
	case c.ControlPoll < 50*time.Millisecond || c.ControlPoll > time.Second:
		return fmt.Errorf("--control-poll must be between 50ms and 1s (got %s)", c.ControlPoll)
	}
	if c.MetricsAddr != "" && !valid.IsListenAddr(c.MetricsAddr) {
		return fmt.Errorf("--metrics-addr %q must be host:port or :port, such as 127.0.0.1:9465", c.MetricsAddr)
	}
	return nil
}

// validateSimGPU checks --sim-gpu, which only the simulated runtime takes.
func (c *runConfig) validateSimGPU() error {
	if c.SimGPU == "" {
		return nil
	}
	if c.Runtime != modeSim {
		return errors.New("--sim-gpu is for --runtime sim only: a real node reports its own GPUs")
	}
	if _, err := parseSimGPU(c.SimGPU); err != nil {
		return fmt.Errorf("--sim-gpu %q: %w", c.SimGPU, err)
	}
	return nil
}

// validateRuntime checks what the chosen runtime needs and fills the runs
// it serves and the variable its key is read from when they are not given.
func (c *runConfig) validateRuntime() error {
	switch c.Runtime {
	case modeSim:
		if c.Serves != "" && c.Serves != modeSim {
			return fmt.Errorf("--serves %q: the simulated runtime serves only sim runs", c.Serves)
		}
		c.Serves = modeSim
		return c.Sim.Validate()
	case modeOpenAI:
		return c.validateOpenAI()
	case modeAnthropic:
		return c.validateAnthropic()
	case modeLaunch:
		return c.validateLaunch()
	default:
		return fmt.Errorf("--runtime %q: use sim, openai, anthropic or launch", c.Runtime)
	}
}

func (c *runConfig) validateOpenAI() error {
	if c.Endpoint == "" {
		return errors.New("--runtime openai needs --endpoint, the base URL of the OpenAI-compatible server")
	}
	if !strings.HasPrefix(c.Endpoint, "http://") && !strings.HasPrefix(c.Endpoint, "https://") {
		return fmt.Errorf("--endpoint %q must start with http:// or https://", c.Endpoint)
	}
	if c.Serves == "" {
		c.Serves = modeOpenAI
	}
	if c.APIKeyEnv == "" {
		c.APIKeyEnv = "OPENAI_API_KEY"
	}
	if c.Provider == "" && !slices.Contains(servable, c.Serves) {
		return fmt.Errorf("--serves %q: with --runtime openai use one of %s", c.Serves, strings.Join(servable, ", "))
	}
	return nil
}

func (c *runConfig) validateAnthropic() error {
	if c.Endpoint == "" {
		c.Endpoint = jobs.DefaultProviders()[modeAnthropic].BaseURL
	}
	if !strings.HasPrefix(c.Endpoint, "http://") && !strings.HasPrefix(c.Endpoint, "https://") {
		return fmt.Errorf("--endpoint %q must start with http:// or https://", c.Endpoint)
	}
	if c.APIKeyEnv == "" {
		c.APIKeyEnv = "ANTHROPIC_API_KEY"
	}
	if c.Serves == "" {
		c.Serves = modeAnthropic
	}
	if c.Provider == "" && c.Serves != modeAnthropic {
		return fmt.Errorf("--serves %q: --runtime anthropic serves the anthropic runtime's runs (use --provider for another provider speaking the Messages API)", c.Serves)
	}
	return nil
}

func (c *runConfig) validateLaunch() error {
	_, name, ok := launch.Lookup(c.Serves)
	if !ok {
		return fmt.Errorf("--runtime launch needs --serves, one of %s (got %q)", strings.Join(launch.Runtimes(), ", "), c.Serves)
	}
	c.Serves = name
	if c.ReadyTimeout <= 0 || c.StopGrace <= 0 {
		return errors.New("--ready-timeout and --stop-grace must be positive")
	}
	for _, m := range []struct {
		flag string
		kv   map[string]string
	}{{"--model-path", c.ModelPaths}, {"--model-alias", c.ModelAliases}} {
		for k, v := range m.kv {
			if err := launch.CheckArgValue(v); err != nil {
				return fmt.Errorf("%s %s=%s: %w", m.flag, k, v, err)
			}
		}
	}
	return nil
}

// applyProvider sets the runtime, endpoint, key variable and runs served
// from --provider's entry in the provider table.
func (c *runConfig) applyProvider() error {
	if c.Provider == "" {
		if c.ProvidersFile != "" {
			return errors.New("--providers is read with --provider NAME only")
		}
		return nil
	}
	table := jobs.DefaultProviders()
	if c.ProvidersFile != "" {
		f, err := os.Open(c.ProvidersFile)
		if err != nil {
			return fmt.Errorf("--providers: %w", err)
		}
		defer f.Close()
		if table, err = jobs.ReadProviders(f); err != nil {
			return fmt.Errorf("--providers %s: %w", c.ProvidersFile, err)
		}
	}
	p, ok := table[c.Provider]
	if !ok {
		return fmt.Errorf("--provider %q: the provider table has %s", c.Provider, strings.Join(table.Names(), ", "))
	}
	if c.Serves != "" && c.Serves != p.Name {
		return fmt.Errorf("--serves %q: --provider %s serves the %s runtime's runs", c.Serves, p.Name, p.Name)
	}
	switch {
	case c.Runtime == modeSim || c.Runtime == "" || c.Runtime == p.Dialect:
		c.Runtime = p.Dialect
	default:
		return fmt.Errorf("--runtime %q: provider %s speaks the %s dialect (leave --runtime out)", c.Runtime, p.Name, p.Dialect)
	}
	c.Serves = p.Name
	if c.Endpoint == "" {
		c.Endpoint = p.BaseURL
	}
	if c.APIKeyEnv == "" {
		c.APIKeyEnv = p.APIKeyEnv
	}
	return nil
}

// agentKey is what `ruckus agent create` makes (store.NewAgentKey).
var agentKey = regexp.MustCompile(`^rka_[A-Za-z0-9_-]{43}$`)

// readKey reads --key-file (it wins over $RUCKUS_AGENT_KEY) and checks the
// key; through PgBouncer one is needed, since the agent's transactions are
// known by it alone.
func (c *runConfig) readKey() error {
	if c.KeyFile != "" {
		b, err := os.ReadFile(c.KeyFile)
		if err != nil {
			return fmt.Errorf("--key-file: %w", err)
		}
		if len(b) > 1024 {
			return fmt.Errorf("--key-file %s: too long for an agent key", c.KeyFile)
		}
		c.Key = strings.TrimSpace(string(b))
	}
	switch {
	case c.Key != "" && !agentKey.MatchString(c.Key):
		return errors.New("the agent key (--key-file or RUCKUS_AGENT_KEY) is not one `ruckus agent create` makes: rka_ and 43 letters, digits, '-' or '_'")
	case c.PgBouncer && c.Key == "":
		return errors.New("--pgbouncer needs the agent's key (RUCKUS_AGENT_KEY or --key-file): through PgBouncer agents share one server role and are known by their keys; `ruckus agent create NAME` prints it")
	}
	return nil
}

// servedModel is the name the runtime knows the registry model by.
func (c *runConfig) servedModel(name string) string {
	if a, ok := c.ModelAliases[name]; ok {
		return a
	}
	return name
}

// parseSimGPU reads NAME:GIB:COUNT into that many GPUs.
func parseSimGPU(s string) ([]jobs.GPU, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return nil, errors.New("want NAME:GIB:COUNT")
	}
	name := strings.TrimSpace(parts[0])
	if name == "" || len(name) > 64 || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return nil, errors.New("the name must be 1 to 64 printable characters")
	}
	gib, err := strconv.Atoi(parts[1])
	if err != nil || gib < 1 || gib > 1024 {
		return nil, errors.New("GIB must be a whole number from 1 to 1024")
	}
	n, err := strconv.Atoi(parts[2])
	if err != nil || n < 1 || n > 16 {
		return nil, errors.New("COUNT must be from 1 to 16")
	}
	gpus := make([]jobs.GPU, n)
	for i := range gpus {
		gpus[i] = jobs.GPU{Name: name, MemoryBytes: uint64(gib) << 30}
	}
	return gpus, nil
}
