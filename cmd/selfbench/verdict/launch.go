package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ruckus/ruckus/cmd/selfbench/internal/benchkit"
)

// manifest is the benchmark j as a user writes it: A's target first.
func (wd *world) manifest(j job) map[string]any {
	load := map[string]any{"profile": "concurrency", "concurrency": wd.o.concurrency, "warmup": wd.o.concurrency, "max_requests": j.n}
	if j.open {
		load = map[string]any{"profile": "poisson", "rate": wd.o.openRate, "max_requests": j.n}
	}
	m := map[string]any{
		"name":    fmt.Sprintf("verdict %s %d", j.kind, wd.k),
		"dataset": wd.dataset,
		"targets": []map[string]any{{"model": modelA, "runtime": "sim", "hardware": j.a.profile},
			{"model": modelB, "runtime": "sim", "hardware": j.b.profile}},
		"load":     load,
		"sampling": map[string]any{"max_tokens": 64},
		"scorer":   scorer,
		"sim":      map[string]any{"accuracy": map[string]float64{modelA: accA, modelB: j.accB}, "seed": wd.o.seed*100000 + uint64(wd.k)},
	}
	if j.repeats > 1 {
		m["repeats"] = j.repeats
	}
	return m
}

// one launches benchmark j, waits for its verdict and counts it.
func (wd *world) one(ctx context.Context, j job, sigma float64) error {
	wd.k++
	for i, a := range []*agentSpec{j.a, j.b} {
		if i == 1 && a == j.a {
			break // both targets on one agent: restarted once
		}
		if l := wd.c.driftLevel(a, wd.k); l != 1 {
			if err := wd.c.startAgent(ctx, a, l); err != nil {
				return err
			}
		}
	}
	var created struct {
		ID int64 `json:"benchmark_id"`
	}
	if err := wd.c.api.send(ctx, "POST", "/api/v1/benchmarks", wd.manifest(j), &created); err != nil {
		return err
	}
	b, v, err := wd.await(ctx, created.ID)
	if err != nil {
		return err
	}
	side := map[int64]int{}
	for _, r := range b.Runs {
		if r.State != "completed" {
			return fmt.Errorf("benchmark %d: run %d %s", b.ID, r.ID, r.State)
		}
		side[r.ID] = 0
		if r.Model == modelB {
			side[r.ID] = 1
		}
	}
	if j.kind == kindRescore {
		if v, err = wd.rescore(ctx, b); err != nil {
			return err
		}
	}
	if wd.o.verbose {
		wd.printClaims(j, b, v)
	}
	wd.t.count(j, sigma, b, v, side)
	return nil
}

// await waits for the benchmark to finish, its runs to be scored and its
// verdict to be drawn (an older server answers before its figures are
// kept: then the verdict is read again until each claim has a runner-up
// or for 20 s).
func (wd *world) await(ctx context.Context, id int64) (apiBenchmark, apiVerdict, error) {
	var b apiBenchmark
	var v apiVerdict
	path := "/api/v1/benchmarks/" + strconv.FormatInt(id, 10)
	err := benchkit.WaitFor(ctx, nil, wd.o.timeout, 200*time.Millisecond, "benchmark "+path+" to finish and be scored", func() (bool, error) {
		if err := wd.c.api.get(ctx, path, &b); err != nil {
			return false, err
		}
		if b.FinishedAt == nil {
			return false, nil
		}
		for _, r := range b.Runs {
			if r.State == "completed" && r.Quality == nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return b, v, err
	}
	settled := time.Now().Add(20 * time.Second)
	err = benchkit.WaitFor(ctx, nil, wd.o.timeout, 200*time.Millisecond, "the verdict of "+path, func() (bool, error) {
		v = apiVerdict{}
		if err := wd.c.api.get(ctx, path+"/verdict", &v); err != nil {
			return false, err
		}
		if v.Pending {
			return false, nil
		}
		for _, cl := range v.Claims {
			if cl.RunnerUp == nil && time.Now().Before(settled) {
				return false, nil
			}
		}
		return true, nil
	})
	if err == nil {
		err = wd.c.api.get(ctx, path, &b) // the runs' flags, as kept by now
	}
	return b, v, err
}

// rescore rescores A's run with another scorer, waits for it, and reads
// the verdict and the comparison again: A's run must keep its place.
func (wd *world) rescore(ctx context.Context, b apiBenchmark) (apiVerdict, error) {
	var a int64
	var ids []string
	for _, r := range b.Runs {
		ids = append(ids, strconv.FormatInt(r.ID, 10))
		if r.Model == modelA && a == 0 {
			a = r.ID
		}
	}
	runPath := "/api/v1/runs/" + strconv.FormatInt(a, 10)
	if err := wd.c.api.send(ctx, "POST", runPath+"/score", map[string]any{"scorer": rescore}, nil); err != nil {
		return apiVerdict{}, err
	}
	err := benchkit.WaitFor(ctx, nil, wd.o.timeout, 200*time.Millisecond, "run "+runPath+" rescored", func() (bool, error) {
		var r apiRun
		if err := wd.c.api.get(ctx, runPath, &r); err != nil {
			return false, err
		}
		return r.Scorer == rescore && r.Quality != nil, nil
	})
	if err != nil {
		return apiVerdict{}, err
	}
	_, v, err := wd.await(ctx, b.ID)
	if err != nil {
		return v, err
	}
	status, _ := wd.c.api.do(ctx, "GET", "/api/v1/compare?runs="+ids[0]+","+ids[1], "", nil, nil)
	kept := status == 200
	if q := v.claim(metricQuality); q == nil || q.Leader == nil || q.RunnerUp == nil ||
		!slices.Contains([]int64{q.Leader.RunID, q.RunnerUp.RunID}, a) {
		kept = false
	}
	wd.t.rescored = append(wd.t.rescored, kept)
	return v, nil
}

func (wd *world) printClaims(j job, b apiBenchmark, v apiVerdict) {
	fmt.Fprintf(wd.log, "  benchmark %d %s n=%d:", b.ID, j.kind, j.n)
	for _, c := range v.Claims {
		p := "-"
		if c.P != nil {
			p = fmt.Sprintf("%.3g", *c.P)
		}
		lead := int64(0)
		if c.Leader != nil {
			lead = c.Leader.RunID
		}
		fmt.Fprintf(wd.log, " %s lead %d sig=%v p=%s (%s);", c.Metric, lead, c.Significant, p, c.Test)
	}
	fmt.Fprintln(wd.log)
}
