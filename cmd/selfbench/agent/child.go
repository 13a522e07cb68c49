package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ruckus/ruckus/agentd/load"
	"github.com/ruckus/ruckus/agentd/openai"
	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/jobs"
)

// The two load generators a step compares.
const (
	modeAgentd   = "agentd"
	modeBaseline = "baseline"
)

// childSpec is what one load-generator process is asked to do. The parent
// passes it as JSON on the command line, so the child needs no flags of
// its own.
type childSpec struct {
	Mode        string        `json:"mode"`
	URL         string        `json:"url"`
	Concurrency int           `json:"concurrency"`
	Duration    time.Duration `json:"duration"`
	// Warmup requests go first and are left out of every figure: the
	// connections are opened and the runtime's allocator warmed then.
	Warmup       int `json:"warmup"`
	OutputTokens int `json:"output_tokens"`
	// TTFT and ITL are the sim's injected constants; when set, the child
	// reports how far its measurements are from them.
	TTFT time.Duration `json:"ttft,omitempty"`
	ITL  time.Duration `json:"itl,omitempty"`
	// SimPID is the sim's process, whose CPU time the child reads over
	// the same window as its own.
	SimPID     int    `json:"sim_pid"`
	CPUProfile string `json:"cpu_profile,omitempty"`
}

// errStats summarise measured − injected, in microseconds.
type errStats struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_us"`
	P99 float64 `json:"p99_us"`
	Max float64 `json:"max_us"`
}

// childResult is what a load-generator process measured over its window.
type childResult struct {
	Requests int   `json:"requests"`
	Errors   int   `json:"errors"`
	Tokens   int64 `json:"tokens"`
	Bytes    int64 `json:"bytes"`
	// Window runs from the first measured send to the last completion.
	Window time.Duration `json:"window"`
	// Wall is the interval the CPU figures cover (window start → every
	// request finished); CPU is this process's user+system time in it,
	// SimCPU the sim's and Busy the whole machine's busy CPU time (others'
	// work included).
	Wall       time.Duration `json:"wall"`
	CPU        time.Duration `json:"cpu"`
	SimCPU     time.Duration `json:"sim_cpu"`
	Busy       time.Duration `json:"busy"`
	GOMAXPROCS int           `json:"gomaxprocs"`
	FirstError string        `json:"first_error,omitempty"`
	TTFTErr    *errStats     `json:"ttft_err,omitempty"`
	ITLErr     *errStats     `json:"itl_err,omitempty"`
}

// benchModel is the model name sent; the sim serves any name.
const benchModel = "ruckus/bench-agent"

// benchItem is the dataset item every request is built from, in the
// stored form BuildRequest takes.
const benchItem = `{"custom_id":"bench","method":"POST","url":"/v1/chat/completions",` +
	`"body":{"model":"x","messages":[{"role":"user","content":"Write sixteen words about benchmarks."}]}}`

