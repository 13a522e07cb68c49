// Package regress flags a completed run as a regression when it is
// significantly worse than the previous comparable completed run of the
// same target (model × runtime × hardware profile) on the same dataset:
// a comparable load identity (conclude.PreviousComparableRun) for throughput and
// latency, the same scorer identity for quality. The tests are the ones
// every conclusion uses (conclude.Compare):
//
//   - quality: the paired test over the items both runs scored (McNemar's
//     test for 0/1 scores, the paired bootstrap for partial credit);
//   - throughput: Welch's t-test on output tokens/s, batch means over each
//     run's steady window;
//   - latency_p95: a z-test from the p95s' distribution-free intervals.
//
// The metrics are checked at once, so a regression is flagged only where
// the Benjamini–Hochberg procedure at a false discovery rate of 5 % keeps
// it, and only when the run is worse. The check runs when a run is scored
// (the score_run job) and its findings are stored, so lists and the
// leaderboard read them without reading every result again.
package regress

import (
	"context"
	"encoding/json"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Store is what the check reads and writes (*store.Store satisfies it).
type Store interface {
	RunForRegression(ctx context.Context, runID int64) (store.RunFigures, error)
	conclude.PreviousSource
	conclude.PairSource
	ReplaceRegressions(ctx context.Context, runID int64, regs []store.Regression) error
	conclude.DriftSource
}

// Checker checks runs for regressions and stores what it finds.
type Checker struct {
	Store Store
}

var _ jobs.RegressionChecker = (*Checker)(nil)

// CheckRegressions compares run runID with the previous comparable
// completed run of its target and replaces its stored regressions with
// what it finds (none when the run is not completed or has no such
// predecessor).
func (c *Checker) CheckRegressions(ctx context.Context, runID int64) error {
	cur, err := c.Store.RunForRegression(ctx, runID)
	if err != nil {
		return err
	}
	if cur.State != "completed" || cur.Summary == nil {
		return c.Store.ReplaceRegressions(ctx, runID, nil)
	}
	prev, ok, err := conclude.PreviousComparableRun(ctx, c.Store, cur)
	if err != nil {
		return err
	}
	if !ok {
		return c.Store.ReplaceRegressions(ctx, runID, nil)
	}
	pair := []store.RunFigures{cur, prev}
	key := conclude.ScorerFor(pair)
	cs := conclude.Under(pair, key)
	// Each run's speed and latency carry its deployment's between-run
	// spread, as on every surface that weighs runs.
	if err := conclude.WithDrift(ctx, c.Store, cs); err != nil {
		return err
	}
	var ev conclude.Evidence
	if key != "" && hasQuality(cur, key) && hasQuality(prev, key) {
		pairs, err := conclude.QualityPairs(ctx, c.Store, key, []int64{cur.ID, prev.ID})
		if err != nil {
			return err
		}
		for _, p := range pairs {
			ev.Paired = append(ev.Paired, conclude.Diff(p))
		}
	}
	return c.Store.ReplaceRegressions(ctx, runID, findAmong(cs, key, prev.ID, ev))
}

// Find compares cur with prev, the previous comparable completed run of
// its target, and returns how cur is significantly worse (nil when it is
// not); ev holds their paired comparison of quality, if any. It weighs
// the two runs without their deployments' between-run spread, which
// CheckRegressions reads (conclude.WithDrift).
func Find(cur, prev store.RunFigures, ev conclude.Evidence) []store.Regression {
	pair := []store.RunFigures{cur, prev}
	key := conclude.SharedScorer(pair)
	return findAmong(conclude.Under(pair, key), key, prev.ID, ev)
}

// findAmong is Find over the two runs as candidates (cs: the run checked,
// then run prevID), quality under scorer identity key.
func findAmong(cs []conclude.Candidate, key string, prevID int64, ev conclude.Evidence) []store.Regression {
	a, b := cs[0], cs[1]
	type check struct {
		metric string
		m      conclude.Margin
	}
	var tested []check
	for _, x := range []struct {
		metric string
		c      conclude.Criterion
	}{{store.RegressionQuality, conclude.Quality}, {store.RegressionThroughput, conclude.Speed}, {store.RegressionLatency, conclude.Latency}} {
		m := conclude.Compare(a, b, x.c, ev)
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
		m := t.m
		if !kept[i] || m.Better >= 0 {
			continue
		}
		p := *m.P
		g := store.Regression{Metric: t.metric, AgainstRunID: prevID, PValue: &p, Delta: m.A - m.B}
		var said conclude.Said
		switch t.metric {
		case store.RegressionQuality:
			if m.Paired != nil {
				g.Delta = m.Paired.Mean
			}
			said = conclude.Say("compare.said.regression_quality", "Scorer", key, "Run", prevID, "Basis", m.BasisSaid, "N", len(tested))
		case store.RegressionLatency:
			said = conclude.Say("compare.said.regression_latency", "A", conclude.Dec{V: m.A}, "Run", prevID, "B", conclude.Dec{V: m.B},
				"Pct", conclude.Signed{V: -m.Pct, Places: 1}, "Basis", m.BasisSaid, "N", len(tested))
		case store.RegressionThroughput:
			said = conclude.Say("compare.said.regression_throughput", "A", conclude.Dec{V: m.A, Places: 1}, "Run", prevID, "B", conclude.Dec{V: m.B, Places: 1},
				"Pct", conclude.Signed{V: m.Pct, Places: 1}, "Basis", m.BasisSaid, "N", len(tested))
		}
		// The stored English is the catalogue's (conclude.English); a
		// sentence that cannot be stored leaves the page that English.
		g.Detail = conclude.English(said)
		if b, err := json.Marshal(said); err == nil {
			g.DetailSaid = b
		}
		out = append(out, g)
	}
	return out
}

// hasQuality says whether run r was scored under scorer identity key.
func hasQuality(r store.RunFigures, key string) bool {
	_, ok := r.QualityUnder(key)
	return ok
}
