package promscrape

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func ptr(v float64) *float64 { return &v }

// serveFile serves a testdata exposition as a runtime would.
func serveFile(t *testing.T, name string) *httptest.Server {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestScrapeRuntimes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want Snapshot
	}{
		{"vllm.prom", Snapshot{Runtime: "vllm", Running: ptr(21), Waiting: ptr(3), KVCacheUsage: ptr(0.375),
			PrefixCacheHitRate: ptr(0.25), PrefixCacheHits: ptr(10000), PrefixCacheQueries: ptr(40000),
			GenerationTokens: ptr(223456), Samples: 24}},
		{"vllm-old.prom", Snapshot{Runtime: "vllm", Running: ptr(4), Waiting: ptr(1), KVCacheUsage: ptr(0.0625),
			PrefixCacheHitRate: ptr(0.375), GenerationTokens: ptr(4096), Samples: 9}},
		{"sglang.prom", Snapshot{Runtime: "sglang", Running: ptr(28), Waiting: ptr(5), KVCacheUsage: ptr(0.28),
			PrefixCacheHitRate: ptr(0.0075), GenerationTokens: ptr(7.557572e+06), Samples: 11}},
		{"tgi.prom", Snapshot{Runtime: "tgi", Running: ptr(16), Waiting: ptr(7), GenerationTokens: ptr(30208), Samples: 15}},
		{"llamacpp.prom", Snapshot{Runtime: "llama-cpp", Running: ptr(2), Waiting: ptr(1), KVCacheUsage: ptr(0.125),
			GenerationTokens: ptr(8192), Samples: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			srv := serveFile(t, tt.file)
			before := time.Now()
			got, err := Scrape(context.Background(), srv.Client(), srv.URL+"/metrics")
			if err != nil {
				t.Fatalf("Scrape: %v", err)
			}
			if got.At.Before(before) || got.At.After(time.Now()) {
				t.Errorf("At %v not during the scrape", got.At)
			}
			got.At = time.Time{}
			if diff := diffSnapshots(got, tt.want); diff != "" {
				t.Errorf("snapshot: %s", diff)
			}
		})
	}
}

// diffSnapshots compares field by field, the pointers by value.
func diffSnapshots(got, want Snapshot) string {
	var diffs []string
	f := func(name string, g, w *float64) {
		switch {
		case g == nil && w == nil:
		case g == nil || w == nil:
			diffs = append(diffs, fmt.Sprintf("%s = %v, want %v", name, show(g), show(w)))
		case *g != *w:
			diffs = append(diffs, fmt.Sprintf("%s = %v, want %v", name, *g, *w))
		}
	}
	f("Running", got.Running, want.Running)
	f("Waiting", got.Waiting, want.Waiting)
	f("KVCacheUsage", got.KVCacheUsage, want.KVCacheUsage)
	f("PrefixCacheHitRate", got.PrefixCacheHitRate, want.PrefixCacheHitRate)
	f("PrefixCacheHits", got.PrefixCacheHits, want.PrefixCacheHits)
	f("PrefixCacheQueries", got.PrefixCacheQueries, want.PrefixCacheQueries)
	f("GenerationTokens", got.GenerationTokens, want.GenerationTokens)
	if got.Runtime != want.Runtime || got.Samples != want.Samples || got.Malformed != want.Malformed || !got.At.Equal(want.At) {
		diffs = append(diffs, fmt.Sprintf("runtime/samples/malformed/at = %q/%d/%d/%v, want %q/%d/%d/%v",
			got.Runtime, got.Samples, got.Malformed, got.At, want.Runtime, want.Samples, want.Malformed, want.At))
	}
	return strings.Join(diffs, "; ")
}

func show(p *float64) any {
	if p == nil {
		return "nil"
	}
	return *p
}

func TestScrapeFailures(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<!doctype html>\n<html><body><h1>Ollama is running</h1></body></html>\n")
		case "/json":
			fmt.Fprint(w, `{"object":"list","data":[]}`)
		case "/binary":
			_, _ = w.Write([]byte{0x1f, 0x8b, 0x08, 0x00, 0xff, 0x00, 0x01, '\n', 0x00})
		case "/slow":
			<-r.Context().Done()
		case "/huge":
			line := []byte("vllm:num_requests_running{pad=\"" + strings.Repeat("x", 1000) + "\"} 1\n")
			for range maxBody/len(line) + 1 {
				_, _ = w.Write(line)
			}
		case "/many":
			for i := range MaxSamples + 1 {
				fmt.Fprintf(w, "vllm:num_requests_running{rank=\"%d\"} 1\n", i)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	for path, want := range map[string]string{
		"/metrics": "404 Not Found",
		"/html":    "not Prometheus text format: line 1",
		"/json":    "not Prometheus text format",
		"/binary":  "not Prometheus text format",
		"/huge":    fmt.Sprintf("exposition over %d bytes", maxBody),
		"/many":    fmt.Sprintf("exposition over %d samples", MaxSamples),
	} {
		_, err := Scrape(context.Background(), nil, srv.URL+path)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Scrape %s = %v, want %q", path, err, want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Scrape(ctx, nil, srv.URL+"/slow"); err == nil {
		t.Error("Scrape of a server that never answers succeeded")
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	if _, err := Scrape(context.Background(), nil, closed.URL+"/metrics"); err == nil {
		t.Error("Scrape of a closed server succeeded")
	}
}

// A few bad lines among good ones: the good ones count.
func TestScrapeToleratesMalformedLines(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "vllm:num_requests_running 2\nvllm:num_requests_waiting{ 1\nvllm:kv_cache_usage_perc 0.5 x y\n")
	}))
	t.Cleanup(srv.Close)
	got, err := Scrape(context.Background(), nil, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	got.At = time.Time{}
	if diff := diffSnapshots(got, Snapshot{Runtime: "vllm", Running: ptr(2), Samples: 1, Malformed: 2}); diff != "" {
		t.Error(diff)
	}
}

