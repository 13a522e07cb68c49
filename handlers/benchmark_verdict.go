package handlers

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/benchmarks"
	"github.com/ruckus/ruckus/views/said"
)

// verdictStore is what the verdict reads beyond the benchmark itself.
type verdictStore interface {
	QualityPairs(ctx context.Context, key string, runIDs []int64) ([]store.QualityPair, error)
	QualityPairsWith(ctx context.Context, key string, a int64, others []int64) ([]store.QualityPair, error)
	BenchmarkScoring(ctx context.Context, id int64) (store.Scoring, error)
}

// scoreWait is how long after a run finished the verdict waits for its
// scores (the scoring job usually takes a second or two) before it shows
// quality as not measured yet.
const scoreWait = 2 * time.Minute

// evidenceFor is the paired comparisons of quality between candidates
// scored under the same scorer identity (conclude.GatherEvidence).
func (s *server) evidenceFor(ctx context.Context, cands []conclude.Candidate) (conclude.Evidence, error) {
	return conclude.GatherEvidence(ctx, s.Store, cands)
}

// judged is a finished benchmark's runs as the verdict weighs them.
type judged struct {
	cands []conclude.Candidate
	ev    conclude.Evidence
	// left are the runs that did not succeed, left out.
	left []store.Run
	// unpriced are the hardware profiles of compared runs without a price.
	unpriced  []string
	scoring   store.Scoring
	simulated bool
	// scorerKey is the scorer identity quality is ranked by; scorerKeys
	// every identity the runs were scored under, oldest first.
	scorerKey  string
	scorerKeys []string
}

// scoringSoon says whether scores are expected any moment: a succeeded
// run is not scored yet, finished less than scoreWait ago.
func (j judged) scoringSoon(now time.Time) bool {
	if j.scoring.Scorer == "" {
		return false
	}
	for _, at := range j.scoring.Pending {
		if now.Sub(at) < scoreWait {
			return true
		}
	}
	return false
}

// statsPending says whether a run finished less than scoreWait ago has
// not had its score job yet, which keeps its figures and intervals
// (run_stats) whether or not it is scored.
func (j judged) statsPending(now time.Time) bool {
	for _, at := range j.scoring.Pending {
		if now.Sub(at) < scoreWait {
			return true
		}
	}
	return false
}

// judge reads the succeeded runs of the finished benchmark b with their
// evidence. With onlyWhenScored, a benchmark whose scores are due any
// moment (scoringSoon) is judged no further than that: the caller waits
// for them, and its poll need not read every result meanwhile.
func (s *server) judge(ctx context.Context, v store.Viewer, b store.Benchmark, onlyWhenScored bool) (judged, error) {
	var j judged
	var ids []int64
	for _, r := range b.Runs {
		if r.State != "completed" {
			j.left = append(j.left, r)
			continue
		}
		ids = append(ids, r.ID)
		if r.Mode == "sim" || r.Runtime == "sim" {
			j.simulated = true
		}
	}
	if len(ids) == 0 {
		return j, nil
	}
	var err error
	if j.scoring, err = s.Store.BenchmarkScoring(ctx, b.ID); err != nil {
		return j, err
	}
	if onlyWhenScored && j.scoringSoon(time.Now()) {
		return j, nil
	}
	runs, err := s.Store.CompareRuns(ctx, v, ids)
	if err != nil {
		return j, err
	}
	j.scorerKey, j.scorerKeys = verdictScorers(b, runs)
	// A repeated target is one candidate, its speed, latency and cost
	// tested on the spread between its runs, its quality on its first
	// run's items.
	if j.cands, err = s.weighed(ctx, runs, j.scorerKey); err != nil {
		return j, err
	}
	j.cands = conclude.MergeRepeats(j.cands)
	if j.ev, err = s.leaderEvidence(ctx, j.cands); err != nil {
		return j, err
	}
	for _, r := range runs {
		if r.PricePerHour == nil && !slices.Contains(j.unpriced, r.HardwareProfile) {
			j.unpriced = append(j.unpriced, r.HardwareProfile)
		}
	}
	return j, nil
}

