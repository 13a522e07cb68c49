package stats

import (
	"math"
	"testing"
)

// TestTwoProportionsMatchesScipy checks p against Pearson's χ² without
// continuity correction (scipy.stats.chi2_contingency(table,
// correction=False)), which the pooled two-proportion z-test equals, and
// the Wald interval against p1 − p2 ± norm.ppf(0.975)·SE.
func TestTwoProportionsMatchesScipy(t *testing.T) {
	for _, c := range []struct {
		x1, n1, x2, n2 int
		p, lo, hi      float64
	}{
		{190, 200, 150, 200, 2.129708194535617e-08, 0.13281581946383803, 0.2671841805361619},
		{48, 50, 45, 50, 0.23967772321845926, -0.03932203306186663, 0.1593220330618665},
		{180, 200, 178, 200, 0.7442674293121054, -0.050075374006677054, 0.07007537400667707},
		{30, 30, 25, 30, 0.019517481182177752, 0.03330800899013028, 0.30002532434320295},
	} {
		d, _, ok := TwoProportions(c.x1, c.n1, c.x2, c.n2)
		if !ok {
			t.Fatalf("%+v: not tested", c)
		}
		for _, v := range []struct{ got, want float64 }{{d.P, c.p}, {d.Lo, c.lo}, {d.Hi, c.hi}} {
			if math.Abs(v.got-v.want) > 1e-6*math.Max(1e-3, math.Abs(v.want)) {
				t.Errorf("%d/%d vs %d/%d: got %.12g, scipy %.12g", c.x1, c.n1, c.x2, c.n2, v.got, v.want)
			}
		}
		if d.Test != "z-two-proportions" {
			t.Errorf("test %q", d.Test)
		}
	}
	for _, c := range [][4]int{{0, 0, 1, 2}, {5, 5, 9, 9}, {0, 5, 0, 9}, {6, 5, 1, 2}} {
		if _, _, ok := TwoProportions(c[0], c[1], c[2], c[3]); ok {
			t.Errorf("%v: tested, want no test", c)
		}
	}
}
