package ingest_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/pgtest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/app/testkit"
)

// importFile generates an import of n lines, each an OpenAI batch output
// line with an output of size bytes, as it is read: the test holds none of
// it.
type importFile struct {
	n, size, i int
	buf        []byte
	read       int64
}

func (f *importFile) Read(p []byte) (int, error) {
	for len(f.buf) == 0 {
		if f.i == f.n {
			return 0, io.EOF
		}
		out := strings.Repeat(fmt.Sprintf("answer %d ", f.i), f.size/9+1)[:f.size]
		f.buf = fmt.Appendf(f.buf[:0], `{"id":"batch_%d","custom_id":"q%d","response":{"status_code":200,"request_id":"r%d","body":{"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":%d}}},"error":null}`+"\n",
			f.i, f.i, f.i, out, f.size/5)
		f.i++
	}
	n := copy(p, f.buf)
	f.buf = f.buf[n:]
	f.read += int64(n)
	return n, nil
}

// heapPeak samples the bytes of heap objects (live and not yet collected)
// every millisecond until stopped, and returns the highest reading.
func heapPeak() (stop func() uint64) {
	done := make(chan struct{})
	var peak uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak }
}

// An import streams from the upload into PostgreSQL: importing a 64 MB
// file raises the heap by a few megabytes, not by the file's size (the
// whole import used to be held as a slice of results: 670 MB of growth for
// a 400 MB file). The GC runs at GOGC=25 here so the peak measures what
// the import keeps, not garbage the collector has not reached yet; kept
// results would be live and count whatever the setting.
func TestImportMemoryStaysFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 64 MB")
	}
	ctx := context.Background()
	st := store.New(pgtest.NewDB(t))
	u := testkit.User(ctx, t, st, &testkit.UserOpts{Email: "a@example.com"})
	const items, size = 32_000, 2_000
	var ds strings.Builder
	for i := range items {
		fmt.Fprintf(&ds, `{"id":"q%d","prompt":"question %d"}`+"\n", i, i)
	}
	res := testkit.Dataset(ctx, t, st, &testkit.DatasetOpts{Owner: u.ID, Content: ds.String()})
	testkit.Model(ctx, t, st, &testkit.ModelOpts{Name: "outside/model", ParamsB: 7, Quantization: "bf16"})

	defer debug.SetGCPercent(debug.SetGCPercent(25))
	file := &importFile{n: items, size: size}
	runtime.GC()
	base := heapPeak()()
	stop := heapPeak()
	start := time.Now()
	up, err := (&ingest.Uploader{Store: st}).Upload(ctx, ingest.Source{File: file},
		ingest.Request{Kind: ingest.Results, Viewer: store.Viewer{UserID: u.ID}, DatasetID: res.ID, Model: "outside/model"})
	out := up.Run
	took := time.Since(start)
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	if out.Matched != items || out.Unmatched != 0 {
		t.Fatalf("import: %+v", out)
	}
	growth := int64(peak) - int64(base)
	t.Logf("imported %d lines, %.1f MB, in %v: heap %.1f MB before, peak %.1f MB (growth %.1f MB)",
		items, float64(file.read)/1e6, took.Round(time.Millisecond), float64(base)/1e6, float64(peak)/1e6, float64(growth)/1e6)
	if file.read < 60e6 {
		t.Fatalf("the file was %d bytes, want about 64 MB", file.read)
	}
	if growth > file.read/4 {
		t.Fatalf("the heap grew by %.1f MB importing %.1f MB: the import is not streamed", float64(growth)/1e6, float64(file.read)/1e6)
	}
	var stored int64
	if err := st.Pool().QueryRow(ctx, `SELECT sum(completion_tokens) FROM results WHERE run_id = $1`, out.RunID).Scan(&stored); err != nil || stored != items*size/5 {
		t.Fatalf("stored tokens %d, %v", stored, err)
	}
}
