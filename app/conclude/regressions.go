package conclude

import (
	"context"
	"encoding/json"

	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
)

// RegressionBenchmarks is how many earlier benchmarks of a run's model on
// its dataset a regression check reads to find the previous comparable
// target: a target rarely changes its load more often than that between
// two benchmarks of one load.
const RegressionBenchmarks = 20

// RegressionSource is what a regression check reads (*store.Store).
type RegressionSource interface {
	RegressionRuns(ctx context.Context, runID int64, benchmarks int) ([]store.RunFigures, error)
	StatusSource
	DriftSource
	PairSource
}

// TargetRegressions is what a check decided for one target of a
// benchmark (docs/verdict.md#regression-flags): Found are the ways its
// runs, merged as the verdict merges repeats (MergeRepeats), are
// significantly worse than the same target's runs in the previous
// benchmark that measured it under a comparable load, merged alike; every
// run of Runs carries them (none: not a regression). Against is the first
// run of that previous target (0 when there is none).
type TargetRegressions struct {
	Runs    []int64
	Against int64
	Found   []store.Regression
}

// Regressions checks the target of run runID in its benchmark. A target
// is not decided while one of its repeats is still to end, or has ended
// and its figures or its quality are still to come (repeatAwaited): the
// check of the run that brings the last of them decides for all, and
// until then run runID alone carries no flag. Run runID itself is never
// awaited: it is being concluded, so nothing more of it is to come. A
// repeat whose figures are given up (its score job failed for good) is
// left out, unmeasured; one whose quality is given up is merged without
// it. A benchmark may measure
// one target under several loads (few-shot settings, a length sweep):
// each is decided.
func Regressions(ctx context.Context, src RegressionSource, runID int64) ([]TargetRegressions, error) {
	rows, err := src.RegressionRuns(ctx, runID, RegressionBenchmarks)
	if err != nil {
		return nil, err
	}
	own, earlier, cur, ok := splitRegressionRows(rows, runID)
	if !ok {
		return nil, nil
	}
	facts, err := src.ConclusionFacts(ctx, cur.BenchmarkID)
	if err != nil {
		return nil, err
	}
	byRun := make(map[int64]store.ConclusionRun, len(facts.Runs))
	for _, f := range facts.Runs {
		byRun[f.RunID] = f
	}
	t := targetOfRun(cur)
	var ended []store.RunFigures
	var left []int64
	for _, r := range own {
		switch {
		case targetOfRun(r) != t:
		case r.ID != runID && repeatAwaited(r, byRun[r.ID], facts.Scorer):
			// Run runID has nothing more to come: it is being concluded,
			// maybe inside its own score job (a judge-scored run not
			// judged), whose being live must not hold its own decision.
			return []TargetRegressions{{Runs: []int64{runID}}}, nil
		case r.State == "completed" && r.Stat != nil:
			ended = append(ended, r)
		default:
			left = append(left, r.ID)
		}
	}
	out := []TargetRegressions{}
	if len(left) > 0 {
		out = append(out, TargetRegressions{Runs: left})
	}
	for _, g := range groupRuns(ended) {
		tr, err := targetRegressions(ctx, src, g, earlier)
		if err != nil {
			return nil, err
		}
		out = append(out, tr)
	}
	return out, nil
}

// repeatAwaited says whether a target waits for repeat r (f its facts, of
// a benchmark scored by scorer): it is still to end, or it ended and its
// figures (FiguresToCome) or its quality (QualityToCome) are still to
// come. Deciding without a quality still to come would test the target
// without it and decide it again when it comes, telling run.regression
// twice.
func repeatAwaited(r store.RunFigures, f store.ConclusionRun, scorer string) bool {
	switch {
	case r.State == "queued" || r.State == "running":
		return true
	case r.State != "completed":
		return false
	case r.Stat == nil:
		return r.Summary != nil && FiguresToCome(f)
	}
	return QualityToCome(f, scorer)
}

// splitRegressionRows parts store.RegressionRuns' rows into run runID's
// benchmark's and each earlier benchmark's (newest first); ok is false
// when run runID is not among them.
func splitRegressionRows(rows []store.RunFigures, runID int64) (own []store.RunFigures, earlier [][]store.RunFigures, cur store.RunFigures, ok bool) {
	for _, r := range rows {
		if r.ID == runID {
			cur, ok = r, true
		}
	}
	if !ok {
		return nil, nil, cur, false
	}
	for _, r := range rows {
		switch {
		case r.BenchmarkID == cur.BenchmarkID:
			own = append(own, r)
		case len(earlier) > 0 && earlier[len(earlier)-1][0].BenchmarkID == r.BenchmarkID:
			earlier[len(earlier)-1] = append(earlier[len(earlier)-1], r)
		default:
			earlier = append(earlier, []store.RunFigures{r})
		}
	}
	return own, earlier, cur, true
}

// groupRuns are runs grouped as MergeRepeats merges them (repeatGroups),
// each group in the runs' order.
func groupRuns(runs []store.RunFigures) [][]store.RunFigures {
	var out [][]store.RunFigures
	for _, is := range repeatIndices(Candidates(runs)) {
		rs := make([]store.RunFigures, len(is))
		for j, i := range is {
			rs[j] = runs[i]
		}
		out = append(out, rs)
	}
	return out
}