func TestEmptyExposition(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	got, err := Scrape(context.Background(), nil, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got.Running != nil || got.Runtime != "" || got.Samples != 0 {
		t.Errorf("%+v", got)
	}
}

func TestFromSamples(t *testing.T) {
	t.Parallel()
	parse := func(s string) Snapshot {
		samples, err := Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return FromSamples(samples)
	}
	// The newer KV name wins over the older; NaN is left out.
	got := parse("vllm:gpu_cache_usage_perc 0.9\nvllm:kv_cache_usage_perc{engine=\"0\"} 0.2\nvllm:kv_cache_usage_perc{engine=\"1\"} NaN\n")
	if got.KVCacheUsage == nil || *got.KVCacheUsage != 0.2 {
		t.Errorf("KVCacheUsage %v", show(got.KVCacheUsage))
	}
	// Counters beat the old gauge; no queries yet means no rate.
	got = parse("vllm:gpu_prefix_cache_hit_rate 0.5\nvllm:prefix_cache_hits_total 0\nvllm:prefix_cache_queries_total 0\n")
	if got.PrefixCacheHitRate != nil {
		t.Errorf("hit rate without queries: %v", *got.PrefixCacheHitRate)
	}
	// Only NaN: absent.
	if got = parse("sglang:token_usage NaN\n"); got.KVCacheUsage != nil || got.Runtime != "sglang" {
		t.Errorf("%+v", got)
	}
	// Nothing known.
	if got = parse("process_cpu_seconds_total 12\n"); got != (Snapshot{Samples: 1}) {
		t.Errorf("%+v", got)
	}
}

func TestPrefixCacheHitRateSince(t *testing.T) {
	t.Parallel()
	prev := Snapshot{PrefixCacheHits: ptr(100), PrefixCacheQueries: ptr(400)}
	cur := Snapshot{PrefixCacheHits: ptr(400), PrefixCacheQueries: ptr(800)}
	if r := cur.PrefixCacheHitRateSince(prev); r == nil || *r != 0.75 {
		t.Errorf("rate %v", show(r))
	}
	if r := prev.PrefixCacheHitRateSince(prev); r != nil {
		t.Errorf("no queries in between: %v", *r)
	}
	if r := prev.PrefixCacheHitRateSince(cur); r != nil {
		t.Errorf("counters went back: %v", *r)
	}
	if r := cur.PrefixCacheHitRateSince(Snapshot{}); r != nil {
		t.Errorf("no counters before: %v", *r)
	}
}

// syncBuffer is a log sink safe for the scraper's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The scraper keeps going through failures, counts them, logs the first
// only, and stops when its context ends.
func TestScraperToleratesFailures(t *testing.T) {
	t.Parallel()
	const failFirst = 3
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		if n <= failFirst {
			http.Error(w, "engine dead", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "sglang:num_running_reqs %d\n", n)
	}))
	t.Cleanup(srv.Close)

	var logs syncBuffer
	s := &Scraper{URL: srv.URL + "/metrics", Interval: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []Snapshot
	done := make(chan ScrapeStats)
	go func() {
		done <- s.Run(ctx, func(snap Snapshot) {
			got = append(got, snap)
			if len(got) == 3 {
				cancel()
			}
		})
	}()
	var stats ScrapeStats
	select {
	case stats = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("scraper did not stop after its context ended")
	}
	if stats.Failed != failFirst || stats.OK != 3 || stats.LastErr == nil || !strings.Contains(stats.LastErr.Error(), "500") {
		t.Errorf("stats %+v", stats)
	}
	if len(got) != 3 || got[0].Running == nil || *got[0].Running != failFirst+1 || *got[2].Running != failFirst+3 {
		t.Errorf("snapshots %+v", got)
	}
	if n := strings.Count(logs.String(), "metrics scrape failed"); n != 1 {
		t.Errorf("failure logged %d times:\n%s", n, logs.String())
	}
}

func TestScraperStopsAtOnce(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stats := (&Scraper{URL: "http://127.0.0.1:1/metrics"}).Run(ctx, func(Snapshot) { t.Error("callback after the end") })
	if stats.OK != 0 || stats.Failed != 0 {
		t.Errorf("stats %+v", stats)
	}
}
