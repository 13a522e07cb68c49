// Command verdict measures how often Ruckus's conclusions call noise a
// difference and how often they find a real one (`make bench-verdict`).
//
// Every run is real: agentd's load generator (agentd/load) sends each
// request through agentd's streaming client (agentd/openai) to an agentd
// sim runtime (agentd/sim) listening on loopback, with lognormal TTFT and
// ITL noise (scaled down: TTFT 20 ms, ITL 2 ms, about 48 output tokens, 4
// requests in flight). The per-request records are written as the results
// of a run claimed in the dev database (store.WriteResults under the run's
// lease), the run is finished with RunAggregate's summary, its items are
// scored and saved (store.SaveScores) and its figures with their intervals
// kept (store.ComputeRunStats), as the agent and the server's score job do.
// The decision is then the server's: candidates built by
// compare.Candidates from store.RunFiguresByID, the paired quality tests from
// store.QualityPairs, advise.Compare per criterion and regress.Find for
// the regression flag.
//
// Pairs of targets:
//
//   - A/A: two targets on identically configured runtimes (each run its
//     own sim, seeded apart), 50–200 requests each; quality drawn from
//     the same per-item probabilities;
//   - A/B: B's TTFT and ITL scaled by 1/1.1 (its output tokens/s 10 %
//     higher) and its mean accuracy 0.70 against A's 0.60, n = 200;
//   - both also repeated: each target run 3 times, speed and cost decided
//     on the between-run interval of the runs' steady-window means
//     (stats.MeanInterval, Repeats) as a verdict with repeats decides.
//
// Quality follows a latent-difficulty model: item i has a difficulty d_i
// (normal on the logit scale, the same dataset for every run) and a
// target answers it right with probability logistic(θ − d_i), θ set so
// that the mean accuracy over the items is the target's. The spread of
// the difficulties is set so that A's and B's item scores correlate as
// --quality-correlation says (φ, 0.5 by default): Miller (2024, "Adding
// Error Bars to Evals", Anthropic) reports question-score correlations
// of 0.3 to 0.7 between frontier models on popular evals, and the
// default is the middle of that range. Two models' agreement is what a
// paired test gains from, so the bench also prints McNemar's power for
// the planted difference at both ends of that range (Connor 1987's
// normal approximation), to read the measured share against.
//
// It prints, per metric, the share of A/A pairs called significant (or
// flagged as a regression), with its 95 % Wilson interval, against the
// target of at most 5 %, and the share of planted differences detected in
// the right direction, against the target of at least 80 %. It is a
// measurement: it exits 0 whether or not a target is met, non-zero only
// when something failed.
//
// Run it through `ruckus dev-db exec` (DATABASE_URL set).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ruckus/ruckus/agentd/load"
	"github.com/ruckus/ruckus/agentd/openai"
	"github.com/ruckus/ruckus/agentd/sim"
	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/cmd/selfbench/internal/benchkit"
	"github.com/ruckus/ruckus/jobs"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var o options
	flag.IntVar(&o.aa, "aa", 80, "A/A pairs of single runs")
	flag.IntVar(&o.aaRepeats, "aa-repeats", 40, "A/A pairs of repeated targets")
	flag.IntVar(&o.ab, "ab", 60, "A/B pairs of single runs")
	flag.IntVar(&o.abRepeats, "ab-repeats", 10, "A/B pairs of repeated targets")
	flag.IntVar(&o.repeats, "repeats", 3, "runs of each target in a repeated pair")
	flag.IntVar(&o.minN, "min-requests", 50, "fewest requests of an A/A run")
	flag.IntVar(&o.maxN, "max-requests", 200, "most requests of an A/A run, and every A/B run's")
	flag.IntVar(&o.repeatN, "repeat-requests", 100, "requests of each run of a repeated A/A pair")
	flag.IntVar(&o.concurrency, "concurrency", 4, "requests in flight in every run")
	// More runs at once than cores makes each run's latencies depend on
	// its neighbours: with 6 at once on 2 cores the p95 A/A rate was 13 %,
	// with 2 it was 3 % (docs/concepts.md#comparability-and-noise).
	flag.IntVar(&o.parallel, "parallel", runtime.NumCPU(), "runs measured at once (each with its own sim)")
	flag.StringVar(&o.ttft, "ttft", "lognormal:20ms,0.5", "the sims' TTFT")
	flag.StringVar(&o.itl, "itl", "lognormal:2ms,0.3", "the sims' ITL")
	flag.StringVar(&o.tokens, "output-tokens", "normal:48,8", "the sims' answer lengths")
	flag.Float64Var(&o.speedup, "speedup", 1.10, "how much more output tokens/s B's runtime gives in an A/B pair (its TTFT and ITL scaled to match)")
	flag.Float64Var(&o.accA, "accuracy-a", 0.60, "A's mean accuracy")
	flag.Float64Var(&o.accB, "accuracy-b", 0.70, "B's mean accuracy in an A/B pair")
	flag.Float64Var(&o.correlation, "quality-correlation", 0.5, "correlation (φ) of A's and B's item scores, set through the spread of the items' difficulty")
	flag.Float64Var(&o.price, "price", 2, "the hardware's price, USD per hour (cost follows speed)")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the draws (the sims', the scores', the order of the runs)")
	flag.BoolVar(&o.verbose, "v", false, "print every pair's figures and tests")
	flag.Float64Var(&o.drift, "drift", 0, "between-run drift: each run's sim latencies scaled by exp(drift·z), z a standard normal drawn per run, as a server's state moves between runs (0: none)")
	flag.BoolVar(&o.inOrder, "in-order", false, "measure as users run benchmarks: one pair at a time, its runs in the benchmark's order (A, then B), instead of every run at once in random order")
	flag.Parse()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-verdict:", err)
		os.Exit(1)
	}
}