// previousTarget is the newest earlier benchmark's repeat group of the
// target of group g (its first run's target) measured under a load
// comparable with g's first run's (jobs.LoadIdentity.Differences, as
// every speed and latency conclusion compares loads); false when none is.
func previousTarget(g []store.RunFigures, earlier [][]store.RunFigures) ([]store.RunFigures, bool) {
	first := Candidates(g[:1])[0]
	if first.Load == nil {
		return nil, false
	}
	for _, b := range earlier {
		for _, p := range groupRuns(b) {
			c := Candidates(p[:1])[0]
			if targetOf(c) == targetOf(first) && c.Load != nil && len(first.Load.Differences(*c.Load)) == 0 {
				return p, true
			}
		}
	}
	return nil, false
}

// targetRegressions decides the repeat group g against its previous
// target: both weighed as the verdict weighs runs (Weigh: the
// deployments' between-run spread as of the newest end among them, quality
// under the scorer identity most of them share) and each merged
// (MergeRepeats), quality tested on the first runs' shared items.
func targetRegressions(ctx context.Context, src RegressionSource, g []store.RunFigures, earlier [][]store.RunFigures) (TargetRegressions, error) {
	tr := TargetRegressions{}
	for _, r := range g {
		tr.Runs = append(tr.Runs, r.ID)
	}
	prev, ok := previousTarget(g, earlier)
	if !ok {
		return tr, nil
	}
	runs := append(append([]store.RunFigures{}, prev...), g...)
	key := ScorerFor(runs)
	cands, err := Weigh(ctx, src, runs, key)
	if err != nil {
		return tr, err
	}
	p, c := mergeRepeated(cands[:len(prev)]), mergeRepeated(cands[len(prev):])
	tr.Against = p.RunID
	var ev Evidence
	if key != "" && c.Quality != nil && p.Quality != nil && c.ScorerKey == key && p.ScorerKey == key {
		pairs, err := QualityPairs(ctx, src, key, []int64{c.RunID, p.RunID})
		if err != nil {
			return tr, err
		}
		for _, x := range pairs {
			ev.Paired = append(ev.Paired, Diff(x))
		}
	}
	tr.Found = Regressed(c, p, key, ev)
	return tr, nil
}

// Regressed is how candidate c is significantly worse than p, the
// previous comparable target (nil when it is not), quality under scorer
// identity key with ev their paired comparison of it. Each metric is
// tested as every conclusion tests it (Compare); the metrics are checked
// at once, so a regression is flagged only where the Benjamini–Hochberg
// procedure at a false discovery rate of 5 % keeps it, and only when c is
// worse.
func Regressed(c, p Candidate, key string, ev Evidence) []store.Regression {
	type check struct {
		metric string
		m      Margin
	}
	var tested []check
	for _, x := range []struct {
		metric string
		c      Criterion
	}{{store.RegressionQuality, Quality}, {store.RegressionThroughput, Speed}, {store.RegressionLatency, Latency}} {
		m := Compare(c, p, x.c, ev)
		if m.Measured && m.Comparable && m.P != nil {
			tested = append(tested, check{x.metric, m})
		}
	}
	ps := make([]float64, len(tested))
	for i, t := range tested {
		ps[i] = *t.m.P
	}
	kept := stats.BenjaminiHochberg(ps, stats.Alpha)
	var out []store.Regression
	for i, t := range tested {
		if kept[i] && t.m.Better < 0 {
			out = append(out, regression(t.metric, t.m, key, p.RunID, len(tested)))
		}
	}
	return out
}

// regression is the flag of metric with its margin m against run prevID,
// worded for the page and the API (n metrics were tested together).
func regression(metric string, m Margin, key string, prevID int64, n int) store.Regression {
	p := *m.P
	g := store.Regression{Metric: metric, AgainstRunID: prevID, PValue: &p, Delta: m.A - m.B}
	var said Said
	switch metric {
	case store.RegressionQuality:
		if m.Paired != nil {
			g.Delta = m.Paired.Mean
		}
		said = Say("compare.said.regression_quality", "Scorer", key, "Run", prevID, "Basis", m.BasisSaid, "N", n)
	case store.RegressionLatency:
		said = Say("compare.said.regression_latency", "A", Dec{V: m.A}, "Run", prevID, "B", Dec{V: m.B},
			"Pct", Signed{V: -m.Pct, Places: 1}, "Basis", m.BasisSaid, "N", n)
	case store.RegressionThroughput:
		said = Say("compare.said.regression_throughput", "A", Dec{V: m.A, Places: 1}, "Run", prevID, "B", Dec{V: m.B, Places: 1},
			"Pct", Signed{V: m.Pct, Places: 1}, "Basis", m.BasisSaid, "N", n)
	}
	// The stored English is the catalogue's (English); a sentence that
	// cannot be stored leaves the page that English.
	g.Detail = English(said)
	if b, err := json.Marshal(said); err == nil {
		g.DetailSaid = b
	}
	return g
}
