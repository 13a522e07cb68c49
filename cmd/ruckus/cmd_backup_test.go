package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
)

// runsInEveryState adds to the imported (completed) run's benchmark a
// queued, a running, a failed and a cancelled run, the failed one with
// results too, and a queued River job; it returns every run's id.
func runsInEveryState(t *testing.T, pool *pgxpool.Pool, completed int64) []int64 {
	t.Helper()
	ctx := context.Background()
	ids := []int64{completed}
	for _, state := range []string{"queued", "running", "failed", "cancelled"} {
		var id int64
		if err := pool.QueryRow(ctx, `INSERT INTO runs (benchmark_id, model_id, runtime, hardware_profile, mode, state, total, completed, started_at, finished_at, error)
			SELECT benchmark_id, model_id, runtime, hardware_profile, mode, $2, total, CASE WHEN $2 = 'queued' THEN 0 ELSE total END,
				CASE WHEN $2 <> 'queued' THEN now() - interval '1 minute' END, CASE WHEN $2 IN ('failed', 'cancelled') THEN now() END,
				CASE WHEN $2 = 'failed' THEN 'the runtime went away' ELSE '' END
			FROM runs WHERE id = $1 RETURNING id`, completed, state).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO results (run_id, idx, custom_id, status, output, sent_at, e2e_ms, error_class, error)
		SELECT $2, idx, custom_id, 'error', '', sent_at, e2e_ms, 'http_5xx', 'boom' FROM results WHERE run_id = $1`, completed, ids[3]); err != nil {
		t.Fatal(err)
	}
	return ids
}

// session signs in on a server and returns a client that keeps its cookie.
func session(t *testing.T, base, email, password string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(base + "/signin")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := goquery.NewDocumentFromReader(res.Body)
	res.Body.Close()
	csrf, _ := doc.Find(`input[name="_csrf"]`).First().Attr("value")
	res, err = c.PostForm(base+"/signin", url.Values{"_csrf": {csrf}, "email": {email}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in at %s: %d", base, res.StatusCode)
	}
	return c
}

// volatile are the parts of a page that differ between two servers: the
// CSRF token and the asset fingerprints are per server.
var volatile = regexp.MustCompile(`(name="_csrf" value|name="csrf-token" content|hx-headers)="[^"]*"`)

// reads is what a user reads of the database through a server: every
// run's page and exports, the benchmark's page, exports and JSON, and the
// runs' attestations.
func reads(t *testing.T, base, token string, web *http.Client, benchmark int64, runs []int64) map[string]string {
	t.Helper()
	out := map[string]string{}
	get := func(c *http.Client, path string, bearer bool) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if bearer {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, res.StatusCode, b)
		}
		body := string(b)
		if !bearer {
			doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			doc.Find("script, link, header, footer, input[name=_csrf]").Remove()
			body, _ = doc.Find("main").Html()
			body = volatile.ReplaceAllString(body, "")
		}
		if !bearer && len(body) < 200 {
			t.Fatalf("%s: only %q read", path, body)
		}
		out[path] = body + "\n" + res.Header.Get("X-Ruckus-Results-Digest") + res.Header.Get("X-Ruckus-Results-Digests")
	}
	get(web, fmt.Sprintf("/benchmarks/%d", benchmark), false)
	get(http.DefaultClient, fmt.Sprintf("/api/v1/benchmarks/%d/export", benchmark), true)
	get(http.DefaultClient, fmt.Sprintf("/api/v1/benchmarks/%d/summary", benchmark), true)
	for _, id := range runs {
		get(web, fmt.Sprintf("/runs/%d", id), false)
		get(http.DefaultClient, fmt.Sprintf("/api/v1/runs/%d/results?format=csv", id), true)
		get(http.DefaultClient, fmt.Sprintf("/api/v1/runs/%d/results?format=jsonl", id), true)
	}
	get(http.DefaultClient, fmt.Sprintf("/api/v1/runs/%d/attestation", runs[0]), true)
	get(web, "/settings", false)
	return out
}

// A database with runs in every state is backed up, restored into a new
// cluster, and a server started on it shows the same pages, exports and
// signed digests as the first; a restore into a database that is not
// empty is refused, and a backup never overwrites a file.
// lastUsed is a token row's created and last-used cells on the settings
// page; $1 keeps the created one.
var lastUsed = regexp.MustCompile(`(<td>\d{4}-\d{2}-\d{2} \d{2}:\d{2}</td><td>)\d{4}-\d{2}-\d{2} \d{2}:\d{2}`)

