package benchkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/migrations"
)

// DatabaseURL is DATABASE_URL, which `ruckus dev-db exec` sets.
func DatabaseURL() (string, error) {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return "", errors.New("DATABASE_URL is not set: run through `ruckus dev-db exec --`")
	}
	return url, nil
}

// OpenMigrated opens a pool of at most maxConns connections (0: pgx's
// default) to url and brings the schema up to date.
func OpenMigrated(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	if maxConns > 0 {
		pc.MaxConns = maxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, err
	}
	m, err := migrations.New(pool)
	if err == nil {
		_, err = m.Up(ctx)
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// Psql runs one psql command (such as a \copy) against url, its output to
// stdout, its messages to stderr.
func Psql(url, command string, stdout io.Writer) error {
	cmd := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", command)
	cmd.Stdout, cmd.Stderr = stdout, os.Stderr
	return cmd.Run()
}

// RandomHex is n random bytes in hex: names and passwords that do not
// collide with an earlier run's.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// NewService is a benchmark service whose River client only inserts jobs
// (it works none): what the benchmarks use to launch runs as the server
// would.
func NewService(pool *pgxpool.Pool, st *store.Store, staleAfter time.Duration) (*bench.Service, error) {
	rc, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		return nil, err
	}
	return &bench.Service{Store: st, River: rc, StaleAfter: staleAfter}, nil
}
