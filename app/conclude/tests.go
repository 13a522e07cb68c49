package conclude

import (
	"math"

	"github.com/ruckus/ruckus/app/stats"
)

// Need is what would detect a 5 % difference where a comparison could
// not: so many requests in each run, so many repeats of each target, or
// so many items scored by both runs (one of them set).
type Need struct {
	Requests int `json:"requests,omitempty"`
	Repeats  int `json:"repeats,omitempty"`
	Items    int `json:"items,omitempty"`
}

// testResult is a criterion's test of A against B: the difference with
// its p, the basis in words, and the power figures a lead that is not
// established reports.
type testResult struct {
	d    stats.Difference
	ok   bool
	said Said
	// detectable is the smallest difference the test finds with 80 %
	// power, in per cent of B (NaN when unknown); need what would find
	// 5 %.
	detectable float64
	need       *Need
}

// powerZ is z(1 − α/2) + z(0.8): the multiple of a standard error a
// difference must reach to be found with 80 % power at α = 0.05.
const powerZ = 1.959964 + 0.841621

// testQuality is the paired test of the items both runs scored, or a
// z-test from the runs' intervals when they share none. The margin is
// taken from the paired difference (the items the test uses), so the
// lead and the test cannot disagree.
func (m *Margin) testQuality(a, b Candidate, ev Evidence) testResult {
	if q, ok := ev.paired(a.RunID, b.RunID); ok {
		m.Paired = &q
		m.setLead(q.Mean)
		t := testResult{d: stats.Difference{Diff: q.Mean, Lo: q.Lo, Hi: q.Hi, P: q.P, Test: q.Test}, ok: true, detectable: math.NaN()}
		t.said = say("compare.said.basis_paired", "N", q.N, "Test", q.TestSaid(), "Diff", signed(q.Mean, 3), "Lo", signed(q.Lo, 3), "Hi", signed(q.Hi, 3), "P", pval(q.P))
		if q.OnlyA+q.OnlyB > 0 {
			t.said = say("compare.said.basis_paired_left_out", "Basis", t.said, "N", q.OnlyA+q.OnlyB)
		}
		if se := (q.Hi - q.Lo) / (2 * 1.959964); se > 0 && m.B != 0 {
			t.detectable = powerZ * se / math.Abs(m.B) * 100
			t.need = &Need{Items: needScale(q.N, t.detectable)}
		}
		return t
	}
	if a.QualityLo == nil || a.QualityHi == nil || b.QualityLo == nil || b.QualityHi == nil {
		return testResult{}
	}
	t := testResult{d: stats.ZFromIntervals(m.A, *a.QualityLo, *a.QualityHi, m.B, *b.QualityLo, *b.QualityHi), ok: true, detectable: math.NaN()}
	t.said = say("compare.said.basis_quality_z", "ALo", dec(*a.QualityLo, 3), "AHi", dec(*a.QualityHi, 3), "BLo", dec(*b.QualityLo, 3),
		"BHi", dec(*b.QualityHi, 3), "P", pval(t.d.P))
	if se := (t.d.Hi - t.d.Lo) / (2 * 1.959964); se > 0 && m.B != 0 {
		t.detectable = powerZ * se / math.Abs(m.B) * 100
	}
	return t
}

// setLead sets the margin's lead from A's advantage over B (A − B where
// more is better, B − A where less is; for quality the paired mean
// difference): Abs, Better and Pct, relative to B, which against a B of
// zero (or beyond the floats) has no meaning and is left out.
func (m *Margin) setLead(diff float64) {
	m.Abs, m.Better, m.Pct, m.Relative = math.Abs(diff), 0, 0, false
	switch {
	case diff > 0:
		m.Better = 1
	case diff < 0:
		m.Better = -1
	}
	if pct := diff / math.Abs(m.B) * 100; m.B != 0 && !math.IsInf(pct, 0) && !math.IsNaN(pct) {
		m.Pct, m.Relative = pct, true
	}
}

// testSpeed is Welch's t-test on the two runs' output tokens/s estimates,
// each single run's with the between-run floor.
func (m *Margin) testSpeed(a, b Candidate) testResult {
	ea, eb := runEffect(a), runEffect(b)
	d, ok := stats.Welch(ea, eb)
	if !ok {
		return testResult{}
	}
	t := testResult{d: d, ok: true}
	t.said = say("compare.said.basis_speed", "Source", estimateSaid(ea, eb, a.Drift, b.Drift), "A", dec(ea.Mean, 1), "ALo", dec(ea.Lo, 1), "AHi", dec(ea.Hi, 1),
		"B", dec(eb.Mean, 1), "BLo", dec(eb.Lo, 1), "BHi", dec(eb.Hi, 1), "P", pval(d.P))
	se := math.Hypot(ea.SE, eb.SE)
	t.detectable = stats.Detectable(se, d.DF) / eb.Mean * 100
	t.need = needFor(a.TPS, b.TPS, a.Drift, b.Drift, t.detectable, max(a.E2EN, b.E2EN))
	return t
}

