package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// liveOptions shape the pollers' load.
type liveOptions struct {
	pollers    int           // browsers per build, each polling one fragment in a closed loop
	benchmarks int           // running benchmarks per build (two runs each)
	duration   time.Duration // per build, fragment and round
	rounds     int           // the builds take turns this many times
}

// fragment is one kind of live fragment a benchmark page polls.
type fragment struct {
	name string
	path func(lb liveBenchmark, i int) string
}

// liveFragmentKinds are the fragments the benchmark page polls while runs
// go on (views/benchmarks, handlers/routes.go): its runs table and each
// run's card.
func liveFragmentKinds() []fragment {
	return []fragment{
		{"runs table", func(lb liveBenchmark, _ int) string { return fmt.Sprintf("/benchmarks/%d/runs", lb.id) }},
		{"run card", func(lb liveBenchmark, i int) string {
			return fmt.Sprintf("/benchmarks/%d/runs/%d/card", lb.id, lb.runs[i%len(lb.runs)])
		}},
	}
}

// figure is what one poll period measured.
type figure struct {
	rps, p50, p95 float64 // requests/s; latencies in ms
	failed        int
	// serverCPU and dbCPU are the CPU time per poll, in ms, of the
	// server process and of its database's backends.
	serverCPU, dbCPU float64
}

// pollFragment has every browser poll its fragment (browser i watches
// benchmark i mod n, and run i/n of it for a card) back to back for d, as
// htmx does (HX-Request), and measures what they got.
func pollFragment(b *liveBuild, browsers []browser, k fragment, d time.Duration) figure {
	lat := make([][]time.Duration, len(browsers))
	failed := make([]int, len(browsers))
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for i, br := range browsers {
		lb := b.benchmarks[i%len(b.benchmarks)]
		u := b.base + k.path(lb, i/len(b.benchmarks))
		wg.Go(func() {
			for time.Now().Before(stop) {
				start := time.Now()
				if !get(br.client, u) {
					failed[i]++
					continue
				}
				lat[i] = append(lat[i], time.Since(start))
			}
		})
	}
	wg.Wait()
	all := slices.Concat(lat...)
	slices.Sort(all)
	f := figure{rps: float64(len(all)) / d.Seconds()}
	for _, n := range failed {
		f.failed += n
	}
	if len(all) > 0 {
		f.p50, f.p95 = ms(all[len(all)/2]), ms(all[int(float64(len(all)-1)*0.95)])
	}
	return f
}

// get fetches u as htmx would and reports whether it answered 200.
func get(c *http.Client, u string) bool {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("HX-Request", "true")
	res, err := c.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// measureLive polls each build's fragments for opts.rounds rounds, the
// builds taking turns (the order reversed every other round, so neither
// always goes first), the watched runs advancing while their build is
// polled, and prints each period and the medians; with more than one
// build, the ratios of each build's requests/s to the first's.
func measureLive(ctx context.Context, builds []*liveBuild, opts liveOptions) error {
	tr := &http.Transport{MaxIdleConnsPerHost: opts.pollers, MaxConnsPerHost: opts.pollers}
	defer tr.CloseIdleConnections()
	browsers := make([][]browser, len(builds))
	for i, b := range builds {
		var err error
		if browsers[i], err = openBrowsers(b, opts.pollers, tr); err != nil {
			return err
		}
		pollFragment(b, browsers[i], liveFragmentKinds()[0], 2*time.Second) // warm the server, its pool and caches
	}
	fmt.Printf("live fragments: %d browsers per build on %d running benchmarks (%d runs), %v per period, %d rounds; load average %s\n",
		opts.pollers, opts.benchmarks, 2*opts.benchmarks, opts.duration, opts.rounds, loadAverage())
	kinds := liveFragmentKinds()
	got := make([][][]figure, len(builds)) // build × kind × round
	for i := range got {
		got[i] = make([][]figure, len(kinds))
	}
	for r := range opts.rounds {
		for ki, k := range kinds {
			for _, i := range turnOrder(len(builds), r) {
				f, err := pollAdvancing(ctx, builds[i], browsers[i], k, opts.duration)
				if err != nil {
					return err
				}
				got[i][ki] = append(got[i][ki], f)
				fmt.Printf("  round %d  %-10s %-10s %7.0f req/s  p50 %6.1f ms  p95 %6.1f ms  CPU/poll server %.3f ms, PostgreSQL %.3f ms\n",
					r+1, builds[i].label, k.name, f.rps, f.p50, f.p95, f.serverCPU, f.dbCPU)
			}
		}
	}
	printLiveSummary(builds, kinds, got)
	fmt.Printf("load average after: %s\n", loadAverage())
	return nil
}

// pollAdvancing polls one fragment of build b while its runs advance.
func pollAdvancing(ctx context.Context, b *liveBuild, browsers []browser, k fragment, d time.Duration) (figure, error) {
	actx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- advance(actx, b.pool, b.liveRuns()) }()
	meter := b.meter()
	server0, db0 := meter.read()
	f := pollFragment(b, browsers, k, d)
	server1, db1 := meter.read()
	cancel()
	if polls := f.rps * d.Seconds(); polls > 0 {
		f.serverCPU, f.dbCPU = ms(server1-server0)/polls, ms(db1-db0)/polls
	}
	if err := <-done; err != nil {
		return f, fmt.Errorf("%s: advancing the runs: %w", b.label, err)
	}
	if f.failed > 0 {
		return f, fmt.Errorf("%s: %d polls of the %s failed", b.label, f.failed, k.name)
	}
	return f, nil
}

// turnOrder is the builds' order in round r: as given, reversed in odd
// rounds.
func turnOrder(n, r int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
		if r%2 == 1 {
			order[i] = n - 1 - i
		}
	}
	return order
}

func printLiveSummary(builds []*liveBuild, kinds []fragment, got [][][]figure) {
	fmt.Println("medians over the rounds:")
	for ki, k := range kinds {
		for i, b := range builds {
			fs := got[i][ki]
			line := fmt.Sprintf("  %-10s %-10s %7.0f req/s  p50 %6.1f ms  p95 %6.1f ms  CPU/poll %.3f ms (server %.3f, PostgreSQL %.3f)", b.label, k.name,
				median(fs, func(f figure) float64 { return f.rps }), median(fs, func(f figure) float64 { return f.p50 }),
				median(fs, func(f figure) float64 { return f.p95 }), median(fs, func(f figure) float64 { return f.serverCPU + f.dbCPU }),
				median(fs, func(f figure) float64 { return f.serverCPU }), median(fs, func(f figure) float64 { return f.dbCPU }))
			if i > 0 {
				// Paired by round: each ratio compares two periods next to each other.
				ratios := make([]figure, len(fs))
				for r := range fs {
					ref := got[0][ki][r]
					ratios[r] = figure{rps: fs[r].rps / ref.rps, serverCPU: (ref.serverCPU + ref.dbCPU) / (fs[r].serverCPU + fs[r].dbCPU)}
				}
				line += fmt.Sprintf("\n             ratios to %s (medians of the rounds'): req/s %.2f, polls per CPU second %.2f", builds[0].label,
					median(ratios, func(f figure) float64 { return f.rps }), median(ratios, func(f figure) float64 { return f.serverCPU }))
			}
			fmt.Println(line)
		}
	}
}

func median(fs []figure, of func(figure) float64) float64 {
	if len(fs) == 0 {
		return 0
	}
	v := make([]float64, len(fs))
	for i, f := range fs {
		v[i] = of(f)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// loadAverage is the machine's 1, 5 and 15 minute load averages, as the
// other work beside the measurement.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