func TestBackupRestoresIntoAFreshCluster(t *testing.T) {
	pool := pgtest.NewDB(t)
	st := store.New(pool)
	ctx := context.Background()
	completed := importedRun(t, st, 40, nil)
	runs := runsInEveryState(t, pool, completed)
	var benchmark, userID int64
	if err := pool.QueryRow(ctx, `SELECT r.benchmark_id, b.owner_id FROM runs r JOIN benchmarks b ON b.id = r.benchmark_id WHERE r.id = $1`, completed).Scan(&benchmark, &userID); err != nil {
		t.Fatal(err)
	}
	pw, _ := auth.NewPasswords(4)
	hash, _ := pw.Hash("correct horse battery")
	if err := st.SetUserPassword(ctx, userID, hash, nil); err != nil {
		t.Fatal(err)
	}
	tok, prefix, th := auth.NewAPIToken()
	if _, err := st.CreateAPIToken(ctx, userID, "t", prefix, th); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateWebhook(ctx, userID, store.NewWebhook{URL: "https://hooks.example.com/r", Secret: "sixteen bytes or more", Events: []string{"benchmark.failed"}, Format: "slack"}); err != nil {
		t.Fatal(err)
	}
	svc, err := newAttester(ctx, st, testServerConfig(t, pool), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.AttestRun(ctx, completed); err != nil {
		t.Fatal(err)
	}
	first := "http://" + startServer(t, testServerConfig(t, pool))
	before := reads(t, first, tok, session(t, first, "ops@example.com", "correct horse battery"), benchmark, runs)

	file := filepath.Join(t.TempDir(), "ruckus.dump")
	t.Setenv("DATABASE_URL", pgtest.URL(t, pool))
	started := time.Now()
	if code, out, errOut := runCLI(t, "backup", file); code != 0 || !strings.Contains(out, "backed up to "+file) {
		t.Fatalf("backup: %d %q %q", code, out, errOut)
	}
	backupTook := time.Since(started)
	if code, _, errOut := runCLI(t, "backup", file); code != 1 || !strings.Contains(errOut, "exists") {
		t.Fatalf("a backup over a file: %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "restore", file); code != 1 || !strings.Contains(errOut, "is not empty") {
		t.Fatalf("a restore into the live database: %d %q", code, errOut)
	}

	_, fresh := pgtest.Cluster(t)
	t.Setenv("DATABASE_URL", fresh)
	bad := filepath.Join(t.TempDir(), "not-a-dump")
	if err := os.WriteFile(bad, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "restore", bad); code != 1 || !strings.Contains(errOut, "is not a backup") {
		t.Fatalf("restoring a file that is no backup: %d %q", code, errOut)
	}
	started = time.Now()
	code, out, errOut := runCLI(t, "restore", file)
	if code != 0 || !strings.Contains(out, "restored") || !strings.Contains(out, "ruckus_agent") {
		t.Fatalf("restore: %d %q %q", code, out, errOut)
	}
	restoreTook := time.Since(started)
	t.Logf("backup %v, restore %v (%d runs, 80 results)", backupTook.Round(time.Millisecond), restoreTook.Round(time.Millisecond), len(runs))

	restoredPool, err := pgxpool.New(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer restoredPool.Close()
	var states string
	if err := restoredPool.QueryRow(ctx, `SELECT string_agg(state, ',' ORDER BY id) FROM runs`).Scan(&states); err != nil || states != "completed,queued,running,failed,cancelled" {
		t.Fatalf("restored runs: %q %v", states, err)
	}
	cfg := testServerConfig(t, restoredPool)
	cfg.DatabaseURL = fresh
	second := "http://" + startServer(t, cfg)
	after := reads(t, second, tok, session(t, second, "ops@example.com", "correct horse battery"), benchmark, runs)
	for path, want := range before {
		if path == "/settings" {
			// The token's "last used" is the minute it was last used: the
			// reads after the restore use it again, maybe in the next minute.
			want, after[path] = lastUsed.ReplaceAllString(want, "$1"), lastUsed.ReplaceAllString(after[path], "$1")
		}
		if after[path] != want {
			t.Errorf("%s differs after the restore:\n--- before\n%.600s\n--- after\n%.600s", path, want, after[path])
		}
	}
	if csv := after[fmt.Sprintf("/api/v1/runs/%d/results?format=csv", completed)]; strings.Count(csv, "\n") < 41 {
		t.Fatalf("the completed run's export after the restore: %.300s", csv)
	}
	if !strings.Contains(after[fmt.Sprintf("/api/v1/runs/%d/attestation", completed)], `"valid":true`) {
		t.Fatalf("the restored run's attestation: %s", after[fmt.Sprintf("/api/v1/runs/%d/attestation", completed)])
	}
	// The agents' group role and its rights came back with the restore.
	var agentCanReadRuns bool
	if err := restoredPool.QueryRow(ctx, `SELECT has_table_privilege('ruckus_agent', 'runs', 'SELECT') AND NOT has_table_privilege('ruckus_agent', 'users', 'SELECT')`).Scan(&agentCanReadRuns); err != nil || !agentCanReadRuns {
		t.Fatalf("ruckus_agent's grants after the restore: %v %v", agentCanReadRuns, err)
	}
}