// leaderEvidence is the paired comparisons a verdict draws on: the
// quality leader's with each run comparable with it (conclude.Leads picks
// the leader by its figure, and tests it against the others), read from
// quality_pairs rather than all pairs of a large benchmark.
func (s *server) leaderEvidence(ctx context.Context, cands []conclude.Candidate) (conclude.Evidence, error) {
	var ev conclude.Evidence
	l := conclude.Leads(cands, conclude.Quality, ev)
	if l.Best == nil || l.RunnerUp == nil {
		return ev, nil
	}
	var others []int64
	for _, c := range cands {
		if c.Quality != nil && c.ScorerKey == l.Best.ScorerKey && c.RunID != l.Best.RunID {
			others = append(others, c.RunID)
		}
	}
	pairs, err := s.Store.QualityPairsWith(ctx, l.Best.ScorerKey, l.Best.RunID, others)
	if err != nil {
		return ev, err
	}
	for _, p := range pairs {
		ev.Paired = append(ev.Paired, conclude.Diff(p))
	}
	return ev, nil
}

// verdictScorers are the scorer identities benchmark b's runs were scored
// under, in the order they first were, and the one its verdict ranks
// quality by: the one its owner chose, else the one most runs were scored
// under (on a tie, the earliest: the benchmark's own scorer scores first).
func verdictScorers(b store.Benchmark, runs []store.RunFigures) (key string, keys []string) {
	count := map[string]int{}
	first := map[string]time.Time{}
	for _, r := range runs {
		for _, q := range r.Qualities {
			count[q.ScorerKey]++
			if t, ok := first[q.ScorerKey]; !ok || q.ScoredAt.Before(t) {
				first[q.ScorerKey] = q.ScoredAt
			}
		}
	}
	for k := range count {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y string) int {
		if c := first[x].Compare(first[y]); c != 0 {
			return c
		}
		return strings.Compare(x, y)
	})
	if b.VerdictScorerKey != "" {
		return b.VerdictScorerKey, keys
	}
	for _, k := range keys {
		if key == "" || count[k] > count[key] {
			key = k
		}
	}
	return key, keys
}

// underScorer gives each candidate its run's quality under scorer
// identity key (none when the run was not scored under it).
func underScorer(cs []conclude.Candidate, runs []store.RunFigures, key string) []conclude.Candidate {
	for i, r := range runs {
		q, ok := r.QualityUnder(key)
		cs[i].ScorerKey = key
		cs[i].Quality, cs[i].QualityLo, cs[i].QualityHi = nil, nil, nil
		if ok {
			cs[i].Quality, cs[i].QualityLo, cs[i].QualityHi = q.Mean, q.Lo, q.Hi
		}
	}
	return cs
}

// benchmarkVerdict is the verdict block of benchmark b: a placeholder
// while runs are active.
func (s *server) benchmarkVerdict(ctx context.Context, v store.Viewer, b store.Benchmark) (benchmarks.Verdict, error) {
	vd := benchmarks.Verdict{BenchmarkID: b.ID, RecommendURL: fmt.Sprintf("/benchmarks/%d/recommend", b.ID)}
	if b.Active() {
		vd.Pending = true
		return vd, nil
	}
	j, err := s.judge(ctx, v, b, true)
	if err != nil {
		return vd, err
	}
	if j.scoringSoon(time.Now()) {
		vd.Pending, vd.Scoring = true, j.scoring.Scorer
		return vd, nil
	}
	loc := i18n.From(ctx)
	for _, r := range j.left {
		vd.Notes = append(vd.Notes, loc.T("vline.left_out", "ID", r.ID, "Model", r.ModelName, "Runtime", r.Runtime,
			"Hardware", r.HardwareProfile, "State", loc.T("state."+r.State)))
	}
	if len(j.cands) == 0 {
		vd.Empty = loc.T("vline.empty")
		return vd, nil
	}
	vd.Compared, vd.Simulated = len(j.cands), j.simulated
	vd.Scorer, vd.Scorers, vd.Writable = j.scorerKey, j.scorerKeys, b.Writable(v)
	if len(j.cands) > 1 {
		ids := make([]string, 0, min(len(j.cands), 8))
		for _, c := range j.cands[:min(len(j.cands), 8)] {
			ids = append(ids, strconv.FormatInt(c.RunID, 10))
		}
		vd.CompareURL = "/compare?runs=" + strings.Join(ids, ",")
	}
	for _, crit := range conclude.Criteria {
		vd.Lines = append(vd.Lines, verdictLine(ctx, conclude.Leads(j.cands, crit, j.ev), j))
	}
	return vd, nil
}

