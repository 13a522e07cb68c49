package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/config"
	"github.com/ruckus/ruckus/app/devdb"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/pgbouncer"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/migrations"
)

// cmdDev is `make run`: a private PostgreSQL cluster (unless DATABASE_URL is
// set), migrations, the first admin, the server and one agentd with the
// simulated runtime. Ctrl-C stops all of it, the cluster last. Arguments
// after -- replace the agent's `--runtime sim` (`make run-real`: agentd
// launches Ollama serving the tiny model that --tiny-model registers).
func cmdDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseDevFlags(args, stdout)
	if err != nil {
		return err
	}
	if os.Getenv("DATABASE_URL") == "" {
		stopCluster, err := startDevCluster(ctx, o.pgdata, o.pgPort, stderr)
		if err != nil {
			return err
		}
		defer stopCluster()
	}
	cfg, err := config.FromEnvironment()
	if err != nil {
		return err
	}
	login, err := prepareDevDatabase(ctx, cfg, o, stdout, stderr)
	if err != nil {
		return err
	}
	if o.viaPgBouncer {
		// Stopped after the agent, which may still be handing a run back.
		stopBouncer, url, err := startDevBouncer(cfg.DatabaseURL, login.url, stderr)
		if err != nil {
			return err
		}
		defer stopBouncer()
		login.url, o.agentArgs = url, append(o.agentArgs, "--pgbouncer")
	}

	// The server runs in this process; agentd is a child process, started
	// once the server listens and stopped before it.
	sctx, stopServer := context.WithCancel(context.Background())
	defer stopServer()
	ready := make(chan string, 1)
	served := make(chan error, 1)
	go func() { served <- serve(sctx, cfg, stdout, stderr, ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-served:
		return err
	}
	agent, err := startDevAgent(o, login, stderr)
	if err != nil {
		stopServer()
		<-served
		return err
	}
	// One sandbox worker executes code answers (HumanEval, MBPP): this
	// binary again, a process of its own beside the server.
	stopSandbox := startSandboxWorker(stderr)
	defer stopSandbox()
	fmt.Fprintf(stdout, "\nRuckus is running: http://%s  (Ctrl-C stops everything)\n", browsable(addr))
	devCLIHint(stdout, browsable(addr), cfg.DatabaseURL, cfg.AdminEmail)
	return runDevUntilStopped(ctx, served, stopServer, agent, stderr)
}

