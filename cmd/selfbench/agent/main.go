// Command agent is agentd's own benchmark (`make bench-agent`). It starts
// `agentd sim` as a separate process on loopback and drives it with
// agentd's load generator and streaming client (agentd/load driving
// agentd/openai, wired as a run wires them) at several concurrencies,
// with zero injected latency and short answers, so that what limits the
// figures is the client's own cost per streamed token. Beside each figure
// it measures a baseline in the same run: a minimal Go loop that sends the
// same requests to the same sim at the same concurrency and only counts
// the bytes it reads.
//
// Each load generator runs in a child process of its own (this program
// re-executed), so that its CPU time can be read with getrusage and it can
// be pinned to one core with taskset, the sim to another. A second phase
// injects constant latencies into the sim (TTFT 20 ms, ITL 5 ms) at a low
// concurrency and reports how far agentd's TTFT and ITL are from them.
//
// --profile DIR writes a CPU profile of each agentd child there, for
// `go tool pprof -top`.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ruckus/ruckus/cmd/selfbench/internal/benchkit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var o options
	var conc string
	child := flag.String("child", "", "internal: run one load generator from this JSON spec and print its result")
	flag.StringVar(&o.agentd, "agentd", "bin/agentd", "the agentd binary whose sim is driven")
	flag.StringVar(&conc, "concurrency", "1,64,512", "comma-separated concurrencies of the throughput phase")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "measured window of each throughput step, after warm-up")
	flag.IntVar(&o.tokens, "output-tokens", 16, "tokens in every answer of the sim")
	flag.IntVar(&o.timingConc, "timing-concurrency", 16, "concurrency of the timing phase (low enough that the machine stays under 50 % CPU)")
	flag.DurationVar(&o.timingDuration, "timing-duration", 5*time.Second, "measured window of the timing phase")
	flag.DurationVar(&o.ttft, "ttft", 20*time.Millisecond, "TTFT the sim injects in the timing phase (a constant)")
	flag.DurationVar(&o.itl, "itl", 5*time.Millisecond, "ITL the sim injects in the timing phase (a constant)")
	flag.StringVar(&o.clientCPU, "client-cpu", "0", "CPU the load generators are pinned to")
	flag.StringVar(&o.simCPU, "sim-cpu", "1", "CPU the sim is pinned to")
	flag.BoolVar(&o.noPin, "no-pin", false, "do not pin the processes with taskset")
	flag.StringVar(&o.profileDir, "profile", "", "directory to write a CPU profile of each agentd load generator to")
	flag.Parse()

	if *child != "" {
		if err := childMain(ctx, *child); err != nil {
			fmt.Fprintln(os.Stderr, "bench-agent child:", err)
			os.Exit(1)
		}
		return
	}
	var err error
	if o.concurrency, err = parseConcurrencies(conc); err == nil {
		err = run(ctx, o, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-agent:", err)
		os.Exit(1)
	}
}

// options are the benchmark's settings.
type options struct {
	agentd            string
	concurrency       []int
	duration          time.Duration
	tokens            int
	timingConc        int
	timingDuration    time.Duration
	ttft, itl         time.Duration
	clientCPU, simCPU string
	noPin             bool
	profileDir        string
	clientPin, simPin []string // taskset prefixes, empty when not pinned
	pinNote           string
	self              string
	cpus              int
}

// Targets.
const (
	targetCPURatio = 2.0                  // client CPU per token ≤ 2× the baseline's
	targetTTFTP99  = time.Millisecond     // TTFT error p99
	targetRPS      = 2000.0               // requests/s, agentd pinned to one core
	maxBusyTiming  = 0.5                  // the timing phase keeps the machine under half its CPU
	stepTimeout    = 2 * time.Minute      // one child, start to end
	simStartWait   = 15 * time.Second     // for the sim to say where it listens
	simStopWait    = 10 * time.Second     // for it to stop after SIGTERM
	simBatch       = "1000000"            // no slowdown with load: the sim answers at full speed
	warmupMin      = 200                  // warm-up requests, at least
	warmupPerSlot  = 4                    // and this many per concurrency slot
	simPortPattern = "serving on http://" // the line agentd sim prints when it listens
)

