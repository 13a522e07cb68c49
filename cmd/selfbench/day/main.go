// Command day is a day in production, compressed (`make bench-day`): on a
// private PostgreSQL cluster of its own it starts the server, PgBouncer,
// agents (some direct, some pooled, on the simulated runtime, a few
// presenting GPUs with --sim-gpu), a webhook receiver that checks every
// signature, a scraper of the server's and an agent's /metrics every
// second, and simulated users (English and German browser sessions with
// CSRF, and API tokens) doing what users do. Meanwhile it kills and starts
// agents, restarts the server twice and PostgreSQL once, takes a backup
// under load, and lets one malicious agent repeat the known attacks. At
// the end it restores the backup into a fresh database, checks what must
// hold and prints a table (docs/self-benchmarks.md#bench-day-a-day-in-production).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

type options struct {
	ruckus, agentd string
	duration       time.Duration
	users          int
	agents         int
	keep           bool
}

func main() {
	var o options
	short := flag.Bool("short", false, "about 3 minutes with fewer users and agents (CI)")
	flag.StringVar(&o.ruckus, "ruckus", "bin/ruckus", "the ruckus binary (make build)")
	flag.StringVar(&o.agentd, "agentd", "bin/agentd", "the agentd binary (make build)")
	flag.DurationVar(&o.duration, "duration", 20*time.Minute, "how long the users work (faults are spread over it)")
	flag.IntVar(&o.users, "users", 30, "simulated users")
	flag.IntVar(&o.agents, "agents", 20, "honest agentd processes")
	flag.BoolVar(&o.keep, "keep", false, "keep the cluster's directory and the logs")
	flag.Parse()
	if *short {
		o = shortOptions(o)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := run(ctx, o, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-day:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// shortOptions is --short: the CI's few minutes, with every fault still
// in them. Flags given explicitly keep their values.
func shortOptions(o options) options {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["duration"] {
		o.duration = 2 * time.Minute
	}
	if !set["users"] {
		o.users = 10
	}
	if !set["agents"] {
		o.agents = 8
	}
	return o
}

// run is the whole day; ok says whether every check held.
func run(ctx context.Context, o options, out io.Writer) (bool, error) {
	for _, b := range []string{o.ruckus, o.agentd} {
		if _, err := os.Stat(b); err != nil {
			return false, fmt.Errorf("%w (make build makes it)", err)
		}
	}
	if o.agents < 4 || o.users < 2 {
		return false, fmt.Errorf("want at least 4 agents and 2 users")
	}
	d, err := newDay(ctx, o, out)
	if err != nil {
		return false, err
	}
	defer d.close()
	if err := d.setUp(ctx); err != nil {
		return false, err
	}
	fmt.Fprintf(out, "day: %d users, %d agents (+1 malicious), %v of work\n", o.users, o.agents, o.duration)
	if err := d.work(ctx); err != nil {
		return false, err
	}
	return d.report(ctx)
}
