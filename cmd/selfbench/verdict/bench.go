package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"
)

// The scenarios, each a kind of benchmark of two targets, A then B.
const (
	kindAA      = "A/A"
	kindAB10    = "+10 % speed"
	kindAB25    = "+25 % speed"
	kindPrice   = "2× price"
	kindSmallN  = "small n"
	kindRescore = "rescore"
	kindRepeats = "repeats"
	kindOpen    = "open loop"
)

// The models: A at accuracy 0.60; B at 0.60 in A/A pairs, 0.70 in A/B.
const (
	modelA  = "verdict/model-a"
	modelB  = "verdict/model-b"
	accA    = 0.60
	accB    = 0.70
	scorer  = "exact"
	rescore = "contains"
)

// job is one benchmark to launch.
type job struct {
	kind    string
	n       int
	a, b    *agentSpec
	accB    float64
	repeats int
	open    bool
}

// world is the bench's state: the cluster, the dataset and the tally.
type world struct {
	o       options
	c       *cluster
	dataset int64
	specs   map[string]*agentSpec
	t       *tally
	log     io.Writer
	k       int // benchmarks launched
}

// run is the bench on the database at dbURL, its table written to w.
func run(ctx context.Context, o options, dbURL string, w io.Writer) error {
	t0 := time.Now()
	c, err := startCluster(ctx, o, dbURL)
	defer c.stop()
	if err != nil {
		return err
	}
	wd := &world{o: o, c: c, specs: map[string]*agentSpec{}, t: newTally(), log: w}
	if err := wd.setup(ctx); err != nil {
		return err
	}
	drift := fmt.Sprintf("agentd --sim-drift %g, a new level every %s", o.simDrift, o.driftPeriod)
	if !c.simDrift {
		drift = fmt.Sprintf("each agent restarted before each benchmark at a latency level exp(%g·z)", o.simDrift)
	}
	fmt.Fprintf(w, "bench-verdict: real server and agentd sim on loopback, through the HTTP API; targets in each benchmark's order\n")
	fmt.Fprintf(w, "sim TTFT lognormal 20 ms σ %v, ITL lognormal 2 ms σ 0.3, ~48 tokens; concurrency %d; drift: %s; CPU burner %.0f %% of a core, on or off every %s\n",
		o.sigmas, o.concurrency, drift, 100*o.burn, o.burnPeriod)
	burnCtx, stopBurn := context.WithCancel(ctx)
	burned := burner(burnCtx, o.burn, o.burnPeriod, o.seed)
	err = wd.phases(ctx)
	stopBurn()
	on, periods := burned()
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	wd.t.print(w)
	fmt.Fprintf(w, "burner on in %d of %d periods; %d agent starts; wall %s\n", on, periods, c.restarts, time.Since(t0).Round(time.Second))
	return nil
}

// setup creates the models, the prices and the dataset through the API.
func (wd *world) setup(ctx context.Context) error {
	api := wd.c.api
	for _, m := range []string{modelA, modelB} {
		if err := api.send(ctx, "POST", "/api/v1/models", map[string]any{"name": m, "params_b": 1, "quantization": "bf16", "context_length": 4096}, nil); err != nil {
			return err
		}
	}
	var ds strings.Builder
	for i := range max(wd.o.maxN, wd.o.smallNN) {
		fmt.Fprintf(&ds, "{\"custom_id\":\"item-%04d\",\"prompt\":\"Question %d: what is %d plus %d?\",\"reference\":\"%d\"}\n", i, i, i, 3*i, 4*i)
	}
	id, err := api.upload(ctx, "verdict", []byte(ds.String()))
	if err != nil {
		return err
	}
	wd.dataset = id
	return nil
}

// phases runs every benchmark, one σ at a time: the agents are started
// with the phase's TTFT σ, and then the prices are set (an agent's
// hardware profile exists once it has registered).
func (wd *world) phases(ctx context.Context) error {
	jobs := wd.plan()
	for p, sigma := range wd.o.sigmas {
		wd.c.sigma = sigma
		for _, a := range agentSpecs() {
			wd.specs[a.name] = a
			if err := wd.c.startAgent(ctx, a, 1); err != nil {
				return err
			}
			if err := wd.c.api.send(ctx, "PUT", "/api/v1/hardware/"+a.profile+"/price", map[string]any{"price_per_hour": a.price}, nil); err != nil {
				return err
			}
		}
		var mine []job
		for i, j := range jobs {
			if i%len(wd.o.sigmas) == p {
				mine = append(mine, j)
			}
		}
		fmt.Fprintf(wd.log, "phase σ %g: %d benchmarks\n", sigma, len(mine))
		for i, j := range mine {
			if err := wd.one(ctx, j, sigma); err != nil {
				return fmt.Errorf("%s benchmark (n %d): %w", j.kind, j.n, err)
			}
			if (i+1)%10 == 0 || i == len(mine)-1 {
				fmt.Fprintf(wd.log, "  %d/%d benchmarks\n", i+1, len(mine))
			}
		}
	}
	return nil
}

// plan lays out the benchmarks, shuffled so that every kind meets every
// state of the machine.
func (wd *world) plan() []job {
	o := wd.o
	sp := map[string]*agentSpec{}
	for _, a := range agentSpecs() {
		sp[a.name] = a
	}
	base, twin, f10, f25 := sp["verdict-base"], sp["verdict-twin"], sp["verdict-fast10"], sp["verdict-fast25"]
	r := rand.New(rand.NewPCG(o.seed, 0x91a7))
	var js []job
	add := func(count int, j job) {
		for range count {
			js = append(js, j)
		}
	}
	for range o.aa {
		js = append(js, job{kind: kindAA, n: o.minN + r.IntN(o.maxN-o.minN+1), a: base, b: base, accB: accA})
	}
	add(o.ab, job{kind: kindAB10, n: o.maxN, a: base, b: f10, accB: accB})
	add(o.ab, job{kind: kindAB25, n: o.maxN, a: base, b: f25, accB: accB})
	add(o.price, job{kind: kindPrice, n: o.maxN, a: base, b: twin, accB: accA})
	add(o.smallN, job{kind: kindSmallN, n: o.smallNN, a: base, b: base, accB: accA})
	add(o.rescore, job{kind: kindRescore, n: o.maxN, a: base, b: base, accB: accA})
	add(o.repeats, job{kind: kindRepeats, n: max(o.minN, o.maxN/2), a: base, b: base, accB: accA, repeats: 3})
	add(o.open, job{kind: kindOpen, n: o.maxN, a: base, b: f25, accB: accB, open: true})
	r.Shuffle(len(js), func(i, j int) { js[i], js[j] = js[j], js[i] })
	return js
}
