package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ruckus/ruckus/agentd/sim"
)

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	// A command name with spaces and a parenthesis, as /proc shows it.
	line := "4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 812 0 0 0 1234 56 0 0 20 0 9 0 100 0 0\n"
	got, err := parseProcStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if want := (1234 + 56) * clockTick; got != want {
		t.Fatalf("CPU time %v, want %v", got, want)
	}
	for _, bad := range []string{"", "4242 no parenthesis S 1", "1 (x) S 1 2 3", "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 12"} {
		if _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// This process's own line parses, and its CPU time does not go back.
	a, err := procCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3e7; i++ {
		_ = i * i
	}
	if b, err := procCPU(os.Getpid()); err != nil || b < a {
		t.Fatalf("CPU time went from %v to %v (%v)", a, b, err)
	}
}

func TestParseMachineStat(t *testing.T) {
	t.Parallel()
	got, err := parseMachineStat([]byte("cpu  100 5 20 900 30 1 2 3 0 0\ncpu0 50 0 10 450 15 0 1 1 0 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (100 + 5 + 20 + 1 + 2 + 3) * clockTick; got != want {
		t.Fatalf("busy %v, want %v (idle and iowait left out)", got, want)
	}
	if _, err := parseMachineStat([]byte("cpu0 1 2 3 4 5 6 7 8\n")); err == nil {
		t.Fatal("a file without the cpu line: no error")
	}
}

func TestParseConcurrencies(t *testing.T) {
	t.Parallel()
	got, err := parseConcurrencies("1, 64,512")
	if err != nil || len(got) != 3 || got[0] != 1 || got[1] != 64 || got[2] != 512 {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "1,,2", "x", "5000"} {
		if _, err := parseConcurrencies(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// startTestSim serves the simulated runtime in this process.
func startTestSim(t *testing.T, ttft, itl string, tokens string) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	for _, s := range []struct {
		d *sim.Dist
		v string
	}{{&cfg.TTFT, ttft}, {&cfg.ITL, itl}, {&cfg.OutputTokens, tokens}} {
		d, err := sim.ParseDist(s.v)
		if err != nil {
			t.Fatal(err)
		}
		*s.d = d
	}
	cfg.Batch = 1_000_000
	ctx, cancel := context.WithCancel(context.Background())
	addr, done, err := sim.Listen(ctx, "127.0.0.1:0", cfg, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + addr
}

// Both load generators stream whole answers and count what they got.
func TestLoadGenerators(t *testing.T) {
	t.Parallel()
	url := startTestSim(t, "const:0", "const:0", "const:16")
	spec := childSpec{URL: url, Concurrency: 4, Duration: 300 * time.Millisecond, Warmup: 8, OutputTokens: 16, SimPID: os.Getpid()}
	a, err := runAgentd(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := runBaseline(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]childResult{"agentd": a, "baseline": b} {
		if r.Requests == 0 || r.Errors != 0 || r.FirstError != "" {
			t.Errorf("%s: %d requests, %d errors (%s)", name, r.Requests, r.Errors, r.FirstError)
		}
		if r.Tokens != 16*int64(r.Requests) {
			t.Errorf("%s: %d tokens for %d requests of 16", name, r.Tokens, r.Requests)
		}
		if r.Window <= 0 || r.Wall < spec.Duration || r.CPU <= 0 {
			t.Errorf("%s: window %v, wall %v, CPU %v", name, r.Window, r.Wall, r.CPU)
		}
		if r.TTFTErr != nil {
			t.Errorf("%s: timing errors reported without injected latencies", name)
		}
	}
	if b.Bytes < int64(b.Requests)*16*50 {
		t.Errorf("baseline: %d bytes for %d streams of 16 events", b.Bytes, b.Requests)
	}
}

// The timing errors are measured − injected, per request for TTFT and
// per token for ITL.
func TestTimingErrors(t *testing.T) {
	t.Parallel()
	url := startTestSim(t, "const:20ms", "const:2ms", "const:4")
	spec := childSpec{URL: url, Concurrency: 2, Duration: 300 * time.Millisecond, Warmup: 2, OutputTokens: 4,
		TTFT: 20 * time.Millisecond, ITL: 2 * time.Millisecond, SimPID: os.Getpid()}
	r, err := runAgentd(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests == 0 || r.Errors != 0 {
		t.Fatalf("%d requests, %d errors (%s)", r.Requests, r.Errors, r.FirstError)
	}
	if r.TTFTErr == nil || r.ITLErr == nil {
		t.Fatal("no timing errors reported")
	}
	if r.TTFTErr.N != r.Requests || r.ITLErr.N != 3*r.Requests {
		t.Fatalf("%d TTFT and %d ITL samples for %d requests of 4 tokens", r.TTFTErr.N, r.ITLErr.N, r.Requests)
	}
	ref, err := runBaseline(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Requests == 0 || ref.Errors != 0 || ref.TTFTErr == nil || ref.ITLErr == nil ||
		ref.TTFTErr.N != ref.Requests || ref.ITLErr.N == 0 || ref.ITLErr.N > 3*ref.Requests {
		t.Fatalf("reference reader: %d requests, %d errors, TTFT %+v, ITL %+v", ref.Requests, ref.Errors, ref.TTFTErr, ref.ITLErr)
	}
	// The sim never answers early; the error is what it and the client
	// add, well under the injected values on any machine.
	for name, e := range map[string]*errStats{"TTFT": r.TTFTErr, "ITL": r.ITLErr, "reference TTFT": ref.TTFTErr} {
		if e.P50 < -100 || e.P50 > e.P99 || e.P99 > e.Max || e.P50 > 15_000 {
			t.Errorf("%s error median %v µs, p99 %v µs, max %v µs", name, e.P50, e.P99, e.Max)
		}
	}
}

func TestHasContent(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		`data: {"choices":[{"delta":{"role":"assistant","content":""}}]}`:                 false,
		`data: {"choices":[{"delta":{"content":" word"}}]}`:                               true,
		`data: {"choices":[{"delta":{"content":""}}]}` + "\n\n" + `data: {"content":"x"}`: true,
		`data: {"choices":[{"delta":{},"finish_reason":"stop"}]}`:                         false,
		`"content":"`: false,
	} {
		if got := hasContent([]byte(in)); got != want {
			t.Errorf("%s: %v, want %v", in, got, want)
		}
	}
}
