package stats

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestMcNemarMatchesStatsmodels checks McNemar against the values
// statsmodels 0.13.5 gives (testdata/gen_paired.py): exact below 25
// discordant pairs, chi-square without continuity correction from there on.
func TestMcNemarMatchesStatsmodels(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/mcnemar.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	n := 0
	for sc.Scan() {
		col := strings.Split(sc.Text(), "\t")
		b, _ := strconv.Atoi(col[0])
		c, _ := strconv.Atoi(col[1])
		wantStat, _ := strconv.ParseFloat(col[2], 64)
		wantP, _ := strconv.ParseFloat(col[3], 64)
		stat, p, exact := McNemar(b, c)
		if exact != (b+c < McNemarExactBelow) {
			t.Errorf("b=%d c=%d: exact = %v", b, c, exact)
		}
		if math.Abs(stat-wantStat) > 1e-12*max(1, wantStat) || math.Abs(p-wantP) > 1e-12*max(1e-300, wantP) {
			t.Errorf("McNemar(%d, %d) = %.17g, %.17g; statsmodels %.17g, %.17g", b, c, stat, p, wantStat, wantP)
		}
		n++
	}
	if n < 10 {
		t.Fatalf("only %d vectors read", n)
	}
}

// TestPairedBootstrapMatchesReference feeds the resample indices numpy
// drew (as sacreBLEU draws them) and compares interval and p with the
// reference computation in testdata/gen_paired.py.
func TestPairedBootstrapMatchesReference(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/bootstrap.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name         string
		A, B         []float64
		Resamples    int
		Indices      [][]int
		Mean, Lo, Hi float64
		P            float64
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range cases {
		r, i := 0, 0
		next := func() int {
			v := c.Indices[r][i]
			if i++; i == len(c.A) {
				r, i = r+1, 0
			}
			return v
		}
		got := pairedBootstrap(c.A, c.B, c.Resamples, next)
		if math.Abs(got.Mean-c.Mean) > 1e-12 || math.Abs(got.Lo-c.Lo) > 1e-12 || math.Abs(got.Hi-c.Hi) > 1e-12 || math.Abs(got.P-c.P) > 1e-12 {
			t.Errorf("%s: got mean %g [%g, %g] p %g; reference mean %g [%g, %g] p %g",
				c.Name, got.Mean, got.Lo, got.Hi, got.P, c.Mean, c.Lo, c.Hi, c.P)
		}
	}
}

func TestComparePaired(t *testing.T) {
	t.Parallel()
	// 40 items: A right on all, B on the first 28 → 12 discordant pairs,
	// all A's: exact McNemar, p = 2·0.5¹².
	a, b := make([]float64, 40), make([]float64, 40)
	for i := range a {
		a[i] = 1
		if i < 28 {
			b[i] = 1
		}
	}
	p := ComparePaired(a, b, 1)
	if p.Test != "mcnemar-exact" || p.B != 12 || p.C != 0 || math.Abs(p.P-2*math.Pow(0.5, 12)) > 1e-15 || !p.Significant() {
		t.Fatalf("%+v", p)
	}
	if math.Abs(p.Mean-0.3) > 1e-12 || p.Lo > p.Mean || p.Hi < p.Mean || p.Lo <= 0 {
		t.Fatalf("mean %g interval [%g, %g]", p.Mean, p.Lo, p.Hi)
	}
	// Repeatable for a seed.
	if q := ComparePaired(a, b, 1); q != p {
		t.Fatalf("%+v then %+v", p, q)
	}
	// Identical runs: nothing to tell apart.
	if q := ComparePaired(a, a, 1); q.Significant() || q.P != 1 || q.Mean != 0 {
		t.Fatalf("%+v", q)
	}
	// Partial credit: the paired permutation test's p; a large shift is
	// significant, a tiny one is not.
	x, y, z := make([]float64, 50), make([]float64, 50), make([]float64, 50)
	for i := range x {
		x[i] = 0.2 + 0.6*float64(i%5)/4
		y[i] = x[i] + 0.3
		z[i] = x[i] + 0.01*float64(i%3-1)
	}
	if q := ComparePaired(y, x, 3); q.Test != "paired-permutation" || !q.Significant() || q.P > 0.01 {
		t.Fatalf("%+v", q)
	}
	if q := ComparePaired(z, x, 3); q.Test != "paired-permutation" || q.Significant() {
		t.Fatalf("%+v", q)
	}
	if q := ComparePaired(nil, nil, 3); q.N != 0 || q.Significant() {
		t.Fatalf("%+v", q)
	}
}
