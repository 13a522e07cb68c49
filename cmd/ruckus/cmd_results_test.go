package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The CLI is a client of the API: these tests answer as the API does
// (the API itself is tested in handlers).
func TestBenchWatchFollowsUntilDone(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer rk_test" || r.URL.Path != "/api/v1/benchmarks/7" {
			http.Error(w, `{"error":"no"}`, 404)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 {
			fmt.Fprint(w, `{"name":"b","runs":[{"run_id":3,"model":"m","runtime":"sim","state":"running","progress":50,"completed":10,"total":20,"throughput":99.5,"eta_seconds":4}]}`)
			return
		}
		fmt.Fprint(w, `{"name":"b","runs":[{"run_id":3,"model":"m","runtime":"sim","state":"completed","progress":100,"completed":20,"total":20,"throughput":101}]}`)
	}))
	defer srv.Close()
	t.Setenv("RUCKUS_URL", srv.URL)
	t.Setenv("RUCKUS_TOKEN", "rk_test")
	var out bytes.Buffer
	if err := cmdBench(context.Background(), []string{"watch", "7", "--interval", "10ms"}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if calls.Load() != 2 || !strings.Contains(out.String(), "[###############...............]  50% 10/20 99.5 tok/s errors 0 ETA 4s  running") ||
		!strings.Contains(lines[len(lines)-1], "100% 20/20 101.0 tok/s errors 0  completed") {
		t.Fatalf("%d calls, output:\n%s", calls.Load(), out.String())
	}
	if err := cmdBench(context.Background(), []string{"watch", "8"}, &out); err == nil || !strings.Contains(err.Error(), "no") {
		t.Fatalf("unknown benchmark: %v", err)
	}
}

func TestResultsExportWritesWhatTheAPISends(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/runs/3/results" || r.URL.Query().Get("format") != "jsonl" {
			http.Error(w, `{"error":"no such run"}`, 404)
			return
		}
		fmt.Fprint(w, `{"id":"batch_req_3_0","custom_id":"a"}`+"\n")
	}))
	defer srv.Close()
	t.Setenv("RUCKUS_URL", srv.URL)
	t.Setenv("RUCKUS_TOKEN", "rk_test")
	var out bytes.Buffer
	if err := cmdResults(context.Background(), []string{"export", "3", "--format", "jsonl"}, &out); err != nil || !strings.Contains(out.String(), `"custom_id":"a"`) {
		t.Fatalf("%v %q", err, out.String())
	}
	if err := cmdResults(context.Background(), []string{"export", "4"}, &out); err == nil || !strings.Contains(err.Error(), "no such run") {
		t.Fatalf("missing run: %v", err)
	}
	if err := cmdResults(context.Background(), []string{"export", "3", "--format", "xml"}, &out); err == nil {
		t.Fatal("--format xml accepted")
	}
}

