package conclude

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/jobs"
)

// Candidate is one target's measured figures; nil where unknown.
type Candidate struct {
	RunID    int64  `json:"run_id"`
	Model    string `json:"model"`
	Runtime  string `json:"runtime"`
	Hardware string `json:"hardware"`
	// Engine is the target's engine settings as jobs.Engine.Key writes
	// them ("" for the runtime's defaults): part of its identity, so two
	// configurations of one model, runtime and hardware are two
	// candidates (docs/benchmarks.md#engine-settings).
	Engine    string   `json:"engine,omitempty"`
	Quality   *float64 `json:"quality"`
	QualityLo *float64 `json:"quality_lo"`
	QualityHi *float64 `json:"quality_hi"`
	TTFTp95   *float64 `json:"ttft_p95_ms"`
	E2Ep95    *float64 `json:"e2e_p95_ms"`
	// E2Ep95Lo and E2Ep95Hi are an exact order-statistic interval of the
	// p95 (nil when not known): the run's own spread.
	E2Ep95Lo *float64 `json:"e2e_p95_lo_ms,omitempty"`
	E2Ep95Hi *float64 `json:"e2e_p95_hi_ms,omitempty"`
	// E2EN is how many requests E2Ep95 is over, and E2ECoverage the exact
	// coverage of E2Ep95Lo–Hi (stats.QuantileInterval); 0 when not kept.
	E2EN        int     `json:"e2e_p95_requests,omitempty"`
	E2ECoverage float64 `json:"e2e_p95_coverage,omitempty"`
	// E2E is the p95 with the spread between repeats (MergeRepeats); nil
	// for a single run.
	E2E       *stats.Estimate `json:"e2e_p95_repeats,omitempty"`
	TokensPS  *float64        `json:"output_tokens_per_s"`
	CostPer1M *float64        `json:"cost_per_1m_tokens"`
	// TokenPriced: CostPer1M is a remote provider's price by the token,
	// which no speed moves (exact, not tested on a speed).
	TokenPriced bool     `json:"token_priced,omitempty"`
	GPUMemGiB   *float64 `json:"peak_gpu_mem_gib"`
	// ScorerKey is the scorer identity Quality was measured under ("" when
	// unscored); Load the load identity of the speed, latency and cost
	// figures (nil when none was kept). Candidates are compared only
	// where these agree (Comparable).
	ScorerKey string             `json:"scorer"`
	Load      *jobs.LoadIdentity `json:"load"`
	// DatasetID is the dataset the run answered: quality is compared
	// item by item, so only between runs of one dataset (0 for a
	// candidate of no run).
	DatasetID int64 `json:"-"`
	// TPS is output tokens/s with the interval the speed test uses: batch
	// means over the run's steady window, or the spread between repeats.
	TPS stats.Estimate `json:"output_tokens_per_s_interval"`
	// Repeats is how many runs of the target the figures are the means of
	// (MergeRepeats); 0 for a single run.
	Repeats int `json:"repeats,omitempty"`
	// Drift is the between-run spread the candidate's deployment shows
	// over its own repeated runs (stats.Drift): a single run's speed and
	// latency carry it, or the DriftCV floor where it was not measured.
	Drift stats.Drift `json:"-"`
	// Requests is how many requests the run's measured window sent and
	// GoodRequests how many of them met every SLO of its benchmark
	// (SLOSet: it set one); their ratio is goodput
	// (docs/verdict.md#goodput).
	Requests     int  `json:"requests,omitempty"`
	GoodRequests int  `json:"good_requests,omitempty"`
	SLOSet       bool `json:"slo_set,omitempty"`
	// Settings are Engine's settings by name; SLO the benchmark's (what
	// GoodRequests met); PricePerHour is what one
	// replica of the configuration costs per hour (ReplicaPrice; nil when
	// its profile has no price); RequestsPS the run's requests/s and RPS
	// its estimate over the steady window (or between repeats), which
	// goodput per dollar rests on (RankConfigurations).
	Settings     jobs.Engine    `json:"-"`
	SLO          jobs.SLO       `json:"-"`
	PricePerHour *float64       `json:"-"`
	RequestsPS   *float64       `json:"-"`
	RPS          stats.Estimate `json:"-"`
}

