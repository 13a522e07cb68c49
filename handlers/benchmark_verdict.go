package handlers

import (
	"context"
	"fmt"
	"math"
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

// benchmarkVerdict is the verdict block of benchmark b: a placeholder
// while runs are active.
func (s *server) benchmarkVerdict(ctx context.Context, v store.Viewer, b store.Benchmark) (benchmarks.Verdict, error) {
	vd := benchmarks.Verdict{BenchmarkID: b.ID, RecommendURL: fmt.Sprintf("/benchmarks/%d/recommend", b.ID)}
	if configurationCount(b) >= 2 {
		vd.ConfigurationsURL = fmt.Sprintf("/benchmarks/%d/configurations", b.ID)
	}
	if b.Active() {
		vd.Pending = true
		return vd, nil
	}
	j, err := conclude.WeighBenchmark(ctx, s.Store, v, b, true)
	if err != nil {
		return vd, err
	}
	if j.ScoringSoon(time.Now()) {
		vd.Pending, vd.Scoring = true, j.Scoring.Scorer
		return vd, nil
	}
	loc := i18n.From(ctx)
	for _, r := range j.Left {
		vd.Notes = append(vd.Notes, loc.T("vline.left_out", "ID", r.ID, "Model", r.ModelName, "Runtime", r.Runtime,
			"Hardware", r.HardwareProfile, "State", loc.T("state."+r.State)))
	}
	if len(j.Cands) == 0 {
		vd.Empty = loc.T("vline.empty")
		return vd, nil
	}
	vd.Compared, vd.Simulated = len(j.Cands), j.Simulated
	vd.Scorer, vd.Scorers, vd.Writable = j.ScorerKey, j.ScorerKeys, b.Writable(v)
	if len(j.Cands) > 1 {
		ids := make([]string, 0, min(len(j.Cands), 8))
		for _, c := range j.Cands[:min(len(j.Cands), 8)] {
			ids = append(ids, strconv.FormatInt(c.RunID, 10))
		}
		vd.CompareURL = "/compare?runs=" + strings.Join(ids, ",")
	}
	for _, crit := range conclude.Criteria {
		l := conclude.Leads(j.Cands, crit, j.Ev)
		if l.Absent() {
			continue
		}
		vd.Lines = append(vd.Lines, verdictLine(ctx, l, j))
	}
	return vd, nil
}

// verdictTitles are the catalogue's titles of the verdict's lines.
var verdictTitles = map[conclude.Criterion]string{
	conclude.Quality: "vline.title_quality",
	conclude.Latency: "vline.title_latency",
	conclude.Speed:   "vline.title_speed",
	conclude.Cost:    "vline.title_cost",
	conclude.Goodput: "vline.title_goodput",
}

// notMeasured says why no compared run has the criterion's figure.
func notMeasured(loc *i18n.Localizer, c conclude.Criterion, j conclude.Weighed) string {
	switch c {
	case conclude.Quality:
		switch {
		case j.Scoring.Scorer == "":
			return loc.T("vline.no_scorer")
		case len(j.Scoring.Pending) > 0:
			return loc.T("vline.scoring", "Scorer", j.Scoring.Scorer)
		}
		return loc.T("vline.no_reference")
	case conclude.Cost:
		return loc.T("vline.no_price", "Profiles", strings.Join(j.Unpriced, ", "))
	}
	return loc.T("vline.no_success")
}

func verdictLine(ctx context.Context, l conclude.Lead, j conclude.Weighed) benchmarks.VerdictLine {
	loc := i18n.From(ctx)
	line := benchmarks.VerdictLine{ID: string(l.Criterion), Title: loc.T(verdictTitles[l.Criterion])}
	if len(l.Unmeasured) > 0 && l.Best != nil {
		line.Unmeasured = labelList(ctx, l.Unmeasured, j.Cands)
	}
	if l.Best == nil {
		line.Missing = notMeasured(loc, l.Criterion, j)
		if len(l.NotComparable) > 0 { // measured, never ranked (a refusal rate): the engine's reason, as the API gives it
			line.Missing = said.WordOr(ctx, l.NotComparable[0].ReasonSaid, l.NotComparable[0].Reason)
		}
		return line
	}
	for _, x := range l.NotComparable {
		line.NotComparable = append(line.NotComparable, said.Label(ctx, x.Candidate, j.Cands)+": "+said.WordOr(ctx, x.ReasonSaid, x.Reason))
	}
	line.Winner = said.Label(ctx, *l.Best, j.Cands)
	line.Value = verdictValue(loc, l.Criterion, *l.Criterion.Value(*l.Best))
	if l.RunnerUp == nil {
		return line
	}
	m := l.Margin
	line.RunnerUp = said.Label(ctx, *l.RunnerUp, j.Cands)
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
	line.AlsoTied = labelList(ctx, also, j.Cands)
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
		conclude.Latency: "vline.quicker", conclude.Cost: "vline.cheaper", conclude.Goodput: "vline.higher"}[m.Criterion])
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
	case conclude.Goodput:
		return loc.T("vline.goodput_share", "Share", loc.Mark(fmt.Sprintf("%.1f", v*100)))
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
	if m.Criterion == conclude.Goodput {
		return sign + loc.T("vline.goodput_points", "Points", loc.Mark(fmt.Sprintf("%.1f", math.Abs(d)*100)))
	}
	return sign + verdictValue(loc, m.Criterion, math.Abs(d))
}