func TestResultsImportSendsTheFileAndReports(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/datasets/5/imports" || r.FormValue("model") != "m/x" {
			w.WriteHeader(422)
			fmt.Fprint(w, `{"errors":[{"line":2,"field":"custom_id","message":"missing"}]}`)
			return
		}
		f, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, `{"error":"no file"}`, 400)
			return
		}
		b, _ := io.ReadAll(f)
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"run_id":9,"matched":%d,"unmatched":1,"missing":0,"unmatched_ids":["zz"]}`, strings.Count(string(b), "\n"))
	}))
	defer srv.Close()
	t.Setenv("RUCKUS_URL", srv.URL)
	t.Setenv("RUCKUS_TOKEN", "rk_test")
	file := filepath.Join(t.TempDir(), "out.jsonl")
	_ = os.WriteFile(file, []byte("{\"custom_id\":\"a\",\"output\":\"1\"}\n{\"custom_id\":\"b\",\"output\":\"2\"}\n"), 0o600)
	var out bytes.Buffer
	if err := cmdResults(context.Background(), []string{"import", file, "--dataset", "5", "--model", "m/x"}, &out); err != nil ||
		!strings.Contains(out.String(), "run 9 imported: 2 matched, 1 unmatched, 0 items missing") || !strings.Contains(out.String(), "zz") {
		t.Fatalf("%v %q", err, out.String())
	}
	err := cmdResults(context.Background(), []string{"import", file, "--dataset", "5", "--model", "other"}, &out)
	if err == nil || !strings.Contains(err.Error(), "line 2: custom_id: missing") {
		t.Fatalf("refused import: %v", err)
	}
	if err := cmdResults(context.Background(), []string{"import", file}, &out); err == nil {
		t.Fatal("import without --dataset and --model accepted")
	}
}

// benchmarkServer answers as the API does for benchmark 7: running at the
// first call, finished after.
func benchmarkServer(t *testing.T) *atomic.Int32 {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 {
			fmt.Fprint(w, `{"name":"b","runs":[{"run_id":3,"model":"m","runtime":"sim","state":"running","progress":50,"completed":10,"total":20,"throughput":99.5,"eta_seconds":4},`+
				`{"run_id":4,"model":"n","runtime":"sim","state":"queued","waiting_for_agent":true,"total":20}]}`)
			return
		}
		fmt.Fprint(w, `{"name":"b","runs":[{"run_id":3,"model":"m","runtime":"sim","state":"completed","progress":100,"completed":20,"total":20,"throughput":101},`+
			`{"run_id":4,"model":"n","runtime":"sim","state":"failed","progress":25,"completed":5,"total":20,"throughput":3,"error":"runtime died"}]}`)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("RUCKUS_URL", srv.URL)
	t.Setenv("RUCKUS_TOKEN", "rk_test")
	return &calls
}

// On a terminal each run is a bar redrawn in place, left where the run
// ended.
func TestBenchWatchDrawsBarsOnATerminal(t *testing.T) {
	calls := benchmarkServer(t)
	var out bytes.Buffer
	err := watchBenchmark(context.Background(), 7, 10*time.Millisecond, &out, true)
	if err == nil || err.Error() != "1 run(s) failed" {
		t.Fatalf("watch: %v", err)
	}
	got := out.String()
	for _, want := range []string{
		"run 3     m sim", "[##############################] 100 % 20/20 101.0 tok/s errors 0  completed",
		"run 4     n sim", "[########......................]  25 % 5/20 3.0 tok/s errors 0  failed: runtime died",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if calls.Load() != 2 {
		t.Errorf("%d calls", calls.Load())
	}
}

// Elsewhere the same runs are plain lines, one block per answer.
func TestBenchWatchWritesPlainLinesElsewhere(t *testing.T) {
	benchmarkServer(t)
	var out bytes.Buffer
	if err := watchBenchmark(context.Background(), 7, 10*time.Millisecond, &out, false); err == nil {
		t.Fatal("a failed run went unreported")
	}
	want := "run 3     m sim                        [###############...............]  50% 10/20 99.5 tok/s errors 0 ETA 4s  running\n" +
		"run 4     n sim                        [..............................]   0% 0/20 0.0 tok/s errors 0  queued, waiting for an agent\n\n" +
		"run 3     m sim                        [##############################] 100% 20/20 101.0 tok/s errors 0  completed\n" +
		"run 4     n sim                        [########......................]  25% 5/20 3.0 tok/s errors 0  failed: runtime died\n\n"
	if out.String() != want {
		t.Errorf("output:\n%q\nwant\n%q", out.String(), want)
	}
}

// An upload to a terminal shows a bar of the bytes sent; the file arrives
// whole either way.
func TestUploadBar(t *testing.T) {
	content := strings.Repeat(`{"prompt":"hello"}`+"\n", 5000)
	var received atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, `{"error":"no file"}`, 400)
			return
		}
		n, _ := io.Copy(io.Discard, f)
		received.Store(n)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"dataset_id":9,"name":"items","format":"simple","count":5000,"bytes":%d}`, n)
	}))
	defer srv.Close()
	t.Setenv("RUCKUS_URL", srv.URL)
	t.Setenv("RUCKUS_TOKEN", "rk_test")
	file := filepath.Join(t.TempDir(), "items.jsonl")
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}

	var bars bytes.Buffer
	res, err := postFile(context.Background(), "/api/v1/datasets", nil, file, &bars)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || received.Load() != int64(len(content)) {
		t.Fatalf("%s, %d of %d bytes received", res.Status, received.Load(), len(content))
	}
	if got := bars.String(); !strings.Contains(got, "upload items.jsonl [##############################] 100 %") || !strings.Contains(got, "92.8 KiB / 92.8 KiB") {
		t.Errorf("bar:\n%s", got)
	}

	// Not a terminal: only the outcome.
	var out bytes.Buffer
	if err := cmdDataset(context.Background(), []string{"upload", file}, &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != fmt.Sprintf("dataset 9 \"items\": 5000 items, format simple, %d bytes\n", len(content)) {
		t.Errorf("output %q", got)
	}
}
