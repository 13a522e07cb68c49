package conclude

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/jobs"
)

// priced is target with a price per hour: cost per 1M output tokens =
// price ÷ (tokens/s × 3600) × 10⁶.
func priced(id int64, tps, se, price float64) Candidate {
	c := target(id, "m", 0.5, 0.4, 0.6, tps)
	c.CostPer1M = f(price / (tps * 3600) * 1e6)
	c.TPS = stats.Estimate{Mean: tps, SE: se, DF: 9, N: 10}
	return c
}

// Cost is tested on ln cost with the price ratio exact: a 4× price at
// equal speed is significant however noisy the speed, equal prices give
// the speed test's verdict, and the p is never the speed test's when the
// prices differ.
func TestCostTestTakesThePriceRatioExactly(t *testing.T) {
	a, b := priced(1, 100, 5, 0.5), priced(2, 100, 5, 2.0)
	m := Compare(a, b, Cost, Evidence{})
	if m.Tie || m.Better != 1 || math.Abs(m.Pct-75) > 1e-9 || m.P == nil || *m.P > 1e-6 || m.Test != "t-log-cost" {
		t.Errorf("4× price at equal speed: %+v", m)
	}
	if !strings.Contains(m.Basis, "price ratio 0.25 exact") {
		t.Errorf("basis %q", m.Basis)
	}
	// Equal prices: cost is the speed test on the log scale, and a 2×
	// speed difference is certain.
	a, b = priced(1, 200, 2, 1), priced(2, 100, 1, 1)
	if m := Compare(a, b, Cost, Evidence{}); m.Tie || m.Better != 1 || *m.P > 1e-6 {
		t.Errorf("2× cheaper by speed: %+v", m)
	}
	// A 0.05 % difference is within the between-run floor.
	a, b = priced(1, 100.05, 0.001, 1), priced(2, 100, 0.001, 1)
	if m := Compare(a, b, Cost, Evidence{}); !m.Tie || *m.P < 0.5 {
		t.Errorf("0.05 %% apart: %+v", m)
	}
}

// The lead and its test use one estimator: the speed figure a verdict
// names is the tested estimate, so the difference always has the lead's
// sign (whole-run tokens/s said 1 % faster of a run whose estimate was
// slower).
func TestSpeedLeadIsTheTestedEstimate(t *testing.T) {
	a, b := target(1, "a", 0.5, 0.4, 0.6, 1010), target(2, "b", 0.5, 0.4, 0.6, 1000)
	a.TPS = stats.Estimate{Mean: 900, SE: 10, DF: 9, N: 10}
	b.TPS = stats.Estimate{Mean: 1000, SE: 10, DF: 9, N: 10}
	m := Compare(a, b, Speed, Evidence{})
	if m.A != 900 || m.B != 1000 || m.Better != -1 || m.P == nil || (*m.Lo+*m.Hi)/2 >= 0 {
		t.Errorf("margin %+v", m)
	}
	l := Leads([]Candidate{a, b}, Speed, Evidence{})
	if l.Best.RunID != 2 {
		t.Errorf("leader %d, want the faster estimate (2)", l.Best.RunID)
	}
}

// A lead that is not established says the smallest difference the
// comparison could have detected and what would detect 5 %, never "a
// tie"; JSON carries both.
func TestNotEstablishedSaysWhatCouldBeDetected(t *testing.T) {
	a, b := target(1, "a", 0.5, 0.4, 0.6, 1020), target(2, "b", 0.5, 0.4, 0.6, 1000)
	m := Compare(a, b, Speed, Evidence{})
	if !m.Tie || m.Detectable == nil || m.ToDetect5 == nil || m.ToDetect5.Repeats < 2 {
		t.Fatalf("margin %+v", m)
	}
	// The floor alone (3 % of each) makes ≈ 2.8·√2·3 % ≈ 12 % the least.
	if *m.Detectable < 10 || *m.Detectable > 20 {
		t.Errorf("detectable %.1f %%", *m.Detectable)
	}
	if !strings.Contains(m.Basis, "not established: the smallest difference this comparison could detect is") ||
		!strings.Contains(m.Basis, "repeats of each target would detect 5 %") || strings.Contains(m.Basis, "tie") {
		t.Errorf("basis %q", m.Basis)
	}
	if m.BasisSaid.Code != "compare.said.basis_need_repeats" {
		t.Errorf("said %+v", m.BasisSaid)
	}
	js, err := json.Marshal(m)
	if err != nil || !strings.Contains(string(js), `"detectable_pct"`) || !strings.Contains(string(js), `"to_detect_5pct":{"repeats"`) {
		t.Errorf("JSON %s (%v)", js, err)
	}
}