// testCost tests ln cost_A − ln cost_B. Cost is price ÷ speed, so the
// difference is ln(price_A ÷ price_B) − (ln speed_A − ln speed_B): the
// price ratio is exact and only the speeds are uncertain, their standard
// errors carried to the log scale by the delta method (SE ÷ mean). Equal
// prices reduce it to the speed test on the log scale; a 4× price at
// equal speed is a certain difference.
func (m *Margin) testCost(a, b Candidate) testResult {
	ea, eb := runEffect(a), runEffect(b)
	if !(m.A > 0 && m.B > 0) {
		return testResult{}
	}
	ca, okA := logCost(a, ea, m.A)
	cb, okB := logCost(b, eb, m.B)
	if !okA || !okB {
		return testResult{}
	}
	d, ok := stats.Welch(ca, cb)
	if !ok {
		return testResult{}
	}
	d.Test = "t-log-cost"
	se := math.Hypot(ca.SE, cb.SE)
	ratio := m.A / m.B * speedOf(a, ea) / speedOf(b, eb)
	t := testResult{d: d, ok: true}
	t.said = say("compare.said.basis_cost_log", "Ratio", Sig{V: ratio, Digits: 3}, "Source", estimateSaid(ea, eb, a.Drift, b.Drift), "P", pval(d.P))
	t.detectable = math.Expm1(stats.Detectable(se, d.DF)) * 100
	t.need = needFor(a.TPS, b.TPS, a.Drift, b.Drift, t.detectable, max(a.E2EN, b.E2EN))
	return t
}

// logCost is ln cost as the cost test takes it: the candidate's cost with
// the standard error of ln speed it carries (its speed estimate's,
// relative, by the delta method), or none for a run paid by the token,
// whose price no speed moves.
func logCost(c Candidate, e stats.Estimate, cost float64) (stats.Estimate, bool) {
	l := stats.Estimate{Mean: math.Log(cost), DF: math.Inf(1), N: e.N}
	if c.TokenPriced {
		return l, true
	}
	if !e.OK() || e.Mean <= 0 {
		return l, false
	}
	l.SE, l.DF = e.SE/e.Mean, e.DF
	return l, true
}

// speedOf is the speed a candidate's cost is priced on (1 for a run paid
// by the token, whose price ratio is its cost ratio).
func speedOf(c Candidate, e stats.Estimate) float64 {
	if c.TokenPriced {
		return 1
	}
	return e.Mean
}

// testLatency tests the p95s: Welch's t-test on the p95s of the repeats
// where both targets were repeated, else a z-test on ln p95 whose
// standard errors come from each run's exact order-statistic interval
// with the between-run floor added. A p95 over fewer requests than its
// interval needs is shown and not tested.
func (m *Margin) testLatency(a, b Candidate) testResult {
	if a.E2E != nil || b.E2E != nil {
		return m.testLatencyRepeats(a, b)
	}
	minN := stats.MinQuantileN(0.95, 0.95)
	if few := min(nonZero(a.E2EN), nonZero(b.E2EN)); few < minN {
		return testResult{said: say("compare.said.basis_latency_few", "N", few, "Min", minN)}
	}
	sa, sb := p95LogSE(a), p95LogSE(b)
	d, ok := stats.LogRatioTest(m.A, sa, m.B, sb, "z-log-order-statistics")
	if !ok {
		return testResult{}
	}
	t := testResult{d: d, ok: true}
	t.said = say("compare.said.basis_latency_os", "ALo", dec(*a.E2Ep95Lo, 0), "AHi", dec(*a.E2Ep95Hi, 0), "BLo", dec(*b.E2Ep95Lo, 0),
		"BHi", dec(*b.E2Ep95Hi, 0), "Floor", dec(stats.DriftCV*100, 0), "P", pval(d.P))
	t.detectable = math.Expm1(stats.Detectable(math.Hypot(sa, sb), math.Inf(1))) * 100
	oa, ob := p95OwnVar(a), p95OwnVar(b)
	t.need = needForLog(oa, ob, between(oa, a.Drift.P95, a.Drift), between(ob, b.Drift.P95, b.Drift), min(a.E2EN, b.E2EN))
	return t
}