// options are the benchmark's settings.
type options struct {
	aa, aaRepeats, ab, abRepeats, repeats int
	minN, maxN, repeatN                   int
	concurrency, parallel                 int
	ttft, itl, tokens                     string
	speedup, accA, accB, correlation      float64
	price                                 float64
	seed                                  uint64
	verbose                               bool
	drift                                 float64
	inOrder                               bool
}

// The pairs' kinds.
const (
	kindAA = "A/A"
	kindAB = "A/B"
)

// measuredRun is one run of a target: what it is, and where it is stored.
type measuredRun struct {
	id       int64
	target   int // 0: A, 1: B
	n        int
	fast     bool    // B's faster runtime
	accuracy float64 // the target's mean accuracy
	seed     uint64
	elapsed  time.Duration
	window   time.Duration // the measured window
	requests int
}

// pair is two targets compared: one run each, or Repeats runs each.
type pair struct {
	kind     string
	repeated bool
	a, b     []*measuredRun
}

// world is what every run shares.
type world struct {
	o          options
	st         *store.Store
	viewer     store.Viewer
	agentID    int64
	items      []json.RawMessage // the dataset's lines, as stored
	difficulty []float64
	// difficultySD is the items' spread that gives --quality-correlation.
	difficultySD float64
	load         jobs.LoadProfile
	sampling     jobs.Sampling
	ttft, itl    sim.Dist
	tokens       sim.Dist
	thetaA       float64
	thetaB       float64
	scaleB       float64
	log          io.Writer
}

