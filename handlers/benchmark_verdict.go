package handlers

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/advise"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/benchmarks"
)

// verdictStore is what the verdict reads beyond the benchmark itself.
type verdictStore interface {
	RunItemScores(ctx context.Context, runIDs []int64) (map[int64][]store.ItemScore, error)
	E2EP95Intervals(ctx context.Context, runIDs []int64) (map[int64]store.QuantileInterval, error)
	BenchmarkScoring(ctx context.Context, id int64) (store.Scoring, error)
}

// scoreWait is how long after a run finished the verdict waits for its
// scores (the scoring job usually takes a second or two) before it shows
// quality as not measured yet.
const scoreWait = 2 * time.Minute

// evidence is what tells a real difference from noise among a
// benchmark's runs: paired comparisons of their scores item by item and
// the spread of their p95 E2E latency. Both read every result, so they
// are kept per benchmark while its runs stay as they were.
type evidence struct {
	paired []advise.QualityDiff
	e2e    map[int64]store.QuantileInterval
}

// evidenceCache keeps evidence by benchmark, with the fingerprint of the
// runs it was read from; the zero value is ready.
type evidenceCache struct {
	mu sync.Mutex
	m  map[int64]cachedEvidence
}

type cachedEvidence struct {
	fingerprint string
	ev          evidence
}

// maxCachedEvidence bounds the cache; past it, it starts again.
const maxCachedEvidence = 1024

// fingerprint changes whenever a run's results or scores may have: a new
// attempt, another state, more items done or scored, a new quality.
func fingerprint(runs []store.Run) string {
	var b strings.Builder
	for _, r := range runs {
		fmt.Fprintf(&b, "%d:%s:%d:%d:%d:%d", r.ID, r.State, r.Attempt, r.Completed, r.Scored, r.Errors)
		if r.Quality != nil {
			fmt.Fprintf(&b, ":%g", *r.Quality)
		}
		if r.FinishedAt != nil {
			fmt.Fprintf(&b, ":%d", r.FinishedAt.UnixNano())
		}
		b.WriteByte(';')
	}
	return b.String()
}

// evidenceFor returns the evidence over the runs ids of benchmark b. The
// verdict asks over the succeeded runs, the recommendation over all: the
// ids are part of what the cached evidence was read for.
func (s *server) evidenceFor(ctx context.Context, b store.Benchmark, ids []int64) (evidence, error) {
	fp := fmt.Sprint(ids) + "|" + fingerprint(b.Runs)
	s.evidence.mu.Lock()
	e, ok := s.evidence.m[b.ID]
	s.evidence.mu.Unlock()
	if ok && e.fingerprint == fp {
		return e.ev, nil
	}
	ev, err := s.gatherEvidence(ctx, ids)
	if err != nil {
		return ev, err
	}
	s.evidence.mu.Lock()
	if s.evidence.m == nil || len(s.evidence.m) >= maxCachedEvidence {
		s.evidence.m = map[int64]cachedEvidence{}
	}
	s.evidence.m[b.ID] = cachedEvidence{fingerprint: fp, ev: ev}
	s.evidence.mu.Unlock()
	return ev, nil
}

// gatherEvidence reads the runs' paired comparisons of quality and their
// end-to-end p95 intervals.
func (s *server) gatherEvidence(ctx context.Context, ids []int64) (evidence, error) {
	var ev evidence
	var err error
	if ev.paired, err = s.pairedDiffs(ctx, ids); err != nil {
		return ev, err
	}
	ev.e2e, err = s.Store.E2EP95Intervals(ctx, ids)
	return ev, err
}

