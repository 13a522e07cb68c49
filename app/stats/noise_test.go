package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The Student t figures are scipy.stats' (1.10, Debian 12's python3-scipy):
// t.ppf(p, df) and 2·t.sf(|t|, df).
func TestStudentTMatchesScipy(t *testing.T) {
	quantiles := []struct{ p, df, want float64 }{
		{0.975, 1, 12.706204736432095},
		{0.975, 2, 4.302652729911275},
		{0.975, 9, 2.2621571627409915},
		{0.975, 29.5, 2.043724966772122},
		{0.995, 4, 4.604094871415897},
		{0.9, 100, 1.2900747613398769},
	}
	for _, c := range quantiles {
		if got := StudentTQuantile(c.p, c.df); math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("StudentTQuantile(%g, %g) = %.15g, scipy %.15g", c.p, c.df, got, c.want)
		}
		if got := StudentTQuantile(1-c.p, c.df); math.Abs(got+c.want) > 1e-9*c.want {
			t.Errorf("StudentTQuantile(%g, %g) = %.15g, want %.15g", 1-c.p, c.df, got, -c.want)
		}
	}
	ps := []struct{ t, df, want float64 }{
		{2.0, 10, 0.07338803477074039},
		{0.5, 3, 0.651447964848151},
		{4.2, 7.3, 0.0036750570016489117},
		{-4.2, 7.3, 0.0036750570016489117},
		{1.0, 1, 0.5},
	}
	for _, c := range ps {
		if got := StudentTTwoSided(c.t, c.df); math.Abs(got-c.want) > 1e-10 {
			t.Errorf("StudentTTwoSided(%g, %g) = %.15g, scipy %.15g", c.t, c.df, got, c.want)
		}
	}
}

// Welch's test on two samples against scipy.stats.ttest_ind(a, b,
// equal_var=False): t = 4.529682661918145, p = 0.0002520939542217282.
func TestWelchMatchesScipy(t *testing.T) {
	a := MeanInterval([]float64{10.1, 9.8, 10.4, 10.0, 9.7, 10.3, 10.2, 9.9, 10.6, 10.05})
	b := MeanInterval([]float64{9.5, 9.9, 9.2, 9.8, 9.6, 9.4, 10.0, 9.3, 9.7, 9.55, 9.45})
	d, ok := Welch(a, b)
	if !ok {
		t.Fatal("Welch: no test")
	}
	if tStat := d.Diff / math.Sqrt(a.SE*a.SE+b.SE*b.SE); math.Abs(tStat-4.529682661918145) > 1e-9 {
		t.Errorf("t = %.15g, scipy 4.529682661918145", tStat)
	}
	if math.Abs(d.P-0.0002520939542217282) > 1e-12 {
		t.Errorf("p = %.15g, scipy 0.0002520939542217282", d.P)
	}
	if !d.Significant() || d.Lo <= 0 || d.Hi <= d.Diff {
		t.Errorf("difference %+v: want significant with an interval above 0", d)
	}
	if _, ok := Welch(MeanInterval([]float64{1}), b); ok {
		t.Error("Welch tested an estimate without an interval")
	}
}

func TestMeanIntervalCoversAtItsLevel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	covered, trials := 0, 4000
	for range trials {
		xs := make([]float64, 5)
		for i := range xs {
			xs[i] = 3 + rng.NormFloat64()
		}
		if e := MeanInterval(xs); e.Lo <= 3 && 3 <= e.Hi {
			covered++
		}
	}
	// 95 % of 4000 with a binomial standard deviation of 14.
	if covered < 3740 || covered > 3860 {
		t.Errorf("covered the mean %d times in %d, want about 3800", covered, trials)
	}
}

// Identical streams of events, at the same rate, are called different at
// most α of the time; a 10 % faster stream is told apart.
func TestBatchMeansRateFalseAndTruePositives(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	stream := func(rate float64, n int) []Event {
		var evs []Event
		tm := 0.0
		for range n {
			tm += rng.ExpFloat64() / rate
			evs = append(evs, Event{T: tm, Amount: 50 + 20*rng.NormFloat64()})
		}
		return evs
	}
	rateOf := func(evs []Event) Estimate {
		e, ok := BatchMeansRate(evs, 0, evs[len(evs)-1].T)
		if !ok {
			t.Fatal("no interval")
		}
		return e
	}
	same, apart, trials := 0, 0, 400
	for range trials {
		a, b := rateOf(stream(10, 200)), rateOf(stream(10, 200))
		if d, _ := Welch(a, b); d.Significant() {
			same++
		}
		c := rateOf(stream(15, 300))
		if d, _ := Welch(c, a); d.Significant() && d.Diff > 0 {
			apart++
		}
	}
	t.Logf("A/A %d, A/B %d of %d", same, apart, trials)
	if same > trials*8/100 {
		t.Errorf("identical streams called different %d times in %d (α = 5 %%)", same, trials)
	}
	if apart < trials*80/100 {
		t.Errorf("a 50 %% faster stream told apart %d times in %d", apart, trials)
	}
}

