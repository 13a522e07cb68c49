package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/cmd/selfbench/internal/benchkit"
)

// The live pages under load (docs/self-benchmarks.md#live-pages): browsers
// keep a benchmark page open while its runs go on, and each page polls its
// runs table and its run cards. This part of bench-web puts a number of
// such browsers on the running benchmarks of one or more server builds and
// measures requests/s and latency per fragment.
//
// Everything here speaks to a build only through its own command line
// (`ruckus migrate up`, `user create`, `token create`, `seed`), its HTTP
// API and pages, and plain SQL on tables every build since the live
// fragments has had (runs, results, run_samples), so that the same driver
// measures an older build beside this one, each on its own database.

// liveBuild is one server under test.
type liveBuild struct {
	label  string
	ruckus string // the build's binary; empty when base names a running server
	dbURL  string
	base   string
	email  string
	pass   string
	token  string
	srv    *benchkit.Server
	pool   *pgxpool.Pool
	// models are the two targets' models and dataset the benchmarks'
	// dataset; empty: two starter models and the largest dataset.
	models  []string
	dataset int64
	// benchmarks are the running benchmarks the pollers watch.
	benchmarks []liveBenchmark
}

type liveBenchmark struct {
	id   int64
	runs []int64
}

// meter reads the build's CPU time (its server's only when it started it).
func (b *liveBuild) meter() cpuMeter {
	m := cpuMeter{}
	if b.srv != nil {
		m.pid = b.srv.Cmd.Process.Pid
	}
	if u, err := url.Parse(b.dbURL); err == nil {
		m.db = strings.TrimPrefix(u.Path, "/")
	}
	return m
}

// liveRuns are every run the pollers watch.
func (b *liveBuild) liveRuns() []int64 {
	var ids []int64
	for _, lb := range b.benchmarks {
		ids = append(ids, lb.runs...)
	}
	return ids
}

const liveOwnerPassword = "live-bench-password-1"

// prepareBuild gives a build with a binary its own database (named after
// its label in DATABASE_URL's cluster), migrated, with an administrator
// (who owns the starter data `ruckus seed` loads) and an owner with an API
// token, and starts its server.
func prepareBuild(ctx context.Context, b *liveBuild, clusterURL string) error {
	dbURL, err := createDatabase(ctx, clusterURL, "live_"+b.label)
	if err != nil {
		return err
	}
	b.dbURL = dbURL
	b.email, b.pass = "owner-"+b.label+"@example.com", liveOwnerPassword
	steps := [][]string{
		{"migrate", "up"},
		{"user", "create", "--email", "admin-" + b.label + "@example.com", "--password", liveOwnerPassword, "--admin"},
		{"user", "create", "--email", b.email, "--password", b.pass},
		{"seed"},
	}
	for _, args := range steps {
		if _, err := b.command(args...); err != nil {
			return err
		}
	}
	out, err := b.command("token", "create", "--email", b.email, "--name", "live")
	if err != nil {
		return err
	}
	lines := strings.Fields(strings.TrimSpace(out))
	if len(lines) == 0 {
		return fmt.Errorf("%s: token create printed nothing", b.label)
	}
	b.token = lines[len(lines)-1]
	b.srv, err = benchkit.StartServer(ctx, b.ruckus, "DATABASE_URL="+dbURL, "RUCKUS_PASSWORD_COST=4")
	if err != nil {
		return fmt.Errorf("%s: %w", b.label, err)
	}
	b.base = b.srv.Base
	return nil
}

