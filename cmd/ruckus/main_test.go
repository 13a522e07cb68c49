package main

import (
	"bytes"
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

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/config"
	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/dataset/starter"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/assets"
	"github.com/ruckus/ruckus/handlers"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelpAndUsage(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}} {
		code, out, _ := runCLI(t, args...)
		if code != 0 || !strings.Contains(out, "ruckus serve") || !strings.Contains(out, "ruckus migrate up|down") {
			t.Errorf("%v: code %d, out %q", args, code, out)
		}
	}
	if code, _, errOut := runCLI(t, "frobnicate"); code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: code %d, stderr %q", code, errOut)
	}
	if code, out, _ := runCLI(t, "user", "create", "--help"); code != 0 || !strings.Contains(out, "-email") {
		t.Errorf("user create --help: code %d, out %q", code, out)
	}
}

func TestInvalidConfigurationStopsWithTheSettingNamed(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://x@localhost/db")
	t.Setenv("RUCKUS_ADDR", "nonsense")
	code, _, errOut := runCLI(t, "serve")
	if code != 2 || !strings.Contains(errOut, "RUCKUS_ADDR: must be host:port") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
}

func TestUserAndTokenCommands(t *testing.T) {
	pool := pgtest.NewDB(t)
	t.Setenv("DATABASE_URL", pgtest.URL(t, pool))
	t.Setenv("RUCKUS_PASSWORD_COST", "4")

	code, out, errOut := runCLI(t, "user", "create", "--email", "Ada@Example.com", "--admin")
	if code != 0 || !strings.Contains(out, "created admin ada@example.com") || !strings.Contains(out, "password: ") {
		t.Fatalf("user create: %d %q %q", code, out, errOut)
	}
	password := strings.TrimSpace(out[strings.Index(out, "password: ")+len("password: "):])
	st := store.New(pool)
	u, err := st.UserByEmail(context.Background(), "ada@example.com")
	if err != nil || !u.IsAdmin() {
		t.Fatalf("user not stored as admin: %+v %v", u, err)
	}
	pw, _ := auth.NewPasswords(4)
	if !pw.Match(u.PasswordHash, password) {
		t.Fatal("the printed password does not match the stored hash")
	}
	if code, _, errOut := runCLI(t, "user", "create", "--email", "ada@example.com", "--password", "correct horse"); code != 1 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("duplicate user: %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "user", "create", "--email", "b@example.com", "--password", "short"); code != 2 || !strings.Contains(errOut, "8 to 72") {
		t.Fatalf("short password: %d %q", code, errOut)
	}

	code, out, errOut = runCLI(t, "token", "create", "--email", "ada@example.com", "--name", "laptop")
	token := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(token, auth.TokenPrefix) {
		t.Fatalf("token create: %d %q %q", code, out, errOut)
	}
	if got, err := st.UserByAPIToken(context.Background(), auth.HashToken(token)); err != nil || got.ID != u.ID {
		t.Fatalf("printed token does not authenticate: %v", err)
	}
	if code, _, errOut := runCLI(t, "token", "create", "--email", "nobody@example.com"); code != 1 || !strings.Contains(errOut, "no user") {
		t.Fatalf("token for unknown user: %d %q", code, errOut)
	}

	code, out, errOut = runCLI(t, "seed")
	if code != 0 || !strings.Contains(out, "seeded starter dataset") || !strings.Contains(out, "models into the registry") {
		t.Fatalf("seed: %d %q %q", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "seed"); code != 0 || out != "" {
		t.Fatalf("second seed: %d %q, want no change", code, out)
	}

	code, out, _ = runCLI(t, "migrate", "status")
	if code != 0 || !strings.Contains(out, "0001 accounts") || !strings.Contains(out, "River: 0 migrations pending") {
		t.Fatalf("migrate status: %d %q", code, out)
	}
}

func TestBootstrapAdminOnlyWhenNoneExists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(pgtest.NewDB(t))
	pw, _ := auth.NewPasswords(4)
	cfg := config.Defaults()
	var out bytes.Buffer
	if err := bootstrapAdmin(ctx, st, pw, cfg, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "admin@ruckus.local") || !strings.Contains(out.String(), "shown once") {
		t.Fatalf("bootstrap output %q", out.String())
	}
	out.Reset()
	if err := bootstrapAdmin(ctx, st, pw, cfg, &out); err != nil || out.Len() != 0 {
		t.Fatalf("second bootstrap: %v, printed %q", err, out.String())
	}

	st2 := store.New(pgtest.NewDB(t))
	cfg.AdminEmail, cfg.AdminPassword = "root@example.com", "correct horse"
	if err := bootstrapAdmin(ctx, st2, pw, cfg, &out); err != nil {
		t.Fatal(err)
	}
	u, err := st2.UserByEmail(ctx, "root@example.com")
	if err != nil || !u.IsAdmin() || !pw.Match(u.PasswordHash, "correct horse") || strings.Contains(out.String(), "correct horse") {
		t.Fatalf("bootstrap from settings: %+v %v, output %q", u, err, out.String())
	}
}

