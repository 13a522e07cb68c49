package migrations_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/testkit"
	"github.com/ruckus/ruckus/migrations"
)

// TestReassignedEventKind runs migration reassigned_event_kind both ways
// over stored events: up, the reaper's old kind handed_on reads
// reassigned (the word of docs/conventions.md#glossary); down, it is
// handed_on again; other kinds stay as they are either way.
func TestReassignedEventKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testkit.Store(t)
	w := testkit.NewWorld(ctx, t, st, nil)
	ms, err := migrations.Load(migrations.Files())
	if err != nil {
		t.Fatal(err)
	}
	var mig migrations.Migration
	for _, m := range ms {
		if m.Name == "reassigned_event_kind" {
			mig = m
		}
	}
	if mig.Up == "" {
		t.Fatal("no migration reassigned_event_kind")
	}
	kinds := func() string {
		t.Helper()
		var ks []string
		rows, err := st.Pool().Query(ctx, `SELECT kind FROM run_events WHERE run_id = $1 ORDER BY id`, w.Run)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			ks = append(ks, k)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return strings.Join(ks, ",")
	}
	// The database is migrated already: store the kinds as they were
	// before it.
	if _, err := st.Pool().Exec(ctx, `INSERT INTO run_events (run_id, kind) VALUES ($1, 'started'), ($1, 'handed_on'), ($1, 'resumed')`, w.Run); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name, sql, want string
	}{
		{"up", mig.Up, "started,reassigned,resumed"},
		{"down", mig.Down, "started,handed_on,resumed"},
	} {
		if _, err := st.Pool().Exec(ctx, step.sql); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if got := kinds(); got != step.want {
			t.Errorf("after %s: kinds %s, want %s", step.name, got, step.want)
		}
	}
}
