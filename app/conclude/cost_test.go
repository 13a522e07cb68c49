package conclude

import (
	"math"
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// A remote provider's run is costed from its token prices, as the fleet
// report prices it, whatever its agent machine's hourly price; others
// from their hardware's hourly price over their speed.
func TestRunCostPer1M(t *testing.T) {
	hourly := 3.6
	s := jobs.RunSummary{OutputTokensPerS: 100}
	r := store.RunFigures{PricePerHour: &hourly}
	r.OutputTokens = 1000
	if c, byToken, ok := CostPer1M(r, s); !ok || byToken || math.Abs(c-10) > 1e-9 {
		t.Errorf("hourly: %g %v %v, want $10 per 1M (3.6 ÷ (100 × 3600) × 10⁶)", c, byToken, ok)
	}
	r.TokenPrice, r.PromptTokens = &store.ProviderPrice{Provider: "anthropic", InputPer1M: 0.25, OutputPer1M: 1.25}, 4000
	// (4000 × 0.25 + 1000 × 1.25) ÷ 1000 = 2.25 USD per 1M output tokens.
	if c, byToken, ok := CostPer1M(r, s); !ok || !byToken || math.Abs(c-2.25) > 1e-9 {
		t.Errorf("by the token: %g %v %v, want 2.25", c, byToken, ok)
	}
	r.OutputTokens = 0
	if _, _, ok := CostPer1M(r, s); ok {
		t.Error("a run that generated nothing has a cost per output token")
	}
}

// A replica with tensor parallelism k on a profile of G GPUs pays k ÷ G
// of the profile's price; without the setting it pays the whole profile
// (docs/benchmarks.md#tensor-parallelism-and-price).
func TestTensorParallelIsPricedByItsGPUs(t *testing.T) {
	hourly := 8.0
	s := jobs.RunSummary{OutputTokensPerS: 100}
	for _, c := range []struct {
		engine jobs.Engine
		gpus   int
		want   float64 // per hour
	}{
		{nil, 8, 8},
		{jobs.Engine{"max_num_seqs": "16"}, 8, 8},
		{jobs.Engine{"tensor_parallel_size": "1"}, 8, 1},
		{jobs.Engine{"tensor_parallel_size": "2"}, 8, 2},
		{jobs.Engine{"tp": "4"}, 8, 4},
		{jobs.Engine{"tensor_parallel_size": "8"}, 8, 8},
		{jobs.Engine{"tensor_parallel_size": "16"}, 8, 8},
		{jobs.Engine{"tensor_parallel_size": "2"}, 0, 8},
	} {
		r := store.RunFigures{PricePerHour: &hourly, GPUCount: c.gpus}
		r.Engine, r.OutputTokens = c.engine, 1000
		if p := PricePerHour(r); p == nil || math.Abs(*p-c.want) > 1e-12 {
			t.Errorf("%v on %d GPUs: %v per hour, want %g", c.engine, c.gpus, p, c.want)
		}
		cost, _, ok := CostPer1M(r, s)
		if want := c.want / (100 * 3600) * 1e6; !ok || math.Abs(cost-want) > 1e-9 {
			t.Errorf("%v on %d GPUs: cost %g per 1M, want %g", c.engine, c.gpus, cost, want)
		}
	}
}