// Constraints are the user's limits; nil (or empty) means none.
type Constraints struct {
	MinQuality *float64
	MaxTTFTp95 *float64
	MaxE2Ep95  *float64
	MaxCost    *float64
	MaxGPUMem  *float64
	// Hardware the user has; empty allows every profile.
	Hardware []string
}

// Weights say how much quality, speed (output tokens/s) and cost count in
// the ranking; they need not add up to 1.
type Weights struct {
	Quality, Speed, Cost float64
}

// Ranked is a feasible candidate with its score, its rank and why.
type Ranked struct {
	Candidate
	// Score is the weighted mean of the criterion scores below (0..1).
	Score float64 `json:"score"`
	// QualityScore, SpeedScore and CostScore are the candidate's figure
	// relative to the best feasible one (value ÷ best; best ÷ value for
	// cost), 1 where it is effectively tied with the best; nil where the
	// candidate has no such figure (it then counts as 0 in Score).
	QualityScore *float64 `json:"quality_score"`
	SpeedScore   *float64 `json:"speed_score"`
	// GoodputScore is the part goodput takes in the score where the
	// speed weight weighs it (an open loop; docs/verdict.md#goodput).
	GoodputScore *float64 `json:"goodput_score,omitempty"`
	CostScore    *float64 `json:"cost_score"`
	// Rank is 1 for the best; candidates effectively tied share a rank.
	Rank int `json:"rank"`
	// TiedWith lists the candidates sharing this rank.
	TiedWith []int64 `json:"tied_with"`
	// SameQualityAs lists feasible runs whose quality is not
	// significantly different from this one's.
	SameQualityAs []int64 `json:"not_significantly_different_from"`
	// Explanation says in words how the candidate compares with the
	// first-ranked one.
	Explanation string `json:"explanation"`
	// ExplanationSaid is Explanation for a page to word.
	ExplanationSaid Said `json:"-"`

	raw float64 // Score before ties count as the best
}

// Excluded is a candidate left out, with every reason.
type Excluded struct {
	Candidate
	Reasons []string `json:"reasons"`
	// ReasonsSaid are Reasons for a page to word.
	ReasonsSaid []Said `json:"-"`
}

// Recommendation is the ranked feasible candidates, the excluded ones and
// the Pareto fronts (run ids) over all candidates with the figures.
type Recommendation struct {
	Feasible           []Ranked   `json:"feasible"`
	Excluded           []Excluded `json:"excluded"`
	ParetoQualityCost  []int64    `json:"pareto_quality_cost"`
	ParetoQualityLaten []int64    `json:"pareto_quality_latency"`
	// Ranked are the criteria the ranking weighed (weight above 0 and
	// measured for some feasible target); Notes say what was left out and
	// why.
	Ranked []Criterion `json:"ranked_on"`
	Notes  []string    `json:"notes"`
	// NotesSaid are Notes for a page to word.
	NotesSaid []Said `json:"-"`
	// NotComparable are the feasible targets measured under another
	// scorer identity or load than the ranked ones: shown, not ranked.
	NotComparable []Unranked `json:"not_comparable"`
	// Tests names the tests that tell a difference from noise.
	Tests string `json:"tests"`
	// LeftOut are runs the recommendation does not weigh, each with why:
	// a benchmark's runs that did not succeed (Weighed.Recommend), a
	// dataset's runs of a target measured again later (DatasetCandidates).
	LeftOut []LeftOut `json:"left_out"`
}

// RankingTests says, in words, how the ranking tells a difference from
// noise.
const RankingTests = "quality: paired test over the items both runs scored (McNemar, paired permutation test); " +
	"speed and cost: Welch's t-test on batch means over each run's steady window (or between repeats); " +
	"latency: z-test on ln p95 from exact order-statistic intervals (Welch's t-test between repeats); " +
	"single runs carry a 3 % between-run floor; all at α = 0.05, only between comparable runs"

