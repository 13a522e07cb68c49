package sandbox_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/sandbox"
)

// run executes program and logs how it ended.
func run(t *testing.T, r *sandbox.Runner, program string) sandbox.Result {
	t.Helper()
	res := r.Run(context.Background(), program)
	t.Logf("%s %s exit %d in %v; stderr: %q", res.Class, res.Reason, res.ExitCode, res.Duration.Round(time.Millisecond), tail(res.StderrTail, 300))
	return res
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func TestClasses(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	for _, tc := range []struct {
		name, program string
		want          sandbox.Class
		reason        string
	}{
		{"passed", "def f(x):\n    return x + 1\nassert f(1) == 2\nprint('ok')", sandbox.Passed, ""},
		{"failed", "def f(x):\n    return x\nassert f(1) == 2", sandbox.Failed, ""},
		{"exception", "def f(x):\n    return x[5]\nf([])", sandbox.Exception, "IndexError"},
		{"syntax", "def f(x)\n    return x", sandbox.SyntaxError, "SyntaxError"},
		{"indentation", "def f(x):\nreturn x", sandbox.SyntaxError, "IndentationError"},
		{"exit code", "import sys\nsys.exit(3)", sandbox.Exception, ""},
		{"infinite loop", "while True:\n    pass", sandbox.Timeout, ""},
		{"sleep", "import time\ntime.sleep(60)", sandbox.Timeout, ""},
		{"1 GB allocation", "b = bytearray(1 << 30)\nprint(len(b))", sandbox.Killed, "memory"},
		{"huge stdout", "while True:\n    print('x' * 10000)", sandbox.Killed, "output"},
		{"huge stderr", "import sys\nwhile True:\n    sys.stderr.write('y' * 10000)", sandbox.Killed, "output"},
		{"big file in tmp", "with open('/tmp/big', 'wb') as f:\n    f.write(b'z' * (8 << 20))", sandbox.Killed, "output"},
		{"fork bomb", "import os\nwhile True:\n    os.fork()", sandbox.Killed, "nproc"},
		{"thread bomb", "import threading, time\nwhile True:\n    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()", sandbox.Killed, "nproc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, r, tc.program)
			if res.Class != tc.want || res.Reason != tc.reason {
				t.Fatalf("class %s (%s), want %s (%s)", res.Class, res.Reason, tc.want, tc.reason)
			}
			if len(res.StderrTail) > sandbox.StderrTail {
				t.Fatalf("stderr tail of %d bytes, more than %d", len(res.StderrTail), sandbox.StderrTail)
			}
		})
	}
}

// A fork bomb is contained: afterwards the machine still starts
// processes, the sandbox's uid has none left, and the next program runs.
func TestForkBombContained(t *testing.T) {
	r := newRunner(t)
	res := run(t, r, "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass")
	if res.Class != sandbox.Killed && res.Class != sandbox.Timeout {
		t.Fatalf("a fork bomb that swallows its errors ended %s", res.Class)
	}
	if out, err := exec.Command("/usr/bin/true").CombinedOutput(); err != nil {
		t.Fatalf("the machine cannot start a process after the fork bomb: %v %s", err, out)
	}
	if res := run(t, r, "print(1)"); res.Class != sandbox.Passed {
		t.Fatalf("a program after the fork bomb: %s", res.Class)
	}
	// Nothing of it is left: no process of the execution's uid (as
	// root, one of its own) is alive once Run returns.
	if os.Geteuid() == 0 {
		if res.UID < r.UIDBase || res.UID >= r.UIDBase+r.UIDSpan {
			t.Fatalf("ran as uid %d, outside [%d, %d)", res.UID, r.UIDBase, r.UIDBase+r.UIDSpan)
		}
		out, _ := exec.Command("ps", "-e", "-o", "uid=,stat=").Output()
		for _, line := range strings.Split(string(out), "\n") {
			var uid uint64
			var stat string
			if n, _ := fmt.Sscan(line, &uid, &stat); n == 2 && uid == uint64(res.UID) && !strings.HasPrefix(stat, "Z") {
				t.Fatalf("a process of the fork bomb's uid %d outlived its execution", uid)
			}
		}
	}
}

func TestNoNetwork(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	// A port this test process listens on: reachable from here, not from
	// the sandbox (a network namespace of its own with only a loopback).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	for _, addr := range []string{"('1.1.1.1', 53)", fmt.Sprintf("('127.0.0.1', %d)", port)} {
		res := run(t, r, "import socket\ns = socket.socket()\ns.settimeout(2)\ns.connect("+addr+")\nprint('connected')")
		if res.Class != sandbox.Exception || strings.Contains(res.Stdout, "connected") {
			t.Fatalf("connect %s: %s, stdout %q", addr, res.Class, res.Stdout)
		}
		if !strings.Contains(res.StderrTail, "Network is unreachable") && !strings.Contains(res.StderrTail, "Connection refused") {
			t.Fatalf("connect %s: unexpected error %q", addr, res.StderrTail)
		}
	}
	res := run(t, r, "import socket\nsocket.getaddrinfo('example.com', 80)")
	if res.Class != sandbox.Exception {
		t.Fatalf("DNS: %s", res.Class)
	}
	select {
	case <-accepted:
		t.Fatal("the sandbox reached the test's listening port")
	default:
	}
}

func TestReadOnlyOutsideTmp(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	for _, dir := range []string{"/etc", "/usr", "/usr/lib/python3", "/root", home, repo, "/", "/var", "/dev/shm", "/proc/sys/kernel"} {
		target := filepath.Join(dir, "ruckus-sandbox-escape")
		res := run(t, r, fmt.Sprintf("open(%q, 'w').write('x')", target))
		if res.Class != sandbox.Exception {
			t.Fatalf("writing %s: %s", target, res.Class)
		}
		if _, err := os.Stat(target); err == nil {
			os.Remove(target)
			t.Fatalf("the sandbox wrote %s", target)
		}
	}
	// The private /tmp is writable, and is its own: empty at the start.
	res := run(t, r, "import os\nassert os.listdir('/tmp') == [], os.listdir('/tmp')\nopen('/tmp/x', 'w').write('x')\nassert os.getcwd() == '/tmp'\nassert os.getuid() == 65534 and os.getgid() == 65534")
	if res.Class != sandbox.Passed {
		t.Fatalf("the private /tmp: %s %s", res.Class, res.StderrTail)
	}
	// No capability, and none to be had: no new user namespace, no setuid.
	res = run(t, r, `import os
st = open('/proc/self/status').read()
assert 'CapEff:\t0000000000000000' in st, st
assert 'NoNewPrivs:\t1' in st, st
try:
    os.setuid(0)
    raise SystemExit('setuid worked')
except OSError:
    pass
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
assert libc.unshare(0x10000000) != 0, 'unshare(CLONE_NEWUSER) worked'
`)
	if res.Class != sandbox.Passed {
		t.Fatalf("privileges: %s %s", res.Class, res.StderrTail)
	}
}

// A cancelled context stops a program at once.
func TestCancel(t *testing.T) {
	t.Parallel()
	r := newRunner(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan sandbox.Result)
	go func() { done <- r.Run(ctx, "import time\ntime.sleep(60)") }()
	cancel()
	if res := <-done; res.Class != sandbox.Timeout {
		t.Fatalf("cancelled: %s", res.Class)
	}
}