// verdictTitles are the catalogue's titles of the verdict's lines.
var verdictTitles = map[conclude.Criterion]string{
	conclude.Quality: "vline.title_quality",
	conclude.Latency: "vline.title_latency",
	conclude.Speed:   "vline.title_speed",
	conclude.Cost:    "vline.title_cost",
}

// notMeasured says why no compared run has the criterion's figure.
func notMeasured(loc *i18n.Localizer, c conclude.Criterion, j judged) string {
	switch c {
	case conclude.Quality:
		switch {
		case j.scoring.Scorer == "":
			return loc.T("vline.no_scorer")
		case len(j.scoring.Pending) > 0:
			return loc.T("vline.scoring", "Scorer", j.scoring.Scorer)
		}
		return loc.T("vline.no_reference")
	case conclude.Cost:
		return loc.T("vline.no_price", "Profiles", strings.Join(j.unpriced, ", "))
	}
	return loc.T("vline.no_success")
}

func verdictLine(ctx context.Context, l conclude.Lead, j judged) benchmarks.VerdictLine {
	loc := i18n.From(ctx)
	line := benchmarks.VerdictLine{ID: string(l.Criterion), Title: loc.T(verdictTitles[l.Criterion])}
	if len(l.Unmeasured) > 0 && l.Best != nil {
		line.Unmeasured = labelList(ctx, l.Unmeasured, j.cands)
	}
	if l.Best == nil {
		line.Missing = notMeasured(loc, l.Criterion, j)
		if len(l.NotComparable) > 0 { // measured, never ranked (a refusal rate): the engine's reason, as the API gives it
			line.Missing = said.WordOr(ctx, l.NotComparable[0].ReasonSaid, l.NotComparable[0].Reason)
		}
		return line
	}
	for _, x := range l.NotComparable {
		line.NotComparable = append(line.NotComparable, said.Label(ctx, x.Candidate, j.cands)+": "+said.WordOr(ctx, x.ReasonSaid, x.Reason))
	}
	line.Winner = said.Label(ctx, *l.Best, j.cands)
	line.Value = verdictValue(loc, l.Criterion, *l.Criterion.Value(*l.Best))
	if l.RunnerUp == nil {
		return line
	}
	m := l.Margin
	line.RunnerUp = said.Label(ctx, *l.RunnerUp, j.cands)
	if m.Better == 0 {
		line.Margin = loc.T("vline.level_with", "RunnerUp", line.RunnerUp, "Value", verdictValue(loc, l.Criterion, m.B))
	} else {
		line.Margin = loc.T("vline.margin", "Lead", marginWords(loc, m), "RunnerUp", line.RunnerUp,
			"Value", verdictValue(loc, l.Criterion, m.B), "Diff", absDiff(loc, m))
	}
	line.Tie = m.Tie
	line.Basis = said.WordOr(ctx, m.BasisSaid, m.Basis)
	switch {
	case m.Tie && m.Better == 0:
		line.Significance = loc.T("vline.equal")
	case m.P == nil:
		line.Significance = loc.T("vline.untested")
	case m.Tie:
		line.Significance = loc.T("vline.tie")
	default:
		line.Significance = loc.T("vline.significant")
	}
	var also []conclude.Candidate
	for _, x := range l.TiedWith {
		if x.RunID != l.RunnerUp.RunID {
			also = append(also, x)
		}
	}
	line.AlsoTied = labelList(ctx, also, j.cands)
	return line
}

func labelList(ctx context.Context, xs, among []conclude.Candidate) string {
	names := make([]string, len(xs))
	for i, x := range xs {
		names[i] = said.Label(ctx, x, among)
	}
	return strings.Join(names, ", ")
}

