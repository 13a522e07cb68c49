// Package pgtest gives each test its own PostgreSQL database, cloned from a
// template that holds the migrated schema, so tests run in parallel against
// the real database without seeing each other's rows.
//
// It needs DATABASE_URL pointing at a role allowed to create databases;
// `make test` starts a throwaway cluster and sets it.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/migrations"
)

// templateLock serialises template builds across test processes.
const templateLock = 0x70677465_7374 // "pgtest"

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// AdminURL is DATABASE_URL, failing the test when it is not set.
func AdminURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("DATABASE_URL")
	if u == "" {
		t.Fatal("DATABASE_URL is not set: run `make test`, which starts a throwaway PostgreSQL cluster, or point DATABASE_URL at a role that may create databases")
	}
	return u
}

// NewDB returns a pool on a fresh, fully migrated database that is dropped
// when the test ends.
func NewDB(t testing.TB) *pgxpool.Pool {
	t.Helper()
	admin := AdminURL(t)
	templateOnce.Do(func() { templateName, templateErr = ensureTemplate(admin) })
	if templateErr != nil {
		t.Fatalf("build template database: %v", templateErr)
	}
	return create(t, admin, templateName)
}

// EmptyDB returns a pool on a fresh database with no schema at all.
func EmptyDB(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return create(t, AdminURL(t), "template0")
}

// URL returns the connection string of the database behind pool.
func URL(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	return pool.Config().ConnString()
}

func create(t testing.TB, admin, template string) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	name := "ruckus_test_" + randomHex(8)
	if err := createDatabase(ctx, admin, name, template); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	pool, err := pgxpool.New(ctx, withDatabase(admin, name))
	if err != nil {
		t.Fatalf("connect to test database: %v", err)
	}
	t.Cleanup(func() {
		pool.Close()
		if err := exec(context.Background(), admin, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	return pool
}

// ensureTemplate builds, once for every process that shares the cluster, a
// database migrated to the current schema. Its name carries a hash of the
// migration files, so a changed migration gets a new template.
func ensureTemplate(admin string) (string, error) {
	ctx := context.Background()
	h := sha256.New()
	ms, err := migrations.Load(migrations.Files())
	if err != nil {
		return "", err
	}
	for _, m := range ms {
		fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00", m.Version, m.Name, m.Up, m.Down)
	}
	name := "ruckus_tpl_" + hex.EncodeToString(h.Sum(nil))[:16]

	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", fmt.Errorf("connect with DATABASE_URL: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, templateLock); err != nil {
		return "", err
	}
	defer conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, templateLock) //nolint:errcheck // closing the connection releases it too
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	// Build under another name and rename at the end, so a crashed build
	// never leaves a half-migrated template behind under the real name.
	building := name + "_building"
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{building}.Sanitize()+" WITH (FORCE)"); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{building}.Sanitize()); err != nil {
		return "", err
	}
	pool, err := pgxpool.New(ctx, withDatabase(admin, building))
	if err != nil {
		return "", err
	}
	m, err := migrations.New(pool)
	if err == nil {
		_, err = m.Up(ctx)
	}
	pool.Close()
	if err != nil {
		return "", fmt.Errorf("migrate template: %w", err)
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{building}.Sanitize()+" RENAME TO "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", err
	}
	return name, nil
}

// createDatabase copies files rather than WAL-logging the copy where the
// server offers the choice (PostgreSQL 15+): much faster for small templates.
func createDatabase(ctx context.Context, admin, name, template string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	var v int
	if err := conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&v); err != nil {
		return err
	}
	if v >= 150000 {
		sql += " STRATEGY FILE_COPY"
	}
	_, err = conn.Exec(ctx, sql)
	return err
}

func exec(ctx context.Context, admin, sql string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func withDatabase(connURL, db string) string {
	u, err := url.Parse(connURL)
	if err != nil {
		return connURL
	}
	u.Path = "/" + db
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// AgentURL gives agent name a PostgreSQL login role of its own in the
// database behind pool (store.CreateAgentRole, as `ruckus agent create`
// does) and returns the URL agentd connects with: everything it does then
// runs under the agents' restricted group role. The role is dropped when
// the test ends.
func AgentURL(t testing.TB, pool *pgxpool.Pool, name string) string {
	t.Helper()
	u, _ := AgentLogin(t, pool, name)
	return u
}

// AgentLogin is AgentURL with the agent's key (what it needs through
// PgBouncer). The agent is granted what it declares at its first
// registration, as `ruckus dev`'s agent is.
func AgentLogin(t testing.TB, pool *pgxpool.Pool, name string) (url, key string) {
	t.Helper()
	return AgentLoginGranted(t, pool, name, store.AgentGrant{OnFirstRegistration: true})
}

// AgentLoginGranted is AgentLogin with the grant given (the zero grant:
// none, until an administrator approves).
func AgentLoginGranted(t testing.TB, pool *pgxpool.Pool, name string, grant store.AgentGrant) (url, key string) {
	t.Helper()
	ctx := context.Background()
	password := randomHex(16)
	role, err := store.New(pool).CreateAgentRole(ctx, name, password, grant)
	if err != nil {
		t.Fatalf("create agent role: %v", err)
	}
	t.Cleanup(func() {
		// Roles are cluster-wide: drop it whatever else the test left.
		_, _ = pool.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, role.Role)
		_, _ = pool.Exec(context.Background(), "DROP ROLE IF EXISTS "+pgx.Identifier{role.Role}.Sanitize())
	})
	u, err := store.AgentDatabaseURL(URL(t, pool), role, password)
	if err != nil {
		t.Fatal(err)
	}
	return u, role.Key
}
