package agent

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ruckus/ruckus/agentd/launch"
	"github.com/ruckus/ruckus/agentd/openai"
	"github.com/ruckus/ruckus/agentd/sim"
	"github.com/ruckus/ruckus/jobs"
)

// backend is how the agent reaches its inference runtime.
type backend interface {
	// Mode labels the runs: sim (simulated), black-box (client-side
	// timings only), gray-box (plus the runtime's /metrics or the local
	// GPUs) or white-box (agentd launched the runtime).
	Mode(gpus bool) string
	// Prepare makes the runtime ready to serve a model. On failure the
	// target (when not nil) still carries the runtime's log.
	Prepare(ctx context.Context, m modelRef) (target, error)
	// Client is the OpenAI-compatible client for a prepared target.
	Client(t target) *openai.Client
	Close()
}

// modelRef is the model a run serves: Registry its name in Ruckus, Served
// the name the runtime knows it by, AdapterOf the base model when it is a
// LoRA adapter (the job's AdapterOf).
type modelRef struct {
	Registry, Served, AdapterOf string
	// Engine is the job's engine settings (checked by checkJob).
	Engine jobs.Engine
}

// target is a runtime ready for one run.
type target interface {
	BaseURL() string
	// MetricsURL is the runtime's Prometheus /metrics, "" when none.
	MetricsURL() string
	LoadTime() *time.Duration
	LogTail() string
	// Process is the runtime's process, whose tree the node monitor
	// watches, and what it is (node.Summary.Process); 0 and "" when the
	// runtime is not a process of this agent's.
	Process() (pid int, what string)
	// RequestModel is the model name requests must give when it is not
	// the served name (a launched adapter); "" otherwise.
	RequestModel() string
	Stop() error
}

// endpoint is a runtime that is already running at a URL; pid is set for
// the simulated runtime, which runs inside agentd.
type endpoint struct {
	url, metrics string
	pid          int
	// stop ends a simulated runtime started for one run (nil otherwise).
	stop context.CancelFunc
}

func (e endpoint) BaseURL() string      { return e.url }
func (e endpoint) RequestModel() string { return "" }
func (e endpoint) MetricsURL() string   { return e.metrics }
func (e endpoint) Process() (int, string) {
	if e.pid == 0 {
		return 0, ""
	}
	return e.pid, "agentd"
}
func (e endpoint) LoadTime() *time.Duration { return nil }
func (e endpoint) LogTail() string          { return "" }
func (e endpoint) Stop() error {
	if e.stop != nil {
		e.stop()
	}
	return nil
}

// remote drives an endpoint: the built-in simulated runtime, or any
// OpenAI-compatible server.
type remote struct {
	mode    string
	url     string
	metrics string
	client  func(string) *openai.Client
	stop    context.CancelFunc
	// sim is the simulated runtime's settings and logger, from which a
	// run with engine settings gets a runtime of its own.
	sim    sim.Config
	logger *slog.Logger
}

// Mode: an endpoint on this node is gray-box (the runtime runs beside the
// agent, so its timings carry no network and its GPUs are the ones
// sampled), and so is one whose /metrics is scraped; a remote endpoint
// with neither is black-box.
func (r *remote) Mode(gpus bool) string {
	if r.mode == "black-box" && (gpus || r.metrics != "" || onThisNode(r.url)) {
		return "gray-box"
	}
	return r.mode
}

