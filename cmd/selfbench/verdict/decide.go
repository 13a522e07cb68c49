package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	"github.com/ruckus/ruckus/app/advise"
	"github.com/ruckus/ruckus/app/regress"
	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/views/compare"
)

// row is one metric's count: of A/A pairs, how many were called
// significant (or flagged); of A/B pairs, how many found the planted
// difference in its direction. Untested counts pairs the decision did not
// test (not comparable, or no interval): they count as not significant
// and not detected.
type row struct {
	metric, test    string
	aa, aaSig       int
	ab, abDet       int
	untested        int
	untestedReasons map[string]int
}

// tally is the table, in the order printed.
type tally struct {
	rows               []*row
	speedAB, speedAA   []float64
	qualityA, qualityB []float64
}

func (t *tally) get(metric, test string) *row {
	for _, r := range t.rows {
		if r.metric == metric && r.test == test {
			return r
		}
	}
	r := &row{metric: metric, test: test, untestedReasons: map[string]int{}}
	t.rows = append(t.rows, r)
	return r
}

// add counts one decision m of A against B.
func (r *row) add(kind string, m advise.Margin) {
	tested := m.Measured && m.Comparable && m.P != nil
	if !tested {
		r.untested++
		why := m.Basis
		if !m.Measured {
			why = "not measured"
		}
		r.untestedReasons[why]++
	}
	significant := tested && !m.Tie
	switch kind {
	case kindAA:
		r.aa++
		if significant {
			r.aaSig++
		}
	case kindAB:
		r.ab++
		// B is the better target on every criterion: A must be found worse.
		if significant && m.Better < 0 {
			r.abDet++
		}
	}
}

// The rows' names.
const (
	metricSpeed   = "output tokens/s"
	metricLatency = "p95 E2E latency"
	metricCost    = "cost per 1M output tokens"
	metricQuality = "quality (exact, 0/1)"
	metricRegress = "flagged as a regression"
)

// decide draws every pair's conclusions as the server draws them.
func (wd *world) decide(ctx context.Context, pairs []*pair) (*tally, error) {
	t := &tally{}
	// The rows in the order printed.
	for _, x := range [][2]string{{metricSpeed, "Welch t, batch means"}, {metricSpeed, "Welch t, 3 repeats"},
		{metricLatency, "z on ln p95, exact order statistics"}, {metricCost, "t on ln cost, price exact"}, {metricCost, "same, 3 repeats"},
		{metricQuality, "McNemar, paired items"}, {metricRegress, "regress.Find, Benjamini–Hochberg over 3"}} {
		t.get(x[0], x[1])
	}
	for _, p := range pairs {
		if p.repeated {
			if err := wd.decideRepeated(ctx, p, t); err != nil {
				return nil, err
			}
			continue
		}
		runs, err := wd.st.RunFiguresByID(ctx, wd.viewer, []int64{p.a[0].id, p.b[0].id})
		if err != nil {
			return nil, err
		}
		if len(runs) != 2 {
			return nil, fmt.Errorf("runs %d and %d: read %d", p.a[0].id, p.b[0].id, len(runs))
		}
		// As the server weighs single runs: with their deployment's spread.
		if err := wd.st.WithDrift(ctx, runs); err != nil {
			return nil, err
		}
		cands := compare.Candidates(runs)
		ev, err := advise.GatherEvidence(ctx, wd.st, cands)
		if err != nil {
			return nil, err
		}
		a, b := cands[0], cands[1]
		if wd.o.verbose {
			ms := advise.Compare(a, b, advise.Speed, ev)
			ml := advise.Compare(a, b, advise.Latency, ev)
			fmt.Fprintf(wd.log, "  %s n=%d runs %d/%d: speed %.1f vs %.1f (batch means %.1f±%.1f [%d] vs %.1f±%.1f [%d]) p=%.3g; p95 %.1f vs %.1f p=%.3g\n",
				p.kind, p.a[0].n, a.RunID, b.RunID, deref(a.TokensPS), deref(b.TokensPS), a.TPS.Mean, a.TPS.SE, a.TPS.N, b.TPS.Mean, b.TPS.SE, b.TPS.N,
				deref(ms.P), deref(a.E2Ep95), deref(b.E2Ep95), deref(ml.P))
		}
		t.get(metricSpeed, "Welch t, batch means").add(p.kind, advise.Compare(a, b, advise.Speed, ev))
		t.get(metricLatency, "z on ln p95, exact order statistics").add(p.kind, advise.Compare(a, b, advise.Latency, ev))
		t.get(metricCost, "t on ln cost, price exact").add(p.kind, advise.Compare(a, b, advise.Cost, ev))
		t.get(metricQuality, "McNemar, paired items").add(p.kind, advise.Compare(a, b, advise.Quality, ev))
		// The later run is checked against the earlier: B against A in an
		// A/A pair; in an A/B pair the worse target A against B.
		cur, prev := runs[1], runs[0]
		if p.kind == kindAB {
			cur, prev = runs[0], runs[1]
		}
		flags := regress.Find(cur, prev, ev)
		r := t.get(metricRegress, "regress.Find, Benjamini–Hochberg over 3")
		switch p.kind {
		case kindAA:
			r.aa++
			if len(flags) > 0 {
				r.aaSig++
			}
		case kindAB:
			r.ab++
			if len(flags) > 0 {
				r.abDet++
			}
		}
		if a.TokensPS != nil && b.TokensPS != nil {
			ratio := *b.TokensPS / *a.TokensPS
			if p.kind == kindAB {
				t.speedAB = append(t.speedAB, ratio)
				t.qualityA, t.qualityB = append(t.qualityA, deref(a.Quality)), append(t.qualityB, deref(b.Quality))
			} else {
				t.speedAA = append(t.speedAA, ratio)
			}
		}
	}
	return t, nil
}

