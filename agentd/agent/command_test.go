package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/jobs"
)

func TestHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "agentd run --database-url") {
		t.Fatalf("--help: %d %q", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"run", "--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "-heartbeat") {
		t.Fatalf("run --help: %d %q", code, out.String())
	}
}

func TestRunFlagsAreValidated(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for args, want := range map[string]string{
		"": "--database-url (or DATABASE_URL) is required",
		"--database-url postgres://x --runtime vllm":                                                `--runtime "vllm": use sim, openai, anthropic or launch`,
		"--database-url postgres://x --provider groq":                                               `--provider "groq": the provider table has anthropic, openai`,
		"--database-url postgres://x --provider anthropic --runtime openai":                         `provider anthropic speaks the anthropic dialect`,
		"--database-url postgres://x --provider openai --serves vllm":                               `--provider openai serves the openai runtime's runs`,
		"--database-url postgres://x --providers /nonexistent.yaml":                                 "--providers is read with --provider NAME only",
		"--database-url postgres://x --provider x --providers /nonexistent.yaml":                    "--providers: open /nonexistent.yaml",
		"--database-url postgres://x --runtime anthropic --serves vllm":                             "--runtime anthropic serves the anthropic runtime's runs",
		"--database-url postgres://x --runtime anthropic --endpoint ftp://x":                        `--endpoint "ftp://x" must start with http://`,
		"--database-url postgres://x --runtime openai":                                              "--runtime openai needs --endpoint",
		"--database-url postgres://x --runtime launch --serves nope":                                "--runtime launch needs --serves",
		"--database-url postgres://x --sim-itl fast":                                                "--sim-itl",
		"--database-url postgres://x --heartbeat 10ms":                                              "--heartbeat must be between 1s and 1m",
		"--database-url postgres://x --name=":                                                       "--name must not be empty",
		"--database-url postgres://x --runtime launch --serves vllm --model-path m=--config=/tmp/x": `--model-path m=--config=/tmp/x: it begins with "-"`,
		"--database-url postgres://x --runtime launch --serves vllm --model-alias m=-x":             `--model-alias m=-x: it begins with "-"`,
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"run"}, strings.Fields(args)...), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), want) {
			t.Errorf("run %s: code %d, stderr %q, want %q", args, code, errb.String(), want)
		}
	}
}

func TestAgentRegistersHeartbeatsAndGoesOffline(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDB(t)
	st := store.New(pool)
	url := pgtest.AgentURL(t, pool, "node-a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runAgent(ctx, testConfig(t, url, "node-a"),
			slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()

	// Wait for registration, then for a heartbeat later than it.
	var registered store.Agent
	testkit.WaitFor(t, "registration", func() bool {
		as, err := st.ListAgents(context.Background())
		if err != nil || len(as) != 1 || as[0].State != store.AgentOnline {
			return false
		}
		registered = as[0]
		return true
	})
	if registered.Name != "node-a" || registered.ProtocolVersion != jobs.ProtocolVersion || strings.Join(registered.Runtimes, ",") != "sim" {
		t.Fatalf("registered agent = %+v", registered)
	}
	var caps jobs.Capabilities
	if err := json.Unmarshal(registered.Capabilities, &caps); err != nil || caps.Hardware.CPUCores < 1 || caps.Hardware.ProfileSlug() == "" {
		t.Fatalf("capabilities = %s (%v)", registered.Capabilities, err)
	}
	testkit.WaitFor(t, "a heartbeat", func() bool {
		as, err := st.ListAgents(context.Background())
		return err == nil && as[0].LastHeartbeatAt.After(registered.LastHeartbeatAt)
	})

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("agent stopped with %v", err)
	}
	as, err := st.ListAgents(context.Background())
	if err != nil || as[0].Status(time.Now(), time.Minute, jobs.ProtocolVersion) != store.AgentOffline {
		t.Fatalf("after stop: %+v %v, want offline", as, err)
	}
	if as[0].Profile != caps.Hardware.ProfileSlug() {
		t.Fatalf("hardware profile %q, want %q", as[0].Profile, caps.Hardware.ProfileSlug())
	}

	// A deactivated agent refuses to start.
	if err := st.SetAgentDeactivated(context.Background(), as[0].ID, true); err != nil {
		t.Fatal(err)
	}
	err = runAgent(context.Background(), testConfig(t, url, "node-a"),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), "deactivated by an administrator") {
		t.Fatalf("deactivated agent started: %v", err)
	}
	// An agent's role registers only as the agent it was made for.
	err = runAgent(context.Background(), testConfig(t, url, "node-b"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), `this database role belongs to agent "node-a", not "node-b"`) {
		t.Fatalf("node-a's role registering as node-b: %v", err)
	}
}

func TestAgentRefusesADatabaseOfAnotherRelease(t *testing.T) {
	t.Parallel()
	pool := pgtest.EmptyDB(t)
	err := runAgent(context.Background(), testConfig(t, pgtest.URL(t, pool), "n"),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), "older than this program") {
		t.Fatalf("unmigrated database: %v", err)
	}
}

// testConfig is a validated sim agent configuration.
func testConfig(t *testing.T, url, name string) runConfig {
	t.Helper()
	c := defaultRunConfig()
	c.DatabaseURL, c.Name, c.Heartbeat = url, name, time.Second
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	return c
}
