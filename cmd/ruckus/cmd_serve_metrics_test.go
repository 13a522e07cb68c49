package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
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
