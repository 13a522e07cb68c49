package summary

import (
	"math"
	"testing"
)

// A step's label comes from an agent: a constant-rate step's offered rate
// is read from it, and any other label, or a rate that is not a positive
// finite number, offers none.
func TestOfferedRate(t *testing.T) {
	t.Parallel()
	for label, want := range map[string]float64{"rate 2.50/s": 2.5, "rate 3/s": 3, "rate 0.01/s": 0.01, "rate 4": 4,
		"max": 0, "sequential": 0, "": 0, "rate 0.00/s": 0, "rate -1/s": 0, "rate Inf/s": 0, "rate NaN/s": 0, "rate x/s": 0, "input 64": 0} {
		got := offeredRate(label)
		if (got == nil) != (want == 0) || got != nil && *got != want {
			t.Errorf("offeredRate(%q) = %v, want %v", label, got, want)
		}
	}
}

func FuzzOfferedRate(f *testing.F) {
	for _, s := range []string{"rate 2.50/s", "rate 1e308/s", "rate NaN/s", "rate -0/s", "max", "rate 0x1p-3/s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, label string) {
		if r := offeredRate(label); r != nil && (!(*r > 0) || math.IsInf(*r, 0) || math.IsNaN(*r)) {
			t.Fatalf("offeredRate(%q) = %v: not a positive finite rate", label, *r)
		}
	})
}
