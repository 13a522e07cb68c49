package agent

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/ruckus/ruckus/agentd/sim"
	"github.com/ruckus/ruckus/app/valid"
)

// simUsage is agentd sim's help, short enough to include in agentd's.
const simUsage = `agentd sim serves the simulated OpenAI-compatible runtime on its own, for
demos and for load-testing Ruckus or any OpenAI client.

Usage:
  agentd sim [--listen 127.0.0.1:8000] [--dialect openai|anthropic] [--config FILE.yaml] [--sim-… flags]

It prints the address it listens on and serves POST /v1/chat/completions,
POST /v1/completions (or, with --dialect anthropic, Anthropic's Messages
API at POST /v1/messages), GET /v1/models and GET /health until SIGINT or
SIGTERM. --config reads the sim: section of an agentd YAML file, or a file
of those keys alone (ttft: lognormal:150ms,0.5, fault_429: 0.01, …);
flags override the file. Distributions: const:20ms, uniform:10ms,40ms,
normal:200,50, lognormal:150ms,0.5, exp:20ms.
`

// simCommand runs agentd sim; it returns the process's exit code.
func simCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentd sim", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported below, help on stdout
	listen := fs.String("listen", "127.0.0.1:8000", "address to serve on (port 0 picks a free one)")
	configFile := fs.String("config", "", "YAML file with the sim settings; flags override it")
	dialect := fs.String("dialect", sim.DialectOpenAI, "the API to serve: openai (chat completions, completions) or anthropic (the Messages API)")
	cfg := sim.DefaultConfig()
	cfg.RegisterFlags(fs)
	fail := func(err error) int {
		fmt.Fprintf(stderr, "agentd sim: %v\n(agentd sim --help lists the flags)\n", err)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, simUsage, "\nFlags:\n")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		return fail(err)
	}
	if fs.NArg() > 0 {
		return fail(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if *configFile != "" {
		// The file is read after the flags so that --config may come
		// anywhere; the flags given are then applied over it.
		fromFile := sim.DefaultConfig()
		if err := readSimConfig(*configFile, &fromFile); err != nil {
			return fail(fmt.Errorf("--config %s: %w", *configFile, err))
		}
		over := flag.NewFlagSet("agentd sim", flag.ContinueOnError)
		over.SetOutput(io.Discard)
		fromFile.RegisterFlags(over)
		var err error
		fs.Visit(func(f *flag.Flag) {
			if err == nil && over.Lookup(f.Name) != nil {
				err = over.Set(f.Name, f.Value.String())
			}
		})
		if err != nil {
			return fail(err)
		}
		cfg = fromFile
	}
	if *dialect != sim.DialectOpenAI || cfg.Dialect == "" {
		cfg.Dialect = *dialect
	}
	if err := cfg.Validate(); err != nil {
		return fail(err)
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	err := sim.ListenAndServe(ctx, *listen, cfg, logger, func(addr string) {
		fmt.Fprintf(stdout, "agentd sim: simulated runtime (%s API) serving on http://%s\n", cfg.Dialect, addr)
	})
	if err != nil {
		fmt.Fprintln(stderr, "agentd sim:", err)
		return 1
	}
	return 0
}

// readSimConfig reads path into cfg: the sim: section of an agentd YAML
// file (its other keys are left to agentd run), or a file of sim keys
// alone. Unknown sim keys are errors.
func readSimConfig(path string, cfg *sim.Config) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return err
	}
	if len(doc.Content) == 0 {
		return nil // empty file
	}
	section := false
	if root := doc.Content[0]; root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			section = section || root.Content[i].Value == "sim"
		}
	}
	var errs valid.Errors
	if section {
		file := struct {
			Sim   *sim.Config    `yaml:"sim"`
			Other map[string]any `yaml:",inline"`
		}{Sim: cfg}
		errs = valid.DecodeYAML(b, &file)
	} else {
		errs = valid.DecodeYAML(b, cfg)
	}
	if errs != nil {
		return errs
	}
	return nil
}
