package store

import (
	"math"
	"testing"

	"github.com/ruckus/ruckus/jobs"
)

// A remote provider's run is costed from its token prices, as the fleet
// report prices it, whatever its agent machine's hourly price; others
// from their hardware's hourly price over their speed.
func TestRunCostPer1M(t *testing.T) {
	hourly := 3.6
	s := jobs.RunSummary{OutputTokensPerS: 100}
	r := RunFigures{PricePerHour: &hourly}
	r.OutputTokens = 1000
	if c, byToken, ok := r.CostPer1M(s); !ok || byToken || math.Abs(c-10) > 1e-9 {
		t.Errorf("hourly: %g %v %v, want $10 per 1M (3.6 ÷ (100 × 3600) × 10⁶)", c, byToken, ok)
	}
	r.TokenPrice, r.PromptTokens = &ProviderPrice{Provider: "anthropic", InputPer1M: 0.25, OutputPer1M: 1.25}, 4000
	// (4000 × 0.25 + 1000 × 1.25) ÷ 1000 = 2.25 USD per 1M output tokens.
	if c, byToken, ok := r.CostPer1M(s); !ok || !byToken || math.Abs(c-2.25) > 1e-9 {
		t.Errorf("by the token: %g %v %v, want 2.25", c, byToken, ok)
	}
	r.OutputTokens = 0
	if _, _, ok := r.CostPer1M(s); ok {
		t.Error("a run that generated nothing has a cost per output token")
	}
}

// A run's few-shot part of its keys names drawn examples by k and seed and
// a fixed set by its name; BaseScorerKey takes either off.
func TestFewShotKeyNamesTheExemplars(t *testing.T) {
	for _, c := range []struct {
		k         int
		seed      int64
		exemplars string
		want      string
	}{{0, 0, "", ""}, {5, 1234, "", " 5-shot seed=1234"}, {8, 0, "gsm8k-cot", " 8-shot gsm8k-cot"}} {
		got := FewShotKey(c.k, c.seed, c.exemplars)
		if got != c.want {
			t.Errorf("FewShotKey(%d, %d, %q) = %q, want %q", c.k, c.seed, c.exemplars, got, c.want)
		}
		if base := BaseScorerKey("numeric" + got); base != "numeric" {
			t.Errorf("BaseScorerKey(%q) = %q", "numeric"+got, base)
		}
	}
}
