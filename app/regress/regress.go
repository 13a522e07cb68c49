// Package regress keeps the regression flags of runs: the conclusions
// engine decides them (conclude.Regressions, docs/verdict.md#regression-flags)
// — a target of a benchmark, its repeats merged as the verdict merges
// them, against the same target in the previous benchmark that measured
// it under a comparable load, by the test every conclusion uses and the
// Benjamini–Hochberg procedure over the metrics checked at once — and
// this package stores them on each of the target's runs. The check runs
// when a run is scored (the score_run job), so lists and the leaderboard
// read the flags without reading every result again.
package regress

import (
	"context"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Store is what the check reads and writes (*store.Store satisfies it).
type Store interface {
	conclude.RegressionSource
	ReplaceRegressions(ctx context.Context, runID int64, regs []store.Regression) error
	RunsFlaggedAgainst(ctx context.Context, runIDs []int64) ([]int64, error)
}

// Checker checks runs for regressions and stores what it finds.
type Checker struct {
	Store Store
}

var _ jobs.RegressionChecker = (*Checker)(nil)

// CheckRegressions decides the flags of run runID's target in its
// benchmark (conclude.Regressions) and stores them on each of the
// target's runs. A rescored run may be what later runs were flagged
// against: those are decided again, against it as it is scored now.
func (c *Checker) CheckRegressions(ctx context.Context, runID int64) error {
	decided, err := c.store(ctx, runID)
	if err != nil {
		return err
	}
	later, err := c.Store.RunsFlaggedAgainst(ctx, decided)
	if err != nil {
		return err
	}
	for _, id := range later {
		if _, err := c.store(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// store decides run runID's target and stores its flags, returning the
// runs it decided.
func (c *Checker) store(ctx context.Context, runID int64) ([]int64, error) {
	targets, err := conclude.Regressions(ctx, c.Store, runID)
	if err != nil {
		return nil, err
	}
	var decided []int64
	for _, t := range targets {
		for _, id := range t.Runs {
			if err := c.Store.ReplaceRegressions(ctx, id, t.Found); err != nil {
				return nil, err
			}
			decided = append(decided, id)
		}
	}
	return decided, nil
}

// Find compares cur with prev, the previous comparable completed run of
// its target, each run alone, and returns how cur is significantly worse
// (conclude.Regressed; nil when it is not); ev holds their paired
// comparison of quality, if any. It weighs the two runs without their
// deployments' between-run spread, which CheckRegressions reads
// (conclude.WithDrift).
func Find(cur, prev store.RunFigures, ev conclude.Evidence) []store.Regression {
	pair := []store.RunFigures{cur, prev}
	key := conclude.SharedScorer(pair)
	cs := conclude.Under(pair, key)
	return conclude.Regressed(cs[0], cs[1], key, ev)
}
