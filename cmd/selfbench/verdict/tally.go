package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// The verdict's metrics, as the API names them.
const (
	metricSpeed   = "output_tokens_per_s"
	metricLatency = "e2e_p95_ms"
	metricCost    = "cost_per_1m_tokens"
	metricQuality = "quality"
	metricFlagged = "flagged"
)

// cell counts hits among n: A/A pairs called significant, or planted
// differences found in their direction.
type cell struct{ n, hit int }

func (c *cell) add(hit bool) {
	c.n++
	if hit {
		c.hit++
	}
}

// tally is what the benchmarks concluded.
type tally struct {
	aa       map[string]*cell // metric → A/A pairs called significant
	aaSigma  map[string]map[float64]*cell
	power    map[string]map[string]*cell // metric → planted kind → found
	priceSpd cell                        // price-only: speed called significant
	smallP95 cell                        // small n: p95 tested
	repeats  cell                        // repeats' runs flagged against a repeat
	openSpd  cell                        // open loop: speed tested
	openLat  cell                        // open loop: latency tested
	openFind cell                        // open loop: B's lower p95 found
	rescored []bool
	ratio    map[string][]float64 // kind → B's throughput ÷ A's
	sigmas   []float64
}

func newTally() *tally {
	t := &tally{aa: map[string]*cell{}, aaSigma: map[string]map[float64]*cell{}, power: map[string]map[string]*cell{}, ratio: map[string][]float64{}}
	for _, m := range []string{metricSpeed, metricLatency, metricCost, metricQuality, metricFlagged} {
		t.aa[m], t.aaSigma[m], t.power[m] = &cell{}, map[float64]*cell{}, map[string]*cell{}
	}
	return t
}

// found says whether the verdict's claim on metric is significant with
// the target on side (0: A, 1: B) leading.
func found(v apiVerdict, metric string, side map[int64]int, want int) bool {
	c := v.claim(metric)
	if c == nil || !c.Significant || !c.Comparable || c.Leader == nil {
		return false
	}
	s, ok := side[c.Leader.RunID]
	return ok && s == want
}

// significant says whether the claim on metric is significant either way.
func significant(v apiVerdict, metric string) bool {
	c := v.claim(metric)
	return c != nil && c.Significant && c.Comparable
}

// tested says whether the claim on metric has a test's p.
func tested(v apiVerdict, metric string) bool {
	c := v.claim(metric)
	return c != nil && c.P != nil && c.Comparable
}

// count adds benchmark b's verdict v (its runs' sides in side).
func (t *tally) count(j job, sigma float64, b apiBenchmark, v apiVerdict, side map[int64]int) {
	if !slices.Contains(t.sigmas, sigma) {
		t.sigmas = append(t.sigmas, sigma)
	}
	ids := map[int64]bool{}
	var thr [2][]float64
	for _, r := range b.Runs {
		ids[r.ID] = true
		if r.Throughput != nil {
			thr[side[r.ID]] = append(thr[side[r.ID]], *r.Throughput)
		}
	}
	if len(thr[0]) > 0 && len(thr[1]) > 0 {
		t.ratio[j.kind] = append(t.ratio[j.kind], mean(thr[1])/mean(thr[0]))
	}
	switch j.kind {
	case kindAA:
		for _, m := range []string{metricSpeed, metricLatency, metricCost, metricQuality} {
			t.aa[m].add(significant(v, m))
			t.aaOf(m, sigma).add(significant(v, m))
		}
		for _, r := range b.Runs {
			t.aa[metricFlagged].add(len(r.flags()) > 0)
			t.aaOf(metricFlagged, sigma).add(len(r.flags()) > 0)
		}
	case kindAB10, kindAB25:
		for _, m := range []string{metricSpeed, metricLatency, metricCost} {
			t.powerOf(m, j.kind).add(found(v, m, side, 1))
		}
		t.powerOf(metricQuality, "0.10 accuracy").add(found(v, metricQuality, side, 1))
	case kindPrice:
		t.powerOf(metricCost, kindPrice).add(found(v, metricCost, side, 0))
		t.priceSpd.add(significant(v, metricSpeed))
	case kindSmallN:
		t.smallP95.add(tested(v, metricLatency))
	case kindRepeats:
		for _, r := range b.Runs {
			against := false
			for _, f := range r.flags() {
				against = against || ids[f.AgainstRunID]
			}
			t.repeats.add(against)
		}
	case kindOpen:
		t.openSpd.add(tested(v, metricSpeed))
		t.openLat.add(tested(v, metricLatency))
		t.openFind.add(found(v, metricLatency, side, 1))
	}
}