// Against a figure of zero there is no relative margin: no ±Inf reaches
// JSON or a phrase.
func TestMarginAgainstZeroIsAbsolute(t *testing.T) {
	a, b := priced(1, 100, 1, 1), priced(2, 100, 1, 0)
	m := Compare(b, a, Cost, Evidence{})
	m2 := Compare(a, b, Cost, Evidence{})
	for _, x := range []Margin{m, m2} {
		if math.IsInf(x.Pct, 0) || math.IsNaN(x.Pct) {
			t.Errorf("pct %v", x.Pct)
		}
		if _, err := json.Marshal(x); err != nil {
			t.Errorf("JSON: %v", err)
		}
	}
	if m2.Relative || !strings.Contains(m2.Phrase(), "more expensive (") || strings.Contains(m2.Phrase(), "%") {
		t.Errorf("against zero: relative %v, phrase %q", m2.Relative, m2.Phrase())
	}
}

// Under an open loop throughput is the offered load: speed and cost are
// not ranked, latency is.
func TestOpenLoopRanksNoSpeed(t *testing.T) {
	open := &jobs.LoadIdentity{Profile: jobs.LoadPoisson, Params: "(rate=2)", Sampling: "max_tokens=256 n=1 temperature=0", DatasetID: 1, MeanIn: 100, MeanOut: 100}
	a, b := target(1, "a", 0.5, 0.4, 0.6, 100), target(2, "b", 0.5, 0.4, 0.6, 125)
	a.Load, b.Load = open, open
	for _, c := range []Criterion{Speed, Cost} {
		if m := Compare(b, a, c, Evidence{}); m.Comparable || !strings.Contains(m.Reason, "offered load") {
			t.Errorf("%s under an open loop: %+v", c, m)
		}
	}
	a.E2Ep95, b.E2Ep95 = f(1000), f(1500)
	a.E2EN, b.E2EN = 200, 200
	a.E2Ep95Lo, a.E2Ep95Hi, b.E2Ep95Lo, b.E2Ep95Hi = f(950), f(1060), f(1420), f(1600)
	if m := Compare(a, b, Latency, Evidence{}); !m.Comparable || m.Tie {
		t.Errorf("latency under an open loop: %+v", m)
	}
}

// A p95 over fewer requests than its exact interval needs is shown and
// not tested.
func TestFewRequestsLeaveTheP95Untested(t *testing.T) {
	a, b := target(1, "a", 0.5, 0.4, 0.6, 100), target(2, "b", 0.5, 0.4, 0.6, 100)
	a.E2Ep95, b.E2Ep95, a.E2EN, b.E2EN = f(1000), f(1070), 24, 24
	m := Compare(a, b, Latency, Evidence{})
	if !m.Measured || m.P != nil || m.Test != "none" || !strings.Contains(m.Basis, "too few requests to test a p95 (24; its 95 % interval needs at least 59)") {
		t.Errorf("margin %+v", m)
	}
}

// Latency A/A with drift between runs: two runs of one deployment whose
// speed shifts by a run effect of 3 % (σ) are called different at most
// about α of the time, for heavy tails (lognormal σ 0.5 and 1.2) and n
// from 59 to 200; a planted 25 % difference at n = 200 is found.
func TestLatencyAAUnderDrift(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 34))
	run := func(id int64, n int, sigma, shift float64) Candidate {
		xs := make([]float64, n)
		effect := math.Exp(0.03*rng.NormFloat64()) * shift
		for i := range xs {
			xs[i] = 500 * effect * math.Exp(sigma*rng.NormFloat64())
		}
		slices.Sort(xs)
		c := target(id, "m", 0.5, 0.4, 0.6, 100)
		p95 := stats.Percentile(xs, 0.95)
		c.E2Ep95, c.E2EN = &p95, n
		if ci, ok := stats.QuantileInterval(xs, 0.95, 0.95); ok {
			c.E2Ep95Lo, c.E2Ep95Hi, c.E2ECoverage = &ci.Lo, &ci.Hi, ci.Coverage
		}
		return c
	}
	for _, tc := range []struct {
		n     int
		sigma float64
	}{{59, 0.5}, {200, 0.5}, {59, 1.2}, {200, 1.2}} {
		called, trials := 0, 400
		for range trials {
			if m := Compare(run(1, tc.n, tc.sigma, 1), run(2, tc.n, tc.sigma, 1), Latency, Evidence{}); !m.Tie {
				called++
			}
		}
		rate := float64(called) / float64(trials)
		t.Logf("n %d σ %.1f: A/A %.3f", tc.n, tc.sigma, rate)
		// 400 trials at a true 5 %: above 9 % with probability < 0.1 %.
		if rate > 0.09 {
			t.Errorf("n %d σ %.1f: A/A %.3f", tc.n, tc.sigma, rate)
		}
	}
	found := 0
	for range 100 {
		if m := Compare(run(1, 200, 0.5, 1), run(2, 200, 0.5, 1.25), Latency, Evidence{}); !m.Tie && m.Better == 1 {
			found++
		}
	}
	t.Logf("+25 %% at n 200 σ 0.5: found %d of 100", found)
	if found < 50 {
		t.Errorf("+25 %% found %d of 100", found)
	}
}

