package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/cmd/selfbench/internal/benchkit"
)

// setUp starts the services, the agents and the users, and the
// archivist's benchmarks, which finish before the backup.
func (d *day) setUp(ctx context.Context) error {
	var err error
	if d.hooks, err = newReceiver(); err != nil {
		return err
	}
	d.scr = newScraper()
	if d.addr, err = benchkit.FreeAddr(); err != nil {
		return err
	}
	if d.metricsAddr, err = benchkit.FreeAddr(); err != nil {
		return err
	}
	if err := d.startServer(ctx); err != nil {
		return err
	}
	if err := d.startBouncer(ctx); err != nil {
		return err
	}
	for i, name := range []string{"day/small-a", "day/small-b"} {
		if _, err := d.st.CreateModel(ctx, store.ModelFields{Name: name, ParamsB: 0.5 + float64(i), Quantization: "bf16", ContextLength: 4096}); err != nil {
			return err
		}
		d.fx.models = append(d.fx.models, name)
	}
	for i := range d.o.agents {
		if _, err := d.startAgent(ctx, fmt.Sprintf("day-agent-%02d", i), i); err != nil {
			return err
		}
	}
	if err := d.waitOnline(ctx, d.o.agents); err != nil {
		return err
	}
	as, err := d.st.ListAgents(ctx)
	if err != nil {
		return err
	}
	for _, a := range as {
		if a.Profile != "" && a.Profile != "cpu" {
			d.fx.gpu = a.Profile
		}
	}
	if d.att, err = d.newAttacker(ctx); err != nil {
		return err
	}
	return d.archive(ctx)
}

// archive makes the archivist and two benchmarks that end before the
// backup and that nobody touches afterwards: the restored copy must
// answer their verdicts and exports as the live one does.
func (d *day) archive(ctx context.Context) error {
	pw, err := auth.NewPasswords(4)
	if err != nil {
		return err
	}
	u, err := d.newUser(ctx, 0, pw)
	if err != nil {
		return err
	}
	d.fx.archive = u.c
	for i, load := range []map[string]any{{"profile": "sequential"}, {"profile": "concurrency", "concurrency": 3}} {
		m := map[string]any{"name": fmt.Sprintf("archive %d", i), "dataset": u.datasets[0], "load": load, "sampling": map[string]any{"max_tokens": 12},
			"scorer": "numeric", "targets": []map[string]string{{"model": d.fx.models[0], "runtime": "sim", "hardware": "cpu"}, {"model": d.fx.models[1], "runtime": "sim", "hardware": "cpu"}}}
		st, b := u.c.apiJSON(ctx, "archive benchmark", http.MethodPost, "/api/v1/benchmarks", m, http.StatusCreated)
		var out struct {
			ID int64 `json:"benchmark_id"`
		}
		if st != http.StatusCreated || json.Unmarshal(b, &out) != nil {
			return fmt.Errorf("archive benchmark: %d %s", st, trim(b))
		}
		d.fx.archived = append(d.fx.archived, out.ID)
	}
	return benchkit.WaitFor(ctx, nil, 3*time.Minute, 500*time.Millisecond, "the archived benchmarks to end", func() (bool, error) {
		var open int
		err := d.pool.QueryRow(ctx, `SELECT count(*) FROM runs WHERE benchmark_id = ANY($1) AND state IN ('queued', 'running')`, d.fx.archived).Scan(&open)
		return open == 0, err
	})
}

// work runs the users, the scraper and the faults for the day's
// duration, then waits for every run to end.
func (d *day) work(ctx context.Context) error {
	pw, err := auth.NewPasswords(4)
	if err != nil {
		return err
	}
	users := make([]*user, d.o.users)
	for i := range users {
		if users[i], err = d.newUser(ctx, i+1, pw); err != nil {
			return err
		}
	}
	scrapeCtx, stopScraping := context.WithCancel(ctx)
	scraped := make(chan struct{})
	targets := map[string]string{"server": "http://" + d.metricsAddr + "/metrics", "agent": "http://" + d.agentMetrics + "/metrics"}
	go func() {
		defer close(scraped)
		d.scr.loop(scrapeCtx, targets, func(name string) bool { return name == "server" && d.fault() != "" })
	}()
	dayCtx, endDay := context.WithTimeout(ctx, d.o.duration)
	defer endDay()
	var wg sync.WaitGroup
	for _, u := range users {
		wg.Add(1)
		go u.work(dayCtx, d, &wg)
	}
	faultErr := d.faults(dayCtx)
	wg.Wait()
	if ctx.Err() != nil {
		stopScraping()
		return ctx.Err()
	}
	fmt.Fprintln(d.out, "users done; waiting for every run to end ...")
	// What did not go as planned is reported in the table, not instead of it.
	if err := errors.Join(faultErr, d.drain(ctx)); err != nil {
		d.mu.Lock()
		d.problems = append(d.problems, err.Error())
		d.mu.Unlock()
	}
	stopScraping()
	<-scraped
	return ctx.Err()
}

