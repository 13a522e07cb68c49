package sim

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestDriftLevelsMoveBetweenPeriods checks --sim-drift: one level within a
// period, a new one in the next, the same levels from the same seed, and
// ln level spread as the σ asked (docs/simulated-runtime.md#drift).
func TestDriftLevelsMoveBetweenPeriods(t *testing.T) {
	t.Parallel()
	steady := NewServer(Config{}, nil)
	if got := steady.driftAt(time.Now().Add(time.Hour)); got != 1 {
		t.Fatalf("no drift: level %v, want 1", got)
	}
	cfg := Config{Drift: 0.05, DriftPeriod: time.Second, Seed: 7}
	if err := (&Config{Drift: 1.5}).Validate(); err == nil || !strings.Contains(err.Error(), "--sim-drift") {
		t.Fatalf("--sim-drift 1.5: %v, want an error naming the flag", err)
	}
	a, b := NewServer(cfg, nil), NewServer(cfg, nil)
	if x, y := a.driftAt(a.t0.Add(200*time.Millisecond)), a.driftAt(a.t0.Add(900*time.Millisecond)); x != y {
		t.Fatalf("within one period: %v then %v", x, y)
	}
	var sum, sum2 float64
	const periods = 4000
	moved := 0
	for k := range periods {
		at := time.Duration(k)*time.Second + time.Millisecond
		x := math.Log(a.driftAt(a.t0.Add(at)))
		if y := math.Log(b.driftAt(b.t0.Add(at))); x != y {
			t.Fatalf("period %d: %v and %v from one seed", k, x, y)
		}
		if k > 0 && x != math.Log(a.driftAt(a.t0.Add(at-time.Second))) {
			moved++
		}
		sum, sum2 = sum+x, sum2+x*x
	}
	sd := math.Sqrt(sum2/periods - (sum/periods)*(sum/periods))
	if math.Abs(sd-0.05) > 0.004 || moved < periods-2 {
		t.Fatalf("ln level sd %.4f (want 0.05 ± 0.004), moved in %d of %d periods", sd, moved, periods-1)
	}
}
