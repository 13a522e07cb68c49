package conclude

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Criterion is a figure targets are compared on.
type Criterion string

// The criteria: quality (mean score, higher is better), speed (output
// tokens/s, higher), latency (p95 end-to-end ms, lower), cost (USD per
// 1M output tokens, lower) and goodput (the share of requests that met
// the benchmark's SLOs, higher; only under an open loop,
// docs/verdict.md#goodput).
const (
	Quality Criterion = "quality"
	Speed   Criterion = "speed"
	Latency Criterion = "latency"
	Cost    Criterion = "cost"
	Goodput Criterion = "goodput"
	// GoodputPerDollar is the requests within the benchmark's SLOs per
	// dollar of a replica's hourly price (higher; closed loops too): what
	// a benchmark's configurations are ranked by
	// (docs/verdict.md#the-best-configuration). It is not among Criteria:
	// only RankConfigurations weighs it.
	GoodputPerDollar Criterion = "goodput_per_dollar"
)

// Criteria are every criterion, in the order they are shown.
var Criteria = []Criterion{Quality, Speed, Latency, Cost, Goodput}

// HigherBetter says which way the criterion improves.
func (c Criterion) HigherBetter() bool {
	return c == Quality || c == Speed || c == Goodput || c == GoodputPerDollar
}

// Value is the candidate's figure for the criterion; nil when not
// measured. Speed is the estimate its test uses (the steady window's
// batch means, or the repeats' mean) where there is one, else the whole
// run's tokens/s, and cost is priced on the same speed, so that a lead
// and its test never disagree (docs/concepts.md#comparability-and-noise).
func (c Criterion) Value(x Candidate) *float64 {
	v := c.value(x)
	// A figure that is not a finite number was not measured: it never
	// reaches a margin, a page or the JSON.
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return nil
	}
	return v
}

// value is Value before non-finite figures are left out.
func (c Criterion) value(x Candidate) *float64 {
	switch c {
	case Quality:
		return x.Quality
	case Speed:
		if x.TokensPS != nil && x.TPS.OK() && x.TPS.Mean > 0 {
			v := x.TPS.Mean
			return &v
		}
		return x.TokensPS
	case Latency:
		return x.E2Ep95
	case Goodput:
		// Under a closed loop a target sets its own pace, so its
		// throughput and latency already say what goodput would: it is
		// a figure of open loops only.
		if x.Load == nil || !OpenLoop(*x.Load) || x.Requests <= 0 {
			return nil
		}
		v := float64(x.GoodRequests) / float64(x.Requests)
		return &v
	case GoodputPerDollar:
		return goodputPerDollar(x)
	case Cost:
		// Already over the tested speed (Figures.steadySpeed).
		return x.CostPer1M
	}
	return nil
}

