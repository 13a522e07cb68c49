package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/ruckus/ruckus/agentd/openai"
	"github.com/ruckus/ruckus/agentd/sim"
)

// backend is how the agent reaches its inference runtime.
type backend interface {
	// Mode labels the runs: sim (simulated), black-box (client-side
	// timings only) or gray-box (plus the local GPUs through NVML).
	Mode(gpus bool) string
	// Prepare makes the runtime ready to serve model.
	Prepare(ctx context.Context, model string) (target, error)
	// Client is the OpenAI-compatible client for a prepared target.
	Client(t target) (*openai.Client, error)
	Close()
}

// target is a runtime ready for one run.
type target interface {
	BaseURL() string
	LoadTime() *time.Duration
	LogTail() string
	Stop() error
}

// endpoint is a runtime that is already running at a URL.
type endpoint struct{ url string }

func (e endpoint) BaseURL() string          { return e.url }
func (e endpoint) LoadTime() *time.Duration { return nil }
func (e endpoint) LogTail() string          { return "" }
func (e endpoint) Stop() error              { return nil }

// remote drives an endpoint: the built-in simulated runtime, or any
// OpenAI-compatible server (black-box: client-side timings and the usage
// the server reports).
type remote struct {
	mode   string
	url    string
	client func(string) *openai.Client
	stop   context.CancelFunc
}

func (r *remote) Mode(gpus bool) string {
	if r.mode == "black-box" && gpus {
		return "gray-box"
	}
	return r.mode
}
func (r *remote) Prepare(context.Context, string) (target, error) {
	return endpoint{r.url}, nil
}
func (r *remote) Client(t target) (*openai.Client, error) { return r.client(t.BaseURL()), nil }
func (r *remote) Close() {
	if r.stop != nil {
		r.stop()
	}
}

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
	client := func(url string) *openai.Client {
		return &openai.Client{BaseURL: url, APIKey: apiKey, HTTP: hc, StallTimeout: cfg.StallTimeout, RequestTimeout: cfg.RequestTimeout}
	}
	switch cfg.Runtime {
	case modeSim:
		sctx, stop := context.WithCancel(ctx)
		addr, _, err := sim.Listen(sctx, "127.0.0.1:0", cfg.Sim, logger)
		if err != nil {
			stop()
			return nil, err
		}
		logger.Info("simulated runtime listening", "addr", addr)
		return &remote{mode: "sim", url: "http://" + addr, client: client, stop: stop}, nil
	case modeOpenAI:
		return &remote{mode: "black-box", url: cfg.Endpoint, client: client}, nil
	}
	return nil, fmt.Errorf("--runtime %q is not available", cfg.Runtime)
}