func (t *tally) aaOf(m string, sigma float64) *cell {
	if t.aaSigma[m][sigma] == nil {
		t.aaSigma[m][sigma] = &cell{}
	}
	return t.aaSigma[m][sigma]
}

func (t *tally) powerOf(m, kind string) *cell {
	if t.power[m][kind] == nil {
		t.power[m][kind] = &cell{}
	}
	return t.power[m][kind]
}

// wilson is the 95 % Wilson score interval of k of n, in per cent.
func wilson(k, n int) (lo, hi float64) {
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	const z = 1.959963984540054
	p, fn := float64(k)/float64(n), float64(n)
	mid := (p + z*z/(2*fn)) / (1 + z*z/fn)
	half := z / (1 + z*z/fn) * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn))
	return 100 * max(0, mid-half), 100 * min(1, mid+half)
}

// share prints k of n with its Wilson interval and, when target is set,
// whether it is met (≤ target for sizes, ≥ for power).
func (c *cell) share(target float64, atMost bool) string {
	if c == nil || c.n == 0 {
		return "—"
	}
	lo, hi := wilson(c.hit, c.n)
	s := fmt.Sprintf("%d/%d = %.1f %% [%.1f, %.1f]", c.hit, c.n, 100*float64(c.hit)/float64(c.n), lo, hi)
	pct := 100 * float64(c.hit) / float64(c.n)
	switch {
	case target < 0:
	case atMost && pct <= target, !atMost && pct >= target:
		s += " met"
	default:
		s += " MISSED"
	}
	return s
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// The table's metric rows.
var metricRows = []struct{ key, name string }{
	{metricSpeed, "output tokens/s"}, {metricLatency, "p95 E2E latency"}, {metricCost, "cost per 1M output tokens"},
	{metricQuality, "quality (exact, 0/1)"}, {metricFlagged, "run flagged as a regression"},
}

// print writes the per-metric table and the edge rows.
func (t *tally) print(w io.Writer) {
	slices.Sort(t.sigmas)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"metric", "A/A significant (≤ 5 %)"}
	for _, s := range t.sigmas {
		head = append(head, fmt.Sprintf("A/A σ %g", s))
	}
	head = append(head, "+10 % speed found (≥ 80 %)", "+25 % speed found", "2× price found", "0.10 accuracy found")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, m := range metricRows {
		row := []string{m.name, t.aa[m.key].share(5, true)}
		for _, s := range t.sigmas {
			row = append(row, t.aaSigma[m.key][s].share(-1, true))
		}
		for _, k := range []string{kindAB10, kindAB25, kindPrice, "0.10 accuracy"} {
			row = append(row, t.power[m.key][k].share(80, false))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	kept := cell{}
	for _, k := range t.rescored {
		kept.add(k)
	}
	for _, r := range []struct{ name, got, want string }{
		{"price-only (equal speed, 2× price): speed called significant", t.priceSpd.share(5, true), "≤ 5 %"},
		{"small n: p95 tested", t.smallP95.share(0, true), "0: too few requests to test"},
		{"rescore: run keeps its place (verdict quality claim, compare 200)", kept.share(100, false), "all"},
		{"repeats within a benchmark: runs flagged against a repeat", t.repeats.share(0, true), "0"},
		{"open loop: speed tested", t.openSpd.share(0, true), "0: throughput is the offered load"},
		{"open loop: p95 latency tested", t.openLat.share(100, false), "all"},
		{"open loop: +25 % runtime's lower p95 found", t.openFind.share(-1, false), ""},
	} {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.name, r.got, r.want)
	}
	_ = tw.Flush()
	var planted []string
	for _, k := range []string{kindAA, kindAB10, kindAB25, kindPrice, kindOpen} {
		if xs := t.ratio[k]; len(xs) > 0 {
			planted = append(planted, fmt.Sprintf("%s %.3f", k, mean(xs)))
		}
	}
	fmt.Fprintf(w, "B's output tokens/s ÷ A's, mean over pairs: %s\n", strings.Join(planted, ", "))
}
