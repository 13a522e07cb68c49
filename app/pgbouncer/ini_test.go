package pgbouncer_test

import (
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/pgbouncer"
)

// PgBouncer ends a pooled agent idle in a transaction, or in one query,
// past the agents' bounds, whatever the agent SETs in its session.
func TestIniBoundsAPooledAgentsTime(t *testing.T) {
	t.Parallel()
	ini := pgbouncer.Config{Listen: "127.0.0.1:6432", Upstream: "127.0.0.1:5432", Database: "ruckus", Dir: t.TempDir()}.Ini()
	for _, want := range []string{"\nidle_transaction_timeout = 30\n", "\nquery_timeout = 120\n"} {
		if !strings.Contains(ini, want) {
			t.Errorf("pgbouncer.ini lacks %q:\n%s", strings.TrimSpace(want), ini)
		}
	}
}