// devCLIHint tells how to reach this server from the command line: the
// DATABASE_URL that `ruckus token create` (and the other database
// commands) need, which the private cluster's port makes unguessable, and
// the token and URL the API commands read (docs/getting-started.md).
func devCLIHint(w io.Writer, addr, databaseURL, adminEmail string) {
	if adminEmail == "" {
		adminEmail = "admin@ruckus.local"
	}
	fmt.Fprintf(w, "\nThe command line, from another shell in this directory:\n"+
		"  export DATABASE_URL=%s\n"+
		"  export RUCKUS_URL=http://%s\n"+
		"  export RUCKUS_TOKEN=$(bin/ruckus token create --email %s --name cli)\n\n",
		shellQuote(databaseURL), addr, shellQuote(adminEmail))
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// devOptions are `ruckus dev`'s flags, and the agent's name and arguments.
type devOptions struct {
	pgdata       string
	pgPort       int
	agentd       string
	tinyModel    string
	viaPgBouncer bool
	agentName    string
	agentArgs    []string
}

// parseDevFlags reads the flags and settles the agent's arguments: the
// simulated runtime, or what follows --, under the name they give.
func parseDevFlags(args []string, stdout io.Writer) (devOptions, error) {
	var o devOptions
	fs := newFlags("dev", "ruckus dev [--pgdata DIR] [--pg-port N] [--agentd PATH] [--tiny-model NAME] [-- AGENTD-RUN-ARGS…]", stdout)
	fs.StringVar(&o.pgdata, "pgdata", envOr("RUCKUS_PGDATA", ".data/postgres"), "data directory of the private cluster (RUCKUS_PGDATA)")
	fs.IntVar(&o.pgPort, "pg-port", envInt("RUCKUS_PG_PORT", 54329), "port of the private cluster (RUCKUS_PG_PORT)")
	fs.StringVar(&o.agentd, "agentd", "", "agentd binary to start (default: beside this binary)")
	simAcc := fs.String("sim-accuracy", envOr(simAccuracyEnv, devSimAccuracy), "share of right answers per model on the simulated runtime ("+simAccuracyEnv+")")
	fs.StringVar(&o.tinyModel, "tiny-model", "", "register NAME, when missing, as the tiny random-weight llama that e2e/tools builds (make run-real)")
	fs.BoolVar(&o.viaPgBouncer, "pgbouncer", false, "the agent reaches the database through PgBouncer in transaction mode, as a large fleet does (make run PGBOUNCER=1)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if _, err := bench.ParseSimAccuracy(*simAcc); err != nil {
		return o, err
	}
	os.Setenv(simAccuracyEnv, *simAcc)
	host, _ := os.Hostname()
	o.agentName, o.agentArgs = devAgentName(host)+"-sim", []string{"--runtime", "sim"}
	if fs.NArg() > 0 {
		o.agentName, o.agentArgs = devAgentName(host), fs.Args()
	}
	o.agentName = flagValue(o.agentArgs, "name", o.agentName)
	o.agentArgs = append([]string{"--name", o.agentName}, o.agentArgs...)
	return o, nil
}

// startDevCluster starts the private cluster in pgdata (creating it the
// first time) and points DATABASE_URL at its ruckus database; stop stops it.
func startDevCluster(ctx context.Context, pgdata string, port int, stderr io.Writer) (stop func(), err error) {
	bin, err := devdb.FindBinaries()
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(pgdata)
	if err != nil {
		return nil, err
	}
	cluster := &devdb.Cluster{Dir: dir, Port: port, BinDir: bin, Log: stderr}
	if err := cluster.Ensure(ctx); err != nil {
		return nil, err
	}
	if err := cluster.Start(ctx); err != nil {
		return nil, err
	}
	stop = func() {
		fmt.Fprintln(stderr, "stopping PostgreSQL")
		if err := cluster.Stop(context.Background()); err != nil {
			fmt.Fprintln(stderr, "stop PostgreSQL:", err)
		}
	}
	url, err := cluster.CreateDatabase(ctx, "ruckus")
	if err != nil {
		stop()
		return nil, err
	}
	os.Setenv("DATABASE_URL", url)
	fmt.Fprintf(stderr, "PostgreSQL: private cluster in %s on 127.0.0.1:%d\n", dir, port)
	return stop, nil
}

// prepareDevDatabase migrates the database, creates the first admin (who
// owns the starter datasets, so both now), the starter datasets and
// models, and the agent's own role; it returns the URL the agent connects
// with.
func prepareDevDatabase(ctx context.Context, cfg config.Config, o devOptions, stdout, stderr io.Writer) (agentLogin, error) {
	pool, err := openPool(ctx, cfg.DatabaseURL, 0)
	if err != nil {
		return agentLogin{}, err
	}
	defer pool.Close()
	m, err := migrations.New(pool)
	if err != nil {
		return agentLogin{}, err
	}
	applied, err := m.Up(ctx)
	if len(applied) > 0 {
		fmt.Fprintf(stderr, "applied migrations %v\n", applied)
	}
	if err != nil {
		return agentLogin{}, err
	}
	st := store.New(pool)
	pw, err := auth.NewPasswords(cfg.PasswordCost)
	if err != nil {
		return agentLogin{}, err
	}
	if err := bootstrapAdmin(ctx, st, pw, cfg, stdout); err != nil {
		return agentLogin{}, err
	}
	if err := seedStarterDatasets(ctx, &ingest.Uploader{Store: st, Limits: datasetLimits(cfg)}, stderr); err != nil {
		return agentLogin{}, err
	}
	if err := seedModels(ctx, st, stderr); err != nil {
		return agentLogin{}, err
	}
	if o.tinyModel != "" {
		if err := registerTinyModel(ctx, st, o.tinyModel, stderr); err != nil {
			return agentLogin{}, err
		}
	}
	// The agent logs in with a role of its own, limited to what an agent
	// does, as on a GPU node (ruckus agent create).
	return devAgentLogin(ctx, st, cfg.DatabaseURL, o.agentName)
}

// startDevBouncer starts PgBouncer in transaction mode between the agent
// and PostgreSQL and returns the agent's URL through it; stop stops it and
// waits for it.
func startDevBouncer(dbURL, agentURL string, stderr io.Writer) (stop func(), viaBouncer string, err error) {
	bctx, stopBouncer := context.WithCancel(context.Background())
	o := bouncerOptions{listen: "127.0.0.1:" + strconv.Itoa(envInt("RUCKUS_PGBOUNCER_PORT", 64329)),
		dir: envOr("RUCKUS_PGBOUNCER_DIR", ".data/pgbouncer"), maxDBConnections: pgbouncer.DefaultMaxDBConnections, agentConnections: pgbouncer.DefaultAgentConnections,
		maxClients: pgbouncer.DefaultMaxClients, setupAuth: true}
	bouncer, err := startBouncer(bctx, dbURL, newBouncerPassword(), o, stderr)
	if err != nil {
		stopBouncer()
		return nil, "", fmt.Errorf("PgBouncer: %w", err)
	}
	stop = func() { stopBouncer(); _ = bouncer.Wait() }
	if viaBouncer, err = pgbouncer.AgentURL(agentURL, o.listen); err != nil {
		stop()
		return nil, "", err
	}
	fmt.Fprintf(stderr, "PgBouncer: transaction pooling on %s between the agent and PostgreSQL\n", o.listen)
	return stop, viaBouncer, nil
}

// devAgent is the agentd child process; done gets how it exited.
type devAgent struct {
	cmd  *exec.Cmd
	done chan error
}

// startDevAgent starts `agentd run` (--agentd, else the agentd beside this
// binary) in a process group of its own: the terminal's Ctrl-C reaches
// only us, and we stop the agent in order.
func startDevAgent(o devOptions, login agentLogin, stderr io.Writer) (*devAgent, error) {
	agentd := o.agentd
	if agentd == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		agentd = filepath.Join(filepath.Dir(self), "agentd")
	}
	child := exec.Command(agentd, append([]string{"run"}, o.agentArgs...)...)
	// The URL carries the role's password, and the key is secret too: in
	// the environment, not on the command line where every user of the
	// machine could read them.
	child.Env = append(os.Environ(), "DATABASE_URL="+login.url, "RUCKUS_AGENT_KEY="+login.key)
	child.Stdout, child.Stderr = stderr, stderr
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := child.Start(); err != nil {
		return nil, fmt.Errorf("start agentd (%s): %w; run `make build` first", agentd, err)
	}
	a := &devAgent{cmd: child, done: make(chan error, 1)}
	go func() { a.done <- child.Wait() }()
	return a, nil
}

