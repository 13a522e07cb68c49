package charts

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func labels(s Scale) []string {
	out := make([]string, len(s.Ticks))
	for i, v := range s.Ticks {
		out[i] = s.Label(v)
	}
	return out
}

// distinct says whether no two labels are alike (an axis reading "1.9,
// 1.9, 1.9" tells nothing).
func distinct(ls []string) bool {
	c := slices.Clone(ls)
	slices.Sort(c)
	return len(slices.Compact(c)) == len(ls)
}

func TestNiceScale(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		lo, hi     float64
		zero       bool
		min, max   float64
		wantLabels string
	}{
		{"ordinary, from zero", 3, 87, true, 0, 100, "0,20,40,60,80,100"},
		{"ordinary, data range", 13, 87, false, 0, 100, "0,20,40,60,80,100"},
		{"equal values", 1.9, 1.9, false, 1.8, 2, "1.80,1.85,1.90,1.95,2.00"},
		{"equal values from zero", 1.9, 1.9, true, 0, 2, "0.0,0.5,1.0,1.5,2.0"},
		{"near-equal values", 1.900, 1.912, false, 1.895, 1.915, "1.895,1.900,1.905,1.910,1.915"},
		{"all zero", 0, 0, true, 0, 1, "0.0,0.2,0.4,0.6,0.8,1.0"},
		{"tiny", 1e-6, 3e-6, false, 0.5e-6, 3.5e-6, "0.0000005,0.0000010,0.0000015,0.0000020,0.0000025,0.0000030,0.0000035"},
		{"huge", 1e9, 5e9, true, 0, 6e9, "0G,2G,4G,6G"},
		{"thousands", 12000, 48000, false, 10000, 50000, "10k,20k,30k,40k,50k"},
		{"negative", -5, 3, false, -6, 4, "-6,-4,-2,0,2,4"},
		{"negative from zero", -40, -10, true, -50, 0, "-50,-40,-30,-20,-10,0"},
		{"equal negative values from zero", -3, -3, true, -4, 0, "-4,-3,-2,-1,0"},
		{"reversed", 87, 3, true, 0, 100, "0,20,40,60,80,100"},
	} {
		s := NiceScale(c.lo, c.hi, c.zero)
		got := strings.Join(labels(s), ",")
		if math.Abs(s.Min-c.min) > 1e-12*math.Max(1, math.Abs(c.min)) || math.Abs(s.Max-c.max) > 1e-12*math.Max(1, math.Abs(c.max)) || got != c.wantLabels {
			t.Errorf("%s: [%v, %v] %s; want [%v, %v] %s", c.name, s.Min, s.Max, got, c.min, c.max, c.wantLabels)
		}
		if s.Min > math.Min(c.lo, c.hi) || s.Max < math.Max(c.lo, c.hi) {
			t.Errorf("%s: domain [%v, %v] leaves out the data", c.name, s.Min, s.Max)
		}
		if !distinct(labels(s)) || len(s.Ticks) < 2 || len(s.Ticks) > 11 {
			t.Errorf("%s: labels %v", c.name, labels(s))
		}
		if c.zero && (s.Min > 0 || s.Max < 0) {
			t.Errorf("%s: zero left out of [%v, %v]", c.name, s.Min, s.Max)
		}
	}
	if s := NiceScale(math.NaN(), math.Inf(1), false); s.Min != 0 || s.Max != 1 || len(s.Ticks) != 6 {
		t.Errorf("NaN/Inf: %+v", s)
	}
}

func TestNiceStep(t *testing.T) {
	t.Parallel()
	for in, want := range map[float64]float64{0.13: 0.2, 1: 1, 1.01: 2, 3: 5, 7: 10, 120: 200, 0: 1} {
		if got := niceStep(in); math.Abs(got-want) > 1e-12 {
			t.Errorf("niceStep(%v) = %v, want %v", in, got, want)
		}
	}
}

// Two runs whose cost differs by 0.6 % still get axis labels that tell
// them apart, and every line series of a few gets a direct label.
func TestChartAxesAndDirectLabels(t *testing.T) {
	t.Parallel()
	c := Chart{Series: []Series{
		{Name: "a", Points: []Point{{X: 1.900, Y: 0.61}, {X: 1.9114, Y: 0.62}}},
		{Name: "b", Points: []Point{{X: 1.900, Y: 0.30}, {X: 1.9114, Y: 0.31}}},
	}}
	var xs []string
	for _, tk := range c.XTicks() {
		xs = append(xs, tk.Label)
	}
	if !distinct(xs) || len(xs) < 3 {
		t.Errorf("x labels %v", xs)
	}
	for _, s := range c.Series {
		if _, _, ok := c.DirectLabel(s); !ok {
			t.Errorf("series %s has no direct label", s.Name)
		}
	}
	nine := Chart{}
	for range 9 {
		nine.Series = append(nine.Series, Series{Name: "s", Points: []Point{{X: 1, Y: 1}}})
	}
	if _, _, ok := nine.DirectLabel(nine.Series[0]); ok {
		t.Error("nine series labelled directly: the legend is for that")
	}
}
