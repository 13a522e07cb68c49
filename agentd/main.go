// Command agentd runs on a GPU node: it detects the machine's hardware,
// registers with Ruckus through PostgreSQL, heartbeats, and works the
// benchmark runs of the queues it can serve. Its body is package agent;
// the packages beside it are the parts agent assembles (gpu, launch,
// load, node, openai, promscrape, report, sim).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/ruckus/ruckus/agentd/agent"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := agent.Run(ctx, version, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
