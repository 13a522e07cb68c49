package pgbouncer_test

import (
	"os"
	"path/filepath"
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

// Each agent's pool logs in to PostgreSQL as the agent itself: the
// database entry names no user (PgBouncer then logs in as the client's
// own role) and no connect query, the auth file holds the lookup role
// alone, and a pool per agent is small within the budget over all agents
// (docs/scaling.md#one-pool-login-per-agent).
func TestIniLogsInAsEachAgent(t *testing.T) {
	t.Parallel()
	c := pgbouncer.Config{Listen: "127.0.0.1:6432", Upstream: "127.0.0.1:5432", Database: "ruckus", Dir: t.TempDir(),
		MaxDBConnections: 12, MaxClients: 100, AuthPassword: "ruckus-test-pgbouncer-password"}
	ini := c.Ini()
	db := ""
	for _, line := range strings.Split(ini, "\n") {
		if strings.HasPrefix(line, "ruckus = ") {
			db = line
		}
	}
	if db == "" || strings.Contains(db, "user=") || strings.Contains(db, "connect_query") {
		t.Errorf("the database entry %q must name no user and no connect query", db)
	}
	for _, want := range []string{"\ndefault_pool_size = 2\n", "\nmax_user_connections = 2\n", "\nmax_db_connections = 12\n", "\npool_mode = transaction\n"} {
		if !strings.Contains(ini, want) {
			t.Errorf("pgbouncer.ini lacks %q:\n%s", strings.TrimSpace(want), ini)
		}
	}
	c.AgentConnections, c.MaxDBConnections = 50, 3
	if ini := c.Ini(); !strings.Contains(ini, "\ndefault_pool_size = 3\n") {
		t.Errorf("one agent's pool is not held within the budget of 3:\n%s", ini)
	}
	if _, err := c.Write(nil); err != nil {
		t.Fatal(err)
	}
	users, err := os.ReadFile(filepath.Join(c.Dir, "userlist.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(users)); got != `"`+pgbouncer.AuthRole+`" "ruckus-test-pgbouncer-password"` {
		t.Errorf("the auth file holds %q, want PgBouncer's lookup role alone", got)
	}
}