// childMain runs one load generator and prints its result as JSON.
func childMain(ctx context.Context, specJSON string) error {
	var spec childSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		return fmt.Errorf("child spec: %w", err)
	}
	if spec.CPUProfile != "" {
		f, err := os.Create(spec.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var (
		res childResult
		err error
	)
	switch spec.Mode {
	case modeAgentd:
		res, err = runAgentd(ctx, spec)
	case modeBaseline:
		res, err = runBaseline(ctx, spec)
	default:
		err = fmt.Errorf("unknown child mode %q", spec.Mode)
	}
	if err != nil {
		return err
	}
	res.GOMAXPROCS = runtime.GOMAXPROCS(0)
	return json.NewEncoder(os.Stdout).Encode(res)
}

// sampling is what the benchmark asks of each request: as many tokens as
// the sim is set to answer with.
func sampling(spec childSpec) jobs.Sampling { return jobs.Sampling{MaxTokens: spec.OutputTokens} }

// window snapshots the CPU figures at the start of the measured window
// and turns them into deltas at its end.
type window struct {
	simPID          int
	at              time.Time
	cpu, sim, busy  time.Duration
	simErr, busyErr error
}

func startWindow(simPID int) *window {
	w := &window{simPID: simPID, at: time.Now(), cpu: processCPU()}
	w.sim, w.simErr = procCPU(simPID)
	w.busy, w.busyErr = machineBusy()
	return w
}

func (w *window) end(res *childResult) error {
	res.Wall = time.Since(w.at)
	res.CPU = processCPU() - w.cpu
	sim, err := procCPU(w.simPID)
	if err = errors.Join(err, w.simErr); err == nil {
		res.SimCPU = sim - w.sim
	}
	busy, err2 := machineBusy()
	if err2 = errors.Join(err2, w.busyErr); err2 == nil {
		res.Busy = busy - w.busy
	}
	return errors.Join(err, err2)
}

// runAgentd drives the sim with agentd's own load generator and client,
// wired as a run wires them (agentd/agent/worker.go): load.Run at a fixed
// concurrency, each Send building the request from the stored item and
// sending it with openai.Client.Do, with agentd's default timeouts.
func runAgentd(ctx context.Context, spec childSpec) (childResult, error) {
	smp, item := sampling(spec), json.RawMessage(benchItem)
	if _, err := openai.BuildRequest(item, benchModel, smp); err != nil {
		return childResult{}, err
	}
	client := &openai.Client{BaseURL: spec.URL, HTTP: openai.NewHTTPClient(nil),
		StallTimeout: 2 * time.Minute, RequestTimeout: 10 * time.Minute}
	// Enough items that the duration, not the items, ends the step.
	indices := make([]int, spec.Warmup+int(spec.Duration.Seconds()*100_000)+spec.Concurrency)
	for i := range indices {
		indices[i] = i
	}
	timing := spec.TTFT > 0 || spec.ITL > 0
	var (
		res        childResult
		win        *window
		ttft, itl  []float64
		itlInjectd = float64(spec.ITL) / float64(time.Microsecond)
	)
	out, err := load.Run(ctx, load.Config{
		Indices: indices,
		Profile: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: spec.Concurrency,
			Warmup: spec.Warmup, MaxDuration: jobs.Duration(spec.Duration)},
		Seed:    1,
		OnStart: func(time.Time) { win = startWindow(spec.SimPID) },
		Send: func(ctx context.Context, idx int, phase string) jobs.Result {
			var r jobs.Result
			req, err := openai.BuildRequest(item, benchModel, smp)
			if err != nil {
				r = jobs.Result{Status: jobs.StatusError, ErrorClass: jobs.ErrInvalidReq, Error: err.Error()}
			} else {
				r = client.Do(ctx, req)
			}
			r.Idx, r.CustomID, r.Phase = idx, "bench", phase
			return r
		},
		Record: func(r jobs.Result) {
			if r.Status != jobs.StatusOK {
				res.Errors++
				if res.FirstError == "" {
					res.FirstError = r.ErrorClass + ": " + r.Error
				}
				return
			}
			res.Tokens += int64(r.CompletionTokens)
			if timing {
				ttft = append(ttft, float64(r.TTFT-spec.TTFT)/float64(time.Microsecond))
				for _, g := range r.ITLGapsMicros {
					itl = append(itl, float64(g)-itlInjectd)
				}
			}
		},
	})
	if err != nil {
		return res, err
	}
	if win == nil {
		return res, errors.New("the load generator never started its measured window")
	}
	if err := win.end(&res); err != nil {
		return res, err
	}
	res.Requests, res.Window = out.Recorded-res.Errors, out.Window
	if timing {
		res.TTFTErr, res.ITLErr = summarizeErr(ttft), summarizeErr(itl)
	}
	return res, nil
}

// summarizeErr gives the median, p99 and maximum of errors in µs.
func summarizeErr(v []float64) *errStats {
	s := slices.Clone(v)
	slices.Sort(s)
	e := &errStats{N: len(s)}
	if len(s) > 0 {
		e.P50, e.P99, e.Max = stats.Percentile(s, 0.5), stats.Percentile(s, 0.99), s[len(s)-1]
	}
	return e
}