// p95LogSE is the standard error of ln p95 of a single run: from its
// exact order-statistic interval, with the run effect its deployment's
// repeated runs measured (the larger of the two variances), else the
// DriftCV floor added (NaN when the run has no interval).
func p95LogSE(c Candidate) float64 {
	if c.E2Ep95Lo == nil || c.E2Ep95Hi == nil {
		return math.NaN()
	}
	own := stats.LogSEFromInterval(*c.E2Ep95Lo, *c.E2Ep95Hi, coverage(c))
	if c.Drift.Measured() {
		return math.Sqrt(max(own*own, c.Drift.P95))
	}
	return math.Hypot(own, stats.DriftCV)
}

// p95OwnVar is the squared log standard error of a candidate's p95 from
// its own interval, without the between-run part.
func p95OwnVar(c Candidate) float64 {
	if c.E2Ep95Lo == nil || c.E2Ep95Hi == nil {
		return math.NaN()
	}
	own := stats.LogSEFromInterval(*c.E2Ep95Lo, *c.E2Ep95Hi, coverage(c))
	return own * own
}

// runEffect is a candidate's speed estimate with the between-run variance
// a single run carries (stats.Estimate.WithRunEffect).
func runEffect(c Candidate) stats.Estimate {
	return c.TPS.WithRunEffect(c.Drift.TPS, c.Drift.DF)
}

// testLatencyRepeats is Welch's t-test on the p95s of repeats; a target
// run once enters with its single run's standard error (p95LogSE carried
// back to milliseconds) as if known.
func (m *Margin) testLatencyRepeats(a, b Candidate) testResult {
	est := func(c Candidate) (stats.Estimate, bool) {
		if c.E2E != nil {
			return *c.E2E, c.E2E.OK()
		}
		se := p95LogSE(c) * *c.E2Ep95
		if c.E2EN < stats.MinQuantileN(0.95, 0.95) || math.IsNaN(se) {
			return stats.Estimate{}, false
		}
		return stats.Estimate{Mean: *c.E2Ep95, SE: se, DF: 1e6, N: 1}, true
	}
	ea, okA := est(a)
	eb, okB := est(b)
	if !okA || !okB {
		return testResult{}
	}
	d, ok := stats.Welch(ea, eb)
	if !ok {
		return testResult{}
	}
	t := testResult{d: d, ok: true}
	t.said = say("compare.said.basis_latency_repeats", "A", ea.N, "B", eb.N, "P", pval(d.P))
	t.detectable = stats.Detectable(math.Hypot(ea.SE, eb.SE), d.DF) / m.B * 100
	t.need = &Need{Repeats: needScale(min(ea.N, eb.N), t.detectable)}
	return t
}

// coverage is the exact coverage of a candidate's p95 interval; intervals
// kept before exact order statistics are taken as 95 %.
func coverage(c Candidate) float64 {
	if c.E2ECoverage > 0 && c.E2ECoverage < 1 {
		return c.E2ECoverage
	}
	return 0.95
}

// nonZero is n, or a large number when n is 0 (a count not kept, as in
// figures kept before it was).
func nonZero(n int) int {
	if n == 0 {
		return math.MaxInt32
	}
	return n
}

// needScale is how many observations (items, repeats) in place of n
// would bring a detectable difference of detectable per cent down to 5 %:
// a standard error falls with √n.
func needScale(n int, detectable float64) int {
	if n <= 0 || math.IsNaN(detectable) || detectable <= 0 {
		return 0
	}
	return int(math.Ceil(float64(n) * math.Pow(detectable/5, 2)))
}

// needFor is what would detect 5 % between two speed estimates: more
// repeats where they are repeats or where the between-run part alone
// keeps 5 % out of reach, else more requests per run (n is the requests
// each run measured, 0 when not known). The between-run part of a single
// run is its deployment's measured spread where there is one (da, db),
// else the DriftCV floor, as the test itself weighs it (runEffect).
func needFor(a, b stats.Estimate, da, db stats.Drift, detectable float64, n int) *Need {
	if a.Repeats && b.Repeats {
		return &Need{Repeats: needScale(min(a.N, b.N), detectable)}
	}
	rel := func(e stats.Estimate) float64 {
		if !e.OK() || e.Mean <= 0 {
			return math.NaN()
		}
		return (e.SE / e.Mean) * (e.SE / e.Mean)
	}
	va, vb := rel(a), rel(b)
	return needForLog(va, vb, between(va, da.TPS, da), between(vb, db.TPS, db), n)
}