// runDevUntilStopped waits for Ctrl-C, the server's end or the agent's,
// then stops the agent (SIGTERM, killed after 10 s) and the server, in
// that order.
func runDevUntilStopped(ctx context.Context, served <-chan error, stopServer func(), agent *devAgent, stderr io.Writer) error {
	var runErr error
	agentDone := agent.done
	select {
	case <-ctx.Done():
	case err := <-served:
		runErr = err
	case err := <-agentDone:
		runErr = fmt.Errorf("agentd exited: %v", err)
		agentDone = nil
	}
	fmt.Fprintln(stderr, "stopping agentd and the server")
	if agentDone != nil {
		_ = agent.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-agentDone:
		case <-time.After(10 * time.Second):
			_ = agent.cmd.Process.Kill()
			<-agentDone
		}
	}
	stopServer()
	if err := <-served; err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

// startSandboxWorker starts `ruckus sandbox` in a process group of its
// own; stop sends it SIGTERM and waits (then kills it after 10 s). A
// worker that cannot run (no bubblewrap) is reported and the rest goes
// on: only code execution waits for it.
func startSandboxWorker(stderr io.Writer) (stop func()) {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "sandbox worker not started:", err)
		return func() {}
	}
	cmd := exec.Command(self, "sandbox")
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "sandbox worker not started:", err)
		return func() {}
	}
	waited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if err != nil {
			fmt.Fprintln(stderr, "the sandbox worker exited:", err, "(code answers are not executed; see make deps)")
		}
		waited <- err
	}()
	return func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-waited
		}
	}
}

// simAccuracyEnv holds the server's default sim accuracies.
const simAccuracyEnv = "RUCKUS_SIM_ACCURACY"

// devSimAccuracy lets `make run` show quality differences between the
// starter models on the simulated runtime (made-up shares, ordered
// roughly by size; they say nothing about the real models).
const devSimAccuracy = "Qwen/Qwen2.5-0.5B-Instruct=0.3,microsoft/Phi-3.5-mini-instruct=0.6,mistralai/Mistral-7B-Instruct-v0.3=0.55," +
	"Qwen/Qwen2.5-7B-Instruct=0.75,meta-llama/Llama-3.1-8B-Instruct=0.7,google/gemma-2-9b-it=0.78"

