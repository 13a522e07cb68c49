// Package regress flags a completed run as a regression when it is
// significantly worse than the previous completed run of the same target
// (model × runtime × hardware profile) on the same dataset:
//
//   - quality: the paired test over the items both runs scored with the
//     same scorer (advise.PairRuns: McNemar's test for 0/1 scores, the
//     paired bootstrap for partial credit) finds the difference
//     significant at 5 % and the new run's mean per-item difference is
//     negative;
//   - throughput: output tokens/s lower by more than the measurement noise
//     of a re-run (advise.NoiseFloor, 2 %);
//   - latency_p95: p95 end-to-end latency higher by more than that noise,
//     and the runs' distribution-free 95 % intervals of their p95 apart.
//
// These are the tests the verdict and the recommendation use to tell a
// real difference from noise (advise.Compare), applied to a run and its
// predecessor. The check runs when a run is scored (the score_run job) and
// its findings are stored, so lists and the leaderboard read them without
// reading every result again.
package regress

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/ruckus/ruckus/app/advise"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Store is what the check reads and writes (*store.Store satisfies it).
type Store interface {
	RunForRegression(ctx context.Context, runID int64) (store.CompareRun, error)
	PreviousTargetRun(ctx context.Context, runID int64) (store.CompareRun, bool, error)
	RunItemScores(ctx context.Context, runIDs []int64) (map[int64][]store.ItemScore, error)
	E2EP95Intervals(ctx context.Context, runIDs []int64) (map[int64]store.QuantileInterval, error)
	ReplaceRegressions(ctx context.Context, runID int64, regs []store.Regression) error
}

// Checker checks runs for regressions and stores what it finds.
type Checker struct {
	Store Store
}

var _ jobs.RegressionChecker = (*Checker)(nil)

// CheckRegressions compares run runID with the previous completed run of
// its target and replaces its stored regressions with what it finds (none
// when the run is not completed or is the target's first).
func (c *Checker) CheckRegressions(ctx context.Context, runID int64) error {
	cur, err := c.Store.RunForRegression(ctx, runID)
	if err != nil {
		return err
	}
	if cur.State != "completed" || cur.Summary == nil {
		return c.Store.ReplaceRegressions(ctx, runID, nil)
	}
	prev, ok, err := c.Store.PreviousTargetRun(ctx, runID)
	if err != nil {
		return err
	}
	if !ok {
		return c.Store.ReplaceRegressions(ctx, runID, nil)
	}
	ids := []int64{cur.ID, prev.ID}
	scores, err := c.Store.RunItemScores(ctx, ids)
	if err != nil {
		return err
	}
	e2e, err := c.Store.E2EP95Intervals(ctx, ids)
	if err != nil {
		return err
	}
	return c.Store.ReplaceRegressions(ctx, runID, Find(cur, prev, scores, e2e))
}

// Find compares cur with prev, the previous completed run of its target,
// and returns how cur is significantly worse (nil when it is not).
// scores are the runs' scored items, e2e their p95 latency intervals.
func Find(cur, prev store.CompareRun, scores map[int64][]store.ItemScore, e2e map[int64]store.QuantileInterval) []store.Regression {
	var out []store.Regression
	if cur.Scorer != "" && cur.Scorer == prev.Scorer {
		if d, ok := advise.PairRuns(cur.ID, prev.ID, itemScores(scores[cur.ID]), itemScores(scores[prev.ID])); ok && d.Significant() && d.Mean < 0 {
			p := d.P
			out = append(out, store.Regression{Metric: store.RegressionQuality, AgainstRunID: prev.ID, Delta: d.Mean, PValue: &p,
				Detail: fmt.Sprintf("quality %s: paired comparison with run %d on %d items (%s): mean difference %+.3f, 95 %% interval [%+.3f, %+.3f], p = %.3g",
					cur.Scorer, prev.ID, d.N, d.TestName(), d.Mean, d.Lo, d.Hi, d.P)})
		}
	}
	a, b := candidate(cur, e2e), candidate(prev, e2e)
	if m := advise.Compare(a, b, advise.Latency, advise.Evidence{}); m.Measured && m.Better < 0 && !m.Tie {
		out = append(out, store.Regression{Metric: store.RegressionLatency, AgainstRunID: prev.ID, Delta: m.A - m.B,
			Detail: fmt.Sprintf("p95 end-to-end latency %.0f ms against run %d's %.0f ms (%+.1f %%): %s", m.A, prev.ID, m.B, -m.Pct, m.Basis)})
	}
	if m := advise.Compare(a, b, advise.Speed, advise.Evidence{}); m.Measured && m.Better < 0 && !m.Tie {
		out = append(out, store.Regression{Metric: store.RegressionThroughput, AgainstRunID: prev.ID, Delta: m.A - m.B,
			Detail: fmt.Sprintf("%.1f output tokens/s against run %d's %.1f (%+.1f %%): %s", m.A, prev.ID, m.B, m.Pct, m.Basis)})
	}
	return out
}

// candidate is a run's speed and latency figures as advise compares them;
// a figure the run did not measure stays nil.
func candidate(r store.CompareRun, e2e map[int64]store.QuantileInterval) advise.Candidate {
	c := advise.Candidate{RunID: r.ID, Model: r.ModelName, Runtime: r.Runtime, Hardware: r.HardwareProfile}
	var s jobs.RunSummary
	if r.Summary == nil || json.Unmarshal(r.Summary, &s) != nil {
		return c
	}
	if tps := s.OutputTokensPerS; tps > 0 && !math.IsInf(tps, 0) && !math.IsNaN(tps) {
		c.TokensPS = &tps
	}
	if p95 := s.E2E.P95; p95 > 0 && !math.IsInf(p95, 0) && !math.IsNaN(p95) {
		c.E2Ep95 = &p95
		if q, ok := e2e[r.ID]; ok {
			lo, hi := q.Lo, q.Hi
			c.E2Ep95Lo, c.E2Ep95Hi = &lo, &hi
		}
	}
	return c
}

func itemScores(xs []store.ItemScore) []advise.ItemScore {
	out := make([]advise.ItemScore, len(xs))
	for i, x := range xs {
		out[i] = advise.ItemScore{Idx: x.Idx, Score: x.Score}
	}
	return out
}
