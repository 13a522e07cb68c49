package handlers_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/handlers"
)

// Ten downloads that nobody reads cannot take the database pool from
// everyone else: each user may run two exports and the server three in
// all (the test pool has four connections), the rest are answered 429 at
// once, other users' requests keep answering within a second, and a
// client that takes nothing for the stall timeout is cut off, giving its
// connection back. The stall timeout (8 s) is longer than the ten
// requests take on a loaded machine, so none is cut before all are sent.
func TestStalledExportsCannotStarveThePool(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(d *handlers.Deps) {
		d.ExportsPerUser, d.ExportsTotal, d.ExportStallTimeout = 2, 3, 8*time.Second
	})
	ada := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	root := e.token(e.createUser("root@example.com", "correct horse", store.RoleAdmin))
	ops := e.token(e.createUser("ops@example.com", "correct horse", store.RoleAdmin))
	bob := e.token(e.createUser("bob@example.com", "correct horse", store.RoleUser))
	// About 8 MB of CSV: more than the socket buffers between a server
	// and a client that reads nothing, so the server's writes block.
	_, run := runWithResults(t, e, ada, 8000, func(i int) string { return fmt.Sprintf("%05d ", i) + strings.Repeat("x", 1000) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = e.app.Listener(ln) }()
	t.Cleanup(func() { _ = ln.Close() })
	addr := ln.Addr().String()

	// stalled sends an export request and reads its status line only.
	dialer := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	stalled := func(token, format string) string {
		t.Helper()
		conn, err := dialer.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
		fmt.Fprintf(conn, "GET /api/v1/runs/%d/results?format=%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", run, format, token)
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		status, err := bufio.NewReaderSize(conn, 64).ReadString('\n')
		if err != nil {
			t.Fatalf("status line: %v", err)
		}
		return strings.TrimSpace(status)
	}
	for i, tc := range []struct{ token, format, want string }{
		// ada's two, then two over her share
		{ada, "csv", "200"}, {ada, "jsonl", "200"}, {ada, "csv", "429"}, {ada, "jsonl", "429"},
		// the third in all, then five over the total
		{root, "csv", "200"}, {root, "csv", "429"}, {root, "jsonl", "429"}, {ops, "csv", "429"}, {ops, "jsonl", "429"}, {ops, "csv", "429"},
	} {
		if got := stalled(tc.token, tc.format); !strings.Contains(got, " "+tc.want+" ") {
			t.Fatalf("export %d: %q, want %s", i+1, got, tc.want)
		}
	}

	// Everyone else is still served, and promptly.
	client := &http.Client{Timeout: 5 * time.Second}
	for i := range 5 {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/api/v1/me", nil)
		req.Header.Set("Authorization", "Bearer "+bob)
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("bob's request %d while ten exports stall: %v", i+1, err)
		}
		res.Body.Close()
		if took := time.Since(start); res.StatusCode != 200 || took > time.Second {
			t.Fatalf("bob's request %d while ten exports stall: %d in %v", i+1, res.StatusCode, took)
		}
	}

	// The stalled exports are cut after the stall timeout, and an export
	// that is read goes through in full again.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/api/v1/runs/%d/results?format=csv", addr, run), nil)
		req.Header.Set("Authorization", "Bearer "+ops)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("export after the stalled ones were cut: %v", err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == 200 {
			if err != nil || strings.Count(string(body), "\n") != 8001 {
				t.Fatalf("the export after the cut: %v, %d lines", err, strings.Count(string(body), "\n"))
			}
			break
		}
		if res.StatusCode != 429 {
			t.Fatalf("export after the stalled ones: %d", res.StatusCode)
		}
		select {
		case <-ctx.Done():
			t.Fatal("the stalled exports were never cut off")
		case <-time.After(200 * time.Millisecond):
		}
	}
}
