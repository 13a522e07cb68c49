package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Errors WaitReady wraps, for errors.Is.
var (
	// ErrExited: the runtime exited before it was ready.
	ErrExited = errors.New("runtime exited")
	// ErrReadyTimeout: the runtime was not ready within Spec.ReadyTimeout.
	ErrReadyTimeout = errors.New("runtime not ready in time")
)

const (
	// pipeGrace bounds how long the process's output may stay open after
	// it exited, should something outside its group hold it.
	pipeGrace = 5 * time.Second
	// killWait bounds the wait for the group leader after SIGKILL (a
	// process stuck in the kernel, in a GPU driver say, takes its time).
	killWait = 30 * time.Second
	// probeTimeout bounds one readiness request.
	probeTimeout = 5 * time.Second
)

// Process is a launched runtime.
type Process struct {
	plan    Plan
	spec    Spec
	logger  *slog.Logger
	cmd     *exec.Cmd
	env     []string
	started time.Time
	sink    *logSink
	client  *http.Client
	cleanup func() // removes what Start wrote; run once the process exited

	exited chan struct{}
	state  *os.ProcessState // set before exited is closed

	readyMu  sync.Mutex
	loadTime *time.Duration

	stopMu  sync.Mutex
	stopped bool
	stopErr error
}

// Start renders spec, starts the runtime and returns at once; WaitReady
// waits for it to serve. When ctx ends the runtime is stopped as by
// Stop(spec.StopGrace). A nil logger discards.
func Start(ctx context.Context, spec Spec, logger *slog.Logger) (*Process, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	spec = spec.withDefaults()
	t, name, err := spec.template()
	if err != nil {
		return nil, err
	}
	// Before anything is written from them (the Modelfile); Render checks
	// again what it renders.
	if err := spec.checkValues(name); err != nil {
		return nil, err
	}
	if spec.Port == 0 {
		if spec.Port, err = FreePort(spec.Host); err != nil {
			return nil, err
		}
	}
	cleanup := func() {}
	if t.WriteModelfile && spec.Modelfile == "" && spec.ModelPath != "" {
		path, done, err := writeModelfile(spec.WorkDir, spec.ModelPath)
		if err != nil {
			return nil, err
		}
		spec.Modelfile, cleanup = path, done
	}
	plan, err := Render(spec)
	if err != nil {
		cleanup()
		return nil, err
	}
	env := append(os.Environ(), plan.Env...)
	path, err := lookPath(plan.Argv[0], env)
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("launch: %s: %w", name, err)
	}
	sink, err := newLogSink(spec.LogPath, spec.TailBytes)
	if err != nil {
		cleanup()
		return nil, err
	}
	cmd := &exec.Cmd{
		Path: path, Args: plan.Argv, Env: env, Dir: spec.WorkDir,
		Stdout: sink, Stderr: sink, SysProcAttr: groupAttr(true), WaitDelay: pipeGrace,
	}
	noteLaunch(sink, name, plan, spec)
	started := time.Now()
	if err := cmd.Start(); err != nil {
		_ = sink.close()
		cleanup()
		return nil, fmt.Errorf("launch: start %s: %w", name, err)
	}
	p := &Process{
		plan: plan, spec: spec, logger: logger.With("runtime", name, "pid", cmd.Process.Pid),
		cmd: cmd, env: env, started: started, sink: sink, cleanup: cleanup,
		exited: make(chan struct{}),
		client: &http.Client{Transport: &http.Transport{
			Proxy:             nil, // the runtime is ours and local
			DialContext:       (&net.Dialer{Timeout: probeTimeout}).DialContext,
			DisableKeepAlives: true,
		}},
	}
	p.logger.Info("runtime started", "argv", formatArgv(plan.Argv), "base_url", plan.BaseURL, "log", spec.LogPath)
	go p.wait()
	go func() {
		select {
		case <-ctx.Done():
			if err := p.Stop(spec.StopGrace); err != nil {
				p.logger.Error("runtime could not be stopped", "err", err)
			}
		case <-p.exited:
		}
	}()
	return p, nil
}

func (p *Process) wait() {
	err := p.cmd.Wait()
	p.state = p.cmd.ProcessState
	p.cleanup()
	if cerr := p.sink.close(); cerr != nil {
		p.logger.Warn("runtime log incomplete", "err", cerr)
	}
	p.logger.Info("runtime exited", "status", describe(p.cmd.ProcessState, err))
	close(p.exited)
}

// describe is how a process ended, for messages.
func describe(ps *os.ProcessState, err error) string {
	if ps != nil {
		return ps.String()
	}
	if err != nil {
		return err.Error()
	}
	return "unknown"
}

// Runtime is the runtime's canonical name.
func (p *Process) Runtime() string { return p.plan.Runtime }

// Plan is what was run.
func (p *Process) Plan() Plan { return p.plan }

// Pid is the runtime's process id, which is also its process group's.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// BaseURL is the OpenAI-compatible API's root, such as
// http://127.0.0.1:8000/v1.
func (p *Process) BaseURL() string { return p.plan.BaseURL }

