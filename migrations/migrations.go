// Package migrations holds Ruckus's SQL schema as numbered up/down pairs,
// embedded in the binary, and the migrator that applies them together with
// River's own schema (through rivermigrate) in one explicit step.
package migrations

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

//go:embed *.sql
var files embed.FS

// lockKey serialises concurrent migrators (two servers started at once, or
// parallel test packages building their template database).
const lockKey = 0x72_75_63_6b_75_73 // "ruckus"

var fileName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.(up|down)\.sql$`)

// Files is the embedded migration files.
func Files() fs.FS { return files }

// Migration is one numbered schema change.
type Migration struct {
	Version int
	Name    string
	Up      string
	Down    string
}

// Status is the state of one migration in a database.
type Status struct {
	Migration
	AppliedAt *time.Time
}

// Migrator applies Ruckus's migrations and River's to one database.
type Migrator struct {
	pool       *pgxpool.Pool
	migrations []Migration
	river      *rivermigrate.Migrator[pgx.Tx]
}

// New returns a migrator for the database behind pool.
func New(pool *pgxpool.Pool) (*Migrator, error) {
	ms, err := Load(files)
	if err != nil {
		return nil, err
	}
	rm, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return nil, fmt.Errorf("river migrator: %w", err)
	}
	return &Migrator{pool: pool, migrations: ms, river: rm}, nil
}

// Load reads and checks the migration files in fsys: every version has both
// an up and a down file, versions start at 1 and have no gaps.
func Load(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	byVersion := map[int]*Migration{}
	for _, e := range entries {
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		v, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", e.Name(), err)
		}
		mig := byVersion[v]
		if mig == nil {
			mig = &Migration{Version: v, Name: m[2]}
			byVersion[v] = mig
		}
		if mig.Name != m[2] {
			return nil, fmt.Errorf("migration %04d has two names: %q and %q", v, mig.Name, m[2])
		}
		if m[3] == "up" {
			mig.Up = string(body)
		} else {
			mig.Down = string(body)
		}
	}
	out := make([]Migration, 0, len(byVersion))
	for _, m := range byVersion {
		if m.Up == "" || m.Down == "" {
			return nil, fmt.Errorf("migration %04d_%s needs both an .up.sql and a .down.sql file", m.Version, m.Name)
		}
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration versions must run 1, 2, 3… without gaps; found %04d where %04d was expected", m.Version, i+1)
		}
	}
	return out, nil
}

// Latest is the highest version this binary knows.
func (m *Migrator) Latest() int { return m.migrations[len(m.migrations)-1].Version }

// Up applies River's pending migrations and then every pending Ruckus
// migration, each in its own transaction. It returns the versions applied.
func (m *Migrator) Up(ctx context.Context) ([]int, error) {
	var applied []int
	err := m.locked(ctx, func(conn *pgxpool.Conn) error {
		if _, err := m.river.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("river migrations: %w", err)
		}
		done, err := appliedVersions(ctx, conn)
		if err != nil {
			return err
		}
		for _, mig := range m.migrations {
			if _, ok := done[mig.Version]; ok {
				continue
			}
			if err := m.apply(ctx, conn, mig, true); err != nil {
				return err
			}
			applied = append(applied, mig.Version)
		}
		return nil
	})
	return applied, err
}

// Down rolls back the newest applied Ruckus migration, or with all set every
// Ruckus migration followed by River's whole schema. It returns the versions
// rolled back, newest first.
func (m *Migrator) Down(ctx context.Context, all bool) ([]int, error) {
	var undone []int
	err := m.locked(ctx, func(conn *pgxpool.Conn) error {
		done, err := appliedVersions(ctx, conn)
		if err != nil {
			return err
		}
		for i := len(m.migrations) - 1; i >= 0; i-- {
			mig := m.migrations[i]
			if _, ok := done[mig.Version]; !ok {
				continue
			}
			if err := m.apply(ctx, conn, mig, false); err != nil {
				return err
			}
			undone = append(undone, mig.Version)
			if !all {
				return nil
			}
		}
		if all {
			if _, err := m.river.Migrate(ctx, rivermigrate.DirectionDown, &rivermigrate.MigrateOpts{TargetVersion: -1}); err != nil {
				return fmt.Errorf("river migrations down: %w", err)
			}
		}
		return nil
	})
	return undone, err
}

// Status lists every known migration with the time it was applied, if it was.
func (m *Migrator) Status(ctx context.Context) ([]Status, error) {
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer conn.Release()
	done, err := appliedVersions(ctx, conn)
	if err != nil {
		return nil, err
	}
	out := make([]Status, len(m.migrations))
	for i, mig := range m.migrations {
		out[i] = Status{Migration: mig}
		if at, ok := done[mig.Version]; ok {
			out[i].AppliedAt = &at
		}
	}
	return out, nil
}

// Pending reports how many Ruckus and River migrations are not yet applied;
// zero for both means the schema matches this binary.
func (m *Migrator) Pending(ctx context.Context) (app, river int, err error) {
	st, err := m.Status(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, s := range st {
		if s.AppliedAt == nil {
			app++
		}
	}
	existing, err := m.river.ExistingVersions(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("river migrations: %w", err)
	}
	river = len(m.river.AllVersions()) - len(existing)
	return app, river, nil
}

func (m *Migrator) locked(ctx context.Context, fn func(*pgxpool.Conn) error) error {
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Release()
	// Bounded: where the advisory lock functions could not be taken from
	// agents (migration 0023 needs a superuser), one could hold this lock.
	if _, err := conn.Exec(ctx, `SET lock_timeout = '2min'`); err != nil {
		return fmt.Errorf("take migration lock: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockKey); err != nil {
		_, _ = conn.Exec(context.Background(), `RESET lock_timeout`)
		return fmt.Errorf("take migration lock (another migrator, or a session holding advisory lock %d, has it): %w", lockKey, err)
	}
	if _, err := conn.Exec(ctx, `RESET lock_timeout`); err != nil {
		return fmt.Errorf("take migration lock: %w", err)
	}
	defer func() {
		// A fresh context: the unlock must happen even when ctx was cancelled,
		// or the pooled connection would keep the lock.
		_, _ = conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, lockKey)
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text        NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	return fn(conn)
}

func (m *Migrator) apply(ctx context.Context, conn *pgxpool.Conn, mig Migration, up bool) error {
	dir, sql := "up", mig.Up
	if !up {
		dir, sql = "down", mig.Down
	}
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sql); err != nil {
			return err
		}
		var err error
		if up {
			_, err = tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, mig.Version, mig.Name)
		} else {
			_, err = tx.Exec(ctx, `DELETE FROM schema_migrations WHERE version = $1`, mig.Version)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("migration %04d_%s %s: %w", mig.Version, mig.Name, dir, err)
	}
	return nil
}

func appliedVersions(ctx context.Context, conn *pgxpool.Conn) (map[int]time.Time, error) {
	out := map[int]time.Time{}
	var v int
	var at time.Time
	rows, _ := conn.Query(ctx, `SELECT version, applied_at FROM schema_migrations`)
	_, err := pgx.ForEachRow(rows, []any{&v, &at}, func() error {
		out[v] = at
		return nil
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table: nothing applied yet
		return map[int]time.Time{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	return out, nil
}

// ErrSchemaMismatch is returned by Check when the database's schema and
// this binary's migrations differ.
var ErrSchemaMismatch = errors.New("schema mismatch")

// Check reports whether the database is at exactly this binary's schema,
// with a message for either direction: a program of another release must
// not read or write it.
func (m *Migrator) Check(ctx context.Context) error {
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Release()
	done, err := appliedVersions(ctx, conn)
	if err != nil {
		return err
	}
	newest := 0
	for v := range done {
		newest = max(newest, v)
	}
	switch {
	case newest > m.Latest():
		return fmt.Errorf("%w: the database is at schema %04d, newer than this program's %04d; run the same release as the server", ErrSchemaMismatch, newest, m.Latest())
	case len(done) < len(m.migrations):
		return fmt.Errorf("%w: the database is at schema %04d, older than this program's %04d; run `ruckus migrate up` (or the same release as the server)", ErrSchemaMismatch, newest, m.Latest())
	}
	return nil
}
