package stats

import (
	"math"
	"slices"
	"testing"
	"time"
)

// near compares with a relative tolerance: the expected values below are
// worked out by hand and may differ from float64 arithmetic in the last
// bits (as numpy's own results may).
func near(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	if math.IsInf(want, 0) {
		return got == want
	}
	return math.Abs(got-want) <= 1e-9*max(1, math.Abs(want))
}

func seq(from, to float64) []float64 {
	var s []float64
	for v := from; v <= to; v++ {
		s = append(s, v)
	}
	return s
}

func TestPercentileMatchesNumpyLinear(t *testing.T) {
	t.Parallel()
	// Every expected value is what numpy.percentile(x, 100*p) (default
	// method="linear") returns, derived by hand: rank h = (n−1)·p,
	// result x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]).
	inf := math.Inf(1)
	for _, c := range []struct {
		name string
		x    []float64
		p    float64
		want float64
	}{
		{"n=4 p50", []float64{1, 2, 3, 4}, 0.50, 2.5},                   // h=1.5: 2+0.5·1
		{"n=4 p90", []float64{1, 2, 3, 4}, 0.90, 3.7},                   // h=2.7: 3+0.7·1
		{"n=4 p95", []float64{1, 2, 3, 4}, 0.95, 3.85},                  // h=2.85
		{"n=4 p99", []float64{1, 2, 3, 4}, 0.99, 3.97},                  // h=2.97
		{"n=5 p25 exact rank", []float64{15, 20, 35, 40, 50}, 0.25, 20}, // h=1
		{"n=5 p40", []float64{15, 20, 35, 40, 50}, 0.40, 29},            // h=1.6: 20+0.6·15
		{"n=5 p50", []float64{15, 20, 35, 40, 50}, 0.50, 35},            // h=2
		{"n=5 p90", []float64{15, 20, 35, 40, 50}, 0.90, 46},            // h=3.6: 40+0.6·10
		{"n=5 p95", []float64{15, 20, 35, 40, 50}, 0.95, 48},            // h=3.8: 40+0.8·10
		{"n=5 p99", []float64{15, 20, 35, 40, 50}, 0.99, 49.6},          // h=3.96: 40+0.96·10
		{"1..100 p50", seq(1, 100), 0.50, 50.5},                         // h=49.5: 50+0.5
		{"1..100 p90", seq(1, 100), 0.90, 90.1},                         // h=89.1: 90+0.1
		{"1..100 p95", seq(1, 100), 0.95, 95.05},                        // h=94.05: 95+0.05
		{"1..100 p99", seq(1, 100), 0.99, 99.01},                        // h=98.01: 99+0.01
		{"two values p90", []float64{100, 300}, 0.90, 280},              // h=0.9: 100+0.9·200
		{"negative values p50", []float64{-5, -1, 0, 2}, 0.50, -0.5},    // h=1.5: −1+0.5·1
		{"negative values p90", []float64{-5, -1, 0, 2}, 0.90, 1.4},     // h=2.7: 0+0.7·2
		{"ties p95", []float64{2, 2, 2, 8}, 0.95, 7.1},                  // h=2.85: 2+0.85·6
		{"ties inside p50", []float64{2, 2, 2, 8}, 0.50, 2},             // h=1.5 between equal values
		{"one value", []float64{10}, 0.99, 10},
		{"p0 is the minimum", []float64{1, 2, 3}, 0, 1},
		{"p1 is the maximum", []float64{1, 2, 3}, 1, 3},
		{"p below 0 clamps", []float64{1, 2, 3}, -0.5, 1},
		{"p above 1 clamps", []float64{1, 2, 3}, 7, 3},
		{"no values", nil, 0.5, 0},
		{"NaN p", []float64{1, 2}, math.NaN(), math.NaN()},
		{"infinite top, exact rank below", []float64{1, 2, inf}, 0.5, 2}, // h=1: no 0·∞
		{"infinite top, between", []float64{1, 2, inf}, 0.75, inf},       // h=1.5: 2+0.5·∞
		{"two infinities", []float64{1, inf, inf}, 0.75, inf},            // h=1.5: no ∞−∞
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Percentile(c.x, c.p); !near(got, c.want) {
				t.Errorf("Percentile(%v, %v) = %v, want %v", c.x, c.p, got, c.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		x    []float64
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"only NaN", []float64{math.NaN()}, Summary{}},
		{"one value", []float64{7}, Summary{N: 1, Mean: 7, Min: 7, Max: 7, P50: 7, P90: 7, P95: 7, P99: 7}},
		// Unsorted input: sorted [1 2 3]; h = 2p: p90 h=1.8 → 2.8, p95 h=1.9
		// → 2.9, p99 h=1.98 → 2.98.
		{"unsorted", []float64{3, 1, 2}, Summary{N: 3, Mean: 2, Min: 1, Max: 3, P50: 2, P90: 2.8, P95: 2.9, P99: 2.98}},
		// Mean (15+20+35+40+50)/5 = 32; percentiles as in the table above.
		{"classic five", []float64{50, 15, 40, 20, 35}, Summary{N: 5, Mean: 32, Min: 15, Max: 50, P50: 35, P90: 46, P95: 48, P99: 49.6}},
		// 1..100 reversed: mean 50.5.
		{"hundred reversed", func() []float64 { s := seq(1, 100); slices.Reverse(s); return s }(),
			Summary{N: 100, Mean: 50.5, Min: 1, Max: 100, P50: 50.5, P90: 90.1, P95: 95.05, P99: 99.01}},
		// NaN is left out: the sample is [1 2 3 4].
		{"NaN left out", []float64{4, math.NaN(), 1, 3, 2}, Summary{N: 4, Mean: 2.5, Min: 1, Max: 4, P50: 2.5, P90: 3.7, P95: 3.85, P99: 3.97}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Summarize(c.x)
			ok := got.N == c.want.N
			for _, pair := range [][2]float64{{got.Mean, c.want.Mean}, {got.Min, c.want.Min}, {got.Max, c.want.Max},
				{got.P50, c.want.P50}, {got.P90, c.want.P90}, {got.P95, c.want.P95}, {got.P99, c.want.P99}} {
				ok = ok && near(pair[0], pair[1])
			}
			if !ok {
				t.Errorf("Summarize(%v) = %+v, want %+v", c.x, got, c.want)
			}
		})
	}
}