// Recommend is RecommendWith without paired comparisons.
func Recommend(cs []Candidate, c Constraints, w Weights) Recommendation {
	return RecommendWith(cs, c, w, Evidence{})
}

// rankable keeps, of the candidates measured on c, the comparable group
// (ComparableGroup) and moves the rest to NotComparable; candidates not
// measured on c stay (they count 0 there).
func (rec *Recommendation) rankable(cs []Candidate, c Criterion) []Candidate {
	var measured, unmeasured []Candidate
	for _, x := range cs {
		if c.Value(x) != nil {
			measured = append(measured, x)
		} else {
			unmeasured = append(unmeasured, x)
		}
	}
	if len(measured) == 0 {
		return cs
	}
	group, rest := ComparableGroup(measured, c)
	rec.NotComparable = append(rec.NotComparable, rest...)
	return append(group, unmeasured...)
}

// RecommendWith applies the constraints and ranks what is left by the
// weighted mean of quality, output tokens/s and cost per 1M output tokens,
// each scaled relative to the best feasible target (value ÷ best for
// quality and speed, best ÷ value for cost), so a 0.6 % difference stays
// 0.6 %. A figure effectively tied with the best — not significantly
// different in quality (paired comparison, else overlapping 95 %
// intervals), within the noise floor in speed and cost — scores as the
// best. A figure a candidate lacks counts 0; a criterion no feasible
// candidate has is left out. Candidates effectively tied on every weighed
// criterion share a rank. It also finds the Pareto fronts of quality vs
// cost and quality vs p95 E2E latency.
func RecommendWith(cs []Candidate, c Constraints, w Weights, ev Evidence) Recommendation {
	rec := Recommendation{Tests: RankingTests, Ranked: []Criterion{}, Notes: []string{}, NotComparable: []Unranked{}, LeftOut: []LeftOut{}}
	ok := rec.feasible(cs, c)
	if w.Quality+w.Speed+w.Cost <= 0 {
		w = Weights{1, 1, 1}
	}
	// Only targets measured under one scorer identity and one load are
	// ranked together; the others are shown apart, with what differs. A
	// criterion the weights leave out divides nothing: ranked by quality
	// alone, two targets under different loads are still a pair the
	// verdict ranks (docs/verdict.md#not-comparable).
	if len(ok) > 0 && w.Quality > 0 {
		ok = rec.rankable(ok, Quality)
	}
	if len(ok) > 0 && w.Speed+w.Cost > 0 {
		ok = rec.rankable(ok, Speed)
	}
	weights := []weighted{{Quality, w.Quality}, {Speed, w.Speed}, {Cost, w.Cost}}
	if openLoops(ok) {
		// Below saturation an open loop's tokens/s is the rate offered:
		// what speed asks of a target there is to serve it within the
		// SLOs (docs/verdict.md#goodput).
		weights[1].c = Goodput
		rec.note(say("recommend.said.note_open_loop_goodput"))
	}
	leads, total := rec.weigh(ok, weights, ev)
	for _, x := range ok {
		rec.Feasible = append(rec.Feasible, rec.score(x, ok, weights, leads, total, ev))
	}
	// Within a tie the raw figures order the list; the rank is shared.
	sort.SliceStable(rec.Feasible, func(i, j int) bool {
		a, b := rec.Feasible[i], rec.Feasible[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.raw > b.raw
	})
	rankTies(rec.Feasible, rec.Ranked, ev)
	for i := range rec.Feasible {
		rec.Feasible[i].ExplanationSaid = explainSaid(rec.Feasible[i], rec.Feasible, rec.Ranked, leads, ok, ev)
		rec.Feasible[i].Explanation = English(rec.Feasible[i].ExplanationSaid)
	}
	rec.ParetoQualityCost = pareto(cs, func(x Candidate) *float64 { return x.CostPer1M })
	rec.ParetoQualityLaten = pareto(cs, func(x Candidate) *float64 { return x.E2Ep95 })
	return rec
}

// openLoops says whether every candidate ran under an open loop.
func openLoops(cs []Candidate) bool {
	for _, c := range cs {
		if c.Load == nil || !OpenLoop(*c.Load) {
			return false
		}
	}
	return len(cs) > 0
}

// note adds a note to the recommendation, in the API's English beside
// its Said.
func (rec *Recommendation) note(s Said) {
	rec.Notes, rec.NotesSaid = append(rec.Notes, English(s)), append(rec.NotesSaid, s)
}

// weighted is a criterion with its weight.
type weighted struct {
	c Criterion
	w float64
}

// feasible is the candidates that meet the constraints; the others go to
// rec.Excluded with every reason they fail.
func (rec *Recommendation) feasible(cs []Candidate, c Constraints) []Candidate {
	var ok []Candidate
	for _, x := range cs {
		if said := unmet(x, c); len(said) > 0 {
			why := make([]string, len(said))
			for i, s := range said {
				why[i] = English(s)
			}
			rec.Excluded = append(rec.Excluded, Excluded{Candidate: x, Reasons: why, ReasonsSaid: said})
			continue
		}
		ok = append(ok, x)
	}
	return ok
}

// unmet says which of the constraints x fails; a limit on a figure x
// lacks counts as failed.
func unmet(x Candidate, c Constraints) []Said {
	var said []Said
	check := func(v *float64, limit *float64, code, unit string, max bool) {
		if limit == nil {
			return
		}
		fig := say(code)
		switch {
		case v == nil:
			said = append(said, say("recommend.said.unmet_none", "Name", fig, "Limit", Sig{V: *limit}, "Unit", unit))
		case max && *v > *limit:
			said = append(said, say("recommend.said.unmet_above", "Name", fig, "V", Sig{V: *v, Digits: 4}, "Limit", Sig{V: *limit}, "Unit", unit))
		case !max && *v < *limit:
			said = append(said, say("recommend.said.unmet_below", "Name", fig, "V", Sig{V: *v, Digits: 4}, "Limit", Sig{V: *limit}, "Unit", unit))
		}
	}
	check(x.Quality, c.MinQuality, "recommend.said.figure_quality", "", false)
	check(x.TTFTp95, c.MaxTTFTp95, "recommend.said.figure_ttft", " ms", true)
	check(x.E2Ep95, c.MaxE2Ep95, "recommend.said.figure_e2e", " ms", true)
	check(x.CostPer1M, c.MaxCost, "recommend.said.figure_cost", " USD", true)
	check(x.GPUMemGiB, c.MaxGPUMem, "recommend.said.figure_gpu_mem", " GiB", true)
	if len(c.Hardware) > 0 && !slices.Contains(c.Hardware, x.Hardware) {
		said = append(said, say("recommend.said.unmet_hardware", "Hardware", x.Hardware))
	}
	return said
}

// weigh finds each criterion's leads among ok and which criteria the
// ranking weighs (rec.Ranked, with a note for one left out or measured
// for only some); total is the sum of their weights.
func (rec *Recommendation) weigh(ok []Candidate, weights []weighted, ev Evidence) (leads map[Criterion]Lead, total float64) {
	leads = map[Criterion]Lead{}
	for _, cw := range weights {
		l := Leads(ok, cw.c, ev)
		leads[cw.c] = l
		if cw.w <= 0 || len(ok) == 0 {
			continue
		}
		if l.Best == nil {
			rec.note(say(leftOutKey(cw.c)))
			continue
		}
		rec.Ranked = append(rec.Ranked, cw.c)
		total += cw.w
		if n := len(l.Unmeasured); n > 0 {
			rec.note(say(plural(n, "recommend.said.note_unmeasured_one", "recommend.said.note_unmeasured_many"), "Title", say(titleKey(cw.c)),
				"Who", labelsSaid(l.Unmeasured, ok)))
		}
	}
	return leads, total
}

// score is x's weighted score over the ranked criteria, with its part on
// each and the feasible targets whose quality it ties.
func (rec *Recommendation) score(x Candidate, ok []Candidate, weights []weighted, leads map[Criterion]Lead, total float64, ev Evidence) Ranked {
	r := Ranked{Candidate: x}
	sum, rawSum := 0.0, 0.0
	for _, cw := range weights {
		part, raw := relative(x, leads[cw.c], ev)
		switch cw.c {
		case Quality:
			r.QualityScore = part
		case Speed:
			r.SpeedScore = part
		case Goodput:
			r.GoodputScore = part
		case Cost:
			r.CostScore = part
		}
		if part != nil && slices.Contains(rec.Ranked, cw.c) {
			sum += cw.w * *part
			rawSum += cw.w * raw
		}
	}
	if total > 0 {
		r.Score, r.raw = sum/total, rawSum/total
	} else {
		r.Score = 1 // nothing to tell them apart
	}
	for _, y := range ok {
		if y.RunID != x.RunID && x.Quality != nil && y.Quality != nil {
			if m := Compare(x, y, Quality, ev); m.Tie {
				r.SameQualityAs = append(r.SameQualityAs, y.RunID)
			}
		}
	}
	return r
}

// relative is x's score on l's criterion: its figure relative to the
// best's, 1 when effectively tied with it; nil without the figure. raw is
// the ratio before ties are taken as 1, which orders a tie.
func relative(x Candidate, l Lead, ev Evidence) (score *float64, raw float64) {
	v := l.Criterion.Value(x)
	if v == nil || l.Best == nil {
		return nil, 0
	}
	best := *l.Criterion.Value(*l.Best)
	switch {
	case *v == best:
		raw = 1
	case l.Criterion.HigherBetter() && best > 0:
		raw = max(*v, 0) / best
	case !l.Criterion.HigherBetter() && *v > 0:
		raw = max(best, 0) / *v
	}
	s := raw
	if x.RunID == l.Best.RunID || Compare(*l.Best, x, l.Criterion, ev).Tie {
		s = 1
	}
	return &s, raw
}

// tied says whether a and b are effectively tied on every criterion
// ranked: within the noise or not significantly different where both
// have the figure, and both without it otherwise.
func tied(a, b Candidate, ranked []Criterion, ev Evidence) bool {
	for _, c := range ranked {
		m := Compare(a, b, c, ev)
		if m.Measured && !m.Tie || !m.Measured && m.AMissing != m.BMissing {
			return false
		}
	}
	return true
}

// rankTies gives rs (sorted by score, best first) their ranks: a candidate
// effectively tied with the first of an earlier rank joins that rank, and
// the list is sorted again by rank, then score.
func rankTies(rs []Ranked, ranked []Criterion, ev Evidence) {
	var heads []int // index of each rank's first candidate
	for i := range rs {
		rs[i].Rank = 0
		for k, h := range heads {
			if tied(rs[h].Candidate, rs[i].Candidate, ranked, ev) {
				rs[i].Rank = k + 1
				break
			}
		}
		if rs[i].Rank == 0 {
			heads = append(heads, i)
			rs[i].Rank = len(heads)
		}
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Rank < rs[j].Rank })
	// Ranks count the candidates before: 1, 1, 3 (competition ranking).
	group := make([]int, len(rs))
	for i := range rs {
		group[i] = rs[i].Rank
	}
	for i := range rs {
		if i > 0 && group[i] == group[i-1] {
			rs[i].Rank = rs[i-1].Rank
		} else {
			rs[i].Rank = i + 1
		}
	}
	for i := range rs {
		rs[i].TiedWith = []int64{}
		for j := range rs {
			if j != i && rs[j].Rank == rs[i].Rank {
				rs[i].TiedWith = append(rs[i].TiedWith, rs[j].RunID)
			}
		}
	}
}

