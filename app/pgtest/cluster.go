package pgtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/devdb"
)

// Cluster starts a PostgreSQL cluster of the test's own (one it may stop,
// restart or fill from a backup) with an empty database "ruckus", stopped
// when the test ends, and returns it with that database's URL. Without
// PostgreSQL's server binaries the test is skipped.
func Cluster(t testing.TB) (*devdb.Cluster, string) {
	t.Helper()
	bin, err := devdb.FindBinaries()
	if err != nil {
		t.Skipf("no PostgreSQL binaries to run a private cluster: %v", err)
	}
	port, err := devdb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	// As root the cluster runs as postgres, which must reach the directory.
	for d := tmp; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := &devdb.Cluster{BinDir: bin, Dir: filepath.Join(tmp, "pg"), Port: port, Throwaway: true}
	ctx := context.Background()
	if err := c.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	url, err := c.CreateDatabase(ctx, "ruckus")
	if err != nil {
		t.Fatal(err)
	}
	return c, url
}
