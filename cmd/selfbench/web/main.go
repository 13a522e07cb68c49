// Command web measures the result pages and exports (`make
// bench-web`): it seeds 1,000,000 result rows (100 runs × 10,000 items, and
// a 4-run benchmark of 20-step sweeps), starts a real `ruckus serve`, and
// prints in one run the p95 of the results page, of a 4-run comparison
// page, of a sweep's run page, of 4 sweeps' overlaid curves, of a 4-run
// benchmark's report and of the progress fragment,
// the requests/s wrk (or, without wrk, a Go keep-alive loop) sustains on
// the fragment, and the throughput of exporting all 1,000,000 rows as CSV
// beside `psql \copy (SELECT …) TO STDOUT CSV` of the same rows. Last,
// browsers poll the live fragments of running benchmarks (live.go).
//
// With --live-only it measures the live fragments alone: of the server
// builds named by --build (each on its own database in DATABASE_URL's
// cluster, taking turns), or of a server already running at --url.
//
// Run it through `ruckus dev-db exec` (DATABASE_URL set, psql on PATH).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/bench"
	engine "github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/summary"
	"github.com/ruckus/ruckus/cmd/selfbench/internal/benchkit"
	"github.com/ruckus/ruckus/jobs"
)

func main() {
	ruckus := flag.String("ruckus", "bin/ruckus", "the server binary")
	runs := flag.Int("runs", 100, "runs to seed")
	items := flag.Int("items", 10_000, "items per run")
	samples := flag.Int("requests", 200, "requests per page measured")
	var lo liveOptions
	flag.IntVar(&lo.pollers, "pollers", 100, "browsers polling live fragments, per build")
	flag.IntVar(&lo.benchmarks, "live-benchmarks", 20, "running benchmarks the browsers watch, per build")
	flag.DurationVar(&lo.duration, "live-duration", 10*time.Second, "how long the browsers poll one fragment in one round")
	flag.IntVar(&lo.rounds, "live-rounds", 1, "rounds in which the builds take turns")
	liveOnly := flag.Bool("live-only", false, "measure only the live fragments (of --build builds or the server at --url)")
	var builds buildFlags
	flag.Var(&builds, "build", "label=binary: a server build whose live fragments to measure, on its own database (repeat; the first is the ratios' reference)")
	var ext liveBuild
	flag.StringVar(&ext.base, "url", "", "a running server whose live fragments to measure (its database is DATABASE_URL)")
	flag.StringVar(&ext.email, "email", "", "with --url: the owner the browsers sign in as")
	flag.StringVar(&ext.pass, "password", "", "with --url: the owner's password")
	flag.StringVar(&ext.token, "token", "", "with --url: the owner's API token")
	flag.Parse()
	var err error
	if *runs < 1 || *items < 1 || *samples < 1 {
		fmt.Fprintln(os.Stderr, "bench-web: --runs, --items and --requests must be at least 1")
		os.Exit(2)
	}
	if *liveOnly {
		err = runLive(builds, ext, lo)
	} else {
		err = run(*ruckus, *runs, *items, *samples, lo)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-web:", err)
		os.Exit(1)
	}
}

const password = "bench-password-1"

