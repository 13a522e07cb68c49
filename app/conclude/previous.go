package conclude

import (
	"context"

	"github.com/ruckus/ruckus/app/store"
)

// PreviousRuns is how many of a target's earlier runs a regression check
// reads to find the previous comparable one: a target rarely changes its
// load more often than that between two runs of one load.
const PreviousRuns = 20

// PreviousSource reads a run's target's earlier runs (*store.Store).
type PreviousSource interface {
	PreviousTargetRuns(ctx context.Context, runID int64, limit int) ([]store.RunFigures, error)
}

// PreviousComparableRun is the run a regression of cur is drawn against:
// the newest of its target's earlier runs (store.PreviousTargetRuns) that
// is comparable with it (PreviousComparable); ok is false when there is
// none.
func PreviousComparableRun(ctx context.Context, src PreviousSource, cur store.RunFigures) (store.RunFigures, bool, error) {
	prevs, err := src.PreviousTargetRuns(ctx, cur.ID, PreviousRuns)
	if err != nil {
		return store.RunFigures{}, false, err
	}
	prev, ok := PreviousComparable(cur, prevs)
	return prev, ok, nil
}

// PreviousComparable is the first of prevs (newest first) measured under
// a load identity comparable with cur's, as every speed and latency
// conclusion compares loads (jobs.LoadIdentity.Differences: the same
// profile, sampling, dataset and prompts, measured lengths within
// jobs.LengthRatio); false when none is, or cur has no kept figures.
func PreviousComparable(cur store.RunFigures, prevs []store.RunFigures) (store.RunFigures, bool) {
	if cur.Stat == nil {
		return store.RunFigures{}, false
	}
	for _, p := range prevs {
		if p.Stat != nil && len(cur.Stat.Load.Differences(p.Stat.Load)) == 0 {
			return p, true
		}
	}
	return store.RunFigures{}, false
}
