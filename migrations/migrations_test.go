package migrations_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/migrations"
)

func TestUpDownUpOnEmptyDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.EmptyDB(t)
	m, err := migrations.New(pool)
	if err != nil {
		t.Fatal(err)
	}
	exists := func(table string) bool {
		var ok bool
		if err := pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for round := 1; round <= 2; round++ {
		applied, err := m.Up(ctx)
		if err != nil {
			t.Fatalf("round %d up: %v", round, err)
		}
		if len(applied) != m.Latest() {
			t.Fatalf("round %d: applied %v, want all %d", round, applied, m.Latest())
		}
		for _, tbl := range []string{"users", "sessions", "api_tokens", "agents", "river_job"} {
			if !exists(tbl) {
				t.Fatalf("round %d: table %s missing after up", round, tbl)
			}
		}
		if app, river, err := m.Pending(ctx); err != nil || app != 0 || river != 0 {
			t.Fatalf("round %d: pending after up = %d, %d, %v", round, app, river, err)
		}
		if again, err := m.Up(ctx); err != nil || len(again) != 0 {
			t.Fatalf("round %d: second up applied %v, %v", round, again, err)
		}
		undone, err := m.Down(ctx, true)
		if err != nil {
			t.Fatalf("round %d down: %v", round, err)
		}
		if len(undone) != m.Latest() || undone[0] != m.Latest() {
			t.Fatalf("round %d: rolled back %v, want all, newest first", round, undone)
		}
		for _, tbl := range []string{"users", "sessions", "api_tokens", "agents", "river_job"} {
			if exists(tbl) {
				t.Fatalf("round %d: table %s still there after down --all", round, tbl)
			}
		}
	}
}

func TestDownRollsBackOneStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, err := migrations.New(pgtest.EmptyDB(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Up(ctx); err != nil {
		t.Fatal(err)
	}
	undone, err := m.Down(ctx, false)
	if err != nil || len(undone) != 1 || undone[0] != m.Latest() {
		t.Fatalf("down: %v %v, want just %d", undone, err, m.Latest())
	}
	st, err := m.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st[len(st)-1].AppliedAt != nil || st[0].AppliedAt == nil {
		t.Fatalf("status after one step down: newest applied=%v, oldest applied=%v", st[len(st)-1].AppliedAt, st[0].AppliedAt)
	}
	if app, _, _ := m.Pending(ctx); app != 1 {
		t.Fatalf("pending = %d, want 1", app)
	}
}

func TestLoadRejectsBrokenSets(t *testing.T) {
	t.Parallel()
	for name, fsys := range map[string]fstest.MapFS{
		"missing down": {"0001_a.up.sql": {Data: []byte("SELECT 1")}},
		"gap": {
			"0001_a.up.sql": {Data: []byte("SELECT 1")}, "0001_a.down.sql": {Data: []byte("SELECT 1")},
			"0003_c.up.sql": {Data: []byte("SELECT 1")}, "0003_c.down.sql": {Data: []byte("SELECT 1")},
		},
		"two names": {"0001_a.up.sql": {Data: []byte("SELECT 1")}, "0001_b.down.sql": {Data: []byte("SELECT 1")}},
	} {
		if _, err := migrations.Load(fsys); err == nil {
			t.Errorf("%s: Load accepted a broken set", name)
		}
	}
	if ms, err := migrations.Load(migrations.Files()); err != nil || len(ms) == 0 {
		t.Fatalf("embedded migrations: %v", err)
	}
}

func TestCheckRefusesOtherReleases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.EmptyDB(t)
	m, err := migrations.New(pool)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(ctx); !errors.Is(err, migrations.ErrSchemaMismatch) || !strings.Contains(err.Error(), "ruckus migrate up") {
		t.Fatalf("empty database: %v", err)
	}
	if _, err := m.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Check(ctx); err != nil {
		t.Fatalf("current schema: %v", err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES (9999, 'future')`); err != nil {
		t.Fatal(err)
	}
	if err := m.Check(ctx); !errors.Is(err, migrations.ErrSchemaMismatch) || !strings.Contains(err.Error(), "newer than this program") {
		t.Fatalf("newer schema: %v", err)
	}
}