// command runs the build's binary on its database and returns its output.
func (b *liveBuild) command(args ...string) (string, error) {
	cmd := exec.Command(b.ruckus, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+b.dbURL, "RUCKUS_PASSWORD_COST=4")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: ruckus %s: %w: %s", b.label, strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// createDatabase creates database name in the cluster of clusterURL
// (dropping an earlier one) and returns its URL.
func createDatabase(ctx context.Context, clusterURL, name string) (string, error) {
	conn, err := pgx.Connect(ctx, clusterURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return "", err
	}
	u, err := url.Parse(clusterURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// seedRunning creates n benchmarks of two targets each (b.models, else two
// starter models) on b.dataset (else the largest it may use) through the
// build's API, then makes their runs running
// as an agent would leave them a minute in: state, counters, 60 results
// and 60 one-second samples each (advance adds more while pollers watch).
func seedRunning(ctx context.Context, b *liveBuild, n int) error {
	var err error
	if b.pool, err = pgxpool.New(ctx, b.dbURL); err != nil {
		return err
	}
	// The profile an agent on a 2-core machine would register.
	if _, err := b.pool.Exec(ctx, `INSERT INTO hardware_profiles (slug, cpu_cores) VALUES ('cpu', 2) ON CONFLICT DO NOTHING`); err != nil {
		return err
	}
	dataset, models := b.dataset, b.models
	if len(models) < 2 {
		models = []string{"Qwen/Qwen2.5-0.5B-Instruct", "microsoft/Phi-3.5-mini-instruct"}
	}
	if dataset == 0 {
		if dataset, err = largestDataset(b); err != nil {
			return err
		}
	}
	for i := range n {
		manifest := map[string]any{"name": fmt.Sprintf("live %d", i), "dataset": dataset,
			"targets": []map[string]string{
				{"model": models[0], "runtime": "sim", "hardware": "cpu"},
				{"model": models[1], "runtime": "sim", "hardware": "cpu"}},
			"load":     map[string]any{"profile": "concurrency", "concurrency": 8},
			"sampling": map[string]any{"max_tokens": 64}}
		var created struct {
			BenchmarkID int64   `json:"benchmark_id"`
			RunIDs      []int64 `json:"run_ids"`
		}
		if err := b.api(http.MethodPost, "/api/v1/benchmarks", manifest, &created); err != nil {
			return err
		}
		b.benchmarks = append(b.benchmarks, liveBenchmark{id: created.BenchmarkID, runs: created.RunIDs})
	}
	return startRuns(ctx, b.pool, b.liveRuns())
}

// largestDataset is the id of the dataset with the most items the owner
// may use.
func largestDataset(b *liveBuild) (int64, error) {
	var list struct {
		Datasets []struct {
			ID    int64 `json:"dataset_id"`
			Count int   `json:"count"`
		} `json:"datasets"`
	}
	if err := b.api(http.MethodGet, "/api/v1/datasets", nil, &list); err != nil {
		return 0, err
	}
	var id int64
	most := -1
	for _, d := range list.Datasets {
		if d.Count > most {
			id, most = d.ID, d.Count
		}
	}
	if id == 0 {
		return 0, fmt.Errorf("%s: no dataset to benchmark (did ruckus seed run?)", b.label)
	}
	return id, nil
}

// api calls the build's JSON API with the owner's token.
func (b *liveBuild) api(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+b.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s: %s %s: %s: %s", b.label, method, path, res.Status, raw)
	}
	return json.Unmarshal(raw, out)
}

// startRuns puts runs in the state a running run is in a minute after its
// agent took it: 60 of 1,000 items done, one in 20 failed, a sample a
// second. No agent holds them, so no reaper reassigns them.
func startRuns(ctx context.Context, pool *pgxpool.Pool, runs []int64) error {
	_, err := pool.Exec(ctx, `UPDATE runs SET state = 'running', mode = 'sim', started_at = now() - interval '60 seconds',
		progress_at = now(), total = 1000, completed = 60, errors = 3, output_tokens = 60 * 40, throughput = 80, eta_seconds = 940
		WHERE id = ANY($1)`, runs)
	if err != nil {
		return err
	}
	_, err = pool.Exec(ctx, `INSERT INTO run_samples (run_id, t, completed, errors, output_tokens, throughput, running, waiting, kv_cache)
		SELECT r, now() - make_interval(secs => 60 - s), s, s / 20, s * 40, 80 + (s % 7), 8, s % 3, 0.3
		FROM unnest($1::bigint[]) AS r, generate_series(1, 60) AS s`, runs)
	if err != nil {
		return err
	}
	return addResults(ctx, pool, runs, 0, 60)
}

// addResults writes items [from, to) of each run as an agent reports
// them: one in 20 an HTTP 500.
func addResults(ctx context.Context, pool *pgxpool.Pool, runs []int64, from, to int) error {
	_, err := pool.Exec(ctx, `INSERT INTO results (run_id, idx, custom_id, status, output, finish_reason, prompt_tokens, completion_tokens,
			sent_at, ttft_ms, e2e_ms, tpot_ms, itl_mean_ms, content_events, http_status, request_id, error_class, error)
		SELECT r, i, 'item-' || lpad(i::text, 5, '0'), CASE WHEN i % 20 = 7 THEN 'error' ELSE 'ok' END,
			CASE WHEN i % 20 = 7 THEN '' ELSE 'The answer is ' || (2 * i) END, 'stop', 20, 40,
			now() - make_interval(secs => ($3 - i) / 2.0), 50 + (i * 7 + r) % 200, 400 + (i * 13 + r) % 1600, 9 + (i % 5), 9 + (i % 5), 40,
			CASE WHEN i % 20 = 7 THEN 500 ELSE 200 END, 'cmpl-' || r || '-' || i,
			CASE WHEN i % 20 = 7 THEN 'http_5xx' ELSE '' END, CASE WHEN i % 20 = 7 THEN 'HTTP 500' ELSE '' END
		FROM unnest($1::bigint[]) AS r, generate_series($2::int, $3::int - 1) AS i
		ON CONFLICT DO NOTHING`, runs, from, to)
	return err
}

// advance moves every watched run on by two items and a sample each
// second until ctx ends, as the agents' reports would.
func advance(ctx context.Context, pool *pgxpool.Pool, runs []int64) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		var done int
		err := pool.QueryRow(ctx, `WITH moved AS (
				UPDATE runs SET completed = completed + 2, output_tokens = output_tokens + 80, progress_at = now(),
					eta_seconds = greatest(total - completed - 2, 0) / 2.0
				WHERE id = ANY($1) AND completed + 2 <= total RETURNING id, completed, errors, output_tokens),
			sampled AS (INSERT INTO run_samples (run_id, t, completed, errors, output_tokens, throughput, running, waiting, kv_cache)
				SELECT id, now(), completed, errors, output_tokens, 80, 8, 1, 0.3 FROM moved)
			SELECT coalesce(max(completed), 0) FROM moved`, runs).Scan(&done)
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if done > 0 {
			if err := addResults(ctx, pool, runs, done-2, done); err != nil && ctx.Err() == nil {
				return err
			}
		}
	}
}