// MetricsURL is the runtime's Prometheus endpoint, empty when it has none.
func (p *Process) MetricsURL() string { return p.plan.MetricsURL }

// LogTail is the end of the runtime's output (Spec.TailBytes at most),
// valid UTF-8 without NUL bytes.
func (p *Process) LogTail() string { return p.sink.tailString() }

// Exited is closed once the runtime has exited and been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitState is how the runtime ended; nil while it runs.
func (p *Process) ExitState() *os.ProcessState {
	select {
	case <-p.exited:
		return p.state
	default:
		return nil
	}
}

// LoadTime is the time from start to ready; nil until WaitReady succeeded.
func (p *Process) LoadTime() *time.Duration {
	p.readyMu.Lock()
	defer p.readyMu.Unlock()
	if p.loadTime == nil {
		return nil
	}
	d := *p.loadTime
	return &d
}

// WaitReady waits until the runtime serves the model (see the package
// documentation for the phases) and returns the load time: the monotonic
// time from starting the process. It fails with ErrExited when the process
// exits first and ErrReadyTimeout when Spec.ReadyTimeout since the start
// passes first; both errors carry the end of the log. It does not stop the
// runtime: call Stop. Once ready, it returns the same load time at once.
func (p *Process) WaitReady(ctx context.Context) (time.Duration, error) {
	p.readyMu.Lock()
	defer p.readyMu.Unlock()
	if p.loadTime != nil {
		return *p.loadTime, nil
	}
	rctx, cancel := context.WithDeadline(ctx, p.started.Add(p.spec.ReadyTimeout))
	defer cancel()

	if last, err := p.poll(rctx, p.plan.ReadyURL, nil); err != nil {
		return 0, p.notReady(ctx, err, "GET "+p.plan.ReadyURL+": "+last)
	}
	for _, argv := range p.plan.Prepare {
		if err := p.runStep(rctx, argv); err != nil {
			return 0, p.notReady(ctx, err, "prepare step "+formatArgv(argv))
		}
	}
	if p.plan.ModelsURL != "" {
		if last, err := p.poll(rctx, p.plan.ModelsURL, p.listsModel); err != nil {
			return 0, p.notReady(ctx, err, "GET "+p.plan.ModelsURL+": "+last)
		}
	}
	if p.plan.Load != nil {
		if err := p.load(rctx, p.plan.Load); err != nil {
			return 0, p.notReady(ctx, err, p.plan.Load.Method+" "+p.plan.Load.URL)
		}
	}
	d := time.Since(p.started)
	p.loadTime = &d
	p.logger.Info("runtime ready", "load_time", d)
	return d, nil
}

// errExitedEarly ends a poll when the process is gone; notReady explains.
var errExitedEarly = errors.New("exited")

// notReady turns a failed phase into WaitReady's error.
func (p *Process) notReady(ctx context.Context, err error, doing string) error {
	name := p.plan.Runtime
	select {
	case <-p.exited:
		return fmt.Errorf("launch: %s %w before it was ready (%s; while %s); log tail:\n%s",
			name, ErrExited, describe(p.state, nil), doing, errorTail(p.LogTail()))
	default:
	}
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("launch: waiting for %s: %w", name, ctx.Err())
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("launch: %s: %w: not ready %s after start (%s); log tail:\n%s",
			name, ErrReadyTimeout, p.spec.ReadyTimeout, doing, errorTail(p.LogTail()))
	}
	return fmt.Errorf("launch: %s: %s: %w; log tail:\n%s", name, doing, err, errorTail(p.LogTail()))
}

// poll GETs url until it answers 2xx and accept (when not nil) takes the
// body, the process exits, or ctx ends. It returns the last answer.
func (p *Process) poll(ctx context.Context, url string, accept func([]byte) (bool, string)) (string, error) {
	last := "no answer yet"
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-p.exited:
			return last, errExitedEarly
		case <-ctx.Done():
			return last, ctx.Err()
		case <-timer.C:
		}
		ok, desc := p.probe(ctx, url, accept)
		if ok {
			return desc, nil
		}
		if ctx.Err() == nil { // not a probe cut short by the deadline
			last = desc
		}
		timer.Reset(p.spec.PollInterval)
	}
}

func (p *Process) probe(ctx context.Context, url string, accept func([]byte) (bool, string)) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err.Error()
	}
	res, err := p.client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if res.StatusCode/100 != 2 {
		return false, res.Status
	}
	if err != nil {
		return false, err.Error()
	}
	if accept == nil {
		return true, res.Status
	}
	return accept(body)
}

