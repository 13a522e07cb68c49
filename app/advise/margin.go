package advise

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/ruckus/ruckus/app/stats"
)

// NoiseFloor is the relative difference in a speed, latency or cost figure
// below which two targets are effectively tied: a re-run of the same
// target on the same machine differs by about this much.
const NoiseFloor = 0.02

// Criterion is a figure targets are compared on.
type Criterion string

// The criteria: quality (mean score, higher is better), speed (output
// tokens/s, higher), latency (p95 end-to-end ms, lower) and cost (USD per
// 1M output tokens, lower).
const (
	Quality Criterion = "quality"
	Speed   Criterion = "speed"
	Latency Criterion = "latency"
	Cost    Criterion = "cost"
)

// Criteria are every criterion, in the order they are shown.
var Criteria = []Criterion{Quality, Speed, Latency, Cost}

// HigherBetter says which way the criterion improves.
func (c Criterion) HigherBetter() bool { return c == Quality || c == Speed }

// Value is the candidate's figure for the criterion; nil when not measured.
func (c Criterion) Value(x Candidate) *float64 {
	switch c {
	case Quality:
		return x.Quality
	case Speed:
		return x.TokensPS
	case Latency:
		return x.E2Ep95
	case Cost:
		return x.CostPer1M
	}
	return nil
}