func run(ruckus string, nRuns, nItems, nReq int, lo liveOptions) error {
	ctx := context.Background()
	dbURL, err := benchkit.DatabaseURL()
	if err != nil {
		return err
	}
	pool, err := benchkit.OpenMigrated(ctx, dbURL, 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)

	t0 := time.Now()
	email := fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano())
	pw, err := auth.NewPasswords(4)
	if err != nil {
		return err
	}
	hash, err := pw.Hash(password)
	if err != nil {
		return err
	}
	u, err := st.CreateUser(ctx, store.NewUser{Email: email, PasswordHash: hash, Role: store.RoleUser})
	if err != nil {
		return err
	}
	v := store.Viewer{UserID: u.ID}
	token, prefix, thash := auth.NewAPIToken()
	if _, err := st.CreateAPIToken(ctx, u.ID, "bench", prefix, thash); err != nil {
		return err
	}
	// A benchmark's targets differ: one model per target.
	fleet, err := benchkit.SeedFleet(ctx, st, v, nItems, 50)
	if err != nil {
		return err
	}
	models, agent := fleet.Models, fleet.Agent
	svc, err := benchkit.NewService(pool, st, time.Hour)
	if err != nil {
		return err
	}
	var runIDs, benchmarkIDs []int64
	for len(runIDs) < nRuns {
		n := min(50, nRuns-len(runIDs))
		targets := make([]bench.Target, n)
		for i := range targets {
			targets[i] = bench.Target{Model: models[i], Runtime: "sim", Hardware: "cpu"}
		}
		c, err := svc.Create(ctx, v, bench.Manifest{Name: "web bench", Dataset: bench.DatasetRef{ID: fleet.DatasetID}, Targets: targets,
			Load: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 8}, Sampling: jobs.Sampling{MaxTokens: 64}})
		if err != nil {
			return err
		}
		benchmarkIDs = append(benchmarkIDs, c.BenchmarkID)
		for _, r := range c.Runs {
			runIDs = append(runIDs, r.RunID)
		}
	}
	// Results straight in SQL (the agent's path is measured elsewhere): a
	// run's outputs, tokens, latencies and scores, a few errors.
	_, err = pool.Exec(ctx, `UPDATE runs SET state = 'completed', agent_id = $2, mode = 'sim', started_at = now(), finished_at = now(),
		completed = $3, errors = $3 / 50, total = $3, output_tokens = $3 * 40, throughput = 500, measured_seconds = 100 WHERE id = ANY($1)`,
		runIDs, agent.ID, nItems)
	if err != nil {
		return err
	}
	_, err = pool.Exec(ctx, `INSERT INTO results (run_id, idx, custom_id, status, output, finish_reason, prompt_tokens, completion_tokens,
			sent_at, ttft_ms, e2e_ms, tpot_ms, itl_mean_ms, content_events, http_status, request_id, error_class, error, agent_id, score)
		SELECT r, i, 'item-' || lpad(i::text, 5, '0'), CASE WHEN i % 50 = 7 THEN 'error' ELSE 'ok' END,
			CASE WHEN i % 50 = 7 THEN '' ELSE 'The answer is ' || (2 * i + (r % 3)) || '. Worked: ' || repeat('step ', 10 + i % 20) END,
			'stop', 20, 40, now() + make_interval(secs => i / 100.0),
			50 + (i * 7 + r) % 200, 400 + (i * 13 + r) % 1600, 9 + (i % 5), 9 + (i % 5), 40, 200, 'cmpl-' || r || '-' || i,
			CASE WHEN i % 50 = 7 THEN 'http_5xx' ELSE '' END, CASE WHEN i % 50 = 7 THEN 'HTTP 500' ELSE '' END, $2,
			CASE WHEN i % 50 = 7 THEN NULL WHEN (i + r) % 4 = 0 THEN 0 ELSE 1 END
		FROM unnest($1::bigint[]) AS r, generate_series(0, $3 - 1) AS i`, runIDs, agent.ID, nItems)
	if err != nil {
		return err
	}
	for _, id := range runIDs {
		sum, err := summary.Run(ctx, st, id, jobs.SLO{}, 0)
		if err != nil {
			return err
		}
		raw, _ := json.Marshal(sum)
		if _, err := pool.Exec(ctx, `UPDATE runs SET summary = $2 WHERE id = $1`, id, raw); err != nil {
			return err
		}
	}
	// A 4-run benchmark of 20-step sweeps, for the sweep pages and the report.
	sweep, err := svc.Create(ctx, v, bench.Manifest{Name: "sweep bench", Dataset: bench.DatasetRef{ID: fleet.DatasetID},
		Targets: []bench.Target{{Model: models[0], Runtime: "sim", Hardware: "cpu"}, {Model: models[1], Runtime: "sim", Hardware: "cpu"},
			{Model: models[2], Runtime: "sim", Hardware: "cpu"}, {Model: models[3], Runtime: "sim", Hardware: "cpu"}},
		Load: jobs.LoadProfile{Profile: jobs.LoadSweep, Concurrency: 64, Rates: sweepRates(20)}, Sampling: jobs.Sampling{MaxTokens: 64}})
	if err != nil {
		return err
	}
	var sweepRuns []int64
	for _, r := range sweep.Runs {
		sweepRuns = append(sweepRuns, r.RunID)
	}
	_, err = pool.Exec(ctx, `UPDATE runs SET state = 'completed', agent_id = $2, mode = 'sim', started_at = now(), finished_at = now(),
		completed = $3, total = $3, output_tokens = $3 * 40, throughput = 500, measured_seconds = 100 WHERE id = ANY($1)`, sweepRuns, agent.ID, nItems)
	if err != nil {
		return err
	}
	// Step k of 20 (k = 1…20) offers k req/s; latency grows with the rate.
	_, err = pool.Exec(ctx, `INSERT INTO results (run_id, idx, custom_id, status, output, finish_reason, prompt_tokens, completion_tokens,
			sent_at, ttft_ms, e2e_ms, tpot_ms, itl_mean_ms, content_events, http_status, request_id, agent_id, score, phase, itl_gaps_us)
		SELECT r, i, 'item-' || lpad(i::text, 5, '0'), 'ok', 'The answer is ' || (2 * i), 'stop', 20, 40,
			now() + make_interval(secs => i / 100.0), 50 + k * 20 + (i % 50), 400 + k * 60 + (i % 200), 9 + k, 9 + k, 40, 200,
			'cmpl-' || r || '-' || i, $2, (i + r) % 2, 'rate ' || to_char(k, 'FM990.00') || '/s', array_fill((9 + k) * 1000, ARRAY[39])
		FROM unnest($1::bigint[]) AS r, generate_series(0, $3 - 1) AS i, LATERAL (SELECT 1 + i * 20 / $3 AS k) AS step`, sweepRuns, agent.ID, nItems)
	if err != nil {
		return err
	}
	for _, id := range sweepRuns {
		sum, err := summary.Run(ctx, st, id, jobs.SLO{TTFT: jobs.Duration(300 * time.Millisecond)}, 0)
		if err != nil {
			return err
		}
		raw, _ := json.Marshal(sum)
		if _, err := pool.Exec(ctx, `UPDATE runs SET summary = $2 WHERE id = $1`, id, raw); err != nil {
			return err
		}
	}
	// What each run's score job keeps (jobs.ScoreRunWorker): its quality
	// under its scorer, its figures with their intervals, and its paired
	// comparisons with the other runs of its benchmark.
	t1 := time.Now()
	if err := conclude(ctx, st, append(slices.Clone(runIDs), sweepRuns...)); err != nil {
		return err
	}
	fmt.Printf("kept the runs' conclusions (qualities, intervals, %d-run benchmarks' pairs) in %.1f s\n", min(50, nRuns), time.Since(t1).Seconds())
	// One run stays live, with samples, for the progress fragment.
	live := runIDs[0]
	if _, err := pool.Exec(ctx, `UPDATE runs SET state = 'running', finished_at = NULL, eta_seconds = 30 WHERE id = $1`, live); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `ANALYZE`); err != nil {
		return err
	}
	fmt.Printf("seeded %d runs × %d items = %d result rows in %.1f s\n", nRuns, nItems, nRuns*nItems, time.Since(t0).Seconds())

	srv, err := benchkit.StartServer(ctx, ruckus, "RUCKUS_ADMIN_PASSWORD=bench-password", "RUCKUS_PASSWORD_COST=4")
	if err != nil {
		return err
	}
	defer func() { _ = srv.Stop(time.Minute) }()
	base := srv.Base
	client, cookie, err := signIn(base, email)
	if err != nil {
		return err
	}

	benchPage := func(name, path string, target time.Duration) error {
		p95, err := p95Of(client, base+path, nReq)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Printf("%-34s p95 %6.1f ms over %d requests (target ≤ %v)\n", name, ms(p95), nReq, target)
		return nil
	}
	mid := runIDs[len(runIDs)/2]
	if err := benchPage("results page (10,000-item run)", fmt.Sprintf("/runs/%d", mid), 30*time.Millisecond); err != nil {
		return err
	}
	if err := benchPage("results page, sorted by E2E, deep", fmt.Sprintf("/runs/%d?sort=e2e&dir=desc&after=1000:5000", mid), 30*time.Millisecond); err != nil {
		return err
	}
	cmp := fmt.Sprintf("/compare?runs=%d,%d,%d,%d", runIDs[1], runIDs[2], runIDs[3], runIDs[4])
	if err := benchPage("comparison page (4 runs)", cmp, 30*time.Millisecond); err != nil {
		return err
	}
	if err := benchPage("run page, 20-step sweep", fmt.Sprintf("/runs/%d", sweepRuns[0]), 50*time.Millisecond); err != nil {
		return err
	}
	if err := benchPage("comparison, 4 sweeps' curves", fmt.Sprintf("/compare?runs=%d,%d,%d,%d", sweepRuns[0], sweepRuns[1], sweepRuns[2], sweepRuns[3]),
		50*time.Millisecond); err != nil {
		return err
	}
	if err := benchPage("report, 4-run benchmark", fmt.Sprintf("/benchmarks/%d/report.html", sweep.BenchmarkID), 200*time.Millisecond); err != nil {
		return err
	}
	if err := benchPage("start page (recent benchmarks)", "/", 50*time.Millisecond); err != nil {
		return err
	}
	if err := benchPage(fmt.Sprintf("verdict, %d-run benchmark", nRuns-50*(len(benchmarkIDs)-1)), fmt.Sprintf("/benchmarks/%d/verdict", benchmarkIDs[len(benchmarkIDs)-1]), 50*time.Millisecond); err != nil {
		return err
	}
	frag := fmt.Sprintf("/benchmarks/%d/runs", benchmarkIDs[0])
	if err := benchPage(fmt.Sprintf("progress fragment (%d runs)", min(50, nRuns)), frag, 5*time.Millisecond); err != nil {
		return err
	}
	rps, tool, err := loadFragment(base+frag, cookie)
	if err != nil {
		return err
	}
	fmt.Printf("%-34s %6.0f requests/s with %s (target ≥ 5,000)\n", "progress fragment, sustained", rps, tool)

	// Export: every row, through the API, against psql.
	start := time.Now()
	var bytesOut int64
	for _, b := range benchmarkIDs {
		n, err := download(base+fmt.Sprintf("/api/v1/benchmarks/%d/export?format=csv", b), token)
		if err != nil {
			return err
		}
		bytesOut += n
	}
	exportTime := time.Since(start)
	start = time.Now()
	// The same SELECT the export hands to COPY (run columns included), so
	// both produce the same bytes.
	query := strings.Join(strings.Fields(store.ResultsCSVQuery(runIDs, true, false)), " ")
	counter := &countWriter{}
	if err := benchkit.Psql(dbURL, `\copy (`+query+`) TO STDOUT WITH (FORMAT csv, HEADER true)`, counter); err != nil {
		return err
	}
	psqlTime := time.Since(start)
	rows := float64(nRuns * nItems)
	fmt.Printf("CSV export, %d rows via the API:       %.1f s = %.0f rows/s, %.1f MB/s\n", nRuns*nItems, exportTime.Seconds(), rows/exportTime.Seconds(), float64(bytesOut)/1e6/exportTime.Seconds())
	fmt.Printf("psql \\copy (SELECT …) TO STDOUT CSV:    %.1f s = %.0f rows/s, %.1f MB/s\n", psqlTime.Seconds(), rows/psqlTime.Seconds(), float64(counter.n)/1e6/psqlTime.Seconds())
	fmt.Printf("export ratio ruckus / psql (rows/s): %.2f (target ≥ 0.70)\n", psqlTime.Seconds()/exportTime.Seconds())

	// The live pages: browsers on the fragments of running benchmarks.
	lb := &liveBuild{label: "this", ruckus: ruckus, dbURL: dbURL, base: base, email: email, pass: password, token: token, srv: srv,
		models: models[:2], dataset: fleet.DatasetID}
	if err := seedRunning(ctx, lb, lo.benchmarks); err != nil {
		return err
	}
	defer lb.pool.Close()
	return measureLive(ctx, []*liveBuild{lb}, lo)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sweepRates is 1, 2, …, n requests/s.
