package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/cmd/selfbench/internal/benchkit"
)

// table prints the day's rows: what, the figure, and the target met or
// missed.
type table struct {
	out io.Writer
	ok  bool
}

func (t *table) row(name, value string, target string, met bool) {
	v := ""
	if target != "" {
		v = target + ": met"
		if !met {
			v = target + ": MISSED"
			t.ok = false
		}
	}
	fmt.Fprintf(t.out, "  %-40s %-44s %s\n", name, value, v)
}

// report checks what must hold after the day and prints the table.
func (d *day) report(ctx context.Context) (bool, error) {
	t := &table{out: d.out, ok: true}
	fmt.Fprintf(d.out, "\nbench-day: %d users, %d agents at a time (%d started in all: %d pooled through PgBouncer, %d direct; %d with --sim-gpu %s), %v of work\n",
		d.o.users, d.o.agents, d.count(func(*agent) bool { return true }), d.count(func(a *agent) bool { return a.pooled }),
		d.count(func(a *agent) bool { return !a.pooled }), d.count(func(a *agent) bool { return a.gpu }), d.fx.gpu, d.o.duration)
	for _, e := range d.events {
		fmt.Fprintf(d.out, "  fault: %s\n", e)
	}
	d.requestRows(t)
	d.scrapeRows(t)
	if err := d.runRows(ctx, t); err != nil {
		return false, err
	}
	if err := d.webhookRows(ctx, t); err != nil {
		return false, err
	}
	if err := d.verifyRows(ctx, t); err != nil {
		return false, err
	}
	if err := d.restoreRows(ctx, t); err != nil {
		return false, err
	}
	d.attackRows(t)
	t.row("the day's own steps that failed", fmt.Sprint(len(d.problems)), "target 0", len(d.problems) == 0)
	for _, p := range d.problems {
		fmt.Fprintf(t.out, "    %s\n", p)
	}
	return t.ok, nil
}

func (d *day) count(f func(*agent) bool) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, a := range d.agents {
		if f(a) {
			n++
		}
	}
	return n
}

func (d *day) requestRows(t *table) {
	r := d.rec
	r.mu.Lock()
	defer r.mu.Unlock()
	t.row("user requests answered", fmt.Sprintf("%d (2xx %d, 3xx %d, 4xx %d)", r.requests, r.byClass[2], r.byClass[3], r.byClass[4]), "", true)
	// While PostgreSQL restarts, 503 with Retry-After is the right answer;
	// any other 5xx, or any 5xx outside that outage, is a fault.
	var outage, other int
	for _, m := range r.fivexx {
		if strings.HasPrefix(m, "503 ") && strings.HasSuffix(m, "(during the PostgreSQL restart)") {
			outage++
		} else {
			other++
		}
	}
	t.row("responses 5xx", fmt.Sprintf("%d (503 during the PostgreSQL restart: %d)", len(r.fivexx), outage), "target 0 but 503 in the outage", other == 0)
	for i, m := range r.fivexx {
		if i < 15 {
			fmt.Fprintf(t.out, "    %s\n", m)
		}
	}
	t.row("no answer (server restarting)", fmt.Sprint(r.unreached), "", true)
	t.row("steps answered otherwise than due", fmt.Sprint(len(r.unexpect)), "", true)
	for i, m := range r.unexpect {
		if i < 15 {
			fmt.Fprintf(t.out, "    %s\n", m)
		}
	}
}

func (d *day) scrapeRows(t *table) {
	scrapes, non200, unparsed, per := d.scr.totals()
	d.scr.mu.Lock()
	bad, down, failures := d.scr.badLabel, d.scr.down, d.scr.failures
	d.scr.mu.Unlock()
	t.row("scrapes of /metrics", fmt.Sprintf("%d (%s; %d while restarting)", scrapes, per, down), "", true)
	t.row("scrapes not 200 / not parseable", fmt.Sprintf("%d / %d", non200, unparsed), "target 0 / 0", non200 == 0 && unparsed == 0)
	for _, f := range failures {
		fmt.Fprintf(t.out, "    %s\n", f)
	}
	t.row("labels not a method or route pattern", fmt.Sprint(len(bad)), "target 0", len(bad) == 0)
	for _, b := range bad {
		fmt.Fprintf(t.out, "    %s\n", b)
	}
}