// between is the between-run relative variance a single run carries
// beside its own (own): the part of its deployment's measured spread
// beyond its own noise (stats.Estimate.WithRunEffect), else the DriftCV
// floor.
func between(own, measured float64, d stats.Drift) float64 {
	if d.Measured() && !math.IsNaN(measured) && measured >= 0 {
		return max(measured-max(own, 0), 0)
	}
	return stats.DriftCV * stats.DriftCV
}

// needForLog is needFor on relative variances within a run (va, vb) and
// between runs (ba, bb).
func needForLog(va, vb, ba, bb float64, n int) *Need {
	if math.IsNaN(va) || math.IsNaN(vb) {
		return nil
	}
	target := 0.05 / powerZ // the standard error of a difference that finds 5 %
	floor := ba + bb
	within := max(va, 0) + max(vb, 0)
	if floor >= target*target || n <= 0 {
		// Only repeats shrink the between-run part: k repeats of each
		// divide the whole variance by k.
		return &Need{Repeats: int(math.Ceil((within + floor) / (target * target)))}
	}
	f := within / (target*target - floor)
	return &Need{Requests: int(math.Ceil(max(f, 1) * float64(n)))}
}

// notEstablished words a lead the test did not establish: the smallest
// difference this comparison could have detected and what would detect
// 5 %, never "a tie" (docs/concepts.md#comparability-and-noise).
func (m *Margin) notEstablished(t testResult) {
	if m.Better == 0 || math.IsNaN(t.detectable) || math.IsInf(t.detectable, 0) || t.detectable <= 0 {
		return
	}
	det := t.detectable
	m.Detectable, m.ToDetect5 = &det, t.need
	m.BasisSaid = say("compare.said.basis_not_established", "Basis", m.BasisSaid, "Pct", Pct(det))
	if n := t.need; n != nil {
		switch {
		case n.Repeats > 0:
			m.BasisSaid = say("compare.said.basis_need_repeats", "Basis", m.BasisSaid, "N", n.Repeats)
		case n.Requests > 0:
			m.BasisSaid = say("compare.said.basis_need_requests", "Basis", m.BasisSaid, "N", n.Requests)
		case n.Items > 0:
			m.BasisSaid = say("compare.said.basis_need_items", "Basis", m.BasisSaid, "N", n.Items)
		}
	}
}

// testGoodput tests the shares of A's and B's requests that met the
// benchmark's SLOs: each request met them or did not, so a run's goodput
// is a binomial share over its measured requests (docs/verdict.md#goodput).
// Where a deployment's repeated runs measured how much its share moves
// from run to run beyond binomial (stats.Drift's Goodput), each share
// carries that run effect (stats.TwoProportionsWithRunEffect; a
// deployment that has not measured it is taken to drift as the other
// does); else the z-test for two proportions (stats.TwoProportions). The
// lead is the same difference of shares the test is of.
func (m *Margin) testGoodput(a, b Candidate) testResult {
	ra, rb, shared, drift := goodputRunEffects(a, b)
	var d stats.Difference
	var se float64
	var ok bool
	if drift {
		d, se, ok = stats.TwoProportionsWithRunEffect(a.GoodRequests, a.Requests, b.GoodRequests, b.Requests, ra, rb, shared)
	} else {
		d, se, ok = stats.TwoProportions(a.GoodRequests, a.Requests, b.GoodRequests, b.Requests)
	}
	if !ok {
		return testResult{}
	}
	t := testResult{d: d, ok: true, detectable: math.NaN()}
	t.said = say("compare.said.basis_goodput", "AGood", a.GoodRequests, "A", a.Requests, "BGood", b.GoodRequests, "B", b.Requests,
		"Diff", signed(d.Diff, 3), "Lo", signed(d.Lo, 3), "Hi", signed(d.Hi, 3), "P", pval(d.P))
	if drift {
		t.said = say("compare.said.basis_goodput_run_effect", "AGood", a.GoodRequests, "A", a.Requests, "BGood", b.GoodRequests, "B", b.Requests,
			"SDA", dec(math.Sqrt(ra.Var)*100, 1), "SDB", dec(math.Sqrt(rb.Var)*100, 1), "DA", ra.DF, "DB", rb.DF,
			"Diff", signed(d.Diff, 3), "Lo", signed(d.Lo, 3), "Hi", signed(d.Hi, 3), "P", pval(d.P))
	}
	if se > 0 && m.B > 0 {
		df := d.DF
		if !drift || df <= 0 {
			df = math.Inf(1)
		}
		t.detectable = stats.Detectable(se, df) / m.B * 100
		ba, bb := binomialVar(a), binomialVar(b)
		t.need = needForLog(ba/(m.B*m.B), bb/(m.B*m.B), ra.Var/(m.B*m.B), rb.Var/(m.B*m.B), min(a.Requests, b.Requests))
	}
	return t
}

