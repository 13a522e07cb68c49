package fleet

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// A run on one GPU of an 8-GPU profile at $16 an hour (tensor parallelism
// 1) costs its replica's $2 an hour in the fleet report's total, the price
// its cost per 1M output tokens rests on, not the whole profile's $16
// (docs/benchmarks.md#tensor-parallelism-and-price).
func TestFleetRowCostsTheRunsReplica(t *testing.T) {
	t.Parallel()
	sum, err := json.Marshal(jobs.RunSummary{OK: 100, MeasuredSeconds: 360, OutputTokensPerS: 50, RequestsPerS: 1})
	if err != nil {
		t.Fatal(err)
	}
	price := 16.0
	run := store.FleetRun{RunFigures: store.RunFigures{PricePerHour: &price, GPUCount: 8, Summary: sum}}
	run.State = "completed"
	run.Engine = jobs.Engine{"tensor_parallel_size": "1"}
	row := buildRow(run, store.FleetRunResults{Succeeded: 100, OutputTokens: 18000})
	// $2 an hour × 360 s = $0.20.
	if row.Cost == nil || math.Abs(*row.Cost-0.2) > 1e-9 {
		t.Errorf("cost %v, want $0.20 (the replica's $2/h for 360 s)", costOf(row.Cost))
	}
	if p := conclude.PricePerHour(run.RunFigures); p == nil || *p != 2 {
		t.Errorf("replica price %v, want $2/h", costOf(p))
	}
	// The same run on the whole profile (no tensor parallelism set) pays it all.
	run.Engine = nil
	if row := buildRow(run, store.FleetRunResults{Succeeded: 100}); row.Cost == nil || math.Abs(*row.Cost-1.6) > 1e-9 {
		t.Errorf("whole profile: cost %v, want $1.60", costOf(row.Cost))
	}
}

func costOf(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