// marginWords is the winner's relative lead: "0.6 % faster".
func marginWords(loc *i18n.Localizer, m conclude.Margin) string {
	word := loc.T(map[conclude.Criterion]string{conclude.Quality: "vline.higher", conclude.Speed: "vline.faster",
		conclude.Latency: "vline.quicker", conclude.Cost: "vline.cheaper"}[m.Criterion])
	if m.Better == 0 {
		return loc.T("vline.level")
	}
	if !m.Relative {
		return word
	}
	return loc.Mark(conclude.FormatPct(m.Pct)) + " " + word
}

// verdictValue is a criterion's figure with its unit, in the reader's
// language: "0.850", "123.4 tokens/s", "812 ms", "$0.120 per 1M output
// tokens".
func verdictValue(loc *i18n.Localizer, c conclude.Criterion, v float64) string {
	switch c {
	case conclude.Quality:
		return loc.Mark(fmt.Sprintf("%.3f", v))
	case conclude.Speed:
		return loc.Mark(fmt.Sprintf("%.1f", v)) + " tokens/s"
	case conclude.Latency:
		return fmt.Sprintf("%.0f ms", v)
	}
	return loc.T("vline.per_million", "Price", "$"+loc.Mark(fmt.Sprintf("%.3f", v)))
}

// absDiff is the winner's lead in the figure's unit, signed as the figure
// moves: "+0.030", "+6.0 tokens/s", "−30 ms", "−$0.003".
func absDiff(loc *i18n.Localizer, m conclude.Margin) string {
	d := m.A - m.B
	sign := "+"
	if d < 0 {
		sign = "−"
	}
	return sign + verdictValue(loc, m.Criterion, math.Abs(d))
}

// verdictSummary is the verdict in one line for a list: best quality,
// fastest (output tokens/s) and cheapest, each with "≈" naming those
// effectively tied.
func verdictSummary(ctx context.Context, j judged) string {
	loc := i18n.From(ctx)
	if len(j.cands) == 0 {
		return loc.T("vline.none_succeeded")
	}
	var parts []string
	for _, c := range []conclude.Criterion{conclude.Quality, conclude.Speed, conclude.Cost} {
		l := conclude.Leads(j.cands, c, j.ev)
		title := loc.T(map[conclude.Criterion]string{conclude.Quality: "vline.title_quality", conclude.Speed: "vline.short_speed", conclude.Cost: "vline.short_cost"}[c])
		var what string
		switch {
		case l.Best == nil && c == conclude.Quality && j.scoring.Scorer != "" && len(j.scoring.Pending) > 0:
			what = loc.T("vline.sum_scoring")
		case l.Best == nil && len(l.NotComparable) > 0:
			// Measured and never ranked (a refusal rate): the reason, as
			// the verdict's line and the API give it.
			what = said.WordOr(ctx, l.NotComparable[0].ReasonSaid, l.NotComparable[0].Reason)
		case l.Best == nil:
			what = loc.T("vline.sum_not_measured")
		case len(j.cands) == 1:
			what = loc.T("vline.sum_only", "Label", said.Label(ctx, *l.Best, j.cands))
		case len(l.TiedWith) > 0:
			names := []string{said.Label(ctx, *l.Best, j.cands)}
			for _, x := range l.TiedWith {
				names = append(names, said.Label(ctx, x, j.cands))
			}
			what = loc.T("vline.sum_tie", "Labels", strings.Join(names, " ≈ "))
		case l.RunnerUp == nil:
			what = said.Label(ctx, *l.Best, j.cands)
		default:
			what = loc.T("vline.sum_lead", "Label", said.Label(ctx, *l.Best, j.cands), "Lead", marginWords(loc, l.Margin))
		}
		parts = append(parts, title+": "+what)
	}
	return strings.Join(parts, " · ")
}

// showVerdictFragment is the verdict block alone, polled by the benchmark
// page while its runs are active (a shared live fragment, run -1).
func (s *server) showVerdictFragment(c *fiber.Ctx) error {
	return s.serveLive(c, -1, func(b store.Benchmark, _ bool) (templ.Component, error) {
		v, err := s.benchmarkVerdict(c.UserContext(), store.Viewer{UserID: b.OwnerID}, b)
		return benchmarks.VerdictBlock(v), err
	})
}