// QualityDiff is a paired comparison of two runs' quality over the items
// both scored: the mean of A's score minus B's, its 95 % interval and the
// paired test's two-sided p (stats.ComparePaired: McNemar's test for 0/1
// scores, the paired bootstrap for partial credit).
type QualityDiff struct {
	A    int64   `json:"a"`
	B    int64   `json:"b"`
	N    int     `json:"items"`
	Mean float64 `json:"mean_difference"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	P    float64 `json:"p"`
	// Test names the test behind P: "mcnemar-exact", "mcnemar-chi2" or
	// "paired-bootstrap".
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
	case "mcnemar-chi2":
		return "McNemar, χ² with continuity correction"
	case "paired-bootstrap":
		return "paired bootstrap"
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
	var xa, xb []float64
	d := QualityDiff{A: a, B: b}
	i, j := 0, 0
	for i < len(as) && j < len(bs) {
		switch {
		case as[i].Idx < bs[j].Idx:
			d.OnlyA++
			i++
		case as[i].Idx > bs[j].Idx:
			d.OnlyB++
			j++
		default:
			xa, xb = append(xa, as[i].Score), append(xb, bs[j].Score)
			i++
			j++
		}
	}
	d.OnlyA += len(as) - i
	d.OnlyB += len(bs) - j
	if len(xa) == 0 {
		return d, false
	}
	p := stats.ComparePaired(xa, xb, uint64(min(a, b))<<32^uint64(max(a, b)))
	d.N, d.Mean, d.Lo, d.Hi, d.P, d.Test = p.N, p.Mean, p.Lo, p.Hi, p.P, p.Test
	return d, true
}

// Evidence is what tells a real difference from noise beyond the
// candidates' own figures.
type Evidence struct {
	// Paired are paired comparisons of quality; where a pair has one, it
	// decides whether their qualities differ, instead of their intervals.
	Paired []QualityDiff
	// Noise is the relative difference in speed, latency and cost taken
	// as a tie; 0 means NoiseFloor.
	Noise float64
}

func (ev Evidence) noise() float64 {
	if ev.Noise > 0 {
		return ev.Noise
	}
	return NoiseFloor
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
	// when A is better. It is ±Inf when B is 0 and A is not.
	Abs float64 `json:"abs"`
	Pct float64 `json:"pct"`
	// Better is +1 when A is better, −1 when worse, 0 when equal.
	Better int `json:"better"`
	// Tie: the difference is within the measurement's noise or not
	// significant; Basis says which test decided, in words.
	Tie   bool   `json:"tie"`
	Basis string `json:"basis"`
	// Paired is the paired comparison that decided a quality margin.
	Paired *QualityDiff `json:"paired,omitempty"`
}

// Compare compares a with b on c.
func Compare(a, b Candidate, c Criterion, ev Evidence) Margin {
	m := Margin{Criterion: c}
	va, vb := c.Value(a), c.Value(b)
	if va == nil || vb == nil {
		m.AMissing, m.BMissing = va == nil, vb == nil
		return m
	}
	m.Measured, m.A, m.B = true, *va, *vb
	m.Abs = math.Abs(m.A - m.B)
	adv := m.A - m.B
	if !c.HigherBetter() {
		adv = -adv
	}
	switch {
	case adv > 0:
		m.Better = 1
	case adv < 0:
		m.Better = -1
	}
	switch {
	case m.B != 0:
		m.Pct = adv / math.Abs(m.B) * 100
	case adv > 0:
		m.Pct = math.Inf(1)
	case adv < 0:
		m.Pct = math.Inf(-1)
	}
	noise := ev.noise()
	withinNoise := math.Abs(m.Pct) < noise*100
	noiseBasis := fmt.Sprintf("under the %g %% measurement noise", noise*100)
	switch c {
	case Quality:
		if d, ok := ev.paired(a.RunID, b.RunID); ok {
			m.Paired = &d
			m.Tie = !d.Significant()
			m.Basis = fmt.Sprintf("paired comparison on %d items (%s): difference %+.3f, 95 %% interval [%+.3f, %+.3f], p = %.3g", d.N, d.TestName(), d.Mean, d.Lo, d.Hi, d.P)
			if d.OnlyA+d.OnlyB > 0 {
				m.Basis += fmt.Sprintf("; %d items scored in one run only left out", d.OnlyA+d.OnlyB)
			}
			break
		}
		// Only runs that share no scored item fall back on their intervals.
		if a.QualityLo != nil && a.QualityHi != nil && b.QualityLo != nil && b.QualityHi != nil {
			m.Tie = overlap(a, b)
			if m.Tie {
				m.Basis = fmt.Sprintf("no items in common to pair; 95 %% intervals overlap ([%.3f, %.3f] and [%.3f, %.3f])", *a.QualityLo, *a.QualityHi, *b.QualityLo, *b.QualityHi)
			} else {
				m.Basis = fmt.Sprintf("no items in common to pair; 95 %% intervals apart ([%.3f, %.3f] and [%.3f, %.3f])", *a.QualityLo, *a.QualityHi, *b.QualityLo, *b.QualityHi)
			}
			break
		}
		// Without an interval, only the noise floor can tell.
		m.Tie = withinNoise
		if m.Tie {
			m.Basis = noiseBasis
		} else {
			m.Basis = "no interval to test significance"
		}
	case Latency:
		spread := a.E2Ep95Lo != nil && a.E2Ep95Hi != nil && b.E2Ep95Lo != nil && b.E2Ep95Hi != nil &&
			*a.E2Ep95Lo <= *b.E2Ep95Hi && *b.E2Ep95Lo <= *a.E2Ep95Hi
		m.Tie = withinNoise || spread
		switch {
		case withinNoise:
			m.Basis = noiseBasis
		case spread:
			m.Basis = fmt.Sprintf("within the runs' own spread: the 95 %% intervals of their p95s overlap ([%.0f, %.0f] and [%.0f, %.0f] ms)",
				*a.E2Ep95Lo, *a.E2Ep95Hi, *b.E2Ep95Lo, *b.E2Ep95Hi)
		default:
			m.Basis = fmt.Sprintf("beyond the %g %% measurement noise", noise*100)
			if a.E2Ep95Lo != nil && b.E2Ep95Lo != nil {
				m.Basis += fmt.Sprintf(", and the 95 %% intervals of their p95s are apart ([%.0f, %.0f] and [%.0f, %.0f] ms)",
					*a.E2Ep95Lo, *a.E2Ep95Hi, *b.E2Ep95Lo, *b.E2Ep95Hi)
			}
		}
	default:
		m.Tie = withinNoise
		if m.Tie {
			m.Basis = noiseBasis
		} else {
			m.Basis = fmt.Sprintf("beyond the %g %% measurement noise", noise*100)
		}
	}
	return m
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
}

// Leads finds the leader on c among cs: the best value (ties broken by
// the lower run id), the next best and everyone tied with the best.
func Leads(cs []Candidate, c Criterion, ev Evidence) Lead {
	l := Lead{Criterion: c}
	var measured []Candidate
	for _, x := range cs {
		if c.Value(x) == nil || math.IsNaN(*c.Value(x)) {
			l.Unmeasured = append(l.Unmeasured, x)
			continue
		}
		measured = append(measured, x)
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
