package sim_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/agentd/sim"
)

func quickConfig() sim.Config {
	c := sim.DefaultConfig()
	c.TTFT, c.ITL, c.OutputTokens = sim.MustParseDist("const:1ms"), sim.MustParseDist("const:1ms"), sim.MustParseDist("const:5")
	return c
}

func TestListenAndServe(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- sim.ListenAndServe(ctx, "127.0.0.1:0", quickConfig(), nil, func(a string) { addrs <- a })
	}()
	var addr string
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatal(err)
	}
	if strings.HasSuffix(addr, ":0") {
		t.Fatalf("ready got %s, not the port chosen", addr)
	}
	resp, err := http.Post("http://"+addr+chatPath, "application/json", strings.NewReader(body(chatPath, "")))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := readSSE(resp.Body, func(event) { n++ }); err != nil || n != 1+5+2+1 {
		t.Fatalf("%d events, %v", n, err)
	}
	resp.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after ctx ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ListenAndServe did not return after ctx ended")
	}
	if _, err := http.Get("http://" + addr + "/health"); err == nil {
		t.Fatal("still serving after ctx ended")
	}
}

// A stream that would never end does not hold shutdown up for longer than
// the grace period.
func TestShutdownCutsEndlessStreams(t *testing.T) {
	t.Parallel()
	cfg := quickConfig()
	cfg.ITL = sim.MustParseDist("const:1h")
	ctx, cancel := context.WithCancel(context.Background())
	addr, done, err := sim.Listen(ctx, "127.0.0.1:0", cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+addr+chatPath, "application/json", strings.NewReader(body(chatPath, "")))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := make(chan int, 8)
	ended := make(chan error, 1)
	go func() { ended <- readSSE(resp.Body, func(event) { got <- 1 }) }()
	<-got // the role chunk
	<-got // the first token; the next is an hour away
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("shutdown waited for an endless stream")
	}
	if err := <-ended; err == nil {
		t.Fatal("the cut stream ended cleanly")
	}
}

func TestListenErrors(t *testing.T) {
	t.Parallel()
	bad := quickConfig()
	bad.Batch = 0
	if _, _, err := sim.Listen(context.Background(), "127.0.0.1:0", bad, nil); err == nil || !strings.Contains(err.Error(), "--sim-batch") {
		t.Fatalf("bad config: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	called := false
	err = sim.ListenAndServe(context.Background(), ln.Addr().String(), quickConfig(), nil, func(string) { called = true })
	if err == nil || !strings.Contains(err.Error(), "sim: listen on") || called {
		t.Fatalf("address in use: %v (ready called: %v)", err, called)
	}
}