// binomialVar is the binomial variance of a candidate's goodput share.
func binomialVar(c Candidate) float64 {
	p := float64(c.GoodRequests) / float64(c.Requests)
	return p * (1 - p) / float64(c.Requests)
}

// goodputRunEffects are the run effects of A's and B's goodput shares
// (stats.Drift's Goodput), whether they are one estimate (shared: one
// deployment, or one side borrowing the other's), and whether either
// deployment measured one (stats.Drift.GoodputMeasured); the side that
// did not borrows the other's. A candidate that merges k repeats has a
// share pooled over k runs, whose run effect is divided by k.
func goodputRunEffects(a, b Candidate) (ra, rb stats.RunEffect, shared, ok bool) {
	ma, mb := a.Drift.GoodputMeasured(), b.Drift.GoodputMeasured()
	if !ma && !mb {
		return ra, rb, false, false
	}
	ra, rb = a.Drift.Goodput, b.Drift.Goodput
	shared = !ma || !mb || a.Hardware == b.Hardware && a.Runtime == b.Runtime && a.Settings.Key() == b.Settings.Key()
	if !ma {
		ra = rb
	}
	if !mb {
		rb = ra
	}
	return perRun(ra, a.Repeats), perRun(rb, b.Repeats), shared, true
}

// perRun is a run effect for a share pooled over k runs: both its parts
// divided by k.
func perRun(r stats.RunEffect, k int) stats.RunEffect {
	k = max(k, 1)
	r.Var, r.Within = r.Var/float64(k), r.Within/float64(k)
	return r
}

// testGoodputPerDollar tests ln g_A − ln g_B, where g is a replica's
// requests within the SLOs per dollar: requests/s × the share within the
// SLOs × 3600 ÷ the replica's price per hour. The price is exact, so the
// log difference carries two uncertainties per run, added by the delta
// method (Casella & Berger, Statistical Inference § 5.5.4): the relative
// variance of requests/s (batch means over the steady window with the
// deployment's between-run spread, as speed's test takes it, or the
// spread between repeats) and the binomial share's, (1 − p) ÷ (p n), with
// p taken as (good + ½) ÷ (n + 1) so that a share of 0 or 1 keeps a
// variance. Welch's t-test on the two log estimates decides, as the cost
// test does (docs/verdict.md#the-best-configuration).
func (m *Margin) testGoodputPerDollar(a, b Candidate) testResult {
	la, okA := logGoodputPerDollar(a, m.A)
	lb, okB := logGoodputPerDollar(b, m.B)
	if !okA || !okB {
		return testResult{}
	}
	d, ok := stats.Welch(la, lb)
	if !ok {
		return testResult{}
	}
	d.Test = "t-log-goodput-per-dollar"
	t := testResult{d: d, ok: true}
	t.said = say("configurations.said.basis", "AGood", a.GoodRequests, "A", a.Requests, "BGood", b.GoodRequests, "B", b.Requests,
		"Ratio", Sig{V: m.A / m.B, Digits: 3}, "P", pval(d.P))
	se := math.Hypot(la.SE, lb.SE)
	t.detectable = math.Expm1(stats.Detectable(se, d.DF)) * 100
	ra, rb := rpsEffect(a), rpsEffect(b)
	t.need = needFor(ra, rb, a.Drift, b.Drift, t.detectable, min(a.Requests, b.Requests))
	return t
}

// logGoodputPerDollar is ln of a candidate's goodput per dollar v with
// the standard error testGoodputPerDollar gives it; not ok when v is not
// positive or its requests/s has no interval.
func logGoodputPerDollar(c Candidate, v float64) (stats.Estimate, bool) {
	e := rpsEffect(c)
	if v <= 0 || !e.OK() || e.Mean <= 0 || c.Requests <= 0 {
		return stats.Estimate{}, false
	}
	p := (float64(c.GoodRequests) + 0.5) / (float64(c.Requests) + 1)
	share := (1 - p) / (p * float64(c.Requests))
	rel := e.SE / e.Mean
	return stats.Estimate{Mean: math.Log(v), SE: math.Sqrt(rel*rel + share), DF: e.DF, N: e.N}, true
}

// rpsEffect is a candidate's requests/s estimate with the between-run
// variance a single run carries: its deployment's measured spread of
// speed (requests and tokens per second move together when a deployment
// drifts), else the DriftCV floor.
func rpsEffect(c Candidate) stats.Estimate {
	return c.RPS.WithRunEffect(c.Drift.TPS, c.Drift.DF)
}