// pareto returns the candidates no other beats on both quality (higher)
// and the cost-like figure (lower), in increasing order of that figure.
func pareto(cs []Candidate, cost func(Candidate) *float64) []int64 {
	var pts []Candidate
	for _, x := range cs {
		if x.Quality != nil && cost(x) != nil {
			pts = append(pts, x)
		}
	}
	var front []Candidate
	for _, a := range pts {
		dominated := false
		for _, b := range pts {
			if b.RunID == a.RunID {
				continue
			}
			if *b.Quality >= *a.Quality && *cost(b) <= *cost(a) && (*b.Quality > *a.Quality || *cost(b) < *cost(a)) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, a)
		}
	}
	sort.Slice(front, func(i, j int) bool { return *cost(front[i]) < *cost(front[j]) })
	ids := make([]int64, len(front))
	for i, x := range front {
		ids[i] = x.RunID
	}
	return ids
}

// Label names a candidate among others in English: its model, with its
// runtime and hardware when another candidate has the same model, and its
// run when even that repeats (labelSaid, worded by the catalogue).
func Label(x Candidate, among []Candidate) string {
	if l, ok := labelSaid(x, among).(Said); ok {
		return English(l)
	}
	return x.Model
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// FormatValue writes a criterion's figure with its unit.
func FormatValue(c Criterion, v float64) string {
	n, unit := formatNumber(c, v)
	return n + unit
}

// formatNumber writes a criterion's figure and, apart, its unit (with its
// leading space).
func formatNumber(c Criterion, v float64) (string, string) {
	switch c {
	case Quality:
		return fmt.Sprintf("%.3f", v), ""
	case Speed:
		return fmt.Sprintf("%.1f", v), " tokens/s"
	case Latency:
		return fmt.Sprintf("%.0f", v), " ms"
	case Cost:
		return fmt.Sprintf("$%.3f", v), " per 1M output tokens"
	case Goodput:
		return fmt.Sprintf("%.1f %%", v*100), " within the SLOs"
	}
	return fmt.Sprintf("%g", v), ""
}

// FormatPct writes a relative difference's size: "0.6 %", "12 %".
func FormatPct(p float64) string {
	p = math.Abs(p)
	switch {
	case math.IsInf(p, 0):
		return "∞ %"
	case p < 0.095:
		return fmt.Sprintf("%.2f %%", p)
	case p < 9.95:
		return fmt.Sprintf("%.1f %%", p)
	}
	return fmt.Sprintf("%.0f %%", p)
}

// Phrase says how A compares with B on the margin's criterion, as the
// rest of a sentence "A is …": "0.6 % faster", "significantly worse on
// quality (0.600 vs 0.900)". Figures are given for differences that are
// not ties.
func (m Margin) Phrase() string { return m.PhraseThan("") }

// PhraseThan is Phrase naming B: "35 % slower than b (800.0 vs 1230.0
// tokens/s)".
func (m Margin) PhraseThan(b string) string {
	if !m.Measured {
		return ""
	}
	than, figures := "", ""
	if b != "" {
		than = " than " + b
	}
	if !m.Tie || !m.Relative {
		na, unit := formatNumber(m.Criterion, m.A)
		nb, _ := formatNumber(m.Criterion, m.B)
		figures = fmt.Sprintf(" (%s vs %s%s)", na, nb, unit)
	}
	if m.Criterion == Quality {
		switch {
		case m.Better == 0 && b != "":
			return "equal in quality to " + b
		case m.Better == 0:
			return "equal in quality"
		case m.Tie && m.Better > 0:
			return "not significantly better on quality" + than
		case m.Tie:
			return "not significantly worse on quality" + than
		case m.Better > 0:
			return "significantly better on quality" + than + figures
		}
		return "significantly worse on quality" + than + figures
	}
	words := map[Criterion][3]string{
		Speed:   {"faster", "slower", "as fast"},
		Latency: {"quicker at p95", "slower at p95", "as quick at p95"},
		Cost:    {"cheaper", "more expensive", "as cheap"},
		Goodput: {"more often within the SLOs", "less often within the SLOs", "as often within the SLOs"},
	}[m.Criterion]
	switch {
	case m.Better == 0 && b != "":
		return words[2] + " as " + b
	case m.Better == 0:
		return words[2]
	case m.Better > 0:
		return m.pctWords() + words[0] + than + figures
	}
	return m.pctWords() + words[1] + than + figures
}

// pctWords is the relative margin and a space ("12 % "), or nothing when
// there is none (B is 0; the figures say the rest).
func (m Margin) pctWords() string {
	if !m.Relative {
		return ""
	}
	return FormatPct(m.Pct) + " "
}

// explainSaid is explain as a Said.
func explainSaid(r Ranked, rs []Ranked, ranked []Criterion, leads map[Criterion]Lead, among []Candidate, ev Evidence) Said {
	if len(rs) == 1 {
		return say("recommend.said.explain_only")
	}
	if len(ranked) == 0 {
		return say("recommend.said.explain_none_measured")
	}
	var main Said
	if r.RunID == rs[0].RunID {
		main = explainFirstSaid(r, rs, ranked, leads, among, ev)
	} else {
		main = explainBelowSaid(r, rs[0], ranked, among, ev)
	}
	var missing AndList
	for _, c := range ranked {
		if c.Value(r.Candidate) == nil {
			missing = append(missing, say(lowerKey(c)))
		}
	}
	if len(missing) == 0 {
		return main
	}
	return say(plural(len(missing), "recommend.said.explain_tail_one", "recommend.said.explain_tail_many"), "Main", main, "Missing", missing)
}

// bestSaid is "best quality", "fastest" or "cheapest".
func bestSaid(c Criterion) Said { return say(bestKey(c)) }

func explainFirstSaid(r Ranked, rs []Ranked, ranked []Criterion, leads map[Criterion]Lead, among []Candidate, ev Evidence) Said {
	var parts AndList
	for _, c := range ranked {
		l := leads[c]
		v := c.Value(r.Candidate)
		switch {
		case v == nil:
			continue
		case l.Best.RunID == r.RunID:
			parts = append(parts, say("recommend.said.part_leads", "Best", bestSaid(c), "Value", valueSaid(c, *v)))
		default:
			m := Compare(r.Candidate, *l.Best, c, ev)
			bestName := labelSaid(*l.Best, among)
			if m.Tie {
				parts = append(parts, say("recommend.said.part_tied", "Best", bestSaid(c), "Who", bestName, "Phrase", m.PhraseSaid(nil)))
			} else {
				parts = append(parts, m.PhraseSaid(bestName))
			}
		}
	}
	s := say("recommend.said.explain_first")
	if len(parts) > 0 {
		s = say("recommend.said.explain_first_parts", "Parts", parts)
	}
	if len(r.TiedWith) > 0 {
		var others []Candidate
		for _, x := range rs {
			if slices.Contains(r.TiedWith, x.RunID) {
				others = append(others, x.Candidate)
			}
		}
		s = say("recommend.said.explain_first_tie", "Main", s, "Who", labelsSaid(others, among))
	}
	return s
}

func explainBelowSaid(r, top Ranked, ranked []Criterion, among []Candidate, ev Evidence) Said {
	topName := labelSaid(top.Candidate, among)
	same := r.Rank == top.Rank
	var phrases AndList
	for _, c := range ranked {
		m := Compare(r.Candidate, top.Candidate, c, ev)
		if !m.Measured {
			if !m.AMissing {
				phrases = append(phrases, say("recommend.said.part_measured_where_not", "What", say(lowerKey(c)), "Who", topName))
			}
			continue
		}
		p := m.PhraseSaid(nil)
		if m.Tie && !same && c != Quality && m.Better != 0 {
			p = say("recommend.said.part_within_noise", "Phrase", p)
		}
		phrases = append(phrases, p)
	}
	code := "recommend.said.explain_below"
	switch {
	case same && len(phrases) == 0:
		code = "recommend.said.explain_below_tie_bare"
	case same:
		code = "recommend.said.explain_below_tie"
	case len(phrases) == 0:
		code = "recommend.said.explain_below_bare"
	}
	return say(code, "Name", labelSaid(r.Candidate, among), "Phrases", phrases, "Top", topName)
}
