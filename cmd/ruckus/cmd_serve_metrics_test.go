package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ruckus/ruckus/app/config"
	"github.com/ruckus/ruckus/app/pgtest"
)

// testServerConfig is the settings of a server on pool, on a free port.
func testServerConfig(t *testing.T, pool *pgxpool.Pool) config.Config {
	cfg := config.Defaults()
	cfg.DatabaseURL, cfg.Addr, cfg.MetricsAddr, cfg.PasswordCost = pgtest.URL(t, pool), "127.0.0.1:0", "off", 4
	cfg.AdminPassword = "a-long-enough-password"
	return cfg
}

// startServer runs `ruckus serve` with cfg until the test ends and
// returns its public address.
func startServer(t *testing.T, cfg config.Config) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan string, 1)
	go func() { done <- serve(ctx, cfg, io.Discard, io.Discard, ready) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	select {
	case addr := <-ready:
		return addr
	case err := <-done:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start")
	}
	return ""
}

// The server answers /metrics on RUCKUS_METRICS_ADDR and not on its
// public port, and the request durations there are by route pattern.
func TestMetricsAreServedApartFromThePublicPort(t *testing.T) {
	pool := pgtest.NewDB(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := ln.Addr().String()
	ln.Close()
	cfg := testServerConfig(t, pool)
	cfg.MetricsAddr = metricsAddr
	public := startServer(t, cfg)
	get := func(url string) (int, string) {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, _ := get("http://" + public + "/runs/12345"); code != http.StatusOK && code != http.StatusSeeOther && code != http.StatusNotFound {
		t.Fatalf("a page: %d", code)
	}
	if code, _ := get("http://" + public + "/metrics"); code != http.StatusNotFound {
		t.Fatalf("/metrics on the public port: %d, want 404", code)
	}
	code, body := get("http://" + metricsAddr + "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics on %s: %d", metricsAddr, code)
	}
	for _, want := range []string{
		`ruckus_http_request_duration_seconds_count{code="303",method="GET",route="/runs/:id<int>"} 1`,
		`ruckus_runs{state="queued"} 0`,
		`ruckus_agents{state="online"} 0`,
		`ruckus_db_pool_max_connections 20`,
		`ruckus_run_lease_latency_seconds_count 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, "/runs/12345") {
		t.Error("/metrics names a raw path, not the route")
	}
}

// lockedBuffer is a log a server writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A second server on one host finds the metrics port taken: it says so in
// its log and serves anyway, without metrics.
func TestTakenMetricsPortIsAWarning(t *testing.T) {
	pool := pgtest.NewDB(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg := testServerConfig(t, pool)
	cfg.MetricsAddr = taken.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var log lockedBuffer
	done := make(chan error, 1)
	ready := make(chan string, 1)
	go func() { done <- serve(ctx, cfg, io.Discard, &log, ready) }()
	select {
	case addr := <-ready:
		res, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("/healthz with the metrics port taken: %d", res.StatusCode)
		}
	case err := <-done:
		t.Fatalf("the server did not start with the metrics port taken: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start")
	}
	if out := log.String(); !strings.Contains(out, "metrics port taken") || !strings.Contains(out, cfg.MetricsAddr) {
		t.Fatalf("the log does not warn of the taken port:\n%s", out)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