// runBaseline is the least a client can do with the same streams: the
// same HTTP request (the bytes BuildRequest makes) to the same sim at the
// same concurrency, over net/http with keep-alive, reading each body to
// its end and counting the bytes. Nothing is parsed or timed per event.
func runBaseline(ctx context.Context, spec childSpec) (childResult, error) {
	req, err := openai.BuildRequest(json.RawMessage(benchItem), benchModel, sampling(spec))
	if err != nil {
		return childResult{}, err
	}
	url := strings.TrimRight(spec.URL, "/") + req.Path
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: spec.Concurrency, DisableCompression: true}}
	// In the timing phase the baseline is the reference reader: it notes
	// when each read that holds generated content returns, which is as
	// early as any client can know of it, with nothing parsed.
	timing := spec.TTFT > 0 || spec.ITL > 0
	itlInjected := float64(spec.ITL) / float64(time.Microsecond)
	one := func(buf []byte, ttft, itl *[]float64) (int64, error) {
		sent := time.Now()
		var last time.Time
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(req.Body))
		if err != nil {
			return 0, err
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "text/event-stream, application/json")
		resp, err := hc.Do(r)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		var n int64
		for {
			k, err := resp.Body.Read(buf)
			n += int64(k)
			if timing && k > 0 && hasContent(buf[:k]) {
				now := time.Now()
				if last.IsZero() {
					*ttft = append(*ttft, float64(now.Sub(sent)-spec.TTFT)/float64(time.Microsecond))
				} else {
					*itl = append(*itl, float64(now.Sub(last))/float64(time.Microsecond)-itlInjected)
				}
				last = now
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return n, err
			}
		}
		if resp.StatusCode != http.StatusOK {
			return n, fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		return n, nil
	}

	// Each worker keeps one request in flight; counts are per worker and
	// summed at the end.
	type tally struct {
		requests, errors int
		bytes            int64
		last             time.Time
		firstErr         error
		ttft, itl        []float64
	}
	tallies := make([]tally, spec.Concurrency)
	phase := func(more func() bool, count bool) {
		var wg sync.WaitGroup
		for w := range tallies {
			wg.Go(func() {
				buf := make([]byte, 32<<10)
				t := &tallies[w]
				for more() {
					n, err := one(buf, &t.ttft, &t.itl)
					if !count {
						continue
					}
					t.bytes += n
					t.last = time.Now()
					if err != nil {
						t.errors++
						if t.firstErr == nil {
							t.firstErr = err
						}
						continue
					}
					t.requests++
				}
			})
		}
		wg.Wait()
	}
	var warm atomic.Int64
	phase(func() bool { return warm.Add(1) <= int64(spec.Warmup) && ctx.Err() == nil }, false)

	for i := range tallies { // warm-up timings are not measured
		tallies[i].ttft, tallies[i].itl = nil, nil
	}
	win := startWindow(spec.SimPID)
	deadline := win.at.Add(spec.Duration)
	phase(func() bool { return time.Now().Before(deadline) && ctx.Err() == nil }, true)
	var res childResult
	if err := win.end(&res); err != nil {
		return res, err
	}
	var last time.Time
	for _, t := range tallies {
		res.Requests += t.requests
		res.Errors += t.errors
		res.Bytes += t.bytes
		if t.last.After(last) {
			last = t.last
		}
		if t.firstErr != nil && res.FirstError == "" {
			res.FirstError = t.firstErr.Error()
		}
	}
	res.Window = last.Sub(win.at)
	if timing {
		var ttft, itl []float64
		for _, t := range tallies {
			ttft, itl = append(ttft, t.ttft...), append(itl, t.itl...)
		}
		res.TTFTErr, res.ITLErr = summarizeErr(ttft), summarizeErr(itl)
	}
	// The sim answers every request with OutputTokens tokens.
	res.Tokens = int64(res.Requests) * int64(spec.OutputTokens)
	return res, ctx.Err()
}

// hasContent reports whether a read holds a chunk with generated text (a
// non-empty "content"), the sim's way of writing one.
func hasContent(b []byte) bool {
	const key = `"content":"`
	for {
		i := bytes.Index(b, []byte(key))
		if i < 0 {
			return false
		}
		b = b[i+len(key):]
		if len(b) > 0 && b[0] != '"' {
			return true
		}
	}
}