// listsModel accepts an OpenAI model list that names the model. Ollama
// lists a model created as NAME as NAME:latest.
func (p *Process) listsModel(body []byte) (bool, string) {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return false, "not a model list: " + err.Error()
	}
	want := p.spec.Model
	var ids []string
	for _, m := range list.Data {
		if m.ID == want || strings.TrimSuffix(m.ID, ":latest") == strings.TrimSuffix(want, ":latest") {
			return true, "lists " + m.ID
		}
		ids = append(ids, m.ID)
	}
	return false, fmt.Sprintf("model %q not listed (listed: %q)", want, ids)
}

// runStep runs a prepare step with the runtime's environment, its output
// in the runtime's log.
func (p *Process) runStep(ctx context.Context, argv []string) error {
	path, err := lookPath(argv[0], p.env)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env, cmd.Dir = p.env, p.spec.WorkDir
	cmd.Stdout, cmd.Stderr = p.sink, p.sink
	cmd.SysProcAttr = groupAttr(false)
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = pipeGrace
	_, _ = fmt.Fprintf(p.sink, "# launch: prepare: %s\n", formatArgv(argv))
	p.logger.Info("runtime prepare step", "argv", formatArgv(argv))
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return nil
}

// load sends the load request once.
func (p *Process) load(ctx context.Context, r *PlannedRequest) error {
	// The load takes as long as the model does: no per-request timeout
	// beyond the ready deadline, but the process exiting ends the wait.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.exited:
			cancel()
		case <-rctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(rctx, r.Method, r.URL, strings.NewReader(r.Body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := p.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<10))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", res.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// Stop stops the runtime: SIGTERM to its process group, up to grace for
// the whole group to exit, then SIGKILL to the group. It returns once the
// runtime has been reaped. It is safe to call more than once and from
// several goroutines; later calls return the first call's result. It
// returns an error only when the runtime survived SIGKILL.
func (p *Process) Stop(grace time.Duration) error {
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	if p.stopped {
		return p.stopErr
	}
	p.stopped = true
	p.stopErr = p.stop(grace)
	return p.stopErr
}

func (p *Process) stop(grace time.Duration) error {
	pgid := p.Pid()
	exited := p.exited
	select {
	case <-exited:
		// Exited by itself: only stragglers in its group may be left.
		if !groupAlive(pgid) {
			return nil
		}
		exited = nil
	default:
		p.logger.Info("stopping runtime", "grace", grace)
	}
	if err := terminateGroup(pgid); err != nil {
		p.logger.Warn("runtime: SIGTERM failed", "err", err)
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	gone := false
	for !gone {
		select {
		case <-exited:
			exited = nil
			gone = !groupAlive(pgid)
		case <-tick.C:
			gone = p.ExitState() != nil && !groupAlive(pgid)
		case <-deadline.C:
			p.logger.Warn("runtime still running after grace; killing it", "grace", grace)
			if err := killGroup(pgid); err != nil {
				p.logger.Warn("runtime: SIGKILL failed", "err", err)
			}
			select {
			case <-p.exited:
				return nil
			case <-time.After(killWait):
				return fmt.Errorf("launch: %s (pid %d) still running %s after SIGKILL", p.plan.Runtime, pgid, killWait)
			}
		}
	}
	return nil
}

// lookPath finds an executable as the runtime's environment would: a name
// with a slash is taken as it is, anything else is searched in env's PATH
// (the last PATH entry wins, as for the child). Relative PATH entries are
// skipped, as os/exec does by default.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	pathEnv := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if !filepath.IsAbs(dir) {
			continue
		}
		path := filepath.Join(dir, name)
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return path, nil
		}
	}
	return "", fmt.Errorf("%q not found in PATH: %w", name, exec.ErrNotFound)
}

// writeModelfile writes an Ollama Modelfile for a GGUF file into dir (the
// runtime's working directory, against which a relative model path is
// taken, as the other runtimes would), or into a temporary directory that
// done removes.
func writeModelfile(dir, modelPath string) (path string, done func(), err error) {
	done = func() {}
	if !filepath.IsAbs(modelPath) && dir != "" {
		modelPath = filepath.Join(dir, modelPath)
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "ruckus-launch-"); err != nil {
			return "", nil, fmt.Errorf("launch: Modelfile: %w", err)
		}
		tmp := dir
		done = func() { _ = os.RemoveAll(tmp) }
	}
	if abs, err := filepath.Abs(modelPath); err == nil {
		modelPath = abs
	}
	path = filepath.Join(dir, "Modelfile")
	if err := os.WriteFile(path, []byte("FROM "+modelPath+"\n"), 0o644); err != nil {
		done()
		return "", nil, fmt.Errorf("launch: Modelfile: %w", err)
	}
	return path, done, nil
}

// noteLaunch writes the command line to the runtime's log, and the engine
// settings, which are the target's identity, whether they became flags or
// environment (Ollama's).
func noteLaunch(sink *logSink, name string, plan Plan, spec Spec) {
	now := time.Now().UTC().Format(time.RFC3339)
	sink.note("%s launch %s: %s", now, name, formatArgv(plan.Argv))
	if len(spec.Engine) > 0 {
		sink.note("%s engine settings: %s", now, spec.Engine.Key())
	}
}