// runRows accounts for every run: none open, none lost, none duplicated.
func (d *day) runRows(ctx context.Context, t *table) error {
	var c struct{ runs, completed, failed, cancelled, open, rows, badCounters, twiceFinished int }
	err := d.pool.QueryRow(ctx, `WITH r AS (
			SELECT ru.id, ru.state, ru.completed,
				(SELECT count(*) FROM results x WHERE x.run_id = ru.id) AS rows,
				(SELECT count(*) FROM run_events e WHERE e.run_id = ru.id AND e.kind IN ('completed', 'failed')) AS finishes
			FROM runs ru)
		SELECT count(*), count(*) FILTER (WHERE state = 'completed'), count(*) FILTER (WHERE state = 'failed'),
			count(*) FILTER (WHERE state = 'cancelled'), count(*) FILTER (WHERE state IN ('queued', 'running')),
			coalesce(sum(rows), 0), count(*) FILTER (WHERE completed <> rows AND state = 'completed'), count(*) FILTER (WHERE finishes > 1)
		FROM r`).Scan(&c.runs, &c.completed, &c.failed, &c.cancelled, &c.open, &c.rows, &c.badCounters, &c.twiceFinished)
	if err != nil {
		return fmt.Errorf("tally: %w", err)
	}
	var dupRows int
	if err := d.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT run_id, idx FROM results GROUP BY run_id, idx HAVING count(*) > 1) x`).Scan(&dupRows); err != nil {
		return fmt.Errorf("duplicates: %w", err)
	}
	t.row("runs (left after deletions)", fmt.Sprintf("%d: %d completed, %d failed, %d cancelled", c.runs, c.completed, c.failed, c.cancelled), "", true)
	t.row("runs lost (still open at the end)", fmt.Sprint(c.open), "target 0", c.open == 0)
	t.row("completed runs whose counter ≠ rows", fmt.Sprint(c.badCounters), "target 0", c.badCounters == 0)
	t.row("duplicated results / runs finished twice", fmt.Sprintf("%d / %d (of %d result rows)", dupRows, c.twiceFinished, c.rows), "target 0 / 0", dupRows == 0 && c.twiceFinished == 0)
	return nil
}

// webhookRows: every finished benchmark of a user with a webhook has its
// event delivered with a good signature, or the failure recorded.
func (d *day) webhookRows(ctx context.Context, t *table) error {
	rows, err := d.pool.Query(ctx, `WITH first AS (
			SELECT DISTINCT ON (w.user_id, (d.payload -> 'benchmark' ->> 'id')::bigint)
				w.user_id, (d.payload -> 'benchmark' ->> 'id')::bigint AS benchmark_id, d.state, d.last_error
			FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
			WHERE d.event IN ('benchmark.finished', 'benchmark.failed')
			ORDER BY w.user_id, (d.payload -> 'benchmark' ->> 'id')::bigint, d.id)
		SELECT b.id, coalesce(f.state, ''), coalesce(f.last_error, '')
		FROM benchmarks b LEFT JOIN first f ON f.user_id = b.owner_id AND f.benchmark_id = b.id
		WHERE b.judges_run_id IS NULL AND EXISTS (SELECT 1 FROM webhooks w WHERE w.user_id = b.owner_id)
			AND EXISTS (SELECT 1 FROM runs r WHERE r.benchmark_id = b.id AND r.state <> 'cancelled')
			AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.benchmark_id = b.id AND r.state IN ('queued', 'running'))`)
	if err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	type fin struct {
		ID           int64
		State, Error string
	}
	fins, err := pgx.CollectRows(rows, pgx.RowToStructByPos[fin])
	if err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	d.hooks.mu.Lock()
	defer d.hooks.mu.Unlock()
	var delivered, failed, missing, unsigned int
	for _, f := range fins {
		switch {
		case f.State == "delivered" && d.hooks.got[f.ID] > 0:
			delivered++
		case f.State == "delivered":
			unsigned++
		case f.State == "failed" && f.Error != "":
			failed++
		default:
			missing++
			if missing <= 5 {
				fmt.Fprintf(t.out, "    benchmark %d: delivery %q %s; its runs: %s\n", f.ID, f.State, f.Error, d.runStates(ctx, f.ID))
			}
		}
	}
	t.row("finished benchmarks with a webhook", fmt.Sprintf("%d: %d delivered, %d failed (recorded)", len(fins), delivered, failed), "", true)
	var cancelled, told int
	if err := d.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE EXISTS (SELECT 1 FROM webhook_deliveries d
			WHERE (d.payload -> 'benchmark' ->> 'id')::bigint = b.id))
		FROM benchmarks b WHERE b.judges_run_id IS NULL AND EXISTS (SELECT 1 FROM runs r WHERE r.benchmark_id = b.id)
			AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.benchmark_id = b.id AND r.state <> 'cancelled')`).Scan(&cancelled, &told); err != nil {
		return fmt.Errorf("cancelled benchmarks: %w", err)
	}
	// Not counted above: whether a benchmark its user cancelled whole is
	// "failed" is the events' definition to settle (docs/operations.md#webhooks).
	t.row("benchmarks cancelled whole: with an event", fmt.Sprintf("%d of %d", told, cancelled), "", true)
	t.row("deliveries missing / not received signed", fmt.Sprintf("%d / %d", missing, unsigned), "target 0 / 0", missing == 0 && unsigned == 0)
	t.row("received with a bad signature", fmt.Sprintf("%d of %d received", d.hooks.badSig, d.hooks.received), "target 0", d.hooks.badSig == 0)
	return nil
}

