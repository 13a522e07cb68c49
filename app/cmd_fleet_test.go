package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/assets"
	"github.com/ruckus/ruckus/handlers"
	"github.com/ruckus/ruckus/jobs"
)

// ruckus fleet submit against the real server: a dry run, the fleet, a
// bad manifest.
func TestFleetSubmitCommand(t *testing.T) {
	pool := pgtest.NewDB(t)
	st := store.New(pool)
	ctx := context.Background()
	u, err := st.CreateUser(ctx, store.NewUser{Email: "ada@example.com", PasswordHash: "x", Role: store.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	token, prefix, hash := auth.NewAPIToken()
	if _, err := st.CreateAPIToken(ctx, u.ID, "cli", prefix, hash); err != nil {
		t.Fatal(err)
	}
	m, err := assets.New()
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := auth.NewPasswords(4)
	limits := dataset.DefaultLimits()
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	app := handlers.New(handlers.Deps{
		Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Assets: m, Passwords: pw,
		SessionKey: []byte("0123456789abcdef0123456789abcdef"), SessionTTL: time.Hour, SignInAttempts: 5, SignInWindow: time.Minute,
		MaxRequestBytes: 1 << 20, Uploader: &ingest.Uploader{Store: st, Limits: limits}, DatasetLimits: limits,
		Ready: st.Ping, Benchmarks: &bench.Planner{Store: st, River: rc, StaleAfter: time.Minute},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln) //nolint:errcheck // ends with Shutdown
	t.Cleanup(func() { _ = app.Shutdown() })
	t.Setenv("RUCKUS_URL", "http://"+ln.Addr().String())
	t.Setenv("RUCKUS_TOKEN", token)

	if code, out, errOut := runCLI(t, "dataset", "upload", "../../shared/datasets/gsm8k/test.jsonl", "--name", "gsm8k-test"); code != 0 {
		t.Fatalf("upload: %d %q %q", code, out, errOut)
	}
	for _, name := range []string{"Qwen/Qwen2.5-0.5B-Instruct", "gpt-4o-mini"} {
		if _, err := st.CreateModel(ctx, store.ModelFields{Name: name, ParamsB: 0.5, Quantization: "bf16", ContextLength: 32768}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.RegisterAgent(ctx, store.AgentRegistration{Name: "cpu", ProtocolVersion: jobs.ProtocolVersion, Runtimes: []string{"sim"},
		Profile: store.HardwareProfile{Slug: "cpu", CPUCores: 2}}); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(t.TempDir(), "fleet.yaml")
	body := `name: cli-fleet
scenarios:
  - {name: gsm8k, dataset: gsm8k-test, load: {profile: sequential, max_requests: 5}, sampling: {max_tokens: 16}, scorer: numeric}
  - {name: burst, dataset: gsm8k-test, load: {profile: concurrency, concurrency: 4, max_requests: 8}, sampling: {max_tokens: 16}}
targets:
  - {model: Qwen/Qwen2.5-0.5B-Instruct, runtime: sim, hardware: cpu}
  - openai:gpt-4o-mini
`
	if err := os.WriteFile(manifest, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`cli-fleet-\d{8}T\d{6}Z-[0-9a-f]{12}  burst: gpt-4o-mini on openai / cpu, queue cpu_openai, 8 items  \(waiting for an agent\)`)
	code, out, errOut := runCLI(t, "fleet", "submit", manifest, "--dry-run")
	if code != 0 || !strings.Contains(out, "valid; fleet cli-fleet would create 4 run(s)") || !id.MatchString(out) {
		t.Fatalf("dry run: %d %q %q", code, out, errOut)
	}
	if n, err := st.ListFleets(ctx, store.Viewer{UserID: u.ID}, 10); err != nil || len(n) != 0 {
		t.Fatalf("a dry run made fleets: %v %v", n, err)
	}
	code, out, errOut = runCLI(t, "fleet", "submit", manifest)
	fs, err := st.ListFleets(ctx, store.Viewer{UserID: u.ID}, 10)
	if err != nil || len(fs) != 1 {
		t.Fatalf("fleets: %v %v", fs, err)
	}
	if code != 0 || !strings.Contains(out, fmt.Sprintf("fleet %d (cli-fleet) created with 4 run(s)", fs[0].ID)) || !id.MatchString(out) ||
		!strings.Contains(out, fmt.Sprintf("/fleets/%d/report?format=json|csv", fs[0].ID)) || fs[0].Runs != 4 || fs[0].Scenarios != 2 {
		t.Fatalf("submit: %d %q %q %+v", code, out, errOut, fs[0])
	}
	if err := os.WriteFile(manifest, []byte(strings.Replace(body, "openai:gpt-4o-mini", "mystery:model", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "fleet", "submit", manifest); code != 1 || !strings.Contains(errOut, `targets[1]: unknown provider "mystery"`) {
		t.Fatalf("bad manifest: %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "fleet", "launch"); code == 0 || !strings.Contains(errOut, "ruckus fleet submit FILE") {
		t.Fatalf("usage: %d %q", code, errOut)
	}
}