func TestSummarizeLeavesItsArgumentAlone(t *testing.T) {
	t.Parallel()
	x := []float64{4, 1, 3, 2}
	Summarize(x)
	if !slices.Equal(x, []float64{4, 1, 3, 2}) {
		t.Fatalf("Summarize reordered its argument: %v", x)
	}
}

func TestMean(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		x    []float64
		want float64
	}{
		{nil, 0},
		{[]float64{2}, 2},
		{[]float64{1, 2, 3, 4}, 2.5},
		{[]float64{-1, 1}, 0},
		{[]float64{0.1, 0.2, 0.3}, 0.2},
	} {
		if got := Mean(c.x); !near(got, c.want) {
			t.Errorf("Mean(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

func TestSummarizeDurations(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	// [10 20 30 40] ms: mean 25; p50 h=1.5 → 25; p90 h=2.7 → 37; p95 h=2.85
	// → 38.5; p99 h=2.97 → 39.7 ms.
	got := SummarizeDurations([]time.Duration{40 * ms, 10 * ms, 30 * ms, 20 * ms})
	want := DurationSummary{N: 4, Mean: 25 * ms, Min: 10 * ms, Max: 40 * ms, P50: 25 * ms, P90: 37 * ms,
		P95: 38500 * time.Microsecond, P99: 39700 * time.Microsecond}
	if got != want {
		t.Errorf("SummarizeDurations = %+v, want %+v", got, want)
	}
	// Fractional nanoseconds are truncated: [1 2] ns p90 = 1.9 ns → 1 ns.
	if got := SummarizeDurations([]time.Duration{1, 2}); got.P90 != 1 || got.Mean != 1 {
		t.Errorf("fractional nanoseconds: %+v", got)
	}
	if (SummarizeDurations(nil) != DurationSummary{}) {
		t.Error("no durations give a non-zero summary")
	}
}

func TestMilliseconds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d    time.Duration
		want float64
	}{
		{0, 0},
		{time.Millisecond, 1},
		{1500 * time.Microsecond, 1.5},
		{2 * time.Second, 2000},
		{time.Nanosecond, 1e-6},
	} {
		if got := Milliseconds(c.d); !near(got, c.want) {
			t.Errorf("Milliseconds(%v) = %v, want %v", c.d, got, c.want)
		}
	}
}

// FuzzPercentile checks properties that hold for any sample: the result
// lies between the extremes and grows with p.
func FuzzPercentile(f *testing.F) {
	f.Add(1.0, 2.0, 3.0, 0.5)
	f.Add(-1e300, 0.0, 1e300, 0.99)
	f.Add(5.0, 5.0, 5.0, 0.1)
	f.Fuzz(func(t *testing.T, a, b, c, p float64) {
		x := []float64{a, b, c}
		for _, v := range append(x, p) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Skip()
			}
		}
		slices.Sort(x)
		got := Percentile(x, p)
		if got < x[0] || got > x[2] {
			t.Fatalf("Percentile(%v, %v) = %v, outside the sample", x, p, got)
		}
		if q := min(max(p, 0), 1) + 0.01; q <= 1 && Percentile(x, q) < got-1e-9*math.Abs(got) {
			t.Fatalf("Percentile(%v, %v) = %v > Percentile at %v = %v", x, p, got, q, Percentile(x, q))
		}
	})
}