// pairedDiffs compares every two of the runs item by item (McNemar for
// 0/1 scores, else the paired bootstrap; see advise.PairRuns), A the
// lower run id. Pairs with no item scored by both are left out: their
// quality is compared by interval overlap instead.
func (s *server) pairedDiffs(ctx context.Context, ids []int64) ([]advise.QualityDiff, error) {
	scores, err := s.Store.RunItemScores(ctx, ids)
	if err != nil {
		return nil, err
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	var out []advise.QualityDiff
	for i, a := range sorted {
		for _, b := range sorted[i+1:] {
			if d, ok := advise.PairRuns(a, b, itemScores(scores[a]), itemScores(scores[b])); ok {
				out = append(out, d)
			}
		}
	}
	return out, nil
}

// itemScores converts the store's item scores for advise.
func itemScores(xs []store.ItemScore) []advise.ItemScore {
	out := make([]advise.ItemScore, len(xs))
	for i, x := range xs {
		out[i] = advise.ItemScore{Idx: x.Idx, Score: x.Score}
	}
	return out
}

// judged is a finished benchmark's runs as the verdict weighs them.
type judged struct {
	cands []advise.Candidate
	ev    advise.Evidence
	// left are the runs that did not succeed, left out.
	left []store.Run
	// unpriced are the hardware profiles of compared runs without a price.
	unpriced  []string
	scoring   store.Scoring
	simulated bool
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
	ev, err := s.evidenceFor(ctx, b, ids)
	if err != nil {
		return j, err
	}
	j.cands = withIntervals(candidates(runs), ev.e2e)
	j.ev = advise.Evidence{Paired: ev.paired}
	for _, r := range runs {
		if r.PricePerHour == nil && !slices.Contains(j.unpriced, r.HardwareProfile) {
			j.unpriced = append(j.unpriced, r.HardwareProfile)
		}
	}
	return j, nil
}

// withIntervals adds each candidate's p95 E2E interval.
func withIntervals(cs []advise.Candidate, e2e map[int64]store.QuantileInterval) []advise.Candidate {
	for i, c := range cs {
		if q, ok := e2e[c.RunID]; ok && c.E2Ep95 != nil {
			lo, hi := q.Lo, q.Hi
			cs[i].E2Ep95Lo, cs[i].E2Ep95Hi = &lo, &hi
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
	for _, r := range j.left {
		vd.Notes = append(vd.Notes, fmt.Sprintf("Run %d (%s on %s/%s) %s, so the verdict leaves it out.", r.ID, r.ModelName, r.Runtime, r.HardwareProfile, r.State))
	}
	if len(j.cands) == 0 {
		vd.Empty = "No run succeeded, so there is nothing to compare. Retry a run from the table below."
		return vd, nil
	}
	vd.Compared, vd.Simulated = len(j.cands), j.simulated
	if len(j.cands) > 1 {
		ids := make([]string, 0, min(len(j.cands), 8))
		for _, c := range j.cands[:min(len(j.cands), 8)] {
			ids = append(ids, strconv.FormatInt(c.RunID, 10))
		}
		vd.CompareURL = "/compare?runs=" + strings.Join(ids, ",")
	}
	for _, crit := range advise.Criteria {
		vd.Lines = append(vd.Lines, verdictLine(advise.Leads(j.cands, crit, j.ev), j))
	}
	return vd, nil
}

var verdictTitles = map[advise.Criterion]string{
	advise.Quality: "Best quality",
	advise.Latency: "Fastest: p95 end-to-end latency",
	advise.Speed:   "Fastest: output tokens/s",
	advise.Cost:    "Cheapest per 1M output tokens",
}

// notMeasured says why no compared run has the criterion's figure.
func notMeasured(c advise.Criterion, j judged) string {
	switch c {
	case advise.Quality:
		switch {
		case j.scoring.Scorer == "":
			return "Not measured: the benchmark names no scorer and its dataset has no references to score against. Choose a scorer in the next benchmark."
		case len(j.scoring.Pending) > 0:
			return "Not measured yet: scoring with " + j.scoring.Scorer + " has not finished (administrators see it under Jobs)."
		}
		return "Not measured: no item has a reference to score against."
	case advise.Cost:
		return "Not measured: no price per hour for " + strings.Join(j.unpriced, ", ") + " (administrators set it under Hardware)."
	}
	return "Not measured: no request succeeded."
}

func verdictLine(l advise.Lead, j judged) benchmarks.VerdictLine {
	line := benchmarks.VerdictLine{ID: string(l.Criterion), Title: verdictTitles[l.Criterion]}
	if len(l.Unmeasured) > 0 && l.Best != nil {
		line.Unmeasured = labelList(l.Unmeasured, j.cands)
	}
	if l.Best == nil {
		line.Missing = notMeasured(l.Criterion, j)
		return line
	}
	line.Winner = advise.Label(*l.Best, j.cands)
	line.Value = advise.FormatValue(l.Criterion, *l.Criterion.Value(*l.Best))
	if l.RunnerUp == nil {
		return line
	}
	m := l.Margin
	line.RunnerUp = advise.Label(*l.RunnerUp, j.cands)
	if m.Better == 0 {
		line.Margin = fmt.Sprintf("Level with %s (%s).", line.RunnerUp, advise.FormatValue(l.Criterion, m.B))
	} else {
		line.Margin = fmt.Sprintf("%s than %s (%s), %s", marginWords(m), line.RunnerUp, advise.FormatValue(l.Criterion, m.B), absDiff(m))
	}
	line.Tie = m.Tie
	line.Basis = m.Basis
	switch {
	case m.Tie && m.Better == 0:
		line.Significance = "equal"
	case m.Tie:
		line.Significance = "not significant: effectively a tie"
	default:
		line.Significance = "significant"
	}
	var also []advise.Candidate
	for _, x := range l.TiedWith {
		if x.RunID != l.RunnerUp.RunID {
			also = append(also, x)
		}
	}
	line.AlsoTied = labelList(also, j.cands)
	return line
}

func labelList(xs, among []advise.Candidate) string {
	names := make([]string, len(xs))
	for i, x := range xs {
		names[i] = advise.Label(x, among)
	}
	return strings.Join(names, ", ")
}

// marginWords is the winner's relative lead: "0.6 % faster".
func marginWords(m advise.Margin) string {
	word := map[advise.Criterion]string{advise.Quality: "higher", advise.Speed: "faster", advise.Latency: "quicker", advise.Cost: "cheaper"}[m.Criterion]
	if m.Better == 0 {
		return "level with"
	}
	if math.IsInf(m.Pct, 0) {
		return word
	}
	return advise.FormatPct(m.Pct) + " " + word
}

// absDiff is the winner's lead in the figure's unit, signed as the figure
// moves: "+0.030", "+6.0 tokens/s", "−30 ms", "−$0.003".
func absDiff(m advise.Margin) string {
	d := m.A - m.B
	sign := "+"
	if d < 0 {
		sign = "−"
	}
	d = math.Abs(d)
	switch m.Criterion {
	case advise.Quality:
		return fmt.Sprintf("%s%.3f", sign, d)
	case advise.Speed:
		return fmt.Sprintf("%s%.1f tokens/s", sign, d)
	case advise.Latency:
		return fmt.Sprintf("%s%.0f ms", sign, d)
	}
	return fmt.Sprintf("%s$%.3f per 1M output tokens", sign, d)
}

// verdictSummary is the verdict in one line for a list: best quality,
// fastest (output tokens/s) and cheapest, each with "≈" naming those
// effectively tied.
func verdictSummary(j judged) string {
	if len(j.cands) == 0 {
		return "No run succeeded."
	}
	var parts []string
	for _, c := range []advise.Criterion{advise.Quality, advise.Speed, advise.Cost} {
		l := advise.Leads(j.cands, c, j.ev)
		title := map[advise.Criterion]string{advise.Quality: "Best quality", advise.Speed: "Fastest", advise.Cost: "Cheapest"}[c]
		switch {
		case l.Best == nil && c == advise.Quality && j.scoring.Scorer != "" && len(j.scoring.Pending) > 0:
			parts = append(parts, title+": scoring…")
		case l.Best == nil:
			parts = append(parts, title+": not measured")
		case len(j.cands) == 1:
			parts = append(parts, title+": "+advise.Label(*l.Best, j.cands)+" (only target)")
		case len(l.TiedWith) > 0:
			names := []string{advise.Label(*l.Best, j.cands)}
			for _, x := range l.TiedWith {
				names = append(names, advise.Label(x, j.cands))
			}
			parts = append(parts, title+": "+strings.Join(names, " ≈ ")+" (tie)")
		case l.RunnerUp == nil:
			parts = append(parts, title+": "+advise.Label(*l.Best, j.cands))
		default:
			parts = append(parts, fmt.Sprintf("%s: %s (%s)", title, advise.Label(*l.Best, j.cands), marginWords(l.Margin)))
		}
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