func deref(x *float64) float64 {
	if x == nil {
		return math.NaN()
	}
	return *x
}

// decideRepeated decides speed and cost of a repeated pair on the
// between-run interval of each target's runs: the mean of the runs'
// steady-window output tokens/s ± t(0.975, N−1)·s/√N (stats.MeanInterval,
// Repeats), compared by advise.Compare's Welch test.
func (wd *world) decideRepeated(ctx context.Context, p *pair, t *tally) error {
	side := func(rs []*measuredRun) (advise.Candidate, error) {
		ids := make([]int64, len(rs))
		for i, r := range rs {
			ids[i] = r.id
		}
		runs, err := wd.st.RunFiguresByID(ctx, wd.viewer, ids)
		if err != nil {
			return advise.Candidate{}, err
		}
		cands := compare.Candidates(runs)
		if len(cands) != len(rs) {
			return advise.Candidate{}, fmt.Errorf("runs %v: read %d", ids, len(cands))
		}
		var means, costs []float64
		for _, c := range cands {
			if !c.TPS.OK() || c.CostPer1M == nil {
				return advise.Candidate{}, fmt.Errorf("run %d has no output tokens/s interval or cost", c.RunID)
			}
			means, costs = append(means, c.TPS.Mean), append(costs, *c.CostPer1M)
		}
		x := cands[0]
		x.TPS = stats.MeanInterval(means)
		x.TPS.Repeats = true
		tps, cost := x.TPS.Mean, stats.Mean(costs)
		x.TokensPS, x.CostPer1M = &tps, &cost
		return x, nil
	}
	a, err := side(p.a)
	if err != nil {
		return err
	}
	b, err := side(p.b)
	if err != nil {
		return err
	}
	t.get(metricSpeed, "Welch t, 3 repeats").add(p.kind, advise.Compare(a, b, advise.Speed, advise.Evidence{}))
	t.get(metricCost, "same, 3 repeats").add(p.kind, advise.Compare(a, b, advise.Cost, advise.Evidence{}))
	return nil
}

// wilson is the 95 % Wilson score interval of k successes in n.
func wilson(k, n int) (lo, hi float64) {
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	const z = 1.959964
	p, fn := float64(k)/float64(n), float64(n)
	den := 1 + z*z/fn
	c := (p + z*z/(2*fn)) / den
	h := z * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn)) / den
	return max(0, c-h), min(1, c+h)
}

func (t *tally) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\ttest\tA/A pairs\tA/A called significant [95 % CI]\t≤ 5 %?\tA/B pairs\tplanted detected\t≥ 80 %?")
	for _, r := range t.rows {
		lo, hi := wilson(r.aaSig, r.aa)
		aaShare, abShare := share(r.aaSig, r.aa), share(r.abDet, r.ab)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d = %.1f %% [%.1f, %.1f]\t%s\t%d\t%d = %.1f %%\t%s\n", r.metric, r.test, r.aa, r.aaSig, 100*aaShare, 100*lo, 100*hi,
			met(aaShare <= stats.Alpha), r.ab, r.abDet, 100*abShare, met(abShare >= 0.80))
	}
	_ = tw.Flush()
	for _, r := range t.rows {
		for why, n := range r.untestedReasons {
			fmt.Fprintf(w, "  %s (%s): %d pairs not tested: %s\n", r.metric, r.test, n, why)
		}
	}
	if len(t.speedAB) > 0 {
		fmt.Fprintf(w, "planted: B's output tokens/s ÷ A's %.3f on average over the A/B pairs (A/A: %.3f); quality %.3f vs %.3f\n",
			stats.Mean(t.speedAB), stats.Mean(t.speedAA), stats.Mean(t.qualityA), stats.Mean(t.qualityB))
	}
}

func share(k, n int) float64 {
	if n == 0 {
		return math.NaN()
	}
	return float64(k) / float64(n)
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}