// faults is the day's schedule of faults, spread over its duration.
func (d *day) faults(ctx context.Context) error {
	at := func(share float64) time.Time { return time.Now().Add(time.Duration(share * float64(d.o.duration))) }
	type step struct {
		when time.Time
		do   func(context.Context) error
	}
	kill := func(ctx context.Context) error { return d.killAgents(ctx, max(1, d.o.agents/4)) }
	attackCtx, stopAttack := context.WithCancel(ctx)
	attacked := make(chan struct{})
	// The attack's window holds no PostgreSQL restart, so that what the
	// honest pooled agents suffer in it is the attack's doing (the direct
	// agents, which it cannot reach, are the baseline).
	plan := []step{
		{at(0.10), kill},
		{at(0.15), func(context.Context) error {
			d.note("the malicious agent starts its attacks")
			go func() { defer close(attacked); d.att.run(attackCtx) }()
			return nil
		}},
		{at(0.30), d.restartServer},
		{at(0.40), d.backup},
		{at(0.45), func(context.Context) error { stopAttack(); <-attacked; d.note("the malicious agent stops"); return nil }},
		{at(0.55), d.restartPostgres},
		{at(0.65), kill},
		{at(0.75), d.restartServer},
		{at(0.85), kill},
	}
	defer stopAttack()
	var errs []error
	for _, s := range plan {
		select {
		case <-ctx.Done():
			return errors.Join(errs...)
		case <-time.After(time.Until(s.when)):
		}
		if err := s.do(ctx); err != nil {
			d.note("fault step failed: %v", err)
			errs = append(errs, err)
		}
	}
	<-ctx.Done()
	return errors.Join(errs...)
}

// archivedPaths are the archived benchmarks' answers the restored copy
// must give as the live one did.
func (d *day) archivedPaths() []string {
	var ps []string
	for _, id := range d.fx.archived {
		for _, p := range []string{"/verdict", "/export", "/summary"} {
			ps = append(ps, fmt.Sprintf("/api/v1/benchmarks/%d%s", id, p))
		}
	}
	return ps
}

// readArchive keeps the live answers of the archived benchmarks, as
// answer number i (0 before the backup, 1 after it).
func (d *day) readArchive(ctx context.Context, i int) {
	for _, path := range d.archivedPaths() {
		_, b := d.fx.archive.apiJSON(ctx, "archive "+path, http.MethodGet, path, nil, http.StatusOK)
		d.fx.atBackup[path][i] = b
	}
}

// backup takes `ruckus backup` under load.
func (d *day) backup(ctx context.Context) error {
	d.fx.atBackup = map[string]*[2][]byte{}
	for _, path := range d.archivedPaths() {
		d.fx.atBackup[path] = &[2][]byte{}
	}
	d.readArchive(ctx, 0)
	defer d.readArchive(ctx, 1)
	t0 := time.Now()
	file := filepath.Join(d.dir, "day.backup")
	cmd := exec.CommandContext(ctx, d.o.ruckus, "backup", file)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+d.dbURL)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ruckus backup: %w\n%s", err, out)
	}
	fi, err := os.Stat(file)
	if err != nil {
		return err
	}
	d.note("ruckus backup under load: %.1f MiB in %.1f s", float64(fi.Size())/(1<<20), time.Since(t0).Seconds())
	return nil
}

// drain waits until no run is open, no run's scoring is to come and no
// webhook delivery is pending.
func (d *day) drain(ctx context.Context) error {
	limit := max(3*time.Minute, d.o.duration/2)
	return benchkit.WaitFor(ctx, nil, limit, time.Second, "every run to end and every delivery to settle", func() (bool, error) {
		// A run's webhook event is recorded by its scoring job: between
		// the run's end and that job nothing is open or pending, so the
		// jobs are waited for too.
		var open, pending int
		err := d.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM runs WHERE state IN ('queued', 'running')),
			(SELECT count(*) FROM webhook_deliveries WHERE state = 'pending')
			+ (SELECT count(*) FROM river_job WHERE kind IN ('score_run', 'deliver_webhook') AND finalized_at IS NULL)`).Scan(&open, &pending)
		if err != nil {
			return false, nil // PostgreSQL may be coming back
		}
		return open == 0 && pending == 0, nil
	})
}
