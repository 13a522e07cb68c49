// Command eta measures how right a run's ETA is (`make bench-eta`). On the
// cluster DATABASE_URL names (run it through `ruckus dev-db exec`) it
// migrates, creates a user, a dataset of --items items, a model and an
// agent login, starts a real `agentd run` with the simulated runtime at
// constant latencies, and launches a one-run benchmark at --concurrency.
// While the run goes it reads the run's row (eta_seconds, completed,
// progress_at: what the live pages show) every 100 ms; once it has ended
// it knows when the last request came back and prints, at 5, 10, 25 and
// 50 % progress, the ETA shown, the true time left and the error, beside
// what the old formula (remaining ÷ done × elapsed) would have shown at
// the same moment. The target is within 20 % from 10 % progress on.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/cmd/selfbench/internal/benchkit"
	"github.com/ruckus/ruckus/jobs"
)

// options are the run's shape.
type options struct {
	agentd           string
	items            int
	concurrency      int
	ttft, itl        time.Duration
	tokens           int
	progressInterval time.Duration
	timeout          time.Duration
}

// The progress points of the table, and the target.
var points = []float64{0.05, 0.10, 0.25, 0.50}

const (
	targetFrom  = 0.10 // progress from which the target holds
	targetError = 0.20 // at most this far from the truth
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var o options
	flag.StringVar(&o.agentd, "agentd", "bin/agentd", "the agentd binary that works the run")
	flag.IntVar(&o.items, "items", 400, "items in the run")
	flag.IntVar(&o.concurrency, "concurrency", 8, "requests in flight (the concurrency profile)")
	flag.DurationVar(&o.ttft, "ttft", 100*time.Millisecond, "the sim's time to first token (a constant)")
	flag.DurationVar(&o.itl, "itl", 20*time.Millisecond, "the sim's time between tokens (a constant)")
	flag.IntVar(&o.tokens, "output-tokens", 64, "tokens in every answer")
	flag.DurationVar(&o.progressInterval, "progress-interval", time.Second, "how often agentd writes progress (its default)")
	flag.DurationVar(&o.timeout, "timeout", 4*time.Minute, "longest the run may take")
	flag.Parse()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-eta:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, out io.Writer) error {
	dbURL, err := benchkit.DatabaseURL()
	if err != nil {
		return err
	}
	if _, err := os.Stat(o.agentd); err != nil {
		return fmt.Errorf("--agentd: %w (make build makes it)", err)
	}
	if o.items < 20 || o.concurrency < 1 || o.tokens < 1 {
		return errors.New("want at least 20 items, a concurrency of 1 or more and 1 or more output tokens")
	}
	pool, err := benchkit.OpenMigrated(ctx, dbURL, 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)

	// What a run needs: a user, a dataset, a model, an agent.
	stamp := benchkit.RandomHex(4)
	u, err := st.CreateUser(ctx, store.NewUser{Email: "eta-" + stamp + "@example.com", PasswordHash: "x", Role: store.RoleUser})
	if err != nil {
		return err
	}
	viewer := store.Viewer{UserID: u.ID}
	var ds strings.Builder
	for i := range o.items {
		fmt.Fprintf(&ds, "{\"custom_id\":\"item-%05d\",\"prompt\":\"Question %d: what is %d plus %d?\"}\n", i, i, i, i)
	}
	up := &ingest.Uploader{Store: st, Limits: dataset.DefaultLimits()}
	res, err := up.Upload(ctx, ingest.Source{File: strings.NewReader(ds.String())}, ingest.Request{Viewer: viewer, FileName: "eta.jsonl"})
	if err != nil {
		return err
	}
	model := "bench/eta-" + stamp
	if _, err := st.CreateModel(ctx, store.ModelFields{Name: model, ParamsB: 0.1, Quantization: "bf16", ContextLength: 4096}); err != nil {
		return err
	}
	name := "eta-bench-" + stamp
	password := benchkit.RandomHex(16)
	role, err := st.CreateAgentRole(ctx, name, password, store.AgentGrant{OnFirstRegistration: true})
	if err != nil {
		return err
	}
	defer func() { _, _ = st.RevokeAgentRole(context.Background(), name) }()
	agentURL, err := store.AgentDatabaseURL(dbURL, role, password)
	if err != nil {
		return err
	}

	agent, err := startAgent(o, agentURL, name)
	if err != nil {
		return err
	}
	defer func() { _ = agent.Stop(15 * time.Second) }()
	profile, err := waitOnline(ctx, st, name, agent)
	if err != nil {
		return err
	}

	svc, err := benchkit.NewService(pool, st, time.Minute)
	if err != nil {
		return err
	}
	load := jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: o.concurrency}
	created, err := svc.Create(ctx, viewer, bench.Manifest{Name: "eta bench", Dataset: bench.DatasetRef{ID: res.Dataset.ID},
		Targets: []bench.Target{{Model: model, Runtime: "sim", Hardware: profile}}, Load: load, Sampling: jobs.Sampling{MaxTokens: o.tokens}})
	if err != nil {
		return err
	}
	runID := created.Runs[0].RunID
	perRequest := o.ttft + time.Duration(o.tokens-1)*o.itl
	fmt.Fprintf(out, "run %d: %d items, concurrency %d, sim TTFT %v + %d × ITL %v = %v a request: about %.0f s\n",
		runID, o.items, o.concurrency, o.ttft, o.tokens-1, o.itl, perRequest,
		math.Ceil(float64(o.items)/float64(o.concurrency))*perRequest.Seconds())

	obs, err := watch(ctx, pool, runID, o.timeout, agent)
	if err != nil {
		return err
	}
	var first, last time.Time
	var total int
	err = pool.QueryRow(ctx, `SELECT min(r.sent_at), max(r.sent_at + coalesce(r.e2e_ms, 0) * interval '1 millisecond'), max(ru.total)
		FROM results r JOIN runs ru ON ru.id = r.run_id WHERE r.run_id = $1`, runID).Scan(&first, &last, &total)
	if err != nil {
		return fmt.Errorf("the run's results: %w", err)
	}
	report(out, obs, total, first, last)
	return latencies(ctx, pool, runID, out)
}