// A run paid by the token is costed at its provider's price: no speed
// moves it, so its cost carries no speed noise, and it is not re-priced
// on the speed estimate.
func TestTokenPricedCost(t *testing.T) {
	a, b := priced(1, 100, 5, 1), priced(2, 50, 5, 1)
	a.TokenPriced, b.TokenPriced = true, true
	a.CostPer1M, b.CostPer1M = f(0.60), f(0.61)
	m := Compare(a, b, Cost, Evidence{})
	if m.A != 0.60 || m.B != 0.61 || m.Tie || m.P == nil || *m.P != 0 {
		t.Errorf("two token prices: %+v", m)
	}
	// Against a run priced by the hour, only that run's speed is noise.
	c := priced(3, 100, 5, 2)
	m = Compare(a, c, Cost, Evidence{})
	if !m.Measured || m.P == nil || m.Test != "t-log-cost" {
		t.Errorf("token price against an hourly one: %+v", m)
	}
}

// Whatever the figures — zeros, a price of 0, no interval, huge or tiny
// speeds — a margin marshals to JSON and carries no ±Inf or NaN.
func FuzzMarginIsFinite(fz *testing.F) {
	fz.Add(100.0, 1.0, 100.0, 1.0, 1.0, 1.0, 0.5, 0.5, 300.0, 300.0, 200)
	fz.Add(0.0, 0.0, 100.0, 1.0, 0.0, 2.0, 0.0, 1.0, 0.0, 300.0, 30)
	fz.Add(1e-300, 1e300, 1e300, 1e-300, 1e9, 0.0, 0.0, 0.0, 1e-9, 1e9, 59)
	fz.Fuzz(func(t *testing.T, tpsA, seA, tpsB, seB, priceA, priceB, qA, qB, p95A, p95B float64, n int) {
		for _, x := range []float64{tpsA, seA, tpsB, seB, priceA, priceB, qA, qB, p95A, p95B} {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				t.Skip("figures are finite and not negative (the store and the bounds keep them so)")
			}
		}
		mk := func(id int64, tps, se, price, q, p95 float64) Candidate {
			c := target(id, "m", q, max(q-0.1, 0), q+0.1, tps)
			c.TPS = stats.Estimate{Mean: tps, SE: se, DF: 9, N: 10}
			if tps > 0 {
				c.CostPer1M = f(price / (tps * 3600) * 1e6)
			} else {
				c.TokensPS = nil
			}
			c.E2Ep95, c.E2EN = f(p95), n
			c.E2Ep95Lo, c.E2Ep95Hi = f(p95*0.9), f(p95*1.1)
			return c
		}
		a, b := mk(1, tpsA, seA, priceA, qA, p95A), mk(2, tpsB, seB, priceB, qB, p95B)
		for _, c := range Criteria {
			m := Compare(a, b, c, Evidence{})
			js, err := json.Marshal(m)
			if err != nil {
				t.Fatalf("%s: %v (%+v)", c, err, m)
			}
			if s := string(js); strings.Contains(s, "Inf") || strings.Contains(s, "NaN") {
				t.Fatalf("%s: %s", c, s)
			}
			if math.IsInf(m.Pct, 0) || math.IsNaN(m.Pct) {
				t.Fatalf("%s: pct %v", c, m.Pct)
			}
		}
	})
}

