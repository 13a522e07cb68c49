package handlers

import (
	"context"
	"encoding/json"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// lengthSweepStore reads what a runtime's /metrics said during each step
// of a run (docs/metrics.md#length-sweeps).
type lengthSweepStore interface {
	RunStepStates(ctx context.Context, runID int64) (map[string]jobs.RuntimeState, error)
}

// withRuntimeStates gives a sweep's stored summary the runtime's state at
// each step and where it began to queue and to preempt. The
// agent that summarised the run cannot read the runtime's readings (its
// role sees only their times), so the server reads them when the run is
// shown. Other summaries are left as they are, with no read.
func withRuntimeStates(ctx context.Context, st lengthSweepStore, runID int64, sum *jobs.RunSummary) error {
	if sum == nil || len(sum.Steps) == 0 {
		return nil
	}
	states, err := st.RunStepStates(ctx, runID)
	if err != nil {
		return err
	}
	sum.SetRuntimeStates(states)
	return nil
}

// runFiguresWithRuntimeStates is withRuntimeStates over stored figures:
// each sweep's summary is written back with its runtime's states.
func runFiguresWithRuntimeStates(ctx context.Context, st lengthSweepStore, runs []store.RunFigures) error {
	for i, r := range runs {
		var sum jobs.RunSummary
		if r.Summary == nil || json.Unmarshal(r.Summary, &sum) != nil || len(sum.Steps) == 0 {
			continue
		}
		if err := withRuntimeStates(ctx, st, r.ID, &sum); err != nil {
			return err
		}
		b, err := json.Marshal(sum)
		if err != nil {
			return err
		}
		runs[i].Summary = b
	}
	return nil
}