func parseConcurrencies(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 4096 {
			return nil, fmt.Errorf("--concurrency %q: want numbers from 1 to 4096 separated by commas", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// step is one concurrency's pair of measurements.
type step struct {
	conc             int
	agentd, baseline childResult
}

func run(ctx context.Context, o options, w io.Writer) error {
	if _, err := os.Stat(o.agentd); err != nil {
		return fmt.Errorf("--agentd: %w (make build makes it)", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	o.self, o.cpus = self, runtime.NumCPU()
	switch _, err := exec.LookPath("taskset"); {
	case o.noPin:
		o.pinNote = "not pinned (--no-pin)"
	case err != nil:
		o.pinNote = "not pinned: taskset is not installed (util-linux)"
	case o.cpus < 2:
		o.pinNote = "not pinned: this process may use only one CPU"
	default:
		o.clientPin, o.simPin = []string{"taskset", "-c", o.clientCPU}, []string{"taskset", "-c", o.simCPU}
		o.pinNote = fmt.Sprintf("load generators pinned to CPU %s (taskset -c %s), sim to CPU %s", o.clientCPU, o.clientCPU, o.simCPU)
	}
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "bench-agent: agentd's load generator (agentd/load + agentd/openai) against agentd sim on loopback\n")
	fmt.Fprintf(w, "%s; %d CPUs; %s measured per step after warm-up; %d-token answers, one token per event\n\n",
		o.pinNote, o.cpus, o.duration, o.tokens)

	// Throughput: zero latency, so the client's cost per token is what
	// limits it.
	sim, err := startSim(ctx, o, "--sim-ttft", "const:0", "--sim-itl", "const:0",
		"--sim-output-tokens", fmt.Sprintf("const:%d", o.tokens), "--sim-batch", simBatch)
	if err != nil {
		return err
	}
	var steps []step
	for _, c := range o.concurrency {
		s := step{conc: c}
		spec := childSpec{URL: sim.url, Concurrency: c, Duration: o.duration, Warmup: max(warmupMin, warmupPerSlot*c),
			OutputTokens: o.tokens, SimPID: sim.Pid()}
		a, b := spec, spec
		a.Mode, b.Mode = modeAgentd, modeBaseline
		if o.profileDir != "" {
			a.CPUProfile = filepath.Join(o.profileDir, fmt.Sprintf("agentd-c%d.pprof", c))
		}
		if s.agentd, err = runChild(ctx, o, a); err == nil {
			s.baseline, err = runChild(ctx, o, b)
		}
		if err != nil {
			_ = sim.stop()
			return fmt.Errorf("concurrency %d: %w", c, err)
		}
		printStep(w, o, s)
		steps = append(steps, s)
	}
	if err := sim.stop(); err != nil {
		return err
	}

	// Timing: constant injected latencies, few requests in flight.
	sim, err = startSim(ctx, o, "--sim-ttft", "const:"+o.ttft.String(), "--sim-itl", "const:"+o.itl.String(),
		"--sim-output-tokens", fmt.Sprintf("const:%d", o.tokens), "--sim-batch", simBatch)
	if err != nil {
		return err
	}
	spec := childSpec{Mode: modeAgentd, URL: sim.url, Concurrency: o.timingConc, Duration: o.timingDuration,
		Warmup: o.timingConc, OutputTokens: o.tokens, TTFT: o.ttft, ITL: o.itl, SimPID: sim.Pid()}
	t, err := runChild(ctx, o, spec)
	var ref childResult
	if err == nil {
		spec.Mode = modeBaseline
		ref, err = runChild(ctx, o, spec)
	}
	if stopErr := sim.stop(); err == nil {
		err = stopErr
	}
	if err != nil {
		return fmt.Errorf("timing phase: %w", err)
	}
	printTiming(w, o, t, ref)
	printTargets(w, steps, t)
	if o.profileDir != "" {
		fmt.Fprintf(w, "\nCPU profiles of the agentd load generator: %s (go tool pprof -top FILE)\n", filepath.Join(o.profileDir, "agentd-c*.pprof"))
	}
	for _, s := range steps {
		if s.agentd.Errors > 0 || s.baseline.Errors > 0 {
			return fmt.Errorf("requests failed at concurrency %d: the figures above are not valid", s.conc)
		}
	}
	if t.Errors > 0 || ref.Errors > 0 {
		return errors.New("requests failed in the timing phase: its figures are not valid")
	}
	return nil
}

// simProc is a running `agentd sim`.
type simProc struct {
	*benchkit.Proc
	url string
}

// startSim starts agentd sim on a free loopback port, pinned when asked,
// and waits for it to say where it listens.
func startSim(ctx context.Context, o options, args ...string) (*simProc, error) {
	argv := append(slices.Clone(o.simPin), o.agentd, "sim", "--listen", "127.0.0.1:0")
	argv = append(argv, args...)
	p, err := benchkit.Start(benchkit.Spec{Name: "agentd sim", Argv: argv, Stderr: os.Stderr})
	if err != nil {
		return nil, err
	}
	addr, err := p.WaitOutput(ctx, simPortPattern, simStartWait)
	if err != nil {
		p.Kill()
		return nil, err
	}
	return &simProc{Proc: p, url: "http://" + addr}, nil
}

// stop ends the sim with SIGTERM (it finishes what is in flight), killing
// it if it does not stop in time.
func (s *simProc) stop() error { return s.Stop(simStopWait) }

// runChild runs one load generator in a process of its own, pinned when
// asked, and reads back what it measured.
func runChild(ctx context.Context, o options, spec childSpec) (childResult, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return childResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	argv := append(slices.Clone(o.clientPin), o.self, "--child", string(b))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return childResult{}, fmt.Errorf("%s load generator: %w", spec.Mode, err)
	}
	var res childResult
	if err := json.Unmarshal(out, &res); err != nil {
		return res, fmt.Errorf("%s load generator's result %q: %w", spec.Mode, out, err)
	}
	return res, nil
}

// Figures derived from a child's result.
func (r childResult) rps() float64 { return per(float64(r.Requests), r.Window) }
func (r childResult) tps() float64 { return per(float64(r.Tokens), r.Window) }

// cpuPerToken is the client's CPU time per streamed token, in µs.
func (r childResult) cpuPerToken() float64 {
	if r.Tokens == 0 {
		return 0
	}
	return float64(r.CPU) / float64(time.Microsecond) / float64(r.Tokens)
}

// share is CPU time as a percentage of one core over the window.
func share(cpu, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return 100 * float64(cpu) / float64(wall)
}

func per(n float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return n / d.Seconds()
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func printStep(w io.Writer, o options, s step) {
	a, b := s.agentd, s.baseline
	fmt.Fprintf(w, "concurrency %d\n", s.conc)
	fmt.Fprintf(w, "  %-24s %12s %12s %16s   %s\n", "", "agentd", "baseline", "agentd/baseline", "target")
	fmt.Fprintf(w, "  %-24s %12.0f %12.0f %15.2f×\n", "output tokens/s", a.tps(), b.tps(), ratio(a.tps(), b.tps()))
	fmt.Fprintf(w, "  %-24s %12.0f %12.0f %15.2f×   ≥ %.0f/s on one core: %s\n", "requests/s", a.rps(), b.rps(), ratio(a.rps(), b.rps()),
		targetRPS, verdict(a.rps() >= targetRPS))
	cr := ratio(a.cpuPerToken(), b.cpuPerToken())
	fmt.Fprintf(w, "  %-24s %12.2f %12.2f %15.2f×   ≤ %.0f× baseline: %s\n", "client CPU µs/token", a.cpuPerToken(), b.cpuPerToken(), cr,
		targetCPURatio, verdict(cr > 0 && cr <= targetCPURatio))
	fmt.Fprintf(w, "  %-24s %12.0f %12.0f\n", "client CPU % of a core", share(a.CPU, a.Wall), share(b.CPU, b.Wall))
	fmt.Fprintf(w, "  %-24s %12.0f %12.0f\n", "sim CPU % of a core", share(a.SimCPU, a.Wall), share(b.SimCPU, b.Wall))
	fmt.Fprintf(w, "  %-24s %12.0f %12.0f\n", "machine busy %", share(a.Busy, a.Wall)/float64(o.cpus), share(b.Busy, b.Wall)/float64(o.cpus))
	fmt.Fprintf(w, "  %-24s %12s %12s\n", "requests (errors)", fmt.Sprintf("%d (%d)", a.Requests, a.Errors), fmt.Sprintf("%d (%d)", b.Requests, b.Errors))
	for _, r := range []struct {
		name string
		r    childResult
	}{{"agentd", a}, {"baseline", b}} {
		if r.r.FirstError != "" {
			fmt.Fprintf(w, "  %s's first error: %s\n", r.name, r.r.FirstError)
		}
	}
	fmt.Fprintln(w)
}

func ms(us float64) string { return fmt.Sprintf("%+.3f ms", us/1000) }

func printTiming(w io.Writer, o options, t, ref childResult) {
	busy := share(t.Busy, t.Wall) / float64(o.cpus)
	fmt.Fprintf(w, "timing error: measured − injected (sim TTFT const:%s, ITL const:%s, %d tokens), concurrency %d for %s\n",
		o.ttft, o.itl, o.tokens, o.timingConc, o.timingDuration)
	fmt.Fprintf(w, "  agentd: %.0f requests/s; client CPU %.0f %% of a core, sim %.0f %%, machine %.0f %% busy (under %.0f %%: %s)\n",
		t.rps(), share(t.CPU, t.Wall), share(t.SimCPU, t.Wall), busy, 100*maxBusyTiming, verdict(busy < 100*maxBusyTiming))
	fmt.Fprintf(w, "  reference reader (the baseline loop noting when each read with content returns; what the sim and the\n")
	fmt.Fprintf(w, "  machine add, which no client can take away): machine %.0f %% busy\n", share(ref.Busy, ref.Wall)/float64(o.cpus))
	fmt.Fprintf(w, "  %-22s %7s %12s %12s %12s   %s\n", "", "n", "median", "p99", "max", "target")
	row := func(name string, e *errStats, target bool) {
		if e == nil {
			return
		}
		tgt := ""
		if target {
			tgt = fmt.Sprintf("p99 ≤ %s: %s", targetTTFTP99, verdict(e.N > 0 && e.P99 <= float64(targetTTFTP99/time.Microsecond)))
		}
		fmt.Fprintf(w, "  %-22s %7d %12s %12s %12s   %s\n", name, e.N, ms(e.P50), ms(e.P99), ms(e.Max), tgt)
	}
	row("TTFT error, agentd", t.TTFTErr, true)
	row("TTFT error, reference", ref.TTFTErr, false)
	row("ITL error, agentd", t.ITLErr, false)
	row("ITL error, reference", ref.ITLErr, false)
	for _, r := range []childResult{t, ref} {
		if r.FirstError != "" {
			fmt.Fprintf(w, "  first error (%d in all): %s\n", r.Errors, r.FirstError)
		}
	}
	fmt.Fprintln(w)
}

func printTargets(w io.Writer, steps []step, t childResult) {
	var cpuMet, cpuMissed, rpsMet, rpsMissed []string
	for _, s := range steps {
		c := strconv.Itoa(s.conc)
		if r := ratio(s.agentd.cpuPerToken(), s.baseline.cpuPerToken()); r > 0 && r <= targetCPURatio {
			cpuMet = append(cpuMet, c)
		} else {
			cpuMissed = append(cpuMissed, c)
		}
		if s.agentd.rps() >= targetRPS {
			rpsMet = append(rpsMet, c)
		} else {
			rpsMissed = append(rpsMissed, c)
		}
	}
	at := func(met, missed []string) string {
		switch {
		case len(missed) == 0:
			return "met at every concurrency"
		case len(met) == 0:
			return "MISSED at every concurrency"
		}
		return fmt.Sprintf("met at concurrency %s, MISSED at %s", strings.Join(met, ", "), strings.Join(missed, ", "))
	}
	fmt.Fprintln(w, "targets")
	fmt.Fprintf(w, "  client CPU per token ≤ %.0f× the baseline: %s\n", targetCPURatio, at(cpuMet, cpuMissed))
	ttft := "not measured"
	if e := t.TTFTErr; e != nil && e.N > 0 {
		ttft = fmt.Sprintf("%s (p99 %s)", verdict(e.P99 <= float64(targetTTFTP99/time.Microsecond)), ms(e.P99))
	}
	fmt.Fprintf(w, "  TTFT error p99 ≤ %s: %s\n", targetTTFTP99, ttft)
	fmt.Fprintf(w, "  ≥ %.0f requests/s with agentd's load generator on one core: %s\n", targetRPS, at(rpsMet, rpsMissed))
}
