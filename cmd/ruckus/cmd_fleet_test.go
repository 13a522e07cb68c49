package main

import (
	"context"
	"encoding/json"
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

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/assets"
	"github.com/ruckus/ruckus/handlers"
	"github.com/ruckus/ruckus/jobs"
)

// startCLIServer serves the API on a real database for the CLI's
// commands (RUCKUS_URL, RUCKUS_TOKEN set for the test) and returns its
// store and user.
func startCLIServer(t *testing.T) (*store.Store, store.User) {
	t.Helper()
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
	t.Setenv("RUCKUS_TOKEN", token)

	return st, u
}

// ruckus fleet submit against the real server: a dry run, the fleet, a
// bad manifest.
func TestFleetSubmitCommand(t *testing.T) {
	st, u := startCLIServer(t)
	ctx := context.Background()
	if code, out, errOut := runCLI(t, "dataset", "upload", "../../../shared/datasets/gsm8k/test.jsonl", "--name", "gsm8k-test"); code != 0 {
		t.Fatalf("upload: %d %q %q", code, out, errOut)
	}
	for _, name := range []string{"Qwen/Qwen2.5-0.5B-Instruct", "gpt-4o-mini"} {
		testkit.Model(ctx, t, st, &testkit.ModelOpts{Name: name, Quantization: "bf16", ContextLength: 32768})
	}
	testkit.Agent(ctx, t, st, &testkit.AgentOpts{Name: "cpu"})
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

// finishFleetRun works a run as its agent would: every item answered
// (each failing with HTTP 429 when fail), and the run closed.
func finishFleetRun(st *store.Store, runID, agentID int64, items int, fail bool) error {
	ctx := context.Background()
	var job int64
	if err := st.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, runID).Scan(&job); err != nil {
		return err
	}
	claim, err := st.ClaimRun(ctx, runID, agentID, job, "sim")
	if err != nil {
		return err
	}
	var rs []store.ResultRecord
	for i := range items {
		res := jobs.Result{Idx: i, CustomID: fmt.Sprintf("q%d", i), Status: jobs.StatusOK, Output: "4", PromptTokens: 7, CompletionTokens: 3,
			ContentEvents: 3, TTFT: 20 * time.Millisecond, E2E: time.Duration(100+i) * time.Millisecond}
		if fail {
			res = jobs.Result{Idx: i, CustomID: fmt.Sprintf("q%d", i), Status: jobs.StatusError, ErrorClass: jobs.ErrHTTP429, Error: "HTTP 429"}
		}
		rs = append(rs, store.ResultRecord{Result: res, SentAt: time.Now()})
	}
	if _, err := st.WriteResults(ctx, claim.Lease, rs); err != nil {
		return err
	}
	sum, err := summary.Run(ctx, st, runID, jobs.SLO{}, time.Second)
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(sum)
	state, why := "completed", ""
	if fail {
		state, why = "failed", "every request failed with HTTP 429"
	}
	return st.FinishRun(ctx, claim.Lease, store.Finish{State: state, StoppedBy: state, Error: why, Segment: time.Second, Summary: raw,
		Throughput: sum.OutputTokensPerS, RequestsPerS: sum.RequestsPerS})
}