func TestSummarizeRepeated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		rs   []Repeated
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"only empty entries", []Repeated{{Value: 3, Count: 0}, {Value: math.NaN(), Count: 2}, {Value: 1, Count: -4}}, Summary{}},
		// Written out: [10 20 20 20 40], unsorted in the input. Mean 110/5
		// = 22; h = 4p: p50 h=2 → 20; p90 h=3.6 → 20+0.6·20 = 32; p95 h=3.8
		// → 36; p99 h=3.96 → 39.2.
		{"small", []Repeated{{40, 1}, {20, 3}, {10, 1}}, Summary{N: 5, Mean: 22, Min: 10, Max: 40, P50: 20, P90: 32, P95: 36, P99: 39.2}},
		// Written out: 1 000 000 copies of 1 then one 1001: mean
		// 1 001 001/1 000 001 ≈ 1.001,
		// max 1001; p99 (h = 999 999·0.99 < 999 999) is within the ones.
		{"a huge count", []Repeated{{1001, 1}, {1, 1_000_000}},
			Summary{N: 1_000_001, Mean: 1_001_001.0 / 1_000_001, Min: 1, Max: 1001, P50: 1, P90: 1, P95: 1, P99: 1}},
		// Written out: [5 5 7]: h=2p: p50 h=1 → 5; p90 h=1.8 → 5+0.8·2.
		{"NaN entry left out", []Repeated{{7, 1}, {math.NaN(), 9}, {5, 2}}, Summary{N: 3, Mean: 17.0 / 3, Min: 5, Max: 7, P50: 5, P90: 6.6, P95: 6.8, P99: 6.96}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := SummarizeRepeated(c.rs)
			ok := got.N == c.want.N
			for _, pair := range [][2]float64{{got.Mean, c.want.Mean}, {got.Min, c.want.Min}, {got.Max, c.want.Max},
				{got.P50, c.want.P50}, {got.P90, c.want.P90}, {got.P95, c.want.P95}, {got.P99, c.want.P99}} {
				ok = ok && near(pair[0], pair[1])
			}
			if !ok {
				t.Errorf("SummarizeRepeated(%v) = %+v, want %+v", c.rs, got, c.want)
			}
		})
	}
}

// FuzzSummarizeRepeated: the same summary as the sample written out.
func FuzzSummarizeRepeated(f *testing.F) {
	f.Add(1.0, uint8(1), 2.0, uint8(3), 0.5, uint8(2))
	f.Add(-3.0, uint8(0), 2.0, uint8(9), 2.0, uint8(1))
	f.Fuzz(func(t *testing.T, a float64, ka uint8, b float64, kb uint8, c float64, kc uint8) {
		rs := []Repeated{{a, int(ka % 20)}, {b, int(kb % 20)}, {c, int(kc % 20)}}
		var out []float64
		for _, r := range rs {
			if math.IsInf(r.Value, 0) || math.Abs(r.Value) > 1e300 {
				t.Skip()
			}
			for range r.Count {
				out = append(out, r.Value)
			}
		}
		got, want := SummarizeRepeated(rs), Summarize(out)
		if got.N != want.N || got.Min != want.Min || got.Max != want.Max || got.P50 != want.P50 || got.P90 != want.P90 ||
			got.P95 != want.P95 || got.P99 != want.P99 || !near(got.Mean, want.Mean) && math.Abs(got.Mean-want.Mean) > 1e-9*math.Abs(want.Max) {
			t.Fatalf("SummarizeRepeated(%v) = %+v, written out %+v", rs, got, want)
		}
	})
}
