package benchkit

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// A long log keeps its end, within the cap.
func TestLogKeepsItsEnd(t *testing.T) {
	t.Parallel()
	var l Log
	line := strings.Repeat("x", 99) + "\n"
	for i := range 3000 {
		if i == 2999 {
			line = "the last line\n"
		}
		if _, err := l.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	got := l.String()
	if n := len(got); n > 2*logKeep+100 || n < logKeep {
		t.Errorf("log holds %d bytes, want between %d and %d", n, logKeep, 2*logKeep+100)
	}
	if !strings.HasSuffix(got, "the last line\n") {
		t.Errorf("log does not end with the last line: %q", got[len(got)-40:])
	}
}

// A child's output is kept, a marker in it is found, and its exit is
// reported with the end of its output.
func TestProcOutputAndExit(t *testing.T) {
	t.Parallel()
	p, err := Start(Spec{Name: "child", Argv: []string{"sh", "-c", `echo "serving on http://127.0.0.1:9"; echo oops >&2; exec sleep 60`},
		Env: []string{"BENCHKIT_TEST=1"}})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := p.WaitOutput(context.Background(), "serving on http://", 10*time.Second)
	if err != nil || addr != "127.0.0.1:9" {
		t.Fatalf("WaitOutput = %q, %v; want 127.0.0.1:9", addr, err)
	}
	if p.Exited() {
		t.Fatal("exited while sleeping")
	}
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !p.Exited() || p.Err() == nil {
		t.Fatalf("after Stop: exited %v, err %v; want a signalled exit", p.Exited(), p.Err())
	}
	msg := p.ExitError().Error()
	if !strings.HasPrefix(msg, "child exited: ") || !strings.Contains(msg, "oops") {
		t.Errorf("ExitError = %q; want the name and the output's end", msg)
	}
}

// Waiting for something that never comes fails with the timeout; waiting
// on a process that exits fails at once with its exit.
func TestWaitForFailures(t *testing.T) {
	t.Parallel()
	never := func() (bool, error) { return false, nil }
	err := WaitFor(context.Background(), nil, 50*time.Millisecond, 10*time.Millisecond, "nothing", never)
	if err == nil || !strings.Contains(err.Error(), "timed out after 50ms waiting for nothing") {
		t.Errorf("WaitFor = %v; want a timeout naming what it waited for", err)
	}
	p, err := Start(Spec{Name: "quitter", Argv: []string{"sh", "-c", "echo bye; exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	err = WaitFor(context.Background(), p, time.Minute, 10*time.Millisecond, "never", never)
	if err == nil || !strings.Contains(err.Error(), "quitter exited: exit status 3") || !strings.Contains(err.Error(), "bye") {
		t.Errorf("WaitFor = %v; want the exit and the output", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WaitFor(ctx, nil, time.Minute, 10*time.Millisecond, "never", never); err != context.Canceled {
		t.Errorf("WaitFor with an ended context = %v", err)
	}
}

// A process that ignores SIGTERM is killed after the grace period, and
// Stop says so.
func TestStopKillsAfterGrace(t *testing.T) {
	t.Parallel()
	p, err := Start(Spec{Name: "stubborn", Argv: []string{"sh", "-c", `trap "" TERM; echo ready; while :; do sleep 1; done`}, OwnGroup: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.WaitOutput(context.Background(), "ready", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	err = p.Stop(200 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "stubborn did not stop within 200ms of SIGTERM; killed") {
		t.Errorf("Stop = %v; want the kill reported", err)
	}
	if !p.Exited() {
		t.Error("still running after Stop")
	}
	q, err := Start(Spec{Name: "polite", Argv: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	StopAll([]*Proc{q, nil}, 10*time.Second)
	if !q.Exited() {
		t.Error("StopAll left a process running")
	}
}

// StatusBytes reads this process's resident memory: more than nothing,
// and a field that is not there is an error.
func TestStatusBytes(t *testing.T) {
	t.Parallel()
	rss, err := StatusBytes(os.Getpid(), "VmRSS")
	if err != nil || rss < 1<<20 {
		t.Errorf("VmRSS = %d, %v; want at least 1 MiB", rss, err)
	}
	if _, err := StatusBytes(os.Getpid(), "NoSuchField"); err == nil {
		t.Error("a missing field gave no error")
	}
}