// browser is one signed-in browser session (its own cookie jar).
type browser struct {
	client *http.Client
}

// openBrowsers signs n browsers in as the build's owner through the
// sign-in form, as people would.
func openBrowsers(b *liveBuild, n int, tr *http.Transport) ([]browser, error) {
	out := make([]browser, n)
	for i := range out {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Transport: tr}
		res, err := c.Get(b.base + "/signin")
		if err != nil {
			return nil, err
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		m := csrfField.FindSubmatch(page)
		if m == nil {
			return nil, fmt.Errorf("%s: no CSRF token on the sign-in page", b.label)
		}
		res, err = c.PostForm(b.base+"/signin", url.Values{"email": {b.email}, "password": {b.pass}, "_csrf": {string(m[1])}})
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.Request.URL.Path == "/signin" {
			return nil, fmt.Errorf("%s: sign-in of browser %d failed", b.label, i)
		}
		out[i] = browser{client: c}
	}
	return out, nil
}

// buildFlags are the --build label=binary flags.
type buildFlags []*liveBuild

func (f *buildFlags) String() string { return fmt.Sprint(len(*f), " builds") }

func (f *buildFlags) Set(v string) error {
	label, bin, ok := strings.Cut(v, "=")
	if !ok || label == "" || bin == "" {
		return errors.New("want label=path-to-ruckus")
	}
	*f = append(*f, &liveBuild{label: label, ruckus: bin})
	return nil
}

// runLive measures the live fragments alone: of each --build on its own
// database, or of the server at --url on DATABASE_URL's.
func runLive(builds buildFlags, ext liveBuild, opts liveOptions) error {
	ctx := context.Background()
	clusterURL, err := benchkit.DatabaseURL()
	if err != nil {
		return err
	}
	if ext.base != "" {
		if ext.email == "" || ext.pass == "" || ext.token == "" {
			return errors.New("--url needs --email, --password and --token of the owner")
		}
		ext.label, ext.dbURL = "server", clusterURL
		builds = buildFlags{&ext}
	}
	if len(builds) == 0 {
		return errors.New("--live-only needs --build label=binary (repeatable) or --url")
	}
	for _, b := range builds {
		if b.ruckus != "" {
			if err := prepareBuild(ctx, b, clusterURL); err != nil {
				return err
			}
			defer func() { _ = b.srv.Stop(time.Minute) }()
		}
		if err := seedRunning(ctx, b, opts.benchmarks); err != nil {
			return err
		}
		defer b.pool.Close()
		fmt.Printf("%s: %d running benchmarks at %s\n", b.label, len(b.benchmarks), b.base)
	}
	return measureLive(ctx, builds, opts)
}