func run(ctx context.Context, o options, w io.Writer) error {
	if o.minN < 1 || o.maxN < o.minN || o.repeats < 2 || o.parallel < 1 || o.concurrency < 1 || o.speedup <= 0 || o.drift < 0 {
		return errors.New("want 1 ≤ --min-requests ≤ --max-requests, --repeats ≥ 2, --parallel ≥ 1, --concurrency ≥ 1, --speedup > 0, --drift ≥ 0")
	}
	if o.inOrder {
		// In order means one run at a time, as one agent works a
		// benchmark's queue.
		o.parallel = 1
	}
	if !(o.accA > 0 && o.accA < 1 && o.accB > 0 && o.accB < 1 && o.correlation >= 0 && o.correlation < 0.95) {
		return errors.New("want 0 < --accuracy-a, --accuracy-b < 1 and 0 ≤ --quality-correlation < 0.95")
	}
	t0 := time.Now()
	wd := &world{o: o, log: w, load: jobs.LoadProfile{Profile: jobs.LoadConcurrency, Concurrency: o.concurrency, Warmup: o.concurrency},
		sampling: jobs.Sampling{MaxTokens: 64}}
	var err error
	for _, d := range []struct {
		s   string
		out *sim.Dist
	}{{o.ttft, &wd.ttft}, {o.itl, &wd.itl}, {o.tokens, &wd.tokens}} {
		if *d.out, err = sim.ParseDist(d.s); err != nil {
			return err
		}
	}
	dbURL, err := benchkit.DatabaseURL()
	if err != nil {
		return err
	}
	pool, err := benchkit.OpenMigrated(ctx, dbURL, int32(max(4, o.parallel+2)))
	if err != nil {
		return err
	}
	defer pool.Close()
	wd.st = store.New(pool)
	pairs, err := wd.plan(ctx)
	if err != nil {
		return err
	}
	var runs []*measuredRun
	for _, p := range pairs {
		runs = append(runs, p.a...)
		runs = append(runs, p.b...)
	}
	fmt.Fprintf(w, "bench-verdict: %d pairs, %d runs through agentd's load generator and client against agentd sim on loopback\n", len(pairs), len(runs))
	order := fmt.Sprintf("%d runs at once in random order", o.parallel)
	if o.inOrder {
		order = "one run at a time in each benchmark's order"
	}
	fmt.Fprintf(w, "sim TTFT %s, ITL %s, output tokens %s; concurrency %d, %s; between-run drift σ %.3g; B %.2f× faster, accuracy %.2f vs %.2f\n",
		o.ttft, o.itl, o.tokens, o.concurrency, order, o.drift, o.speedup, o.accA, o.accB)
	fmt.Fprintf(w, "item scores of A and B correlated φ = %.2f (item difficulty sd %.2f on the logit scale); McNemar's power for %.2f vs %.2f at n = %d: φ 0.3 → %.0f %%, φ %.2f → %.0f %%, φ 0.7 → %.0f %% (Connor 1987)\n",
		o.correlation, wd.difficultySD, o.accA, o.accB, o.maxN,
		100*mcnemarPower(o.accA, o.accB, 0.3, o.maxN), o.correlation, 100*mcnemarPower(o.accA, o.accB, o.correlation, o.maxN),
		100*mcnemarPower(o.accA, o.accB, 0.7, o.maxN))

	// The A/A runs first, in random order, a few at once: the two sides
	// of a pair are measured at different moments, as two benchmarks
	// would be. They also tell what the machine adds to each request,
	// from which B's runtime is made o.speedup times faster; then the A/B
	// runs, likewise.
	rng := rand.New(rand.NewPCG(o.seed, 0x0bde))
	var phases [2][]*measuredRun
	for _, p := range pairs {
		k := 0
		if p.kind == kindAB {
			k = 1
		}
		phases[k] = append(phases[k], p.a...)
		phases[k] = append(phases[k], p.b...)
	}
	for k, order := range phases {
		if k == 1 && len(order) > 0 {
			if wd.scaleB, err = wd.calibrateSpeedup(ctx, phases[0]); err != nil {
				return err
			}
			fmt.Fprintf(w, "B's sim latencies × %.3f, calibrated for %.2f× A's output tokens/s (the client's and the timers' cost per request does not scale)\n", wd.scaleB, o.speedup)
		}
		if o.inOrder {
			// Pairs one after another, each pair's runs in its
			// benchmarks' order: A then B, repeat after repeat.
			order = order[:0]
			for _, p := range pairs {
				if (p.kind == kindAB) != (k == 1) {
					continue
				}
				for i := range p.a {
					order = append(order, p.a[i], p.b[i])
				}
			}
		} else {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		if err := wd.measureAll(ctx, order, w); err != nil {
			return err
		}
	}
	measured := time.Since(t0)

	tally, err := wd.decide(ctx, pairs)
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	tally.print(w)
	fmt.Fprintf(w, "\nruns measured in %s; total %s\n", measured.Round(time.Second), time.Since(t0).Round(time.Second))
	return nil
}

// plan creates the user, dataset, models, agent and benchmarks, and lays
// out the pairs with their runs.
func (wd *world) plan(ctx context.Context) ([]*pair, error) {
	o, st := wd.o, wd.st
	tag := benchkit.RandomHex(4)
	u, err := st.CreateUser(ctx, store.NewUser{Email: "verdict-" + tag + "@example.com", PasswordHash: "-", Role: store.RoleUser})
	if err != nil {
		return nil, err
	}
	wd.viewer = store.Viewer{UserID: u.ID}
	rng := rand.New(rand.NewPCG(o.seed, 0xd1ff))
	var ds strings.Builder
	z := make([]float64, o.maxN)
	for i := range o.maxN {
		line := fmt.Sprintf(`{"custom_id":"item-%03d","method":"POST","url":"/v1/chat/completions","body":{"model":"x","messages":[{"role":"user","content":"Question %d: what is %d plus %d?"}]}}`,
			i, i, i, 3*i)
		wd.items = append(wd.items, json.RawMessage(line))
		z[i] = rng.NormFloat64()
		ds.WriteString(line + "\n")
	}
	wd.difficultySD = spreadFor(z, o.accA, o.accB, o.correlation)
	for _, zi := range z {
		wd.difficulty = append(wd.difficulty, zi*wd.difficultySD)
	}
	wd.thetaA, wd.thetaB = calibrate(wd.difficulty, o.accA), calibrate(wd.difficulty, o.accB)
	up := &ingest.Uploader{Store: st, Limits: dataset.DefaultLimits()}
	res, err := up.Upload(ctx, strings.NewReader(ds.String()), ingest.Request{Viewer: wd.viewer, FileName: "verdict.jsonl"}, nil)
	if err != nil {
		return nil, err
	}
	hw := "verdict-cpu-" + tag
	agent, err := st.RegisterAgent(ctx, store.AgentRegistration{Name: "verdict-" + tag, ProtocolVersion: jobs.ProtocolVersion,
		Runtimes: []string{"sim"}, Profile: store.HardwareProfile{Slug: hw, CPUCores: 2}})
	if err != nil {
		return nil, err
	}
	wd.agentID = agent.ID
	if err := st.SetHardwarePrice(ctx, hw, &o.price); err != nil {
		return nil, err
	}
	models := [2]string{"verdict/a-" + tag, "verdict/b-" + tag}
	for _, m := range models {
		if _, err := st.CreateModel(ctx, store.ModelFields{Name: m, ParamsB: 1, Quantization: "bf16", ContextLength: 4096}); err != nil {
			return nil, err
		}
	}
	svc, err := benchkit.NewService(wd.st.Pool(), st, time.Hour)
	if err != nil {
		return nil, err
	}
	// newRuns creates one benchmark of targets A and B with n requests
	// each and returns its two runs.
	newRuns := func(kind string, n int) (*measuredRun, *measuredRun, error) {
		l := wd.load
		l.MaxRequests = n
		c, err := svc.Create(ctx, wd.viewer, bench.Manifest{Name: "verdict " + kind, Dataset: bench.DatasetRef{ID: res.Dataset.ID},
			Targets: []bench.Target{{Model: models[0], Runtime: "sim", Hardware: hw}, {Model: models[1], Runtime: "sim", Hardware: hw}},
			Load:    l, Sampling: wd.sampling, Scorer: "exact"})
		if err != nil {
			return nil, nil, err
		}
		if len(c.Runs) != 2 {
			return nil, nil, fmt.Errorf("benchmark %d: %d runs, want 2", c.BenchmarkID, len(c.Runs))
		}
		a := &measuredRun{id: c.Runs[0].RunID, target: 0, n: n, accuracy: o.accA}
		b := &measuredRun{id: c.Runs[1].RunID, target: 1, n: n, accuracy: o.accA}
		if kind == kindAB {
			b.fast, b.accuracy = true, o.accB
		}
		for _, r := range []*measuredRun{a, b} {
			r.seed = o.seed<<32 ^ uint64(r.id)
		}
		return a, b, nil
	}
	var pairs []*pair
	for _, spec := range []struct {
		kind     string
		count    int
		repeated bool
	}{{kindAA, o.aa, false}, {kindAA, o.aaRepeats, true}, {kindAB, o.ab, false}, {kindAB, o.abRepeats, true}} {
		for range spec.count {
			p := &pair{kind: spec.kind, repeated: spec.repeated}
			times, n := 1, o.maxN
			switch {
			case spec.repeated:
				times = o.repeats
				if spec.kind == kindAA {
					n = o.repeatN
				}
			case spec.kind == kindAA:
				n = o.minN + rng.IntN(o.maxN-o.minN+1)
			}
			for range times {
				a, b, err := newRuns(spec.kind, n)
				if err != nil {
					return nil, err
				}
				p.a, p.b = append(p.a, a), append(p.b, b)
			}
			pairs = append(pairs, p)
		}
	}
	return pairs, nil
}

// calibrate finds θ with mean over the items of logistic(θ − d) = acc.
func calibrate(ds []float64, acc float64) float64 {
	lo, hi := -50.0, 50.0
	for range 200 {
		mid := (lo + hi) / 2
		s := 0.0
		for _, d := range ds {
			s += logistic(mid - d)
		}
		if s/float64(len(ds)) < acc {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// itemCorrelation is the correlation (φ) of two targets' 0/1 item scores
// over the items, each item right for A with probability
// logistic(θ_A − d_i) and for B with logistic(θ_B − d_i), independently
// given the item: cov = mean(p_A·p_B) − mean(p_A)·mean(p_B).
func itemCorrelation(ds []float64, accA, accB float64) float64 {
	ta, tb := calibrate(ds, accA), calibrate(ds, accB)
	var sa, sb, sab float64
	for _, d := range ds {
		pa, pb := logistic(ta-d), logistic(tb-d)
		sa, sb, sab = sa+pa, sb+pb, sab+pa*pb
	}
	n := float64(len(ds))
	ma, mb := sa/n, sb/n
	return (sab/n - ma*mb) / math.Sqrt(ma*(1-ma)*mb*(1-mb))
}

// spreadFor finds the scale of the standard normal draws z that makes the
// two targets' item correlation φ (it grows with the spread; bisection).
func spreadFor(z []float64, accA, accB, phi float64) float64 {
	ds := make([]float64, len(z))
	at := func(sd float64) float64 {
		for i, zi := range z {
			ds[i] = zi * sd
		}
		return itemCorrelation(ds, accA, accB)
	}
	lo, hi := 0.0, 20.0
	for range 60 {
		mid := (lo + hi) / 2
		if at(mid) < phi {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// mcnemarPower is the power of McNemar's test at α = 0.05 (two-sided) to
// find accuracies accA and accB apart on n paired items whose scores
// correlate φ: Connor's (1987) normal approximation, with ψ the chance an
// item is discordant and δ = accB − accA,
// power = Φ((√n·|δ| − 1.96·√ψ) / √(ψ − δ²)).
func mcnemarPower(accA, accB, phi float64, n int) float64 {
	both := accA*accB + phi*math.Sqrt(accA*(1-accA)*accB*(1-accB))
	psi := accA + accB - 2*both
	delta := math.Abs(accB - accA)
	if psi <= delta*delta {
		return 1
	}
	x := (math.Sqrt(float64(n))*delta - 1.959963984540054*math.Sqrt(psi)) / math.Sqrt(psi-delta*delta)
	return 0.5 * math.Erfc(-x/math.Sqrt2)
}

// measureAll measures the runs, o.parallel at once.
func (wd *world) measureAll(ctx context.Context, runs []*measuredRun, w io.Writer) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan *measuredRun)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	start := time.Now()
	for range wd.o.parallel {
		wg.Go(func() {
			for r := range next {
				if err := wd.measure(ctx, r); err != nil {
					cancel(fmt.Errorf("run %d: %w", r.id, err))
					continue
				}
				mu.Lock()
				done++
				if done%20 == 0 || done == len(runs) {
					fmt.Fprintf(w, "  %d/%d runs measured (%s)\n", done, len(runs), time.Since(start).Round(time.Second))
				}
				mu.Unlock()
			}
		})
	}
feed:
	for _, r := range runs {
		select {
		case next <- r:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// drive sends n requests with agentd's load generator and client to a sim
// of its own on loopback, whose latencies are scaled by scale, and returns
// the measured results as an agent writes them.
func (wd *world) drive(ctx context.Context, n, target int, scale float64, seed, loadSeed uint64) ([]store.ResultRecord, load.Outcome, error) {
	cfg := sim.DefaultConfig()
	cfg.TTFT, cfg.ITL, cfg.OutputTokens = wd.ttft, wd.itl, wd.tokens
	cfg.Batch, cfg.Seed, cfg.TimeScale = 1_000_000, seed, scale
	simCtx, stopSim := context.WithCancel(ctx)
	defer stopSim()
	addr, served, err := sim.Listen(simCtx, "127.0.0.1:0", cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, load.Outcome{}, err
	}
	defer func() { stopSim(); <-served }()
	client := &openai.Client{BaseURL: "http://" + addr, HTTP: openai.NewHTTPClient(nil), StallTimeout: time.Minute, RequestTimeout: 2 * time.Minute}
	model := [2]string{"verdict/a", "verdict/b"}[target]
	l := wd.load
	l.MaxRequests = n
	indices := make([]int, n)
	for i := range indices {
		indices[i] = i
	}
	var windowStart time.Time
	var recs []store.ResultRecord
	out, err := load.Run(ctx, load.Config{
		Indices: indices,
		Profile: l,
		Seed:    loadSeed,
		OnStart: func(at time.Time) { windowStart = at },
		Send: func(ctx context.Context, idx int, phase string) jobs.Result {
			req, err := openai.BuildRequest(wd.items[idx], model, wd.sampling)
			if err != nil {
				return jobs.Result{Status: jobs.StatusError, ErrorClass: jobs.ErrInvalidReq, Error: err.Error()}
			}
			res := client.Do(ctx, req)
			res.CustomID = fmt.Sprintf("item-%03d", idx)
			return res
		},
		Record: func(res jobs.Result) {
			recs = append(recs, store.ResultRecord{Result: res, SentAt: windowStart.Add(res.StartOffset)})
		},
	})
	if err != nil {
		return nil, out, err
	}
	for _, rec := range recs {
		if rec.Status != jobs.StatusOK {
			return nil, out, fmt.Errorf("item %d: %s: %s", rec.Idx, rec.ErrorClass, rec.Error)
		}
	}
	return recs, out, nil
}

// calibrateSpeedup finds the scale of B's latencies that makes its output
// tokens/s o.speedup times A's. Scaling the sim's latencies by 1/speedup is
// not enough: the client, the server and the timers add a cost C to each
// request that does not scale. A request takes s·L + C in a slot of the
// closed loop, where L is the sim's mean latency per request (TTFT and
// the ITLs of a mean answer, drawn from its distributions); C is what the
// A runs measured (their window × concurrency ÷ requests, less L), and
// B's scale solves s·L + C = (L + C) ÷ speedup. Without A runs measured,
// parallel unstored A runs are measured for it.
func (wd *world) calibrateSpeedup(ctx context.Context, runs []*measuredRun) (float64, error) {
	var perRequest []float64
	for _, r := range runs {
		if r.target == 0 && r.requests > 0 {
			perRequest = append(perRequest, r.window.Seconds()*float64(wd.o.concurrency)/float64(r.requests))
		}
	}
	if len(perRequest) == 0 {
		var mu sync.Mutex
		var wg sync.WaitGroup
		errs := make(chan error, wd.o.parallel)
		for i := range wd.o.parallel {
			wg.Go(func() {
				recs, out, err := wd.drive(ctx, wd.o.maxN, 0, 1, wd.o.seed^uint64(0xca1<<8|i), 1)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				perRequest = append(perRequest, out.Window.Seconds()*float64(wd.o.concurrency)/float64(len(recs)))
				mu.Unlock()
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return 0, err
		}
	}
	t := stats.Mean(perRequest)
	draws := rand.New(rand.NewPCG(wd.o.seed, 0x1a7e))
	const samples = 200_000
	var l float64
	for range samples {
		tokens := min(max(math.Round(wd.tokens.Sample(draws)), 1), float64(wd.sampling.MaxTokens))
		l += wd.ttft.Sample(draws) / 1e9
		for range int(tokens) - 1 {
			l += wd.itl.Sample(draws) / 1e9
		}
	}
	l /= samples
	c := t - l
	s := (t/wd.o.speedup - c) / l
	if !(s > 0) {
		return 0, fmt.Errorf("calibration: %.1f ms a request, %.1f ms of it the sim's latencies: cannot be made %.2f× faster", t*1e3, l*1e3, wd.o.speedup)
	}
	return s, nil
}

// measure runs r as an agent runs it, writes its results under its lease,
// finishes it, scores it and keeps its figures.
func (wd *world) measure(ctx context.Context, r *measuredRun) error {
	st := wd.st
	var job int64
	if err := st.Pool().QueryRow(ctx, `SELECT river_job_id FROM runs WHERE id = $1`, r.id).Scan(&job); err != nil {
		return err
	}
	claim, err := st.ClaimRun(ctx, r.id, wd.agentID, job, "sim")
	if err != nil {
		return err
	}
	scale := 1.0
	if r.fast {
		scale = wd.scaleB
	}
	if wd.o.drift > 0 {
		// The run's own effect: the server's state when it ran.
		scale *= math.Exp(wd.o.drift * rand.New(rand.NewPCG(r.seed, 0xd21f7)).NormFloat64())
	}
	t0 := time.Now()
	recs, out, err := wd.drive(ctx, r.n, r.target, scale, r.seed, uint64(r.id))
	if err != nil {
		return err
	}
	r.elapsed, r.window, r.requests = time.Since(t0), out.Window, len(recs)
	if _, err := st.WriteResults(ctx, claim.Lease, recs); err != nil {
		return err
	}
	sum, err := st.RunAggregate(ctx, r.id, jobs.SLO{}, out.Window)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(sum)
	if err != nil {
		return err
	}
	if err := st.FinishRun(ctx, claim.Lease, store.Finish{State: "completed", StoppedBy: out.StoppedBy, Segment: out.Window, Summary: raw,
		Throughput: sum.OutputTokensPerS, RequestsPerS: sum.RequestsPerS}); err != nil {
		return err
	}

	// The answers' scores: right with probability logistic(θ − d_i).
	theta := wd.thetaA
	if r.accuracy != wd.o.accA {
		theta = wd.thetaB
	}
	draws := rand.New(rand.NewPCG(r.seed, 0x5c0e))
	idx := make([]int32, r.n)
	ptrs := make([]*float64, r.n)
	scores := make([]float64, r.n)
	for i := range r.n {
		if draws.Float64() < logistic(theta-wd.difficulty[i]) {
			scores[i] = 1
		}
		idx[i], ptrs[i] = int32(i), &scores[i]
	}
	mean, lo, hi := score.MeanCI(scores, uint64(r.id))
	if err := st.SaveScores(ctx, r.id, idx, nil, ptrs, store.RunQuality{Scorer: "exact", Scored: r.n, Mean: &mean, Low: &lo, High: &hi}); err != nil {
		return err
	}
	return st.ComputeRunStats(ctx, r.id)
}
