//go:build unix

package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/testkit"
)

// fakeSpec runs the test binary as a runtime named like the vllm template
// (so readiness is GET /health and metrics are served) with args appended.
func fakeSpec(t *testing.T, args ...string) Spec {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{
		Runtime: VLLM, Model: "m",
		Command:      Argv{self, "fake", "--host", "{{.Host}}", "--port", "{{.Port}}"},
		ExtraArgs:    args,
		Env:          []string{fakeEnv + "=1"},
		PollInterval: 20 * time.Millisecond,
	}
}

// start starts spec and makes sure the process is gone when the test ends.
func start(t *testing.T, ctx context.Context, spec Spec) *Process {
	t.Helper()
	p, err := Start(ctx, spec, nil)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Stop(time.Second); err != nil {
			t.Errorf("cleanup Stop: %v", err)
		}
	})
	return p
}

func isExited(p *Process) bool {
	select {
	case <-p.Exited():
		return true
	default:
		return false
	}
}

// alive reports whether pid is a live process: neither gone nor a zombie
// (a reparented zombie waits for an init that may never reap it).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err)
	}
	// pid (comm) STATE ...; comm may hold spaces and parentheses.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

func TestReadyMeasuresLoadTime(t *testing.T) {
	t.Parallel()
	const delay = 400 * time.Millisecond
	logPath := filepath.Join(t.TempDir(), "logs", "runtime.log")
	spec := fakeSpec(t, "--delay", delay.String())
	spec.LogPath = logPath
	p := start(t, context.Background(), spec)

	if p.LoadTime() != nil {
		t.Fatal("LoadTime before ready is not nil")
	}
	load, err := p.WaitReady(context.Background())
	if err != nil {
		t.Fatalf("WaitReady: %v", err)
	}
	if load < delay {
		t.Errorf("load time %s < the fake's delay %s", load, delay)
	}
	if got := p.LoadTime(); got == nil || *got != load {
		t.Errorf("LoadTime() = %v, want %s", got, load)
	}
	if again, err := p.WaitReady(context.Background()); err != nil || again != load {
		t.Errorf("second WaitReady = %s, %v; want %s, nil", again, err, load)
	}

	u, err := url.Parse(p.BaseURL())
	if err != nil || u.Hostname() != "127.0.0.1" || u.Path != "/v1" {
		t.Errorf("BaseURL %q", p.BaseURL())
	}
	if port, _ := strconv.Atoi(u.Port()); port <= 0 {
		t.Errorf("BaseURL %q: no port picked", p.BaseURL())
	}
	if want := "http://" + u.Host + "/metrics"; p.MetricsURL() != want {
		t.Errorf("MetricsURL = %q, want %q", p.MetricsURL(), want)
	}
	res, err := http.Get(p.MetricsURL())
	if err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("GET metrics: %v %v", res, err)
	}
	if res != nil {
		res.Body.Close()
	}

	testkit.WaitFor(t, "tail shows the output", func() bool {
		return strings.Contains(p.LogTail(), "fake: loading weights")
	})
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# ", "launch vllm: ", "fake: loading weights", "fake: listening on"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log file lacks %q:\n%s", want, log)
		}
	}
}

func TestExitBeforeReady(t *testing.T) {
	t.Parallel()
	p := start(t, context.Background(), fakeSpec(t, "--exit-code", "3", "--delay", "1h"))
	_, err := p.WaitReady(context.Background())
	if !errors.Is(err, ErrExited) {
		t.Fatalf("WaitReady = %v, want ErrExited", err)
	}
	for _, want := range []string{"vllm", "exit status 3", "CUDA out of memory", "fake: loading weights"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if st := p.ExitState(); st == nil || st.ExitCode() != 3 {
		t.Errorf("ExitState = %v", st)
	}
	if err := p.Stop(time.Second); err != nil {
		t.Errorf("Stop after exit: %v", err)
	}
}

func TestReadyTimeout(t *testing.T) {
	t.Parallel()
	spec := fakeSpec(t, "--delay", "1h")
	spec.ReadyTimeout = 2 * time.Second
	p := start(t, context.Background(), spec)
	began := time.Now()
	_, err := p.WaitReady(context.Background())
	if !errors.Is(err, ErrReadyTimeout) {
		t.Fatalf("WaitReady = %v, want ErrReadyTimeout", err)
	}
	if took := time.Since(began); took > spec.ReadyTimeout+2*time.Second {
		t.Errorf("WaitReady took %s with a %s timeout", took, spec.ReadyTimeout)
	}
	for _, want := range []string{"vllm", "not ready 2s after start", "/health", "503", "fake: loading weights"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if isExited(p) {
		t.Error("WaitReady stopped the runtime; that is Stop's job")
	}
}

func TestWaitReadyCancelled(t *testing.T) {
	t.Parallel()
	p := start(t, context.Background(), fakeSpec(t, "--delay", "1h"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.WaitReady(ctx)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrReadyTimeout) {
		t.Fatalf("WaitReady = %v, want context.Canceled", err)
	}
}

func TestStopTerminates(t *testing.T) {
	t.Parallel()
	p := start(t, context.Background(), fakeSpec(t))
	if _, err := p.WaitReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	began := time.Now()
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("Stop took %s for a runtime that obeys SIGTERM", took)
	}
	if !isExited(p) {
		t.Fatal("Exited not closed after Stop")
	}
	ws, ok := p.ExitState().Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("exit state %v, want killed by SIGTERM", p.ExitState())
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill(%d, 0) = %v after Stop, want ESRCH (reaped)", pid, err)
	}
}

func TestStopKillsAfterGrace(t *testing.T) {
	t.Parallel()
	p := start(t, context.Background(), fakeSpec(t, "--ignore-term", "--grandchild"))
	if _, err := p.WaitReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	pidRE := regexp.MustCompile(`grandchild pid=(\d+)`)
	var grandchild int
	testkit.WaitFor(t, "grandchild pid in the log", func() bool {
		m := pidRE.FindStringSubmatch(p.LogTail())
		if m != nil {
			grandchild, _ = strconv.Atoi(m[1])
		}
		return m != nil
	})
	if !alive(grandchild) {
		t.Fatalf("grandchild %d not running before Stop", grandchild)
	}

	const grace = 300 * time.Millisecond
	pid := p.Pid()
	began := time.Now()
	if err := p.Stop(grace); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if took := time.Since(began); took < grace {
		t.Errorf("Stop returned after %s, before the %s grace: SIGTERM was not ignored?", took, grace)
	}
	if !isExited(p) {
		t.Fatal("Exited not closed after Stop")
	}
	ws, ok := p.ExitState().Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("exit state %v, want killed by SIGKILL", p.ExitState())
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill(%d, 0) = %v after Stop, want ESRCH (reaped)", pid, err)
	}
	testkit.WaitFor(t, "grandchild gone", func() bool { return !alive(grandchild) })

	began = time.Now()
	if err := p.Stop(grace); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if took := time.Since(began); took > grace/2 {
		t.Errorf("second Stop took %s; it should return at once", took)
	}
}