// verifyRows runs `ruckus verify` on every completed run.
func (d *day) verifyRows(ctx context.Context, t *table) error {
	rows, err := d.pool.Query(ctx, `SELECT id FROM runs WHERE state = 'completed' AND runtime <> 'imported' ORDER BY id`)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	t0 := time.Now()
	failed := d.verify(ctx, d.dbURL, ids)
	t.row("completed runs whose attestation fails", fmt.Sprintf("%d of %d (ruckus verify, %.0f s)", len(failed), len(ids), time.Since(t0).Seconds()), "target 0", len(failed) == 0)
	for i, f := range failed {
		if i < 5 {
			fmt.Fprintf(t.out, "    %s\n", f)
		}
	}
	return nil
}

// verify runs `ruckus verify RUN...` against url over the ids, in
// batches of verifyBatch two at a time, and returns the failures (each
// batch's report, whose lines name every failed run).
func (d *day) verify(ctx context.Context, url string, ids []int64) []string {
	var mu sync.Mutex
	var failed []string
	work := make(chan []int64)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for batch := range work {
				args := []string{"verify"}
				for _, id := range batch {
					args = append(args, fmt.Sprint(id))
				}
				cmd := exec.CommandContext(ctx, d.o.ruckus, args...)
				cmd.Env = append(os.Environ(), "DATABASE_URL="+url)
				out, err := cmd.CombinedOutput()
				if err == nil {
					continue
				}
				mu.Lock()
				failed = append(failed, failedRuns(batch, out, err)...)
				mu.Unlock()
			}
		}()
	}
	for len(ids) > 0 {
		n := min(len(ids), verifyBatch)
		work <- ids[:n]
		ids = ids[n:]
	}
	close(work)
	wg.Wait()
	return failed
}

// verifyBatch is how many runs one `ruckus verify` checks.
const verifyBatch = 500

// failedRuns are the failures one batch's report names: a line per failed
// run ("  run N: …" or "  verification failed: run N: …"), or, when the
// command failed before checking any, one for the batch.
func failedRuns(batch []int64, out []byte, err error) []string {
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "  ") && strings.Contains(l, "run ") && !strings.Contains(l, "digest") && !strings.Contains(l, "intact") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) == 0 {
		lines = append(lines, fmt.Sprintf("runs %d…%d: %v %s", batch[0], batch[len(batch)-1], err, trim(out)))
	}
	return lines
}

// restoreRows restores the mid-day backup into a fresh database, serves
// it, and compares the archived benchmarks' verdicts and exports.
func (d *day) restoreRows(ctx context.Context, t *table) error {
	if d.fx.atBackup == nil {
		t.row("restore of the mid-day backup", "no backup was taken", "restored", false)
		return nil
	}
	url, err := d.cluster.CreateDatabase(ctx, "ruckus_restored")
	if err != nil {
		return err
	}
	t0 := time.Now()
	cmd := exec.CommandContext(ctx, d.o.ruckus, "restore", filepath.Join(d.dir, "day.backup"))
	cmd.Env = append(os.Environ(), "DATABASE_URL="+url)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.row("restore of the mid-day backup", fmt.Sprintf("failed: %v %s", err, trim(out)), "restored", false)
		return nil
	}
	restore := time.Since(t0)
	srv, err := benchkit.StartServer(ctx, d.o.ruckus, "DATABASE_URL="+url, "RUCKUS_METRICS_ADDR=off")
	if err != nil {
		return fmt.Errorf("serve the restored copy: %w", err)
	}
	defer func() { _ = srv.Stop(15 * time.Second) }()
	restored := *d.fx.archive
	restored.base = srv.Base
	var same, differ int
	for _, id := range d.fx.archived {
		for _, p := range []string{"/verdict", "/export", "/summary"} {
			path := fmt.Sprintf("/api/v1/benchmarks/%d%s", id, p)
			// A verdict weighs its deployments' later runs too (their
			// between-run spread), so the restored copy is held against
			// the live answers of just before and just after the backup.
			b1, b1after := d.fx.atBackup[path][0], d.fx.atBackup[path][1]
			s1 := http.StatusOK
			s2, b2 := restored.apiJSON(ctx, "restored "+p, http.MethodGet, path, nil, http.StatusOK)
			if s2 == http.StatusOK && (bytes.Equal(b1, b2) || bytes.Equal(b1after, b2)) {
				same++
			} else {
				differ++
				fmt.Fprintf(t.out, "    %s: live %d (%d bytes), restored %d (%d bytes)%s\n", path, s1, len(b1), s2, len(b2), firstDifference(b1, b2))
			}
		}
	}
	var ids []int64
	if err := d.pool.QueryRow(ctx, `SELECT array_agg(id) FROM runs WHERE benchmark_id = ANY($1) AND state = 'completed'`, d.fx.archived).Scan(&ids); err != nil {
		return err
	}
	failed := d.verify(ctx, url, ids)
	t.row("restore of the mid-day backup", fmt.Sprintf("%.1f s", restore.Seconds()), "", true)
	t.row("restored = live (verdicts, exports)", fmt.Sprintf("%d of %d answers identical", same, same+differ), "target all", differ == 0)
	t.row("restored runs whose attestation fails", fmt.Sprintf("%d of %d", len(failed), len(ids)), "target 0", len(failed) == 0)
	return nil
}

