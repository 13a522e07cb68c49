package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/store"
)

// RiverOpts shape a test's River client.
type RiverOpts struct {
	// Config is River's own; nil is an insert-only client (no queues, no
	// workers), which is what the server side of most tests needs.
	Config *river.Config
	// Start starts the client (it needs Queues and Workers in Config) and
	// stops it when the test ends.
	Start bool
}

// RiverClient is a River client over pool: the one place tests make one.
func RiverClient(ctx context.Context, tb testing.TB, pool *pgxpool.Pool, opts *RiverOpts) *river.Client[pgx.Tx] {
	tb.Helper()
	o := deref(opts)
	cfg := o.Config
	if cfg == nil {
		cfg = &river.Config{}
	}
	rc, err := river.NewClient(riverpgxv5.New(pool), cfg)
	if err != nil {
		tb.Fatalf("testkit.RiverClient: %v", err)
	}
	if o.Start {
		// The client lives until the test ends, whatever ctx does.
		if err := rc.Start(context.WithoutCancel(ctx)); err != nil {
			tb.Fatalf("testkit.RiverClient: start: %v", err)
		}
		tb.Cleanup(func() { _ = rc.Stop(context.Background()) })
	}
	return rc
}

// ServiceOpts shape the benchmark service.
type ServiceOpts struct {
	// River queues and cancels runs; default an insert-only RiverClient
	// over the store's pool.
	River bench.Queue
	// StaleAfter is how long an agent may be silent and still count as
	// serving; default a minute.
	StaleAfter  time.Duration
	SimAccuracy map[string]float64
}

// Service is the benchmark service over st.
func Service(ctx context.Context, tb testing.TB, st *store.Store, opts *ServiceOpts) *bench.Service {
	tb.Helper()
	o := deref(opts)
	if o.River == nil {
		o.River = RiverClient(ctx, tb, st.Pool(), nil)
	}
	if o.StaleAfter == 0 {
		o.StaleAfter = time.Minute
	}
	return &bench.Service{Store: st, River: o.River, StaleAfter: o.StaleAfter, SimAccuracy: o.SimAccuracy}
}
