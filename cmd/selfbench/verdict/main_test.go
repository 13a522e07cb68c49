package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/pgtest"
)

// TestQuickRunsEveryRowEndToEnd builds ruckus and agentd, runs the bench
// with --quick on an empty database (the server, four agents, benchmarks
// through the API) and checks that the table has every row with the
// counts its --quick plan makes, and the conclusions the house guarantees
// at any size: a p95 of 20 requests is not tested, an open loop's speed is
// not tested, repeats are never flagged against each other.
func TestQuickRunsEveryRowEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs the server and agents")
	}
	db := pgtest.URL(t, pgtest.EmptyDB(t))
	bin := t.TempDir()
	for _, b := range []string{"cmd/ruckus", "agentd"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, filepath.Base(b)), "../../../"+b).CombinedOutput()
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", b, err, out)
		}
	}
	o, err := parseFlags(flag.NewFlagSet("verdict", flag.ContinueOnError), []string{"--quick",
		"--ruckus", filepath.Join(bin, "ruckus"), "--agentd", filepath.Join(bin, "agentd")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, o, db, io.MultiWriter(&out, testWriter{t})); err != nil {
		t.Fatal(err)
	}
	// Each row: its name, and what its first count must read (-1: any
	// number of hits).
	for _, want := range []struct {
		row    string
		hit, n int
	}{
		{"output tokens/s", -1, 2}, {"p95 E2E latency", -1, 2}, {"cost per 1M output tokens", -1, 2},
		{"quality (exact, 0/1)", -1, 2}, {"run flagged as a regression", -1, 4},
		{"price-only (equal speed, 2× price): speed called significant", -1, 1},
		{"small n: p95 tested", 0, 1},
		{"rescore: run keeps its place", -1, 1},
		{"repeats within a benchmark: runs flagged against a repeat", 0, 6},
		{"open loop: speed tested", 0, 1},
		{"open loop: p95 latency tested", -1, 1},
	} {
		hit, n, ok := firstCount(out.String(), want.row)
		if !ok {
			t.Errorf("no row %q with a count", want.row)
			continue
		}
		if n != want.n || hit > n || (want.hit >= 0 && hit != want.hit) {
			t.Errorf("%s: %d/%d, want %d of %d (-1: any)", want.row, hit, n, want.hit, want.n)
		}
	}
	for _, col := range []string{"+10 % speed found", "+25 % speed found", "2× price found", "0.10 accuracy found", "A/A σ 1.2"} {
		if !strings.Contains(out.String(), col) {
			t.Errorf("no column %q", col)
		}
	}
}

var countRe = regexp.MustCompile(`(\d+)/(\d+) = `)

// firstCount reads the first k/n of the line that begins with row.
func firstCount(table, row string) (hit, n int, ok bool) {
	for line := range strings.Lines(table) {
		if !strings.HasPrefix(line, row) {
			continue
		}
		m := countRe.FindStringSubmatch(line[len(row):])
		if m == nil {
			return 0, 0, false
		}
		hit, _ = strconv.Atoi(m[1])
		n, _ = strconv.Atoi(m[2])
		return hit, n, true
	}
	return 0, 0, false
}

// testWriter shows the bench's progress in the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// FuzzSigmas feeds --sigmas anything: it is refused with an error or gives
// σs from 0 to 3, never a panic, NaN or a negative σ.
func FuzzSigmas(f *testing.F) {
	for _, s := range []string{"0.5,1.2", "1", "", ",", "NaN", "-1", "3.0000001", "1e-9, 2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs := flag.NewFlagSet("verdict", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o, err := parseFlags(fs, []string{"--sigmas", s})
		if err != nil {
			return
		}
		if len(o.sigmas) == 0 {
			t.Fatalf("%q: no σ and no error", s)
		}
		for _, v := range o.sigmas {
			if !(v > 0 && v <= 3) {
				t.Fatalf("%q: σ %v", s, v)
			}
		}
	})
}