func sweepRates(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var csrfField = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// signIn signs in through the form and returns a client with the session
// and the Cookie header for wrk.
func signIn(base, email string) (*http.Client, string, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	res, err := c.Get(base + "/signin")
	if err != nil {
		return nil, "", err
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfField.FindSubmatch(page)
	if m == nil {
		return nil, "", errors.New("no CSRF token on the sign-in page")
	}
	res, err = c.PostForm(base+"/signin", url.Values{"email": {email}, "password": {password}, "_csrf": {string(m[1])}})
	if err != nil {
		return nil, "", err
	}
	res.Body.Close()
	u, _ := url.Parse(base)
	var parts []string
	for _, ck := range jar.Cookies(u) {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	check, err := c.Get(base + "/benchmarks")
	if err != nil {
		return nil, "", err
	}
	check.Body.Close()
	if check.Request.URL.Path != "/benchmarks" {
		return nil, "", errors.New("sign-in failed")
	}
	return c, strings.Join(parts, "; "), nil
}

// p95Of fetches u n times one after another (after 10 warm-up requests)
// and returns the 95th percentile latency.
func p95Of(c *http.Client, u string, n int) (time.Duration, error) {
	get := func() (time.Duration, error) {
		start := time.Now()
		res, err := c.Get(u)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			return 0, fmt.Errorf("%s: %s", u, res.Status)
		}
		return time.Since(start), nil
	}
	for range 10 {
		if _, err := get(); err != nil {
			return 0, err
		}
	}
	d := make([]time.Duration, n)
	for i := range d {
		var err error
		if d[i], err = get(); err != nil {
			return 0, err
		}
	}
	slices.Sort(d)
	return d[int(float64(n-1)*0.95)], nil
}

// loadFragment measures the requests/s the fragment sustains for 10 s:
// with wrk (2 threads, 64 connections) when it is installed, else with 64
// keep-alive goroutines.
func loadFragment(u, cookie string) (float64, string, error) {
	if path, err := exec.LookPath("wrk"); err == nil {
		// As htmx polls it: with the HX-Request header.
		out, err := exec.Command(path, "-t2", "-c64", "-d10s", "-H", "Cookie: "+cookie, "-H", "HX-Request: true", u).CombinedOutput()
		if err != nil {
			return 0, "", fmt.Errorf("wrk: %v: %s", err, out)
		}
		m := regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`).FindSubmatch(out)
		if m == nil || strings.Contains(string(out), "Non-2xx") {
			return 0, "", fmt.Errorf("wrk: %s", out)
		}
		var rps float64
		fmt.Sscanf(string(m[1]), "%g", &rps)
		return rps, "wrk -t2 -c64 -d10s", nil
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	c := &http.Client{Transport: tr}
	var n atomic.Int64
	var failed atomic.Int64
	stop := time.Now().Add(10 * time.Second)
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				req, _ := http.NewRequest(http.MethodGet, u, nil)
				req.Header.Set("Cookie", cookie)
				req.Header.Set("HX-Request", "true")
				res, err := c.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					failed.Add(1)
					continue
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		return 0, "", fmt.Errorf("%d fragment requests failed", failed.Load())
	}
	return float64(n.Load()) / 10, "a Go loop, 64 keep-alive connections (wrk not installed)", nil
}

func download(u, token string) (int64, error) {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return 0, fmt.Errorf("%s: %s", u, res.Status)
	}
	return io.Copy(io.Discard, res.Body)
}

// conclude does for each run what its score job does once it has
// finished: scores its answers (the seeded 0/1 scores, with the exact
// scorer's bootstrap interval), keeps its figures with their intervals and
// its paired comparisons with its benchmark's other runs.
func conclude(ctx context.Context, st *store.Store, ids []int64) error {
	for _, id := range ids {
		rows, err := st.Pool().Query(ctx, `SELECT idx, score FROM results WHERE run_id = $1 AND sample = 0 ORDER BY idx`, id)
		if err != nil {
			return err
		}
		var idx []int32
		var scores []*float64
		var all []float64
		for rows.Next() {
			var i int32
			var s *float64
			if err := rows.Scan(&i, &s); err != nil {
				return err
			}
			idx, scores = append(idx, i), append(scores, s)
			if s != nil {
				all = append(all, *s)
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		mean, lo, hi := score.MeanCI(all, uint64(id))
		if err := st.SaveScores(ctx, id, idx, nil, scores, store.RunQuality{Scorer: "exact", Scored: len(all), Mean: &mean, Low: &lo, High: &hi}); err != nil {
			return err
		}
		if err := engine.ComputeRunStats(ctx, st, id); err != nil {
			return err
		}
		if err := engine.PairRunQualities(ctx, st, id); err != nil {
			return err
		}
	}
	return nil
}
