package benchkit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ruckus/ruckus/app/devdb"
)

// Log keeps a process's output for error messages; safe for concurrent
// writes. It holds the last 32 to 64 KiB.
type Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// logKeep is how much of a long log stays when it outgrows twice that.
const logKeep = 32 << 10

// Write keeps the last 64 KiB at most.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 2*logKeep {
		keep := append([]byte{}, l.b.Bytes()[l.b.Len()-logKeep:]...)
		l.b.Reset()
		l.b.Write(keep)
	}
	return l.b.Write(p)
}

// String is what the log holds.
func (l *Log) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// Spec says how to start a child process.
type Spec struct {
	Name string   // for messages
	Argv []string // the program and its arguments
	// Env is added to this process's environment.
	Env []string
	// OwnGroup starts it in a process group of its own, so that the
	// terminal's Ctrl-C reaches only the benchmark, which stops its
	// children in order.
	OwnGroup bool
	// Stderr, when set, also gets what the process writes to stderr.
	Stderr io.Writer
}

// Proc is a running child process whose output (stdout and stderr) is
// kept in Log.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	Log  *Log
	done chan struct{}
	err  error
}

// Start starts the process described by s.
func Start(s Spec) (*Proc, error) {
	if len(s.Argv) == 0 {
		return nil, fmt.Errorf("start %s: no program", s.Name)
	}
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	if s.Env != nil {
		cmd.Env = append(os.Environ(), s.Env...)
	}
	if s.OwnGroup {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	p := &Proc{Name: s.Name, Cmd: cmd, Log: &Log{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Log, p.Log
	if s.Stderr != nil {
		cmd.Stderr = io.MultiWriter(p.Log, s.Stderr)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Name, err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// Pid is the process's id.
func (p *Proc) Pid() int { return p.Cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err is how the process exited; valid once Done is closed.
func (p *Proc) Err() error { return p.err }

// Exited says whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Tail is the last n lines of the process's output.
func (p *Proc) Tail(n int) string { return devdb.Tail(p.Log.String(), n) }

// ExitError says that the process exited, how, and the end of its output.
func (p *Proc) ExitError() error {
	return fmt.Errorf("%s exited: %v\n%s", p.Name, p.err, p.Tail(20))
}

// Signal sends sig to the process.
func (p *Proc) Signal(sig os.Signal) { _ = p.Cmd.Process.Signal(sig) }

// Kill kills the process and waits for it.
func (p *Proc) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.done
}

// Stop sends SIGTERM and waits for the process to exit; after grace it
// kills it and says so.
func (p *Proc) Stop(grace time.Duration) error {
	p.Signal(syscall.SIGTERM)
	return p.waitOrKill(time.After(grace), grace)
}

func (p *Proc) waitOrKill(deadline <-chan time.Time, grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	case <-deadline:
	}
	p.Kill()
	return fmt.Errorf("%s did not stop within %s of SIGTERM; killed", p.Name, grace)
}

// StopAll sends SIGTERM to every process (nil ones are skipped), waits up
// to grace for all of them together, and kills those still running.
func StopAll(ps []*Proc, grace time.Duration) {
	for _, p := range ps {
		if p != nil {
			p.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.After(grace)
	for _, p := range ps {
		if p != nil {
			_ = p.waitOrKill(deadline, grace)
		}
	}
}

// WaitFor calls ready every interval until it says yes, and fails when it
// errs, when ctx ends, when p (if not nil) exits, or after limit.
func WaitFor(ctx context.Context, p *Proc, limit, interval time.Duration, what string, ready func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for {
		ok, err := ready()
		if err != nil || ok {
			return err
		}
		if p != nil && p.Exited() {
			return p.ExitError()
		}
		if time.Now().After(deadline) {
			if p != nil {
				return fmt.Errorf("timed out after %v waiting for %s\n%s", limit, what, p.Tail(20))
			}
			return fmt.Errorf("timed out after %v waiting for %s", limit, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// WaitOutput waits up to limit for the process to print a line holding
// marker, and returns what follows the marker on that line.
func (p *Proc) WaitOutput(ctx context.Context, marker string, limit time.Duration) (string, error) {
	var rest string
	err := WaitFor(ctx, p, limit, 10*time.Millisecond, fmt.Sprintf("%s to print %q", p.Name, marker), func() (bool, error) {
		for line := range strings.Lines(p.Log.String()) {
			if _, after, ok := strings.Cut(line, marker); ok && strings.HasSuffix(line, "\n") {
				rest = strings.TrimSpace(after)
				return true, nil
			}
		}
		return false, nil
	})
	return rest, err
}

// StatusBytes reads a size field of /proc/PID/status (VmRSS, VmHWM, …) in
// bytes.
func StatusBytes(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err != nil {
				return 0, fmt.Errorf("/proc/%d/status %s: %w", pid, field, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