// otherRoleDefaults counts the roles, other than the attacker's own, that
// hold the default its attack on them sets (statement_timeout = 1) in
// pg_db_role_setting: what an attack that went through would have left.
func (d *day) otherRoleDefaults(a *attacker) (int, error) {
	cfg, err := pgx.ParseConfig(a.direct)
	if err != nil {
		return 0, err
	}
	var n int
	err = d.pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole
		WHERE r.rolname <> $1 AND 'statement_timeout=1' = ANY(s.setconfig)`, cfg.User).Scan(&n)
	return n, err
}

// attackRows is what the malicious agent achieved, and what the honest
// pooled agents suffered while it went on.
func (d *day) attackRows(t *table) {
	a := d.att
	a.mu.Lock()
	defer a.mu.Unlock()
	t.row("attack: its own role's defaults through PgBouncer", fmt.Sprintf("%d made, %d failed (its own sessions)", a.alters, a.alterFailed), "", true)
	// A try that failed otherwise than refused failed in the attacker's
	// own session, broken by its own role's defaults (a statement timeout,
	// a read-only transaction): what counts is that none went through, and
	// that no other role holds a default at the end (otherRoleDefaults).
	t.row("attack: other roles' defaults (pool role, an agent's)", fmt.Sprintf("%d went through of %d tries (%d refused, %d failed in its own sessions)",
		a.othersDone, a.others, a.othersRefused, a.others-a.othersDone-a.othersRefused), "target 0", a.othersDone == 0)
	n, err := d.otherRoleDefaults(a)
	t.row("other roles holding the attack's default at the end", fmt.Sprint(n), "target 0", err == nil && n == 0)
	t.row("attack: run rows locked and held", fmt.Sprintf("%d rows (%d tries found none)", a.locksHeld, a.lockFailed), "", true)
	t.row("attack: score_run jobs inserted", fmt.Sprintf("%d of %d", a.floodTaken, a.floodSent), "target 0", a.floodTaken == 0)
	for _, pooled := range []bool{true, false} {
		total, worst, n, per := d.failuresDuring(pooled, a.from, a.to)
		if pooled {
			t.row("honest pooled agents' failed transactions", fmt.Sprintf("%d over %d agents, at most %d each", total, n, worst), "target ≤ 1 each", worst <= 1)
		} else {
			t.row("direct agents' (the attack's baseline)", fmt.Sprintf("%d over %d agents, at most %d each", total, n, worst), "", true)
		}
		if per != "" {
			fmt.Fprintf(t.out, "    %s\n", per)
		}
	}
}

// failuresDuring counts the database errors the pooled (or direct) agents
// logged between from and to.
func (d *day) failuresDuring(pooled bool, from, to time.Time) (total, worst, agents int, per string) {
	d.mu.Lock()
	var as []*agent
	for _, ag := range d.agents {
		if ag.pooled == pooled {
			as = append(as, ag)
		}
	}
	d.mu.Unlock()
	var parts []string
	for _, ag := range as {
		n, err := dbFailures(ag.log, from, to)
		if err != nil {
			continue
		}
		agents++
		total += n
		worst = max(worst, n)
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", ag.name, n))
		}
	}
	return total, worst, agents, strings.Join(parts, ", ")
}

// firstDifference shows where two answers part, with some context.
func firstDifference(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) && i == len(b) {
		return ""
	}
	from := max(0, i-60)
	cut := func(x []byte) string { return string(x[from:min(len(x), i+60)]) }
	return fmt.Sprintf("; from byte %d: live …%s… restored …%s…", i, cut(a), cut(b))
}

// runStates lists a benchmark's runs' states, for a missing delivery.
func (d *day) runStates(ctx context.Context, benchmarkID int64) string {
	var states string
	if err := d.pool.QueryRow(ctx, `SELECT string_agg(id || ' ' || state, ', ' ORDER BY id) FROM runs WHERE benchmark_id = $1`, benchmarkID).Scan(&states); err != nil {
		return err.Error()
	}
	return states
}
