package conclude

import "testing"

// A figures-table delta is coloured only where the claim of its criterion
// establishes a lead the same way: a run whose mean over all the items it
// scored is higher than the baseline's, while the paired test over the
// items both scored finds it significantly lower, shows its delta
// uncoloured, never "better" or "worse" against its own sign.
func TestFigureDeltaColoursOnlyTheClaimsWay(t *testing.T) {
	p := 0.01
	v, base := 0.60, 0.50
	lat, latBase := 90.0, 100.0
	for _, tc := range []struct {
		name    string
		crit    Criterion
		v, base *float64
		better  int
		want    Shade
	}{
		{"quality higher, claim better", Quality, &v, &base, 1, Better},
		{"quality higher, claim worse", Quality, &v, &base, -1, Untested},
		{"quality lower, claim worse", Quality, &base, &v, -1, Worse},
		{"quality lower, claim better", Quality, &base, &v, 1, Untested},
		{"latency lower, claim better", Latency, &lat, &latBase, 1, Better},
		{"latency lower, claim worse", Latency, &lat, &latBase, -1, Untested},
		{"latency higher, claim worse", Latency, &latBase, &lat, -1, Worse},
	} {
		claims := []Margin{{Criterion: tc.crit, Measured: true, Comparable: true, P: &p, Better: tc.better}}
		d := FigureDelta(tc.crit, tc.crit == Quality, tc.v, tc.base, claims)
		if !d.Shown || d.Shade != tc.want {
			t.Errorf("%s: shown %v, shade %v, want %v", tc.name, d.Shown, d.Shade, tc.want)
		}
	}
}