func TestDatasetUploadCommand(t *testing.T) {
	pool := pgtest.NewDB(t)
	st := store.New(pool)
	ctx := context.Background()
	u := testkit.User(ctx, t, st, &testkit.UserOpts{Email: "ada@example.com"})
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
	rc := testkit.RiverClient(t.Context(), t, pool, nil)
	app := handlers.New(handlers.Deps{
		Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Assets: m, Passwords: pw,
		SessionKey: []byte("0123456789abcdef0123456789abcdef"), SessionTTL: time.Hour, SignInAttempts: 5, SignInWindow: time.Minute,
		MaxRequestBytes: 1 << 20, Uploader: &ingest.Uploader{Store: st, Limits: limits}, DatasetLimits: limits,
		Ready: st.Ping, Benchmarks: testkit.Service(ctx, t, st, &testkit.ServiceOpts{River: rc}),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln) //nolint:errcheck // ends with Shutdown
	t.Cleanup(func() { _ = app.Shutdown() })
	t.Setenv("RUCKUS_URL", "http://"+ln.Addr().String())

	t.Setenv("RUCKUS_TOKEN", "")
	if code, _, errOut := runCLI(t, "dataset", "upload", "x.jsonl"); code != 1 || !strings.Contains(errOut, "RUCKUS_TOKEN is not set") {
		t.Fatalf("without token: %d %q", code, errOut)
	}
	t.Setenv("RUCKUS_TOKEN", token)
	code, out, errOut := runCLI(t, "dataset", "upload", "../../../shared/datasets/gsm8k/test.jsonl", "--name", "GSM8K test")
	if code != 0 || !strings.Contains(out, `"GSM8K test": 1319 items, format gsm8k`) {
		t.Fatalf("upload: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "dataset", "upload", "../../../shared/datasets/gsm8k/test.jsonl"); code != 1 || !strings.Contains(errOut, "an identical dataset exists") {
		t.Fatalf("duplicate: %d %q", code, errOut)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"prompt\":\"ok\"}\n{\"prompt\":1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "dataset", "upload", bad); code != 1 || !strings.Contains(errOut, "line 2: prompt:") {
		t.Fatalf("bad file: %d %q", code, errOut)
	}

	// bench submit: a dry run, then the real thing, then a bad manifest.
	ds, err := st.ListDatasets(ctx, store.Viewer{UserID: u.ID})
	if err != nil || len(ds) != 1 {
		t.Fatalf("datasets: %v %v", ds, err)
	}
	testkit.Model(ctx, t, st, &testkit.ModelOpts{Name: "Qwen/Qwen2.5-0.5B-Instruct", Quantization: "bf16", ContextLength: 32768})
	testkit.Agent(ctx, t, st, &testkit.AgentOpts{Name: "cpu", Profile: store.HardwareProfile{Slug: "cpu-2c", CPUCores: 2}})
	manifest := filepath.Join(t.TempDir(), "bench.yaml")
	body := fmt.Sprintf("name: CLI\ndataset: %d\ntargets: [{model: Qwen/Qwen2.5-0.5B-Instruct, runtime: sim, hardware: cpu-2c}]\nload: {profile: sequential}\nsampling: {max_tokens: 16}\n", ds[0].ID)
	if err := os.WriteFile(manifest, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "bench", "submit", manifest, "--dry-run"); code != 0 || !strings.Contains(out, "valid; it would create 1 run(s)") {
		t.Fatalf("dry run: %d %q %q", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, "bench", "submit", manifest); code != 0 || !strings.Contains(out, "created (queued) with 1 run(s)") || !strings.Contains(out, "1319 items") {
		t.Fatalf("submit: %d %q %q", code, out, errOut)
	}
	if err := os.WriteFile(manifest, []byte(strings.Replace(body, "runtime: sim", "runtime: magic", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "bench", "submit", manifest); code != 1 || !strings.Contains(errOut, "targets[0].runtime: must be one of") {
		t.Fatalf("bad manifest: %d %q", code, errOut)
	}
}

func TestDevSeedsStarterDatasetsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := store.New(pgtest.NewDB(t))
	pw, _ := auth.NewPasswords(4)
	if err := bootstrapAdmin(ctx, st, pw, config.Defaults(), io.Discard); err != nil {
		t.Fatal(err)
	}
	up := &ingest.Uploader{Store: st, Limits: dataset.DefaultLimits()}
	for i := 0; i < 2; i++ {
		if err := seedStarterDatasets(ctx, up, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	ds, err := st.ListDatasets(ctx, store.Viewer{UserID: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != len(starter.All) {
		t.Fatalf("starter datasets visible to another user: %d, want %d shared", len(ds), len(starter.All))
	}
	for _, d := range ds {
		if !d.Starter || d.Visibility != store.VisibilityShared || d.ItemCount < 20 {
			t.Errorf("starter dataset %+v", d)
		}
		// The summaries are scored by ROUGE-L out of the box: exact
		// match would score any real model's summary 0.
		if strings.Contains(d.Name, "summaries") && d.DefaultScorer != "rougeL" {
			t.Errorf("starter summaries default to %q, want rougeL", d.DefaultScorer)
		}
	}
	for i := 0; i < 2; i++ {
		if err := seedModels(ctx, st, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := st.CountModels(ctx); err != nil || n != len(starterModels) {
		t.Fatalf("models after seeding twice: %d %v, want %d", n, err, len(starterModels))
	}
}

func TestAPICommandsNeedOneFile(t *testing.T) {
	for _, args := range [][]string{{"dataset", "upload", "--shared"}, {"bench", "submit", "--dry-run"}} {
		if code, _, errOut := runCLI(t, args...); code != 2 || !strings.Contains(errOut, "ruckus "+args[0]+" "+args[1]+" needs a FILE") {
			t.Errorf("%v: %d %q", args, code, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "dataset", "upload", "a.jsonl", "--shared", "b.jsonl"); code != 2 || !strings.Contains(errOut, "one FILE at a time") {
		t.Errorf("two files: %d %q", code, errOut)
	}
}

// ruckus agent create prints a DATABASE_URL that logs in as the agent's own
// restricted role; revoke drops it.
func TestAgentRoleCommands(t *testing.T) {
	pool := pgtest.NewDB(t)
	t.Setenv("DATABASE_URL", pgtest.URL(t, pool))
	ctx := context.Background()

	code, out, errOut := runCLI(t, "agent", "create", "gpu-7")
	if code != 0 || !strings.Contains(out, "DATABASE_URL='") {
		t.Fatalf("agent create: %d %q %q", code, out, errOut)
	}
	u := out[strings.Index(out, "DATABASE_URL='")+len("DATABASE_URL='"):]
	u = u[:strings.Index(u, "'")]
	var role string
	t.Cleanup(func() { _, _ = pool.Exec(context.Background(), "DROP ROLE IF EXISTS "+pgx.Identifier{role}.Sanitize()) })
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("connect with the printed URL: %v", err)
	}
	var member bool
	if err := conn.QueryRow(ctx, `SELECT session_user, pg_has_role(session_user, 'ruckus_agent', 'MEMBER')`).Scan(&role, &member); err != nil || !member {
		t.Fatalf("role %q member of ruckus_agent: %v %v", role, member, err)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM users`).Scan(&n); err == nil {
		t.Fatal("the agent's role reads users")
	}
	conn.Close(ctx)
	// The key is printed once, and only its hash kept; --key-file writes
	// it (owner-only) instead, and replaces the printed one.
	printed := regexp.MustCompile(`RUCKUS_AGENT_KEY='(rka_[A-Za-z0-9_-]{43})'`).FindStringSubmatch(out)
	if printed == nil {
		t.Fatalf("agent create printed no key: %q", out)
	}
	keyFile := filepath.Join(t.TempDir(), "key")
	code, out, errOut = runCLI(t, "agent", "create", "gpu-7", "--key-file", keyFile)
	if code != 0 || strings.Contains(out, "rka_") || !strings.Contains(out, "--key-file "+keyFile) {
		t.Fatalf("agent create --key-file: %d %q %q", code, out, errOut)
	}
	b, err := os.ReadFile(keyFile)
	fi, _ := os.Stat(keyFile)
	written := strings.TrimSpace(string(b))
	if err != nil || fi.Mode().Perm() != 0o600 || written == printed[1] || !strings.HasPrefix(written, "rka_") {
		t.Errorf("key file %q mode %v (%v), want a new key, mode 0600", written, fi.Mode().Perm(), err)
	}
	var hashes int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM agents WHERE name = 'gpu-7' AND key_hash = sha256(convert_to($1, 'UTF8'))`, written).Scan(&hashes); err != nil || hashes != 1 {
		t.Errorf("the written key's hash is not the agent's: %d %v", hashes, err)
	}
	for _, bad := range [][]string{{"agent", "create", "-rf"}, {"agent", "create", "ok", "--password", "short"}, {"agent", "create"}} {
		if code, _, _ := runCLI(t, bad...); code != 2 {
			t.Errorf("%q: exit %d, want 2", bad, code)
		}
	}

	if code, out, errOut := runCLI(t, "agent", "revoke", "gpu-7"); code != 0 || !strings.Contains(out, "revoked agent gpu-7") {
		t.Fatalf("agent revoke: %d %q %q", code, out, errOut)
	}
	if conn, err := pgx.Connect(ctx, u); err == nil {
		conn.Close(ctx)
		t.Fatal("the revoked role still logs in")
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM agents WHERE key_hash IS NOT NULL`).Scan(&hashes); err != nil || hashes != 0 {
		t.Errorf("a revoked agent's key is kept: %d %v", hashes, err)
	}
	if code, _, errOut := runCLI(t, "agent", "revoke", "gpu-7"); code != 1 || !strings.Contains(errOut, "no role of its own") {
		t.Fatalf("second revoke: %d %q", code, errOut)
	}
}