// latencies prints the requests' mean E2E and the mean time from one
// request's answer to its slot's next send, by tenth of the run in the
// order they were sent: what paced it.
func latencies(ctx context.Context, pool *pgxpool.Pool, runID int64, out io.Writer) error {
	rows, err := pool.Query(ctx, `SELECT ntile, round(avg(e2e_ms)), round(min(e2e_ms)), round(max(e2e_ms)), count(*)
		FROM (SELECT e2e_ms, ntile(10) OVER (ORDER BY sent_at) FROM results WHERE run_id = $1) t GROUP BY ntile ORDER BY ntile`, runID)
	if err != nil {
		return err
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var tenth, n int
		var avg, lo, hi float64
		if err := rows.Scan(&tenth, &avg, &lo, &hi, &n); err != nil {
			return err
		}
		parts = append(parts, fmt.Sprintf("%.0f (%.0f–%.0f)", avg, lo, hi))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	fmt.Fprintf(out, "E2E in ms by tenth of the run, mean (min–max): %s\n", strings.Join(parts, ", "))
	return nil
}

// observation is one progress write as the run's row showed it.
type observation struct {
	at        time.Time // progress_at: when the agent wrote it
	completed int
	eta       *float64 // seconds; nil when unknown
}

// watch reads the run's row every 100 ms until the run ends, keeping each
// progress write once.
func watch(ctx context.Context, pool *pgxpool.Pool, runID int64, timeout time.Duration, agent *benchkit.Proc) ([]observation, error) {
	deadline := time.Now().Add(timeout)
	var obs []observation
	var lastPrint time.Time
	for {
		var state, errMsg string
		var o observation
		var at *time.Time
		var total int
		err := pool.QueryRow(ctx, `SELECT state, error, completed, total, eta_seconds, progress_at FROM runs WHERE id = $1`, runID).
			Scan(&state, &errMsg, &o.completed, &total, &o.eta, &at)
		if err != nil {
			return nil, err
		}
		if at != nil && (len(obs) == 0 || !at.Equal(obs[len(obs)-1].at)) && state == "running" {
			o.at = *at
			obs = append(obs, o)
			if time.Since(lastPrint) >= 10*time.Second {
				eta := "unknown"
				if o.eta != nil {
					eta = fmt.Sprintf("%.1f s", *o.eta)
				}
				fmt.Fprintf(os.Stderr, "  %d/%d done, ETA %s\n", o.completed, total, eta)
				lastPrint = time.Now()
			}
		}
		switch state {
		case "completed":
			return obs, nil
		case "failed", "cancelled":
			return nil, fmt.Errorf("run %d %s: %s\nagentd's log:\n%s", runID, state, errMsg, agent.Log.String())
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("run %d still %s after %v\nagentd's log:\n%s", runID, state, timeout, agent.Log.String())
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-agent.Done():
			return nil, agent.ExitError()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// report prints the table: at each progress point the first progress
// write at or past it, the ETA it showed, the truth (the last request
// came back at last) and the old formula's ETA from the same figures
// (remaining ÷ done × time since the first request left).
func report(out io.Writer, obs []observation, total int, first, last time.Time) {
	fmt.Fprintf(out, "the run's load lasted %.1f s (first request sent → last one back); %d progress writes read\n\n",
		last.Sub(first).Seconds(), len(obs))
	fmt.Fprintf(out, "%-9s %8s %10s %10s %10s %8s %12s %8s\n", "progress", "at", "done", "ETA shown", "true left", "error", "old formula", "error")
	pick := func(p float64) (observation, bool) {
		for _, o := range obs {
			if float64(o.completed) >= p*float64(total) {
				return o, true
			}
		}
		return observation{}, false
	}
	missed := false
	for _, p := range points {
		o, ok := pick(p)
		if !ok {
			fmt.Fprintf(out, "%6.0f %%   no progress write at or past it\n", 100*p)
			missed = missed || p >= targetFrom
			continue
		}
		truth := last.Sub(o.at).Seconds()
		elapsed := o.at.Sub(first).Seconds()
		shown, errShown := "unknown", ""
		if o.eta != nil {
			shown, errShown = fmt.Sprintf("%.1f s", *o.eta), pct(*o.eta, truth)
		}
		if p >= targetFrom && (o.eta == nil || math.Abs(*o.eta-truth) > targetError*truth) {
			missed = true
		}
		old, errOld := "unknown", ""
		if o.completed > 0 {
			v := float64(total-o.completed) / float64(o.completed) * elapsed
			old, errOld = fmt.Sprintf("%.1f s", v), pct(v, truth)
		}
		fmt.Fprintf(out, "%6.0f %%  %6.1f s %10s %10s %8.1f s %8s %12s %8s\n", 100*p, elapsed,
			fmt.Sprintf("%d/%d", o.completed, total), shown, truth, errShown, old, errOld)
	}

	// Every write from 10 to 90 % progress, while at least a few seconds
	// were left (near the end a percentage says little).
	worst, worstOld, n, unknown := 0.0, 0.0, 0, 0
	var worstAt observation
	for _, o := range obs {
		truth := last.Sub(o.at).Seconds()
		if float64(o.completed) < targetFrom*float64(total) || float64(o.completed) > 0.9*float64(total) || truth < 5 {
			continue
		}
		n++
		if o.eta == nil {
			unknown++
			continue
		}
		if e := math.Abs(*o.eta-truth) / truth; e > worst {
			worst, worstAt = e, o
		}
		old := float64(total-o.completed) / float64(o.completed) * o.at.Sub(first).Seconds()
		worstOld = max(worstOld, math.Abs(old-truth)/truth)
	}
	verdict := "met"
	if missed {
		verdict = "MISSED"
	}
	fmt.Fprintf(out, "\ntarget: within %.0f %% from %.0f %% progress on: %s\n", 100*targetError, 100*targetFrom, verdict)
	fmt.Fprintf(out, "every progress write from %.0f to 90 %% with 5 s or more left (%d): worst error %.1f %% (at %d/%d done), old formula's worst %.1f %%; %d without an ETA\n",
		100*targetFrom, n, 100*worst, worstAt.completed, total, 100*worstOld, unknown)
}

// pct is the signed error of v against truth.
func pct(v, truth float64) string {
	if truth <= 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f %%", 100*(v-truth)/truth)
}

// startAgent starts `agentd run` with the simulated runtime at constant
// latencies, logging in as the agent's own role.
func startAgent(o options, url, name string) (*benchkit.Proc, error) {
	return benchkit.Start(benchkit.Spec{Name: "agentd", Argv: []string{o.agentd, "run", "--database-url", url, "--name", name,
		"--runtime", "sim", "--no-gpu", "--heartbeat", "1s", "--progress-interval", o.progressInterval.String(),
		"--sim-ttft", "const:" + o.ttft.String(), "--sim-itl", "const:" + o.itl.String(),
		"--sim-output-tokens", fmt.Sprintf("const:%d", o.tokens),
		// Enough batch that no request slows another: steady latency.
		"--sim-batch", fmt.Sprint(max(o.concurrency, 8))}})
}

// waitOnline waits for the agent to register and returns its hardware
// profile.
func waitOnline(ctx context.Context, st *store.Store, name string, p *benchkit.Proc) (string, error) {
	var profile string
	err := benchkit.WaitFor(ctx, p, 30*time.Second, 100*time.Millisecond, "agentd to come online", func() (bool, error) {
		as, err := st.ListAgents(ctx)
		for _, a := range as {
			if a.Name == name && a.State == store.AgentOnline && a.Profile != "" {
				profile = a.Profile
				return true, nil
			}
		}
		return false, err
	})
	return profile, err
}
