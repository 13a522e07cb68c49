package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ruckus/ruckus/app/pgbouncer"
	"github.com/ruckus/ruckus/app/store"
)

// attacker is the one malicious agent: with nothing but its own agent
// credentials it repeats the attacks of docs/security.md on the others
// (role defaults through PgBouncer, a held row lock, a flood of score_run
// jobs), and counts what got through.
type attacker struct {
	direct, pooled string // its URLs
	key            string

	mu                    sync.Mutex
	from, to              time.Time
	alters, alterFailed   int // of its own role
	othersRefused, others int // of other roles
	othersDone            int // of other roles, that went through
	locksHeld, lockFailed int
	floodSent, floodTaken int
	conns                 []*pgx.Conn
}

func (d *day) newAttacker(ctx context.Context) (*attacker, error) {
	a := &attacker{}
	var err error
	if a.direct, a.key, err = d.agentURL(ctx, "day-mallory", false); err != nil {
		return nil, err
	}
	if a.pooled, err = pgbouncer.AgentURL(a.direct, d.bouncer); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *attacker) connect(ctx context.Context, url string) (*pgx.Conn, error) {
	cc, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cc.DefaultQueryExecMode = pgx.QueryExecModeExec
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err == nil {
		a.mu.Lock()
		a.conns = append(a.conns, conn)
		a.mu.Unlock()
	}
	return conn, err
}

// run attacks until ctx ends.
func (a *attacker) run(ctx context.Context) {
	a.mu.Lock()
	a.from = time.Now()
	a.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); a.alterLoop(ctx) }()
	go func() { defer wg.Done(); a.lockLoop(ctx) }()
	go func() { defer wg.Done(); a.floodLoop(ctx) }()
	wg.Wait()
	a.mu.Lock()
	a.to = time.Now()
	a.mu.Unlock()
}

// alterLoop gives its own role, through PgBouncer, every 50 ms, the
// defaults that would stop a session (PostgreSQL lets any role do that
// to itself), and tries the same on the roles others log in as: the former
// shared pool role and another agent's. Since PgBouncer logs in as each
// agent's own role, its defaults reach its own sessions alone
// (docs/scaling.md#one-pool-login-per-agent).
func (a *attacker) alterLoop(ctx context.Context) {
	var conn *pgx.Conn
	own := []string{`statement_timeout = 1`, `default_transaction_read_only = on`, `idle_session_timeout = 1`, `search_path = nowhere`}
	for i := 0; ctx.Err() == nil; i++ {
		var err error
		if conn == nil || conn.IsClosed() {
			conn, err = a.connect(ctx, a.pooled)
		}
		if err == nil {
			err = alterOwn(ctx, conn, own[i%len(own)])
		}
		a.mu.Lock()
		if err == nil {
			a.alters++
		} else if ctx.Err() == nil {
			a.alterFailed++
			conn = nil
		}
		a.mu.Unlock()
		if conn != nil && i%len(own) == 0 {
			a.alterOthers(ctx, conn)
		}
		sleep(ctx, 50*time.Millisecond)
	}
}

// alterOwn sets one default on the attacker's own role, lifting in its
// transaction what its earlier defaults would do to it.
func alterOwn(ctx context.Context, conn *pgx.Conn, set string) error {
	return pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{AccessMode: pgx.ReadWrite}, func(tx pgx.Tx) error {
		for _, q := range []string{`SET LOCAL statement_timeout = 0`, `SET LOCAL search_path = public`, `ALTER ROLE CURRENT_USER SET ` + set} {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}

// alterOthers tries the pool role and another agent's role; each refusal
// is counted.
func (a *attacker) alterOthers(ctx context.Context, conn *pgx.Conn) {
	targets := []string{store.AgentPoolRole}
	var other string
	if conn.QueryRow(ctx, `SELECT rolname FROM pg_roles WHERE pg_has_role(rolname, 'ruckus_agent', 'MEMBER')
		AND rolname NOT IN (current_user, 'ruckus_agent', $1) LIMIT 1`, store.AgentPoolRole).Scan(&other) == nil {
		targets = append(targets, pgx.Identifier{other}.Sanitize())
	}
	for _, role := range targets {
		_, err := conn.Exec(ctx, `ALTER ROLE `+role+` SET statement_timeout = 1`)
		var pe *pgconn.PgError
		a.mu.Lock()
		a.others++
		switch {
		case err == nil:
			a.othersDone++
		case errors.As(err, &pe) && pe.Code == "42501":
			a.othersRefused++
		}
		a.mu.Unlock()
	}
}

// lockLoop takes every run row it may see FOR UPDATE directly and keeps
// the transaction open until PostgreSQL ends it.
func (a *attacker) lockLoop(ctx context.Context) {
	for ctx.Err() == nil {
		conn, err := a.connect(ctx, a.direct)
		if err != nil {
			sleep(ctx, time.Second)
			continue
		}
		tx, err := conn.Begin(ctx)
		var n int
		if err == nil {
			if _, err = tx.Exec(ctx, store.SetAgentKey, a.key); err == nil {
				var rows pgx.Rows
				if rows, err = tx.Query(ctx, `SELECT id FROM runs WHERE state IN ('running', 'queued') FOR UPDATE`); err == nil {
					for rows.Next() {
						n++
					}
					rows.Close()
					err = rows.Err()
				}
			}
		}
		a.mu.Lock()
		if err == nil && n > 0 {
			a.locksHeld += n
		} else {
			a.lockFailed++
		}
		a.mu.Unlock()
		// Hold it: idle in transaction until ended.
		sleep(ctx, 40*time.Second)
		conn.Close(context.Background())
	}
}

// floodLoop queues score_run jobs for every run id it can name, as
// agents may insert River jobs.
func (a *attacker) floodLoop(ctx context.Context) {
	for ctx.Err() == nil {
		conn, err := a.connect(ctx, a.direct)
		if err != nil {
			sleep(ctx, time.Second)
			continue
		}
		for i := 0; i < 500 && ctx.Err() == nil; i++ {
			_, err := conn.Exec(ctx, `INSERT INTO river_job (kind, args, queue, max_attempts, state, priority, created_at)
				VALUES ('score_run', jsonb_build_object('run_id', $1::bigint), 'server', 3, 'available', 1, now() - interval '1 day')`, int64(1+i%400))
			a.mu.Lock()
			a.floodSent++
			if err == nil {
				a.floodTaken++
			}
			a.mu.Unlock()
		}
		conn.Close(context.Background())
		sleep(ctx, 5*time.Second)
	}
}

func (a *attacker) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.conns {
		c.Close(context.Background())
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// dbFailures counts the lines of an agent's log between from and to that
// report a database error (a SQLSTATE): its failed transactions.
func dbFailures(path string, from, to time.Time) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "SQLSTATE") {
			continue
		}
		ts, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil || (!at.Before(from) && !at.After(to)) {
			n++
		}
	}
	return n, sc.Err()
}
