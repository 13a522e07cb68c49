package charts

import (
	"context"
	"fmt"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/jobs"
)

// LengthCharts draws a length sweep's curves against its lengths
// (docs/metrics.md#length-sweeps): TTFT p50 and p95 against the input
// length, prefill tokens/s (input tokens ÷ TTFT) with its 95 % interval,
// ITL p50 and p95 against the mean context length while decoding (input
// plus half the mean answer), and the runtime's highest KV-cache usage
// and most requests waiting, where its /metrics were read. The input length is
// the one the runtime counted (the median prompt), or the asked one where
// it reported none. Words are in the language of ctx.
func LengthCharts(ctx context.Context, steps []jobs.StepSummary) []Chart {
	loc := i18n.From(ctx)
	input := loc.T("chart.input_tokens")
	ttft := Chart{ID: "length-ttft", Title: loc.T("chart.length_ttft"), XLabel: input, YLabel: "TTFT ms"}
	prefill := Chart{ID: "length-prefill", Title: loc.T("chart.length_prefill"), XLabel: input, YLabel: loc.T("chart.prefill_tps")}
	itl := Chart{ID: "length-itl", Title: loc.T("chart.length_itl"), XLabel: loc.T("chart.context_tokens"), YLabel: "ITL ms"}
	kvChart := Chart{ID: "length-kv", Title: loc.T("chart.length_kv"), XLabel: input, YLabel: loc.T("chart.kv_percent")}
	waitChart := Chart{ID: "length-waiting", Title: loc.T("chart.length_waiting"), XLabel: input, YLabel: loc.T("chart.waiting")}
	t50, t95 := Series{Name: "TTFT p50"}, Series{Name: "TTFT p95"}
	pm, plo, phi := Series{Name: loc.T("chart.median")}, Series{Name: loc.T("chart.interval_lo")}, Series{Name: loc.T("chart.interval_hi")}
	i50, i95 := Series{Name: "ITL p50"}, Series{Name: "ITL p95"}
	kv, wait := Series{Name: loc.T("chart.kv_usage")}, Series{Name: loc.T("chart.waiting")}
	f0 := func(v float64) string { return loc.Mark(fmt.Sprintf("%.0f", v)) }
	f1 := func(v float64) string { return loc.Mark(fmt.Sprintf("%.1f", v)) }
	for _, s := range steps {
		if s.InputTarget == 0 || s.OK == 0 {
			continue
		}
		x := float64(s.InputTarget)
		if s.PromptTokens != nil {
			x = s.PromptTokens.P50
		}
		at := loc.T("chart.length_at", "Step", s.Name, "Tokens", f0(x))
		t50.Points = append(t50.Points, Point{X: x, Y: s.TTFT.P50, Label: at + ": TTFT p50 " + f1(s.TTFT.P50) + " ms"})
		t95.Points = append(t95.Points, Point{X: x, Y: s.TTFT.P95, Label: at + ": TTFT p95 " + f1(s.TTFT.P95) + " ms"})
		if p := s.PrefillTokensPerS; p != nil {
			pm.Points = append(pm.Points, Point{X: x, Y: p.Median, Label: loc.T("chart.prefill_point", "At", at, "TPS", f0(p.Median))})
			if p.Lo != nil && p.Hi != nil {
				plo.Points = append(plo.Points, Point{X: x, Y: *p.Lo, Label: loc.T("chart.prefill_point", "At", at, "TPS", f0(*p.Lo))})
				phi.Points = append(phi.Points, Point{X: x, Y: *p.Hi, Label: loc.T("chart.prefill_point", "At", at, "TPS", f0(*p.Hi))})
			}
		}
		if s.ITLTokens > 0 {
			ctxLen := x + float64(s.OutputTokens)/float64(s.OK)/2
			cl := loc.T("chart.length_at", "Step", s.Name, "Tokens", f0(ctxLen))
			i50.Points = append(i50.Points, Point{X: ctxLen, Y: s.ITL.P50, Label: cl + ": ITL p50 " + f1(s.ITL.P50) + " ms"})
			i95.Points = append(i95.Points, Point{X: ctxLen, Y: s.ITL.P95, Label: cl + ": ITL p95 " + f1(s.ITL.P95) + " ms"})
		}
		if r := s.Runtime; r != nil && r.Readings > 0 {
			if r.MaxKVCache != nil {
				kv.Points = append(kv.Points, Point{X: x, Y: *r.MaxKVCache * 100, Label: loc.T("chart.kv_point", "At", at, "Share", f1(*r.MaxKVCache*100))})
			}
			if r.MaxWaiting != nil {
				wait.Points = append(wait.Points, Point{X: x, Y: *r.MaxWaiting, Label: loc.T("chart.waiting_point", "At", at, "N", f0(*r.MaxWaiting))})
			}
		}
	}
	ttft.Series = []Series{t50, t95}
	prefill.Series = []Series{pm, plo, phi}
	itl.Series = []Series{i50, i95}
	out := []Chart{ttft, prefill, itl}
	if len(kv.Points) > 0 {
		kvChart.Series = []Series{kv}
		out = append(out, kvChart)
	}
	if len(wait.Points) > 0 {
		waitChart.Series = []Series{wait}
		out = append(out, waitChart)
	}
	return out
}

// LengthLimitsText says where a length sweep's runtime began to queue and
// to preempt, in words, in the language of ctx; empty for other runs.
func LengthLimitsText(ctx context.Context, l *jobs.LengthLimits) string {
	loc := i18n.From(ctx)
	switch {
	case l == nil:
		return ""
	case l.Measured == 0:
		return loc.T("chart.length_unread")
	case l.QueueingStep == "" && l.PreemptingStep == "":
		return loc.T("chart.length_never", "N", l.Measured)
	}
	var parts []string
	if l.QueueingStep != "" {
		parts = append(parts, loc.T("chart.length_queueing", "Tokens", l.QueueingInput, "Step", l.QueueingStep))
	} else {
		parts = append(parts, loc.T("chart.length_no_queueing"))
	}
	if l.PreemptingStep != "" {
		parts = append(parts, loc.T("chart.length_preempting", "Tokens", l.PreemptingInput, "Step", l.PreemptingStep))
	} else {
		parts = append(parts, loc.T("chart.length_no_preempting"))
	}
	return loc.T("chart.length_limits", "Queueing", parts[0], "Preempting", parts[1], "N", l.Measured)
}

// SweepLimitsText says where a rate or concurrency sweep's runtime began
// to queue and to preempt (from its /metrics), in words, in the language
// of ctx; empty for other runs.
func SweepLimitsText(ctx context.Context, l *jobs.SweepLimits) string {
	loc := i18n.From(ctx)
	switch {
	case l == nil:
		return ""
	case l.Measured == 0:
		return loc.T("chart.length_unread")
	case l.QueueingStep == "" && l.PreemptingStep == "":
		return loc.T("chart.length_never", "N", l.Measured)
	}
	at := func(step string, c int) string {
		if c > 0 {
			return loc.T("chart.sweep_at_concurrency", "N", c)
		}
		return step
	}
	queueing, preempting := loc.T("chart.length_no_queueing"), loc.T("chart.length_no_preempting")
	if l.QueueingStep != "" {
		queueing = loc.T("chart.sweep_queueing", "At", at(l.QueueingStep, l.QueueingConcurrency))
	}
	if l.PreemptingStep != "" {
		preempting = loc.T("chart.sweep_preempting", "At", at(l.PreemptingStep, l.PreemptingConcurrency))
	}
	return loc.T("chart.length_limits", "Queueing", queueing, "Preempting", preempting, "N", l.Measured)
}