func TestContextEndStops(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	p := start(t, ctx, fakeSpec(t))
	if _, err := p.WaitReady(context.Background()); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("runtime still running 10s after its context ended")
	}
}

// TestOllamaTemplate runs the shipped ollama template against the test
// binary installed as "ollama" on a PATH given in the spec's environment:
// serve on OLLAMA_HOST, create from a Modelfile written from ModelPath,
// wait until /v1/models lists the model, then load it.
func TestOllamaTemplate(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "ollama")); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	p := start(t, context.Background(), Spec{
		Runtime: "Ollama", Model: "tiny", ModelPath: "/models/tiny.gguf", WorkDir: work,
		Env:          []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), fakeEnv + "=1"},
		PollInterval: 20 * time.Millisecond,
	})
	if _, err := p.WaitReady(context.Background()); err != nil {
		t.Fatalf("WaitReady: %v", err)
	}
	if p.MetricsURL() != "" {
		t.Errorf("ollama MetricsURL = %q, want none", p.MetricsURL())
	}
	if mf, err := os.ReadFile(filepath.Join(work, "Modelfile")); err != nil || string(mf) != "FROM /models/tiny.gguf\n" {
		t.Errorf("Modelfile %q, %v", mf, err)
	}
	res, err := http.Get(strings.TrimSuffix(p.BaseURL(), "/v1") + "/fake/state")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var state struct {
		Created   map[string]string
		Loaded    map[string]bool
		KeepAlive string `json:"keep_alive"`
	}
	if err := json.NewDecoder(res.Body).Decode(&state); err != nil {
		t.Fatal(err)
	}
	if state.Created["tiny"] != "/models/tiny.gguf" || !state.Loaded["tiny"] || state.KeepAlive != "-1" {
		t.Errorf("fake ollama state %+v", state)
	}
	if !strings.Contains(p.LogTail(), "# launch: prepare: ollama create --file="+filepath.Join(work, "Modelfile")+" -- tiny") {
		t.Errorf("tail lacks the prepare step:\n%s", p.LogTail())
	}
}

// TestPrepareFailure: a step that fails makes WaitReady fail with its
// status and output, without waiting for the timeout.
func TestPrepareFailure(t *testing.T) {
	t.Parallel()
	spec := fakeSpec(t)
	spec.Template = &Template{
		ReadyPath: "/health",
		Prepare:   []Step{{Argv: []string{spec.Command[0], "create", "x", "-f", "/nonexistent/Modelfile"}}},
		APIPath:   "/v1",
	}
	spec.ReadyTimeout = time.Minute
	p := start(t, context.Background(), spec)
	began := time.Now()
	_, err := p.WaitReady(context.Background())
	if err == nil || errors.Is(err, ErrReadyTimeout) || errors.Is(err, ErrExited) {
		t.Fatalf("WaitReady = %v, want a prepare failure", err)
	}
	for _, want := range []string{"prepare step", "exit status 1", "/nonexistent/Modelfile"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if time.Since(began) > 30*time.Second {
		t.Error("prepare failure waited for the timeout")
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	_, err := Start(context.Background(), Spec{Runtime: VLLM, Model: "m",
		Env: []string{"PATH=" + t.TempDir()}}, nil)
	if err == nil || !strings.Contains(err.Error(), `"vllm" not found in PATH`) {
		t.Errorf("missing executable: %v", err)
	}
	_, err = Start(context.Background(), Spec{Runtime: "nope", Model: "m"}, nil)
	if err == nil || !strings.Contains(err.Error(), `unknown runtime "nope"`) {
		t.Errorf("unknown runtime: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, fakeSpec(t), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}