func TestBatchMeansRateDropsWarmUp(t *testing.T) {
	// Nothing for the first 30 s, then one event a second: the steady
	// rate is 1/s, the whole window's 0.7/s.
	var evs []Event
	for i := 30; i < 100; i++ {
		evs = append(evs, Event{T: float64(i) + 0.5, Amount: 1})
	}
	e, ok := BatchMeansRate(evs, 0, 100)
	if !ok {
		t.Fatal("no interval")
	}
	if math.Abs(e.Mean-1) > 0.05 {
		t.Errorf("steady rate %g, want 1 (the warm-up left in)", e.Mean)
	}
	if _, ok := BatchMeansRate(evs[:3], 0, 100); ok {
		t.Error("an interval from 3 events")
	}
	if _, ok := BatchMeansRate(evs, 5, 5); ok {
		t.Error("an interval from an empty window")
	}
}

func TestBenjaminiHochberg(t *testing.T) {
	cases := []struct {
		ps   []float64
		want []bool
	}{
		{[]float64{0.01, 0.04, 0.03, 0.005}, []bool{true, true, true, true}},
		{[]float64{0.01, 0.02, 0.03, 0.5}, []bool{true, true, true, false}},
		// Step-up: 0.03 is above 1·q/2 but p(2) = 0.04 ≤ q carries it.
		{[]float64{0.03, 0.04}, []bool{true, true}},
		{[]float64{0.03, 0.06}, []bool{false, false}},
		{[]float64{0.2, 0.001, 0.04}, []bool{false, true, false}},
		{nil, []bool{}},
	}
	for _, c := range cases {
		got := BenjaminiHochberg(c.ps, 0.05)
		if len(got) != len(c.want) {
			t.Fatalf("BH(%v) = %v", c.ps, got)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("BH(%v) = %v, want %v", c.ps, got, c.want)
				break
			}
		}
	}
}

func TestZFromIntervals(t *testing.T) {
	d := ZFromIntervals(100, 90, 110, 130, 120, 140)
	// se = 10/1.96 each, z = 30/(10/1.96·√2) = 4.157.
	if math.Abs(d.P-3.22e-5) > 0.2e-5 || !d.Significant() {
		t.Errorf("p = %g, want about 3.2e-5", d.P)
	}
	if d := ZFromIntervals(100, 80, 120, 110, 90, 130); d.Significant() {
		t.Errorf("overlapping wide intervals called different: %+v", d)
	}
}

func FuzzBatchMeansRate(f *testing.F) {
	f.Add(0.0, 10.0, 1.0, 2.0, 3.0, 4.0, 5.0)
	f.Fuzz(func(t *testing.T, start, end, a, b, c, d, e float64) {
		evs := []Event{{a, 1}, {b, 2}, {c, 3}, {d, 4}, {e, 5}}
		est, ok := BatchMeansRate(evs, start, end)
		if ok && (math.IsNaN(est.Mean) || est.Lo > est.Hi) {
			t.Errorf("BatchMeansRate(%v, %g, %g) = %+v", evs, start, end, est)
		}
	})
}

// PoolDrift pools the variance of ln figures within each repeated target
// over the targets (Σ (n−1)·s² ÷ Σ (n−1)); a target run once, and runs
// without a positive figure, add nothing.
func TestPoolDriftPoolsWithinTargets(t *testing.T) {
	if d := PoolDrift(nil); d != (Drift{}) {
		t.Fatalf("no runs: %+v", d)
	}
	runs := []RepeatedRun{{Target: "a", TPS: 100, P95: 10}, {Target: "a", TPS: 121, P95: 10}, {Target: "b", TPS: 50, P95: 20}, {Target: "b", TPS: 50, P95: 40}, {Target: "c", TPS: 7, P95: 7}, {Target: "a", P95: 5}}
	d := PoolDrift(runs)
	ss := func(x, y float64) float64 { l := math.Log(y / x); return l * l / 2 } // two values: Σ (x − m)² = (ln y − ln x)² ÷ 2
	wantTPS, wantP95 := (ss(100, 121)+ss(50, 50))/2, (ss(10, 10)+ss(20, 40))/2
	if d.DF != 2 || math.Abs(d.TPS-wantTPS) > 1e-12 || math.Abs(d.P95-wantP95) > 1e-12 {
		t.Errorf("drift %+v, want TPS %g P95 %g on 2 degrees of freedom", d, wantTPS, wantP95)
	}
}

// A kept rate read back has the Student t interval it was computed with,
// and none without degrees of freedom.
func TestTIntervalRebuildsTheKeptInterval(t *testing.T) {
	e := TInterval(10, 1, 4, 5)
	if h := StudentTQuantile(0.975, 4); e.Lo != 10-h || e.Hi != 10+h || !e.OK() || e.N != 5 {
		t.Errorf("interval %+v", e)
	}
	if e := TInterval(10, 1, 0, 5); e.OK() || e.Lo != 10 || e.Hi != 10 {
		t.Errorf("without degrees of freedom: %+v", e)
	}
}
