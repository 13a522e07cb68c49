package charts

import (
	"context"
	"fmt"
	"sort"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/jobs"
)

// SweepRun is one run's sweep, as a comparison overlays several.
type SweepRun struct {
	Name       string
	Steps      []jobs.StepSummary
	Saturation *jobs.Saturation
}

// SweepCharts draws sweeps' curves, one series per run (and per
// percentile), with the steps in order of achieved rate: achieved vs
// offered rate, TTFT and E2E percentiles vs rate, goodput vs rate, and the
// decode speed one user sees vs total output tokens/s. A run alone has its
// saturation point marked on the latency and goodput charts. Words are in
// the language of ctx.
func SweepCharts(ctx context.Context, runs []SweepRun) []Chart {
	loc := i18n.From(ctx)
	achievedRPS := loc.T("chart.achieved_rps")
	achieved := Chart{ID: "sweep-rate", Title: loc.T("chart.sweep_rate"), XLabel: loc.T("chart.offered_rps"), YLabel: achievedRPS}
	ttft := Chart{ID: "sweep-ttft", Title: loc.T("chart.sweep_ttft"), XLabel: achievedRPS, YLabel: "TTFT ms"}
	e2e := Chart{ID: "sweep-e2e", Title: loc.T("chart.sweep_e2e"), XLabel: achievedRPS, YLabel: "E2E ms"}
	good := Chart{ID: "sweep-goodput", Title: loc.T("chart.sweep_goodput"), XLabel: achievedRPS, YLabel: loc.T("chart.goodput_rps")}
	users := Chart{ID: "sweep-users", Title: loc.T("chart.sweep_users"), XLabel: loc.T("chart.all_users_tps"), YLabel: loc.T("chart.per_user_tps")}
	f2 := func(v float64) string { return loc.Mark(fmt.Sprintf("%.2f", v)) }
	f1 := func(v float64) string { return loc.Mark(fmt.Sprintf("%.1f", v)) }
	for _, r := range runs {
		steps := append([]jobs.StepSummary(nil), r.Steps...)
		sort.SliceStable(steps, func(a, b int) bool { return steps[a].AchievedRPS < steps[b].AchievedRPS })
		prefix := ""
		if len(runs) > 1 {
			prefix = r.Name + " "
		}
		ach := Series{Name: prefix + loc.T("chart.achieved")}
		t50, t95, t99 := Series{Name: prefix + "TTFT p50"}, Series{Name: prefix + "TTFT p95"}, Series{Name: prefix + "TTFT p99"}
		e50, e95, e99 := Series{Name: prefix + "E2E p50"}, Series{Name: prefix + "E2E p95"}, Series{Name: prefix + "E2E p99"}
		gp := Series{Name: prefix + "goodput"}
		us := Series{Name: prefix + loc.T("chart.per_user")}
		for _, s := range steps {
			at := fmt.Sprintf("%s%s (%s req/s)", prefix, s.Name, f2(s.AchievedRPS))
			offered := s.AchievedRPS // a closed-loop step offers what it achieves
			if s.OfferedRPS != nil {
				offered = *s.OfferedRPS
			}
			ach.Points = append(ach.Points, Point{X: offered, Y: s.AchievedRPS, Label: loc.T("chart.rate_point", "At", at, "Offered", f2(offered), "Achieved", f2(s.AchievedRPS))})
			x := s.AchievedRPS
			for _, p := range []struct {
				s    *Series
				v    float64
				what string
			}{{&t50, s.TTFT.P50, "TTFT p50"}, {&t95, s.TTFT.P95, "TTFT p95"}, {&t99, s.TTFT.P99, "TTFT p99"},
				{&e50, s.E2E.P50, "E2E p50"}, {&e95, s.E2E.P95, "E2E p95"}, {&e99, s.E2E.P99, "E2E p99"}} {
				p.s.Points = append(p.s.Points, Point{X: x, Y: p.v, Label: fmt.Sprintf("%s: %s %s ms", at, p.what, f1(p.v))})
			}
			gp.Points = append(gp.Points, Point{X: x, Y: s.GoodputRPS, Label: loc.T("chart.goodput_point", "At", at, "RPS", f2(s.GoodputRPS), "Good", s.GoodRequests, "Requests", s.Requests)})
			if s.TokensPerSPerUser > 0 {
				us.Points = append(us.Points, Point{X: s.OutputTokensPerS, Y: s.TokensPerSPerUser,
					Label: loc.T("chart.users_point", "At", at, "PerUser", f1(s.TokensPerSPerUser), "All", f1(s.OutputTokensPerS))})
			}
		}
		achieved.Series = append(achieved.Series, ach)
		ttft.Series = append(ttft.Series, t50, t95, t99)
		e2e.Series = append(e2e.Series, e50, e95, e99)
		good.Series = append(good.Series, gp)
		users.Series = append(users.Series, us)
	}
	if len(runs) == 1 && runs[0].Saturation != nil && runs[0].Saturation.HoldsAtRPS != nil {
		x := *runs[0].Saturation.HoldsAtRPS
		for _, c := range []*Chart{&ttft, &e2e, &good} {
			_, _, _, y1 := c.bounds()
			label := loc.T("chart.saturation_point", "RPS", f2(x))
			c.Series = append(c.Series, Series{Name: loc.T("chart.slos_hold"), Points: []Point{
				{X: x, Y: 0, Label: label}, {X: x, Y: y1, Label: label}}})
		}
	}
	return []Chart{achieved, ttft, e2e, good, users}
}

// SaturationText says where the SLOs stop holding, in words, in the
// language of ctx.
func SaturationText(ctx context.Context, s *jobs.Saturation) string {
	loc := i18n.From(ctx)
	rps := func(v float64) string { return loc.Mark(fmt.Sprintf("%.2f", v)) }
	switch {
	case s == nil:
		return ""
	case s.HoldsAtRPS == nil && s.FailsAtRPS != nil:
		return loc.T("chart.saturated_below", "Share", fmt.Sprintf("%.0f", s.GoodputShare*100), "Fails", rps(*s.FailsAtRPS), "FailsStep", s.FailsStep)
	case s.HoldsAtRPS != nil && s.FailsAtRPS == nil:
		return loc.T("chart.saturation_above", "Share", fmt.Sprintf("%.0f", s.GoodputShare*100), "Holds", rps(*s.HoldsAtRPS), "HoldsStep", s.HoldsStep)
	case s.HoldsAtRPS != nil:
		return loc.T("chart.saturation_between", "Holds", rps(*s.HoldsAtRPS), "HoldsStep", s.HoldsStep,
			"Share", fmt.Sprintf("%.0f", s.GoodputShare*100), "Fails", rps(*s.FailsAtRPS), "FailsStep", s.FailsStep)
	}
	return ""
}