// Where the run effect is larger than the DriftCV floor (8 % here), the
// floor alone calls alike runs different; the spread the deployment's own
// repeated runs show, pooled (stats.Drift), brings the p95 and speed A/A
// rates back to about α.
func TestMeasuredDriftKeepsAAAtAlpha(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	const effect = 0.08
	type figs struct{ p95, tps float64 }
	run := func(n int) (Candidate, figs) {
		xs := make([]float64, n)
		e := math.Exp(effect * rng.NormFloat64())
		for i := range xs {
			xs[i] = 500 * e * math.Exp(0.5*rng.NormFloat64())
		}
		slices.Sort(xs)
		c := target(1, "m", 0.5, 0.4, 0.6, 100)
		p95 := stats.Percentile(xs, 0.95)
		c.E2Ep95, c.E2EN = &p95, n
		if ci, ok := stats.QuantileInterval(xs, 0.95, 0.95); ok {
			c.E2Ep95Lo, c.E2Ep95Hi, c.E2ECoverage = &ci.Lo, &ci.Hi, ci.Coverage
		}
		tps := 100 / e * (1 + 0.01*rng.NormFloat64())
		c.TokensPS, c.TPS = f(tps), stats.Estimate{Mean: tps, SE: tps / 100, DF: 9, N: 10}
		return c, figs{p95, tps}
	}
	// The deployment's history: 10 targets run 3 times each.
	var d stats.Drift
	var vp, vt float64
	for range 10 {
		var lp, lt []float64
		for range 3 {
			_, x := run(200)
			lp, lt = append(lp, math.Log(x.p95)), append(lt, math.Log(x.tps))
		}
		vp += 2 * variance(lp)
		vt += 2 * variance(lt)
		d.DF += 2
	}
	d.P95, d.TPS = vp/float64(d.DF), vt/float64(d.DF)
	rates := map[string][2]int{}
	for range 300 {
		a, _ := run(200)
		b, _ := run(200)
		for _, withDrift := range []bool{false, true} {
			if withDrift {
				a.Drift, b.Drift = d, d
			}
			for _, c := range []Criterion{Latency, Speed} {
				k := fmt.Sprint(c, withDrift)
				r := rates[k]
				r[1]++
				if !Compare(a, b, c, Evidence{}).Tie {
					r[0]++
				}
				rates[k] = r
			}
		}
	}
	for k, r := range rates {
		t.Logf("%s: A/A %d of %d", k, r[0], r[1])
	}
	for _, c := range []Criterion{Latency, Speed} {
		floor, measured := rates[fmt.Sprint(c, false)], rates[fmt.Sprint(c, true)]
		// 300 pairs at a true 5 %: above 9 % with probability < 0.1 %.
		if float64(measured[0])/float64(measured[1]) > 0.09 {
			t.Errorf("%s with the measured drift: A/A %d of %d", c, measured[0], measured[1])
		}
		if floor[0] <= measured[0] {
			t.Errorf("%s: the floor alone (%d) is not worse than the measured drift (%d) under an 8 %% run effect", c, floor[0], measured[0])
		}
	}
}

func variance(xs []float64) float64 {
	m := stats.Mean(xs)
	s := 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s / float64(len(xs)-1)
}

// TestNeedForUsesTheMeasuredSpread: what would detect 5 % rests on the
// between-run part the test weighs. Under the 3 % floor the floor alone
// keeps 5 % out of reach of more requests (repeats are asked for); where
// the deployments' measured spread is 1 %, more requests per run do it.
func TestNeedForUsesTheMeasuredSpread(t *testing.T) {
	e := stats.Estimate{Mean: 100, Lo: 99, Hi: 101, SE: 0.5, DF: 9, N: 10}
	floor := needFor(e, e, stats.Drift{}, stats.Drift{}, 6, 200)
	if floor == nil || floor.Repeats == 0 || floor.Requests != 0 {
		t.Fatalf("under the floor: %+v, want repeats", floor)
	}
	spread := stats.Drift{TPS: 0.01 * 0.01, P95: 0.01 * 0.01, DF: 12}
	measured := needFor(e, e, spread, spread, 6, 200)
	if measured == nil || measured.Requests < 200 || measured.Repeats != 0 {
		t.Fatalf("with a measured 1 %% spread: %+v, want requests, not repeats", measured)
	}
	// A spread measured on too few repeats is the floor's.
	thin := stats.Drift{TPS: 0.01 * 0.01, DF: 2}
	if got := needFor(e, e, thin, thin, 6, 200); got == nil || got.Repeats == 0 {
		t.Fatalf("with 2 degrees of freedom: %+v, want the floor's repeats", got)
	}
}