// onThisNode reports whether a URL's host is this machine: a loopback
// name or address, one of its interfaces' addresses, or its host name. It
// resolves nothing, so a name it cannot tell counts as remote.
func onThisNode(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return false
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if name, err := os.Hostname(); err == nil && strings.EqualFold(host, name) {
		return true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// Prepare: an endpoint serves what it serves, an adapter under its own
// name like any model. A simulated run with engine settings gets a
// simulated runtime of its own, whose serving model they set, with its
// vLLM-named /metrics scraped (docs/simulated-runtime.md#serving-model).
func (r *remote) Prepare(ctx context.Context, m modelRef) (target, error) {
	e := endpoint{url: r.url, metrics: r.metrics}
	if r.mode != "sim" {
		return e, nil
	}
	e.pid = os.Getpid()
	if len(m.Engine) == 0 {
		return e, nil
	}
	cfg := r.sim.ApplyEngine(m.Engine)
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("simulated runtime with engine settings %s: %w", m.Engine.Key(), err)
	}
	// The runtime outlives Prepare's caller's context only as long as the
	// run: Stop ends it.
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	addr, _, err := sim.Listen(sctx, "127.0.0.1:0", cfg, r.logger)
	if err != nil {
		stop()
		return nil, err
	}
	r.logger.Info("simulated runtime for the run's engine settings", "addr", addr, "engine", m.Engine.Key())
	e.url, e.metrics, e.stop = "http://"+addr, "http://"+addr+"/metrics", stop
	return e, nil
}
func (r *remote) Client(t target) *openai.Client { return r.client(t.BaseURL()) }
func (r *remote) Close() {
	if r.stop != nil {
		r.stop()
	}
}

// launcher starts the runtime from its command template for every run and
// stops it afterwards (white-box).
type launcher struct {
	cfg    runConfig
	client func(string) *openai.Client
	logger *slog.Logger
}

// launched is a runtime process agentd started.
type launched struct {
	p     *launch.Process
	grace time.Duration
}

func (l launched) BaseURL() string          { return l.p.BaseURL() }
func (l launched) MetricsURL() string       { return l.p.MetricsURL() }
func (l launched) LoadTime() *time.Duration { return l.p.LoadTime() }
func (l launched) LogTail() string          { return l.p.LogTail() }
func (l launched) Process() (int, string)   { return l.p.Pid(), "runtime" }
func (l launched) RequestModel() string     { return l.p.Plan().RequestModel }
func (l launched) Stop() error              { return l.p.Stop(l.grace) }

func (l *launcher) Mode(bool) string { return "white-box" }

// Prepare launches the runtime for m. An adapter's base is loaded from
// the base's model path (or fetched by its served name) and the adapter
// from its own path (or its name, a Hugging Face id, where the runtime
// fetches adapters).
func (l *launcher) Prepare(ctx context.Context, m modelRef) (target, error) {
	path := l.modelPath(m.Registry, m.Served)
	spec := launch.Spec{Runtime: l.cfg.Serves, Model: m.Served, ModelPath: path, Command: l.cfg.Command, ExtraArgs: l.cfg.ExtraArgs,
		ReadyTimeout: l.cfg.ReadyTimeout, StopGrace: l.cfg.StopGrace, Engine: m.Engine}
	if m.AdapterOf != "" {
		base := l.cfg.servedModel(m.AdapterOf)
		adapterPath := path
		if adapterPath == "" {
			if t, _, ok := launch.Lookup(l.cfg.Serves); ok && !t.NeedsModelPath {
				adapterPath = m.Served
			}
		}
		spec.ModelPath = l.modelPath(m.AdapterOf, base)
		spec.Adapter = &launch.Adapter{Base: base, Path: adapterPath}
	}
	if l.cfg.LogDir != "" {
		spec.LogPath = filepath.Join(l.cfg.LogDir, fmt.Sprintf("%s-%d.log", l.cfg.Serves, time.Now().UnixNano()))
	}
	p, err := launch.Start(ctx, spec, l.logger)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", l.cfg.Serves, err)
	}
	t := launched{p: p, grace: l.cfg.StopGrace}
	load, err := p.WaitReady(ctx)
	if err != nil {
		_ = p.Stop(l.cfg.StopGrace)
		return t, err
	}
	l.logger.Info("runtime ready", "runtime", l.cfg.Serves, "model", m.Served, "adapter_of", m.AdapterOf, "load_time", load, "url", p.BaseURL())
	return t, nil
}

// modelPath is the weights' path configured for a model, by its registry
// or its served name; "" when none is.
func (l *launcher) modelPath(registry, served string) string {
	if p := l.cfg.ModelPaths[registry]; p != "" {
		return p
	}
	return l.cfg.ModelPaths[served]
}

func (l *launcher) Client(t target) *openai.Client { return l.client(t.BaseURL()) }
func (l *launcher) Close()                         {}

func newBackend(ctx context.Context, cfg runConfig, logger *slog.Logger) (backend, error) {
	tlsConf, err := openai.TLSConfig(cfg.TLSCA, cfg.TLSInsecure)
	if err != nil {
		return nil, err
	}
	hc := openai.NewHTTPClient(tlsConf)
	apiKey := ""
	if cfg.APIKeyEnv != "" {
		apiKey = os.Getenv(cfg.APIKeyEnv)
	}
	dialect := jobs.DialectOpenAI
	if cfg.Runtime == modeAnthropic {
		dialect = jobs.DialectAnthropic
	}
	client := func(url string) *openai.Client {
		return &openai.Client{BaseURL: url, APIKey: apiKey, HTTP: hc, StallTimeout: cfg.StallTimeout, RequestTimeout: cfg.RequestTimeout,
			Dialect: dialect}
	}
	switch cfg.Runtime {
	case modeSim:
		sctx, stop := context.WithCancel(ctx)
		simCfg := cfg.Sim
		simCfg.Dialect = sim.DialectOpenAI // what the agent's own client speaks to it
		addr, _, err := sim.Listen(sctx, "127.0.0.1:0", simCfg, logger)
		if err != nil {
			stop()
			return nil, err
		}
		logger.Info("simulated runtime listening", "addr", addr)
		return &remote{mode: "sim", url: "http://" + addr, client: client, stop: stop, sim: simCfg, logger: logger}, nil
	case modeOpenAI, modeAnthropic:
		return &remote{mode: "black-box", url: cfg.Endpoint, metrics: cfg.MetricsURL, client: client}, nil
	case modeLaunch:
		return &launcher{cfg: cfg, client: client, logger: logger}, nil
	}
	return nil, fmt.Errorf("--runtime %q is not available", cfg.Runtime)
}