// QualityDiff is a paired comparison of two runs' quality over the items
// both scored: the mean of A's score minus B's, its 95 % interval and the
// paired test's two-sided p (stats.ComparePaired: McNemar's test for 0/1
// scores, the paired permutation test for partial credit).
type QualityDiff struct {
	A    int64   `json:"a"`
	B    int64   `json:"b"`
	N    int     `json:"items"`
	Mean float64 `json:"mean_difference"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	P    float64 `json:"p"`
	// Test names the test behind P: "mcnemar-exact", "mcnemar-chi2-uc",
	// "mcnemar-chi2" (kept by an earlier version, with continuity
	// correction) or "paired-bootstrap".
	Test string `json:"test"`
	// OnlyA and OnlyB count the items scored in one run only, left out.
	OnlyA int `json:"only_a"`
	OnlyB int `json:"only_b"`
}

// Significant says whether the paired test finds a difference at 5 %.
func (d QualityDiff) Significant() bool { return d.N > 0 && d.P < 0.05 }

// TestName says in words which test gave P.
func (d QualityDiff) TestName() string {
	switch d.Test {
	case "mcnemar-exact":
		return "McNemar, exact"
	case "mcnemar-chi2-uc":
		return "McNemar, χ²"
	case "mcnemar-chi2":
		return "McNemar, χ² with continuity correction"
	case "paired-bootstrap":
		return "paired bootstrap"
	case "paired-permutation":
		return "paired permutation test"
	}
	return d.Test
}

// TestSaid is TestName for a page to word: the test's own name (data)
// when it is none of the named tests.
func (d QualityDiff) TestSaid() any {
	if k := testKey(d.Test); k != "" {
		return say(k)
	}
	return d.Test
}

// flip is the same comparison seen from B.
func (d QualityDiff) flip() QualityDiff {
	return QualityDiff{A: d.B, B: d.A, N: d.N, Mean: -d.Mean, Lo: -d.Hi, Hi: -d.Lo, P: d.P, Test: d.Test, OnlyA: d.OnlyB, OnlyB: d.OnlyA}
}

// ItemScore is one item's score in a run.
type ItemScore struct {
	Idx   int
	Score float64
}

// PairRuns compares runs a and b over the items both scored (pairing by
// item index; each list sorted by index): stats.ComparePaired on the
// pairs, seeded by the two run ids (in either order the same seed, so
// comparing b with a gives exactly the negated result). ok is
// false when they share no scored item.
func PairRuns(a, b int64, as, bs []ItemScore) (QualityDiff, bool) {
	ai, av := splitScores(as)
	bi, bv := splitScores(bs)
	xa, xb, onlyA, onlyB := stats.PairScores(ai, av, bi, bv)
	d := QualityDiff{A: a, B: b, OnlyA: onlyA, OnlyB: onlyB}
	if len(xa) == 0 {
		return d, false
	}
	p := stats.ComparePaired(xa, xb, stats.PairSeed(a, b))
	d.N, d.Mean, d.Lo, d.Hi, d.P, d.Test = p.N, p.Mean, p.Lo, p.Hi, p.P, p.Test
	return d, true
}

func splitScores(xs []ItemScore) ([]int32, []float64) {
	idx, v := make([]int32, len(xs)), make([]float64, len(xs))
	for i, x := range xs {
		idx[i], v[i] = int32(x.Idx), x.Score
	}
	return idx, v
}

// Diff is a kept paired comparison (QualityPairs) as Compare reads
// it.
func Diff(p store.QualityPair) QualityDiff {
	return QualityDiff{A: p.A, B: p.B, N: p.Items, Mean: p.Mean, Lo: p.Lo, Hi: p.Hi, P: p.P, Test: p.Test, OnlyA: p.OnlyA, OnlyB: p.OnlyB}
}

// GatherEvidence is the paired comparisons of quality between candidates
// scored under the same scorer identity, as every conclusion reads them:
// kept in a table (QualityPairs), computed once from the runs'
// stored item scores, never from their results on a page's request.
func GatherEvidence(ctx context.Context, src PairSource, cands []Candidate) (Evidence, error) {
	// Only runs of one dataset are paired: their items are the same.
	type group struct {
		dataset int64
		key     string
	}
	byKey := map[group][]int64{}
	var keys []group
	for _, c := range cands {
		if c.Quality == nil || c.ScorerKey == "" {
			continue
		}
		g := group{c.DatasetID, c.ScorerKey}
		if _, ok := byKey[g]; !ok {
			keys = append(keys, g)
		}
		byKey[g] = append(byKey[g], c.RunID)
	}
	var ev Evidence
	for _, k := range keys {
		if len(byKey[k]) < 2 {
			continue
		}
		pairs, err := QualityPairs(ctx, src, k.key, byKey[k])
		if err != nil {
			return ev, err
		}
		for _, p := range pairs {
			ev.Paired = append(ev.Paired, Diff(p))
		}
	}
	return ev, nil
}

// Evidence is what tells a real difference from noise beyond the
// candidates' own figures.
type Evidence struct {
	// Paired are paired comparisons of quality; where a pair has one, it
	// decides whether their qualities differ, instead of their intervals.
	Paired []QualityDiff
}

// paired returns the comparison of a with b (a − b), if there is one.
func (ev Evidence) paired(a, b int64) (QualityDiff, bool) {
	for _, d := range ev.Paired {
		switch {
		case d.A == a && d.B == b:
			return d, true
		case d.A == b && d.B == a:
			return d.flip(), true
		}
	}
	return QualityDiff{}, false
}

// Margin is how candidate A compares with candidate B on one criterion.
type Margin struct {
	Criterion Criterion `json:"criterion"`
	// Measured is false when A or B (or both) lack the figure; then
	// AMissing and BMissing say which, and nothing else is set.
	Measured bool    `json:"measured"`
	AMissing bool    `json:"a_not_measured,omitempty"`
	BMissing bool    `json:"b_not_measured,omitempty"`
	A        float64 `json:"a"`
	B        float64 `json:"b"`
	// Abs is |A − B|; Pct is A's advantage over B in per cent of B (for
	// speed and quality (A−B)/B, for latency and cost (B−A)/B): positive
	// when A is better. Relative is false when B is 0: then there is no
	// relative margin (Pct 0) and Abs is the margin.
	Abs      float64 `json:"abs"`
	Pct      float64 `json:"pct"`
	Relative bool    `json:"relative"`
	// Better is +1 when A is better, −1 when worse, 0 when equal.
	Better int `json:"better"`
	// Comparable is false when A and B were measured under different
	// scorer identities (quality) or loads (speed, latency, cost): then
	// Reason says what differs, and nothing is tested or ranked.
	Comparable bool   `json:"comparable"`
	Reason     string `json:"reason,omitempty"`
	// Tie: the named test finds no difference at α = 0.05 (or there was
	// nothing to test with); Basis says which test decided, in words.
	Tie   bool   `json:"tie"`
	Basis string `json:"basis"`
	// ReasonSaid and BasisSaid are Reason and Basis for a page to word.
	ReasonSaid Said `json:"-"`
	BasisSaid  Said `json:"-"`
	// Test names the test (welch-t, mcnemar-exact, mcnemar-chi2-uc, mcnemar-chi2,
	// paired-permutation, paired-bootstrap, z-from-intervals, t-log-cost,
	// z-log-order-statistics, z-two-proportions; none when untested), P its
	// two-sided p, and Lo–Hi the 95 % interval of A − B (on the log scale
	// for cost: of ln A − ln B).
	Test string   `json:"test"`
	P    *float64 `json:"p"`
	Lo   *float64 `json:"interval_lo"`
	Hi   *float64 `json:"interval_hi"`
	// Paired is the paired comparison that decided a quality margin.
	Paired *QualityDiff `json:"paired,omitempty"`
	// Detectable is, for a lead the test does not establish, the smallest
	// difference this comparison could have detected (α = 0.05, 80 %
	// power) in per cent of B; ToDetect5 what would detect a 5 %
	// difference. Both nil when the lead is established or untested.
	Detectable *float64 `json:"detectable_pct,omitempty"`
	ToDetect5  *Need    `json:"to_detect_5pct,omitempty"`
}

// Comparable says whether a and b may be compared on c, and if not, what
// differs: quality only under the same scorer identity, speed, latency
// and cost only under the same load identity
// (docs/concepts.md#comparability-and-noise).
func Comparable(a, b Candidate, c Criterion) (bool, string) {
	ok, why := comparable(a, b, c)
	return ok, English(why)
}

// comparable is Comparable with what differs as a Said, worded with the
// earlier run first whichever way the pair is asked, so that every
// surface gives a pair the same reason.
func comparable(a, b Candidate, c Criterion) (bool, Said) {
	if a.RunID > b.RunID {
		a, b = b, a
	}
	if c == Quality {
		// Paired by item index, scores of two datasets would pair
		// unrelated items.
		if a.DatasetID != b.DatasetID {
			return false, say("compare.said.not_comparable_dataset", "A", a.RunID, "DA", a.DatasetID, "B", b.RunID, "DB", b.DatasetID)
		}
		if a.ScorerKey != b.ScorerKey {
			return false, say("compare.said.not_comparable_scorer", "A", scorerSaid(a.ScorerKey), "B", scorerSaid(b.ScorerKey))
		}
		if !HigherIsBetter(a.ScorerKey) {
			return false, say("compare.said.not_ranked_refusal", "Scorer", a.ScorerKey)
		}
		return true, Said{}
	}
	switch {
	case a.Load == nil && b.Load == nil:
		return false, say("compare.said.not_comparable_no_loads", "A", a.RunID, "B", b.RunID)
	case a.Load == nil:
		return false, say("compare.said.not_comparable_no_load", "Run", a.RunID)
	case b.Load == nil:
		return false, say("compare.said.not_comparable_no_load", "Run", b.RunID)
	}
	if d := a.Load.Differences(*b.Load); len(d) > 0 {
		return false, say("compare.said.not_comparable_load", "What", loadDifferences(*a.Load, *b.Load))
	}
	if (c == Speed || c == Cost) && OpenLoop(*a.Load) {
		return false, say("compare.said.not_ranked_open_loop", "Profile", a.Load.Profile)
	}
	if (c == Goodput || c == GoodputPerDollar) && (!a.SLOSet || !b.SLOSet) {
		return false, say("compare.said.not_ranked_goodput_no_slo")
	}
	return true, Said{}
}

// OpenLoop says whether a load sends at a rate of its own (constant-rate,
// poisson, a replayed trace) rather than as fast as answers come back:
// below saturation such a run's throughput is the rate it was offered, so
// speed and cost per token are not the target's and are not ranked.
func OpenLoop(l jobs.LoadIdentity) bool {
	return l.Profile == jobs.LoadConstant || l.Profile == jobs.LoadPoisson || l.Profile == "trace"
}

// loadDifferences is jobs.LoadIdentity.Differences as Saids.
func loadDifferences(l, o jobs.LoadIdentity) []Said {
	var out []Said
	if l.Profile != o.Profile || l.Params != o.Params {
		out = append(out, say("compare.said.differs_load", "A", strings.TrimSpace(l.Profile+" "+l.Params), "B", strings.TrimSpace(o.Profile+" "+o.Params)))
	}
	if l.Sampling != o.Sampling {
		out = append(out, say("compare.said.differs_sampling", "A", l.Sampling, "B", o.Sampling))
	}
	if l.DatasetID != o.DatasetID {
		out = append(out, say("compare.said.differs_dataset", "A", l.DatasetID, "B", o.DatasetID))
	}
	if l.InputClass != o.InputClass {
		out = append(out, say("compare.said.differs_input", "A", l.InputClass, "B", o.InputClass))
	}
	if l.OutputClass != o.OutputClass {
		out = append(out, say("compare.said.differs_output", "A", l.OutputClass, "B", o.OutputClass))
	}
	in, outLen := l.LengthsDiffer(o)
	if in {
		out = append(out, say("compare.said.differs_mean_input", "A", dec(l.MeanIn, 1), "B", dec(o.MeanIn, 1), "Ratio", trimmed(jobs.LengthRatio)))
	}
	if outLen {
		out = append(out, say("compare.said.differs_mean_output", "A", dec(l.MeanOut, 1), "B", dec(o.MeanOut, 1), "Ratio", trimmed(jobs.LengthRatio)))
	}
	if l.FewShot != o.FewShot {
		out = append(out, say("compare.said.differs_prompts", "A", fewShotSaid(l.FewShot), "B", fewShotSaid(o.FewShot)))
	}
	return out
}

func fewShotSaid(s string) any {
	if s == "" {
		return "0-shot"
	}
	return s
}

// scorerSaid is a scorer identity, or "no scorer".
func scorerSaid(key string) any {
	if key == "" {
		return say("compare.said.no_scorer")
	}
	return key
}

// HigherIsBetter says whether a run's mean under scorer identity key is a
// quality that ranks (more is better). The refusal scorer's mean is a
// refusal rate: good on harmful prompts, bad on benign ones, so no
// conclusion ranks it.
func HigherIsBetter(key string) bool {
	name, _, _ := strings.Cut(key, " ")
	name, _, _ = strings.Cut(name, "{")
	return name != "refusal"
}

// Compare compares a with b on c: only when they are comparable
// (Comparable), and then by the test the criterion's data allow, at
// α = 0.05 (stats.Alpha), on the same figures the lead is taken from, so
// that the test's difference always has the lead's sign
// (docs/concepts.md#comparability-and-noise):
//   - quality: the paired test over the items both scored (McNemar for
//     0/1 scores, the paired permutation test for partial credit), the
//     margin being the paired mean difference; without items in common, a
//     z-test from the runs' 95 % bootstrap intervals;
//   - speed: Welch's t-test on the runs' output tokens/s estimates (batch
//     means over the window trimmed at both ends, or the between-run
//     spread of repeats), each single run's carrying the between-run
//     floor stats.DriftCV;
//   - cost: price ÷ speed, tested on ln cost: the price ratio an exact
//     term, the speed's uncertainty the only random part;
//   - latency: a z-test on ln p95 with each run's standard error from
//     its exact order-statistic interval (and the between-run floor), or
//     Welch's t-test on the repeats' p95s; a p95 over fewer than
//     stats.MinQuantileN(0.95, 0.95) requests is not tested;
//   - goodput (open loops only, where the benchmark sets an SLO): the
//     z-test for two proportions on the shares of requests that met it,
//     or, once the deployment measured how much its share moves from run
//     to run, the t-test with that run effect (docs/concepts.md#drift).
//
// A pair that is not comparable has no better side and no lead
// (docs/verdict.md#not-comparable).
//
// A lead the test does not establish says the smallest difference the
// comparison could have detected (Detectable) and what would detect 5 %.
func Compare(a, b Candidate, c Criterion, ev Evidence) Margin {
	m := compare(a, b, c, ev)
	// The API's English is the catalogue's, worded from the same Saids
	// the pages word (no sentence written twice).
	m.Reason, m.Basis = English(m.ReasonSaid), English(m.BasisSaid)
	return m
}

// Ordered is a and b on c as every surface names them: the one the margin
// finds better first, and on a level figure the earlier run, as Leads
// orders them, with the margin of the first against the second — so that a
// pair asked either way round names one leader (docs/verdict.md#not-comparable).
func Ordered(a, b Candidate, c Criterion, ev Evidence) (lead, other Candidate, m Margin) {
	m = Compare(a, b, c, ev)
	if m.Better < 0 || m.Better == 0 && b.RunID < a.RunID {
		return b, a, Compare(b, a, c, ev)
	}
	return a, b, m
}

// compare is Compare with its sentences as Saids only.
func compare(a, b Candidate, c Criterion, ev Evidence) Margin {
	m := Margin{Criterion: c}
	va, vb := c.Value(a), c.Value(b)
	if va == nil || vb == nil {
		m.AMissing, m.BMissing = va == nil, vb == nil
		return m
	}
	m.Measured, m.A, m.B = true, *va, *vb
	m.lead()
	if m.Comparable, m.ReasonSaid = comparable(a, b, c); !m.Comparable {
		// A pair that cannot be ranked has no leader and no lead, on
		// every surface (docs/verdict.md#not-comparable).
		m.Test, m.BasisSaid = "none", m.ReasonSaid
		m.Better, m.Abs, m.Pct, m.Relative = 0, 0, 0, false
		return m
	}
	var t testResult
	switch c {
	case Quality:
		t = m.testQuality(a, b, ev)
	case Speed:
		t = m.testSpeed(a, b)
	case Cost:
		t = m.testCost(a, b)
	case Latency:
		t = m.testLatency(a, b)
	case Goodput:
		t = m.testGoodput(a, b)
	case GoodputPerDollar:
		t = m.testGoodputPerDollar(a, b)
	}
	if !t.ok {
		m.notTested()
		if t.said.Code != "" {
			m.BasisSaid = t.said
		}
		return m
	}
	d := t.d
	m.BasisSaid = t.said
	m.Test = d.Test
	m.P, m.Lo, m.Hi = &d.P, &d.Lo, &d.Hi
	m.Tie = !d.Significant() || m.Better == 0
	if m.Tie {
		m.notEstablished(t)
	}
	m.keepFinite()
	return m
}

// lead sets which of A and B is better on the criterion and by how much:
// Abs, Better and Pct (A's advantage relative to B; none when B is 0).
func (m *Margin) lead() {
	adv := m.A - m.B
	if !m.Criterion.HigherBetter() {
		adv = -adv
	}
	m.setLead(adv)
}

// notTested marks the margin untested for want of an interval.
func (m *Margin) notTested() {
	m.P, m.Lo, m.Hi, m.Test, m.Tie = nil, nil, nil, "none", true
	m.BasisSaid = say("compare.said.basis_not_tested")
}

// keepFinite leaves out of a margin whatever a test's arithmetic carried
// beyond the floats (an interval or p of figures at the ends of the
// range): not tested, rather than ±Inf in a page or the JSON.
func (m *Margin) keepFinite() {
	bad := func(p *float64) bool { return p != nil && (math.IsNaN(*p) || math.IsInf(*p, 0)) }
	if bad(m.P) || bad(m.Lo) || bad(m.Hi) {
		m.notTested()
	}
	if bad(m.Detectable) {
		m.Detectable, m.ToDetect5 = nil, nil
	}
	if math.IsInf(m.Abs, 0) || math.IsNaN(m.Abs) {
		m.Abs = 0
	}
}

// estimateSaid says where speed estimates' intervals come from, and
// the between-run variance single runs carry: their deployment's
// measured spread (da, db) or the DriftCV floor.
func estimateSaid(a, b stats.Estimate, da, db stats.Drift) Said {
	if a.N >= 2 && b.N >= 2 && a.Repeats && b.Repeats {
		return say("compare.said.estimate_repeats", "A", a.N, "B", b.N)
	}
	if da.Measured() && db.Measured() {
		return say("compare.said.estimate_batches_measured", "A", a.N, "B", b.N, "DA", da.DF, "DB", db.DF)
	}
	return say("compare.said.estimate_batches", "A", a.N, "B", b.N, "Floor", dec(stats.DriftCV*100, 0))
}

// Lead is who leads on one criterion: the best candidate, the runner-up
// and the margin between them, and who is effectively tied with the best.
type Lead struct {
	Criterion Criterion `json:"criterion"`
	// Best is nil when no candidate has the figure; RunnerUp when only
	// one has.
	Best     *Candidate `json:"best"`
	RunnerUp *Candidate `json:"runner_up"`
	// Margin is Best against RunnerUp.
	Margin Margin `json:"margin"`
	// TiedWith are the other candidates whose difference from Best is
	// noise or not significant.
	TiedWith []Candidate `json:"tied_with"`
	// Unmeasured are the candidates without the figure.
	Unmeasured []Candidate `json:"not_measured"`
	// NotComparable are the candidates measured under another scorer
	// identity or load than the ranked group's, each with what differs:
	// shown, never ranked.
	NotComparable []Unranked `json:"not_comparable"`
}

// Absent says whether the lead's line is left out: goodput where no
// candidate ran under an open loop, as no closed loop has a goodput to
// compare (docs/verdict.md#goodput).
func (l Lead) Absent() bool {
	return l.Criterion == Goodput && l.Best == nil && len(l.NotComparable) == 0 && !anyOpen(l.Unmeasured)
}

func anyOpen(cs []Candidate) bool {
	for _, c := range cs {
		if c.Load != nil && OpenLoop(*c.Load) {
			return true
		}
	}
	return false
}

// rankable is the group a lead is ranked in, and the candidates not
// ranked: the one rule every surface follows is that a pair that cannot
// be ranked has no leader (docs/verdict.md#not-comparable). So a group
// whose candidates the criterion does not rank (speed and cost under an
// open loop, goodput without an SLO) is not ranked at all, each candidate
// with the reason; and a candidate alone in its group while others were
// measured otherwise leads nothing: it is not comparable with them, and
// says what differs from the first of them.
func rankable(group []Candidate, rest []Unranked, c Criterion) ([]Candidate, []Unranked) {
	unranked := func(why Said) []Unranked {
		out := make([]Unranked, 0, len(group)+len(rest))
		for _, x := range group {
			out = append(out, Unranked{Candidate: x, Reason: English(why), ReasonSaid: why})
		}
		return append(out, rest...)
	}
	switch {
	case len(group) >= 2:
		if ok, why := comparable(group[0], group[1], c); !ok {
			return nil, unranked(why)
		}
	case len(group) == 1 && len(rest) > 0:
		if ok, why := comparable(group[0], rest[0].Candidate, c); !ok {
			return nil, unranked(why)
		}
	case len(group) == 1 && (c == Quality || group[0].Load != nil):
		// Alone with the figure: no pair, so nothing to rank it against,
		// but a criterion its load (or scorer) does not rank is still not
		// ranked. A run whose load identity is not kept yet stays alone.
		if ok, why := comparable(group[0], group[0], c); !ok {
			return nil, unranked(why)
		}
	}
	return group, rest
}

// Unranked is a candidate left out of a ranking, and why.
type Unranked struct {
	Candidate
	Reason string `json:"reason"`
	// ReasonSaid is Reason for a page to word.
	ReasonSaid Said `json:"-"`
}

// groupKey is what candidates must share to be ranked together on c.
func groupKey(x Candidate, c Criterion) string {
	if c == Quality {
		return fmt.Sprintf("q:%d:%s", x.DatasetID, x.ScorerKey)
	}
	if x.Load == nil {
		return fmt.Sprintf("run:%d", x.RunID)
	}
	return "l:" + x.Load.Key()
}

// ComparableGroup splits cs into the group ranked on c and the rest: the
// group is the largest set of candidates comparable on c (on a tie, the
// one holding the earliest candidate in cs); the rest are returned with
// what sets each apart from it.
func ComparableGroup(cs []Candidate, c Criterion) (group []Candidate, rest []Unranked) {
	count := map[string]int{}
	best := ""
	for _, x := range cs {
		k := groupKey(x, c)
		count[k]++
		if best == "" || count[k] > count[best] {
			best = k
		}
	}
	var keyed []Candidate
	for _, x := range cs {
		if groupKey(x, c) == best {
			keyed = append(keyed, x)
		}
	}
	group, apart := keyed, []Candidate(nil)
	if c != Quality {
		group, apart = closeInLength(keyed)
	}
	for _, x := range cs {
		if groupKey(x, c) != best {
			_, said := comparable(x, group[0], c)
			rest = append(rest, Unranked{Candidate: x, Reason: English(said), ReasonSaid: said})
		}
	}
	for _, x := range apart {
		for _, g := range group {
			if ok, said := comparable(x, g, c); !ok {
				rest = append(rest, Unranked{Candidate: x, Reason: English(said), ReasonSaid: said})
				break
			}
		}
	}
	return group, rest
}

// closeInLength keeps, of candidates under one load key, those whose
// measured lengths are all within jobs.LengthRatio of each other: around
// the candidate close to the most others, in order, each one close to
// every one kept. The others are returned apart.
func closeInLength(cs []Candidate) (kept, apart []Candidate) {
	differ := func(a, b Candidate) bool {
		if a.Load == nil || b.Load == nil {
			return false
		}
		in, out := a.Load.LengthsDiffer(*b.Load)
		return in || out
	}
	anchor, most := 0, -1
	for i, x := range cs {
		n := 0
		for _, y := range cs {
			if !differ(x, y) {
				n++
			}
		}
		if n > most {
			anchor, most = i, n
		}
	}
	for i, x := range cs {
		ok := i == anchor || !differ(x, cs[anchor])
		for _, k := range kept {
			ok = ok && !differ(x, k)
		}
		if ok {
			kept = append(kept, x)
		} else {
			apart = append(apart, x)
		}
	}
	return kept, apart
}

// Leads finds the leader on c among the comparable group of cs
// (ComparableGroup): the best value (ties broken by the lower run id), the
// next best and everyone tied with the best; the candidates outside the
// group are listed as not comparable.
func Leads(cs []Candidate, c Criterion, ev Evidence) Lead {
	l := Lead{Criterion: c}
	var measured []Candidate
	for _, x := range cs {
		if c.Value(x) == nil || math.IsNaN(*c.Value(x)) {
			l.Unmeasured = append(l.Unmeasured, x)
			continue
		}
		if c == Quality && !HigherIsBetter(x.ScorerKey) {
			_, said := comparable(x, x, c)
			l.NotComparable = append(l.NotComparable, Unranked{Candidate: x, Reason: English(said), ReasonSaid: said})
			continue
		}
		measured = append(measured, x)
	}
	if len(measured) > 0 {
		var rest []Unranked
		measured, rest = ComparableGroup(measured, c)
		l.NotComparable = append(l.NotComparable, rest...)
		measured, l.NotComparable = rankable(measured, l.NotComparable, c)
	}
	slices.SortStableFunc(measured, func(a, b Candidate) int {
		va, vb := *c.Value(a), *c.Value(b)
		if r := cmp.Compare(va, vb); r != 0 {
			if c.HigherBetter() {
				return -r
			}
			return r
		}
		return cmp.Compare(a.RunID, b.RunID)
	})
	if len(measured) == 0 {
		return l
	}
	l.Best = &measured[0]
	if len(measured) > 1 {
		l.RunnerUp = &measured[1]
		l.Margin = Compare(measured[0], measured[1], c, ev)
	}
	for _, x := range measured[1:] {
		if Compare(measured[0], x, c, ev).Tie {
			l.TiedWith = append(l.TiedWith, x)
		}
	}
	return l
}