// registerTinyModel puts the tiny random-weight llama GGUF that
// e2e/tools/tinygguf writes (2 layers, 64 wide, 512 tokens: about 140,000
// parameters in f32) into the model registry, unless a model of that name
// is there already.
func registerTinyModel(ctx context.Context, st *store.Store, name string, out io.Writer) error {
	_, err := st.CreateModel(ctx, store.ModelFields{Name: name, DisplayName: "Tiny llama (random weights)", Family: "llama",
		ParamsB: 0.00014, Quantization: "fp32", ContextLength: 2048})
	switch {
	case errors.Is(err, store.ErrModelNameTaken):
		return nil
	case err != nil:
		return fmt.Errorf("register %s: %w", name, err)
	}
	fmt.Fprintf(out, "registered the tiny model %s\n", name)
	return nil
}

// cmdDevDB runs a command against a throwaway cluster (what `make test`
// uses when DATABASE_URL is not set) and returns its exit code.
func cmdDevDB(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) < 3 || args[0] != "exec" || args[1] != "--" {
		fmt.Fprintln(stderr, "usage: ruckus dev-db exec -- CMD [ARGS…]")
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "ruckus dev-db:", err)
		return 1
	}
	bin, err := devdb.FindBinaries()
	if err != nil {
		return fail(err)
	}
	dir, err := os.MkdirTemp("", "ruckus-pg-")
	if err != nil {
		return fail(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	port, err := devdb.FreePort()
	if err != nil {
		return fail(err)
	}
	cluster := &devdb.Cluster{Dir: filepath.Join(dir, "data"), Port: port, BinDir: bin, Throwaway: true, Log: io.Discard}
	start := time.Now()
	if err := cluster.Ensure(ctx); err != nil {
		return fail(err)
	}
	if err := cluster.Start(ctx); err != nil {
		return fail(err)
	}
	defer cluster.Stop(context.Background()) //nolint:errcheck // the directory is removed anyway
	url, err := cluster.CreateDatabase(ctx, "ruckus")
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(stderr, "throwaway PostgreSQL on 127.0.0.1:%d ready in %.1fs\n", port, time.Since(start).Seconds())

	cmd := exec.CommandContext(ctx, args[2], args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Env = append(os.Environ(), "DATABASE_URL="+url)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return fail(err)
	}
	return 0
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

// browsable turns a listen address such as [::]:8080 into one a browser
// can open.
func browsable(addr string) string {
	for _, p := range []string{"[::]:", "0.0.0.0:"} {
		if len(addr) > len(p) && addr[:len(p)] == p {
			return "localhost:" + addr[len(p):]
		}
	}
	return addr
}

// devAgentName makes an agent name of a host name: the characters an agent
// name allows, at most 36 of them (room for "-sim").
func devAgentName(host string) string {
	b := []byte(host)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	name := strings.TrimLeft(string(b[:min(len(b), 36)]), "._-")
	if name == "" {
		return "dev"
	}
	return name
}

// flagValue is the last value of --name (or -name, with = or a space) in
// args, else def.
func flagValue(args []string, name, def string) string {
	for i := 0; i < len(args); i++ {
		if !strings.HasPrefix(args[i], "-") {
			continue
		}
		a := strings.TrimPrefix(strings.TrimPrefix(args[i], "-"), "-")
		switch {
		case a == name && i+1 < len(args):
			def = args[i+1]
			i++
		case strings.HasPrefix(a, name+"="):
			def = strings.TrimPrefix(a, name+"=")
		}
	}
	return def
}

// agentLogin is what an agent connects with: its database URL (with its
// role's password) and its key.
type agentLogin struct{ url, key string }

// devAgentLogin gives the development agent its own restricted role, with
// a new password and key on every start.
func devAgentLogin(ctx context.Context, st *store.Store, serverURL, name string) (agentLogin, error) {
	pw := newAgentPassword()
	role, err := st.CreateAgentRole(ctx, name, pw, store.AgentGrant{OnFirstRegistration: true})
	if err != nil {
		return agentLogin{}, fmt.Errorf("the agent's own database role: %w", err)
	}
	u, err := store.AgentDatabaseURL(serverURL, role, pw)
	return agentLogin{url: u, key: role.Key}, err
}
