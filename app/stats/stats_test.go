package stats

import (
	"math"
	"testing"
)

func TestPercentileMatchesNumpyLinear(t *testing.T) {
	// Expected values are numpy.percentile(x, q) with the default
	// method="linear": rank (n-1)*q/100, interpolated.
	for _, c := range []struct {
		x    []float64
		p    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, 0.5, 2.5},       // rank 1.5
		{[]float64{1, 2, 3, 4}, 0.95, 3.85},     // rank 2.85
		{[]float64{1, 2, 3, 4}, 0.99, 3.97},     // rank 2.97
		{[]float64{10}, 0.99, 10},               // one value
		{[]float64{100, 300}, 0.9, 280},         // rank 0.9
		{[]float64{0, 10, 20, 30, 40}, 0.9, 36}, // rank 3.6
		{[]float64{1, 2, 3}, 0, 1},
		{[]float64{1, 2, 3}, 1, 3},
		{nil, 0.5, 0},
	} {
		if got := Percentile(c.x, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Percentile(%v, %v) = %v, want %v", c.x, c.p, got, c.want)
		}
	}
}

func TestSummarizeSortsACopy(t *testing.T) {
	x := []float64{4, 1, 3, 2}
	s := Summarize(x)
	if s.N != 4 || s.Mean != 2.5 || s.Min != 1 || s.Max != 4 || s.P50 != 2.5 || math.Abs(s.P95-3.85) > 1e-12 {
		t.Fatalf("summary %+v", s)
	}
	if x[0] != 4 {
		t.Fatal("Summarize sorted its argument")
	}
	if (Summarize(nil) != Summary{}) {
		t.Fatal("empty summary is not zero")
	}
}