// ruckus fleet submit --wait on the fleet document's example manifest
// follows the fleet to its end, prints its summary and fails below
// --min-success; ruckus fleet export writes the document's artifact tree.
func TestFleetWaitAndExport(t *testing.T) {
	st, _ := startCLIServer(t)
	ctx := context.Background()
	dir := t.TempDir()
	for _, name := range []string{"coding-tasks.json", "reasoning"} {
		file := filepath.Join(dir, name+".jsonl")
		var b strings.Builder
		for i := range 3 {
			fmt.Fprintf(&b, "{\"custom_id\":\"q%d\",\"prompt\":\"%s: 2+2? (%d)\",\"reference\":\"4\"}\n", i, name, i)
		}
		if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, out, errOut := runCLI(t, "dataset", "upload", file, "--name", name); code != 0 {
			t.Fatalf("upload: %d %q %q", code, out, errOut)
		}
	}
	agents := map[string]int64{}
	for _, name := range []string{"gpt-4", "claude-3-opus"} {
		testkit.Model(ctx, t, st, &testkit.ModelOpts{Name: name, ParamsB: 1, Quantization: "bf16", ContextLength: 8192})
	}
	for _, rt := range []string{"openai", "anthropic"} {
		a := testkit.Agent(ctx, t, st, &testkit.AgentOpts{Name: rt, Runtimes: []string{rt}})
		agents[rt] = a.ID
	}
	example := "../../app/fleet/testdata/document-example.json"

	code, out, errOut := runCLI(t, "fleet", "submit", example, "--dry-run")
	if code != 0 || !strings.Contains(out, "valid; fleet agentics-fleet-2025 would create 4 run(s)") ||
		!regexp.MustCompile(`agentics-fleet-2025-\d{8}T\d{6}Z-[0-9a-f]{12}  test-bench/coding: claude-3-opus on anthropic / cpu, queue cpu_anthropic, 3 items`).MatchString(out) {
		t.Fatalf("dry run: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "fleet", "submit", example, "--wait", "--min-success", "2"); code != 2 || !strings.Contains(errOut, "--min-success must be between 0 and 1") {
		t.Fatalf("bad --min-success: %d %q", code, errOut)
	}

	// The agents' work, done while the CLI waits: the anthropic run of
	// reasoning fails on every item, the others succeed.
	// work does the agents' part while the CLI waits: once the fleet's
	// four queued runs exist, each is answered, the last failing every
	// item when failLast.
	work := func(failLast bool) chan error {
		worked := make(chan error, 1)
		go func() {
			defer close(worked)
			deadline := time.Now().Add(testkit.Timeout())
			for time.Now().Before(deadline) {
				var ids []int64
				var runtimes []string
				rows, err := st.Pool().Query(ctx, `SELECT id, runtime FROM runs WHERE state = 'queued' ORDER BY id`)
				if err == nil {
					for rows.Next() {
						var id int64
						var rt string
						_ = rows.Scan(&id, &rt)
						ids, runtimes = append(ids, id), append(runtimes, rt)
					}
					rows.Close()
				}
				if len(ids) == 4 {
					for i, id := range ids {
						if err := finishFleetRun(st, id, agents[runtimes[i]], 3, failLast && i == 3); err != nil {
							worked <- err
							return
						}
					}
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
			worked <- fmt.Errorf("the fleet's runs never appeared")
		}()
		return worked
	}
	worked := work(true)
	code, out, errOut = runCLI(t, "fleet", "submit", example, "--wait", "--interval", "100ms", "--min-success", "0.9")
	if err := <-worked; err != nil {
		t.Fatal(err)
	}
	// 12 tests, 9 succeeded: 75 % < 90 %.
	if code != 1 || !strings.Contains(errOut, "success rate 75.0 % is below --min-success 90.0 %") ||
		!strings.Contains(out, "(agentics-fleet-2025): 4 run(s), 3 completed, 1 failed") || !regexp.MustCompile(`tests\s+12\n`).MatchString(out) ||
		!regexp.MustCompile(`succeeded\s+9\n`).MatchString(out) || !regexp.MustCompile(`success rate\s+75.0 %`).MatchString(out) ||
		!regexp.MustCompile(`anthropic\s+3/6 tests succeeded \(50.0 %\)`).MatchString(out) ||
		!regexp.MustCompile(`test-bench\s+2 scenario\(s\), 9/12 tests succeeded`).MatchString(out) ||
		!strings.Contains(out, "(test-bench/reasoning on anthropic:claude-3-opus): every request failed with HTTP 429") {
		t.Fatalf("--wait: %d\n%s\n%s", code, out, errOut)
	}
	fs, err := st.ListFleets(ctx, store.Viewer{Admin: true}, 10)
	if err != nil || len(fs) != 1 {
		t.Fatalf("fleets: %v %v", fs, err)
	}
	id := fs[0].ID

	code, out, errOut = runCLI(t, "fleet", "export", fmt.Sprint(id), "--dir", dir)
	root := filepath.Join(dir, "agentics-fleet-2025-"+fs[0].SubmittedAt.UTC().Format("20060102T150405Z"))
	if code != 0 || !strings.Contains(out, "written under "+root) {
		t.Fatalf("export: %d %q %q", code, out, errOut)
	}
	for _, f := range []string{"fleet.json", "csv/fleet-summary.csv", "csv/repositories.csv", "csv/providers.csv", "csv/categories.csv", "csv/runs.csv",
		"report.html", "test-bench/openai_gpt-4/coding/results.json", "test-bench/openai_gpt-4/coding/results.csv",
		"test-bench/anthropic_claude-3-opus/reasoning/responses.jsonl"} {
		if fi, err := os.Stat(filepath.Join(root, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	var written struct {
		Summary struct {
			TotalTests int `json:"total_tests"`
		} `json:"summary"`
		Manifest struct{ Name string } `json:"manifest"`
	}
	b, _ := os.ReadFile(filepath.Join(root, "fleet.json"))
	if err := json.Unmarshal(b, &written); err != nil || written.Summary.TotalTests != 12 || written.Manifest.Name != "agentics-fleet-2025" {
		t.Fatalf("fleet.json: %v %s", err, b)
	}
	if html, _ := os.ReadFile(filepath.Join(root, "report.html")); !strings.Contains(string(html), "<svg") || strings.Contains(string(html), "<script") {
		t.Fatal("report.html is not the dashboard")
	}
	// A base_dir outside this directory is not followed.
	if _, err := st.Pool().Exec(ctx, `UPDATE fleets SET manifest = jsonb_set(manifest, '{output,base_dir}', '"/tmp/elsewhere"')`); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "fleet", "export", fmt.Sprint(id)); code != 1 || !strings.Contains(errOut, `output.base_dir "/tmp/elsewhere" is not a path inside this directory: give --dir`) {
		t.Fatalf("absolute base_dir: %d %q", code, errOut)
	}
	// --format json: the report alone on standard output.
	b, err = os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(dir, "again.json") // another name: not the same run ids, whatever the second
	if err := os.WriteFile(again, []byte(strings.Replace(string(b), `"agentics-fleet-2025"`, `"agentics-json"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	worked = work(false)
	code, out, errOut = runCLI(t, "fleet", "submit", again, "--wait", "--interval", "100ms", "--format", "json", "--min-success", "1")
	if err := <-worked; err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Summary struct {
			TotalTests  int     `json:"total_tests"`
			SuccessRate float64 `json:"success_rate"`
		} `json:"summary"`
		Failures []any `json:"failures"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.Summary.TotalTests != 12 || rep.Summary.SuccessRate != 1 || len(rep.Failures) != 0 {
		t.Fatalf("--format json: %d %v %q %q", code, err, out, errOut)
	}
	if code, out, _ := runCLI(t, "fleet", "export", "999999"); code != 1 || out != "" {
		t.Fatalf("no such fleet: %d %q", code, out)
	}
}
