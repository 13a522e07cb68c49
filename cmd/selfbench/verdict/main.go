// Command verdict measures how often Ruckus's conclusions call noise a
// difference and how often they find a real one (`make bench-verdict`),
// with benchmarks run as users run them
// (docs/self-benchmarks.md#bench-verdict-the-tests-behind-every-conclusion).
//
// It starts the real server (`ruckus serve`) and one `agentd run
// --runtime sim` per hardware profile on the cluster DATABASE_URL names
// (run it through `ruckus dev-db exec`), sets everything up through the
// admin CLI and the HTTP API (user, token, agents, models, prices, a
// dataset with references), launches each benchmark through `POST
// /api/v1/benchmarks` with its targets in the manifest's order, waits for
// it to finish and reads its JSON verdict (`GET
// /api/v1/benchmarks/{id}/verdict`), its runs' regression flags (`GET
// /api/v1/runs/{id}`) and, for the rescore rows, `POST
// /api/v1/runs/{id}/score` and `GET /api/v1/compare`. It imports nothing
// of the conclusions' code: what it counts is what a user reads.
//
// Drift between runs: the sims drift (`--sim-drift`, a new seeded latency
// level every --drift-period, docs/simulated-runtime.md#drift); an agentd
// without that flag (an older build) is restarted before each benchmark
// with its latencies scaled by a level drawn likewise. A CPU burner in
// this process is switched on or off at random every --burn-period.
// Heavy tails: the sims' TTFT is lognormal with each σ of --sigmas in
// turn (0.5 and 1.2 by default); n runs from --min-requests to
// --max-requests; closed loops (concurrency 4) and an open loop (poisson
// below saturation).
//
// It is a measurement: it exits 0 whether or not a target is met, and
// non-zero only when something failed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ruckus/ruckus/cmd/selfbench/internal/benchkit"
)

// options are the benchmark's settings.
type options struct {
	ruckus, agentd string
	// Pairs of each scenario.
	aa, ab, price, smallN, rescore, repeats, open int
	minN, maxN, smallNN, concurrency              int
	sigmas                                        []float64
	openRate                                      float64
	simDrift                                      float64
	restartDrift                                  bool
	driftPeriod                                   time.Duration
	burn                                          float64
	burnPeriod                                    time.Duration
	seed                                          uint64
	timeout                                       time.Duration
	verbose                                       bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o, err := parseFlags(flag.CommandLine, os.Args[1:])
	var dbURL string
	if err == nil {
		dbURL, err = benchkit.DatabaseURL()
	}
	if err == nil {
		err = run(ctx, o, dbURL, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-verdict:", err)
		os.Exit(1)
	}
}

// parseFlags reads the options; --quick sets every count small enough
// for a test.
func parseFlags(fs *flag.FlagSet, args []string) (options, error) {
	var o options
	var sigmas string
	var quick bool
	fs.StringVar(&o.ruckus, "ruckus", "bin/ruckus", "the ruckus binary (make build)")
	fs.StringVar(&o.agentd, "agentd", "bin/agentd", "the agentd binary (make build)")
	fs.IntVar(&o.aa, "aa", 40, "A/A benchmarks: two models of equal accuracy on one agent, n from --min-requests to --max-requests")
	fs.IntVar(&o.ab, "ab", 16, "A/B benchmarks of each planted speed-up (+10 % and +25 %), B's accuracy 0.70 against A's 0.60, n = --max-requests")
	fs.IntVar(&o.price, "price", 8, "price-only benchmarks: one model on two equally fast agents, one at twice the other's price")
	fs.IntVar(&o.smallN, "small-n", 6, "A/A benchmarks of --small-requests requests (p95 must say not tested)")
	fs.IntVar(&o.rescore, "rescore", 4, "A/A benchmarks whose first run is rescored (it must keep its place)")
	fs.IntVar(&o.repeats, "repeats", 4, "A/A benchmarks with repeats: 3 (repeats must never be flagged against each other)")
	fs.IntVar(&o.open, "open", 6, "open-loop benchmarks (poisson below saturation) of the +25 % pair")
	fs.IntVar(&o.minN, "min-requests", 30, "fewest requests of an A/A run")
	fs.IntVar(&o.maxN, "max-requests", 200, "most requests of an A/A run, and every A/B run's")
	fs.IntVar(&o.smallNN, "small-requests", 30, "requests of a small-n run")
	fs.IntVar(&o.concurrency, "concurrency", 4, "requests in flight in a closed-loop run")
	fs.StringVar(&sigmas, "sigmas", "0.5,1.2", "the sims' TTFT lognormal σ, one phase each (agents restarted between)")
	fs.Float64Var(&o.openRate, "open-rate", 12, "the open loop's poisson rate, requests/s (below the sim's saturation)")
	fs.Float64Var(&o.simDrift, "sim-drift", 0.03, "between-run drift, σ of ln latency (agentd --sim-drift)")
	fs.BoolVar(&o.restartDrift, "restart-drift", false, "inject the drift by restarting each agent before each benchmark at a drawn latency level even when agentd has --sim-drift (as with an older agentd, to compare builds alike)")
	fs.DurationVar(&o.driftPeriod, "drift-period", 4*time.Second, "how long each drift level lasts (about one run)")
	fs.Float64Var(&o.burn, "burn", 0.3, "share of one core the CPU burner takes while on (0: no burner)")
	fs.DurationVar(&o.burnPeriod, "burn-period", 7*time.Second, "the burner is switched on or off at random this often")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the drift levels, the burner, the sizes and the sims")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "longest wait for one thing: an agent online, a benchmark finished and scored, its verdict, a rescoring")
	fs.BoolVar(&o.verbose, "v", false, "print every benchmark's claims")
	fs.BoolVar(&quick, "quick", false, "a few benchmarks of each kind, small n: a smoke test of the harness, not a measurement")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, s := range strings.Split(sigmas, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(v > 0 && v <= 3) {
			return o, fmt.Errorf("--sigmas: %q is not a σ from 0 to 3", s)
		}
		o.sigmas = append(o.sigmas, v)
	}
	if quick {
		o.aa, o.ab, o.price, o.smallN, o.rescore, o.repeats, o.open = 2, 1, 1, 1, 1, 1, 1
		o.minN, o.maxN, o.smallNN, o.sigmas = 20, 40, 20, []float64{1.2}
		o.burnPeriod, o.driftPeriod = time.Second, time.Second
	}
	if o.minN < 1 || o.maxN < o.minN || o.smallNN < 1 || o.concurrency < 1 || o.openRate <= 0 || o.simDrift < 0 || o.simDrift > 1 ||
		o.burn < 0 || o.burn > 1 || o.driftPeriod <= 0 || o.burnPeriod <= 0 {
		return o, errors.New("want 1 ≤ --min-requests ≤ --max-requests, --small-requests ≥ 1, --concurrency ≥ 1, --open-rate > 0, 0 ≤ --sim-drift ≤ 1, 0 ≤ --burn ≤ 1, positive periods")
	}
	return o, nil
}