// verdictSummary is the verdict in one line for a list: best quality,
// fastest (output tokens/s) and cheapest, each with "≈" naming those
// effectively tied.
func verdictSummary(ctx context.Context, j conclude.Weighed) string {
	loc := i18n.From(ctx)
	if len(j.Cands) == 0 {
		return loc.T("vline.none_succeeded")
	}
	var parts []string
	// Under an open loop speed is the offered load, not the target's: the
	// summary names goodput in its place, as the verdict does.
	summarized := []conclude.Criterion{conclude.Quality, conclude.Speed, conclude.Cost}
	goodput := conclude.Leads(j.Cands, conclude.Goodput, j.Ev)
	if !goodput.Absent() {
		summarized[1] = conclude.Goodput
	}
	for _, c := range summarized {
		l := goodput
		if c != conclude.Goodput {
			l = conclude.Leads(j.Cands, c, j.Ev)
		}
		title := loc.T(map[conclude.Criterion]string{conclude.Quality: "vline.title_quality", conclude.Speed: "vline.short_speed",
			conclude.Cost: "vline.short_cost", conclude.Goodput: "vline.short_goodput"}[c])
		var what string
		switch {
		case l.Best == nil && c == conclude.Quality && j.Scoring.Scorer != "" && len(j.Scoring.Pending) > 0:
			what = loc.T("vline.sum_scoring")
		case l.Best == nil && len(l.NotComparable) > 0:
			// Measured and never ranked (a refusal rate): the reason, as
			// the verdict's line and the API give it.
			what = said.WordOr(ctx, l.NotComparable[0].ReasonSaid, l.NotComparable[0].Reason)
		case l.Best == nil:
			what = loc.T("vline.sum_not_measured")
		case len(j.Cands) == 1:
			what = loc.T("vline.sum_only", "Label", said.Label(ctx, *l.Best, j.Cands))
		case len(l.TiedWith) > 0:
			names := []string{said.Label(ctx, *l.Best, j.Cands)}
			for _, x := range l.TiedWith {
				names = append(names, said.Label(ctx, x, j.Cands))
			}
			what = loc.T("vline.sum_tie", "Labels", strings.Join(names, " ≈ "))
		case l.RunnerUp == nil:
			what = said.Label(ctx, *l.Best, j.Cands)
		default:
			what = loc.T("vline.sum_lead", "Label", said.Label(ctx, *l.Best, j.Cands), "Lead", marginWords(loc, l.Margin))
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
