// Command ingest measures dataset ingest (`make bench-ingest`): it
// uploads a generated 1,000,000-line JSONL file (about 500 MB) to a real
// `ruckus serve` over HTTP, then loads the same rows with `psql \copy` into
// a table of the same shape on the same cluster, and prints both
// throughputs, their ratio and the server's peak RSS.
//
// Run it through `ruckus dev-db exec` (DATABASE_URL set, psql on PATH).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ruckus/ruckus/app/auth"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/cmd/selfbench/internal/benchkit"
)

func main() {
	ruckus := flag.String("ruckus", "bin/ruckus", "the server binary")
	lines := flag.Int("lines", 1_000_000, "items in the generated file")
	work := flag.String("dir", "", "working directory (default: a temporary one, removed afterwards)")
	flag.Parse()
	if err := run(*ruckus, *lines, *work); err != nil {
		fmt.Fprintln(os.Stderr, "bench-ingest:", err)
		os.Exit(1)
	}
}

func run(ruckus string, lines int, dir string) error {
	ctx := context.Background()
	dbURL, err := benchkit.DatabaseURL()
	if err != nil {
		return err
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "bench-ingest-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	file := filepath.Join(dir, "items.jsonl")
	size, err := generate(file, lines)
	if err != nil {
		return err
	}
	fmt.Printf("generated %s: %d lines, %.1f MB\n", file, lines, float64(size)/1e6)

	pool, err := benchkit.OpenMigrated(ctx, dbURL, 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)
	u, err := st.CreateUser(ctx, store.NewUser{Email: fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano()), PasswordHash: "x", Role: store.RoleUser})
	if err != nil {
		return err
	}
	token, prefix, hash := auth.NewAPIToken()
	if _, err := st.CreateAPIToken(ctx, u.ID, "bench", prefix, hash); err != nil {
		return err
	}

	srv, err := benchkit.StartServer(ctx, ruckus, "RUCKUS_ADMIN_PASSWORD=bench-password")
	if err != nil {
		return err
	}
	defer func() { _ = srv.Stop(time.Minute) }()

	start := time.Now()
	id, err := upload(srv.Base, token, file)
	if err != nil {
		return err
	}
	ingest := time.Since(start)
	// The server's high-water mark of resident memory.
	rss, err := benchkit.StatusBytes(srv.Pid(), "VmHWM")
	if err != nil {
		return err
	}

	// The same rows, in the shape they are stored, loaded by psql.
	rows := filepath.Join(dir, "rows.txt")
	if err := benchkit.Psql(dbURL, fmt.Sprintf(`\copy (SELECT dataset_id, idx, custom_id, request, reference FROM dataset_items WHERE dataset_id = %d ORDER BY idx) TO '%s'`, id, rows), os.Stderr); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `DROP TABLE IF EXISTS bench_items; CREATE TABLE bench_items (LIKE dataset_items INCLUDING ALL)`); err != nil {
		return err
	}
	start = time.Now()
	if err := benchkit.Psql(dbURL, fmt.Sprintf(`\copy bench_items (dataset_id, idx, custom_id, request, reference) FROM '%s'`, rows), os.Stderr); err != nil {
		return err
	}
	copyTime := time.Since(start)
	if _, err := pool.Exec(ctx, `DROP TABLE bench_items`); err != nil {
		return err
	}

	mb := float64(size) / 1e6
	fmt.Printf("ruckus upload (HTTP, parse, validate, COPY): %d items in %.1f s = %.1f MB/s (%.0f items/s)\n", lines, ingest.Seconds(), mb/ingest.Seconds(), float64(lines)/ingest.Seconds())
	fmt.Printf("psql \\copy of the same rows:                %d items in %.1f s = %.1f MB/s (%.0f items/s)\n", lines, copyTime.Seconds(), mb/copyTime.Seconds(), float64(lines)/copyTime.Seconds())
	fmt.Printf("ratio ruckus / psql: %.2f (target >= 0.50)\n", copyTime.Seconds()/ingest.Seconds())
	fmt.Printf("server peak RSS: %.0f MB (target < 300 MB)\n", float64(rss)/1e6)
	return nil
}

// generate writes n simple-format items of about 500 bytes each.
func generate(path string, n int) (int64, error) {
	if fi, err := os.Stat(path); err == nil {
		return fi.Size(), nil
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	filler := strings.Repeat("Summarise the history of the printing press and its effect on literacy. ", 6)
	for i := 1; i <= n; i++ {
		line, _ := json.Marshal(map[string]string{
			"id":        fmt.Sprintf("item-%07d", i),
			"prompt":    fmt.Sprintf("Item %d. %s", i, filler),
			"reference": fmt.Sprintf("Reference answer number %d.", i),
		})
		w.Write(line)     //nolint:errcheck // checked at Flush
		w.WriteByte('\n') //nolint:errcheck
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func upload(base, token, file string) (int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		part, err := mw.CreateFormFile("file", filepath.Base(file))
		if err == nil {
			_, err = io.Copy(part, f)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/datasets", pr)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var body struct {
		ID    int64 `json:"dataset_id"`
		Count int   `json:"count"`
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated || json.Unmarshal(b, &body) != nil {
		return 0, fmt.Errorf("upload: %s: %.500s", res.Status, b)
	}
	return body.ID, nil
}
