// Command backup times `ruckus backup` and `ruckus restore` (`make
// bench-backup`): it seeds 1,000,000 result rows (100 runs × 10,000
// items, with outputs as long as bench-web's), backs the database up with
// the same code the command runs (pg_dump, custom format), restores it
// into a new empty database of the same cluster, checks that every row
// came back, and prints the dump's size and both times — the figures the
// RPO/RTO recipe of docs/operations.md#backup-and-restore is built on.
//
// Run it through `ruckus dev-db exec` (DATABASE_URL set).
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/app/backup"
	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/cmd/selfbench/internal/benchkit"
	"github.com/ruckus/ruckus/jobs"
)

func main() {
	runs := flag.Int("runs", 100, "runs to seed")
	items := flag.Int("items", 10_000, "items (results) per run")
	flag.Parse()
	if err := run(*runs, *items); err != nil {
		fmt.Fprintln(os.Stderr, "bench-backup:", err)
		os.Exit(1)
	}
}

func run(nRuns, nItems int) error {
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
	u, err := st.CreateUser(ctx, store.NewUser{Email: fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano()), PasswordHash: "x", Role: store.RoleUser})
	if err != nil {
		return err
	}
	v := store.Viewer{UserID: u.ID}
	fleet, err := benchkit.SeedFleet(ctx, st, v, nItems, 50)
	if err != nil {
		return err
	}
	models, agent := fleet.Models, fleet.Agent
	svc, err := benchkit.NewService(pool, st, time.Hour)
	if err != nil {
		return err
	}
	var runIDs []int64
	for len(runIDs) < nRuns {
		n := min(50, nRuns-len(runIDs))
		targets := make([]bench.Target, n)
		for i := range targets {
			targets[i] = bench.Target{Model: models[i], Runtime: "sim", Hardware: "cpu"}
		}
		c, err := svc.Create(ctx, v, bench.Manifest{Name: "backup bench", Dataset: bench.DatasetRef{ID: fleet.DatasetID}, Targets: targets,
			Load: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: 8}, Sampling: jobs.Sampling{MaxTokens: 64}})
		if err != nil {
			return err
		}
		for _, r := range c.Runs {
			runIDs = append(runIDs, r.RunID)
		}
	}
	if _, err := pool.Exec(ctx, `UPDATE runs SET state = 'completed', agent_id = $2, mode = 'sim', started_at = now(), finished_at = now(),
		completed = $3, total = $3 WHERE id = ANY($1)`, runIDs, agent.ID, nItems); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `INSERT INTO results (run_id, idx, custom_id, status, output, finish_reason, prompt_tokens, completion_tokens,
			sent_at, ttft_ms, e2e_ms, tpot_ms, itl_mean_ms, content_events, http_status, request_id, agent_id, score)
		SELECT r, i, 'item-' || lpad(i::text, 5, '0'), 'ok', 'The answer is ' || (2 * i + (r % 3)) || '. Worked: ' || repeat('step ', 10 + i % 20),
			'stop', 20, 40, now() + make_interval(secs => i / 100.0), 50 + (i * 7 + r) % 200, 400 + (i * 13 + r) % 1600, 9 + (i % 5), 9 + (i % 5),
			40, 200, 'cmpl-' || r || '-' || i, $2, CASE WHEN (i + r) % 4 = 0 THEN 0 ELSE 1 END
		FROM unnest($1::bigint[]) AS r, generate_series(0, $3 - 1) AS i`, runIDs, agent.ID, nItems); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE results`); err != nil {
		return err
	}
	var rows int64
	var dbBytes int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM results), pg_database_size(current_database())`).Scan(&rows, &dbBytes); err != nil {
		return err
	}
	fmt.Printf("seeded %d results (database %.0f MB) in %s\n", rows, float64(dbBytes)/1e6, time.Since(t0).Round(time.Second))

	dir, err := os.MkdirTemp("", "bench-backup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "ruckus.dump")
	b, err := backup.Dump(ctx, dbURL, file)
	if err != nil {
		return err
	}
	fmt.Printf("ruckus backup:  %6.1f s  %7.1f MB (custom format)\n", b.Duration.Seconds(), float64(b.Bytes)/1e6)

	target := "restore_" + benchkit.RandomHex(4)
	if _, err := pool.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{target}.Sanitize()); err != nil {
		return err
	}
	u2, _ := url.Parse(dbURL)
	u2.Path = "/" + target
	r, err := backup.Restore(ctx, u2.String(), file)
	if err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, u2.String())
	if err != nil {
		return err
	}
	var restored int64
	err = conn.QueryRow(ctx, `SELECT count(*) FROM results`).Scan(&restored)
	conn.Close(ctx)
	if err != nil {
		return err
	}
	if restored != rows {
		return fmt.Errorf("restored %d results of %d", restored, rows)
	}
	fmt.Printf("ruckus restore: %6.1f s  (into an empty database; %d results back)\n", r.Duration.Seconds(), restored)
	_, err = pool.Exec(ctx, "DROP DATABASE "+pgx.Identifier{target}.Sanitize())
	return err
}
