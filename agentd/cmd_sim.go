package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/agentd/sim"
)

// simCommand serves the simulated runtime on its own, for load-testing
// Ruckus or trying agentd's openai mode against something.
func simCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := sim.DefaultConfig()
	if path := configPath(args); path != "" {
		var file struct {
			Sim *sim.Config `yaml:"sim"`
		}
		file.Sim = &cfg
		b, err := os.ReadFile(path)
		if err == nil {
			dec := yaml.NewDecoder(strings.NewReader(string(b)))
			if err = dec.Decode(&file); errors.Is(err, io.EOF) {
				err = nil
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "agentd sim: --config %s: %v\n", path, err)
			return 2
		}
	}
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.String("config", "", "YAML file whose sim: section sets these (flags win)")
	listen := fs.String("listen", "127.0.0.1:8000", "address to serve the OpenAI-compatible API on")
	cfg.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	addr, done, err := sim.Listen(ctx, *listen, cfg, logger)
	if err != nil {
		fmt.Fprintln(stderr, "agentd sim:", err)
		return 2
	}
	fmt.Fprintf(stdout, "simulated runtime on http://%s (POST /v1/chat/completions, /v1/completions)\n", addr)
	if err := <-done; err != nil {
		fmt.Fprintln(stderr, "agentd sim:", err)
		return 1
	}
	return 0
}
