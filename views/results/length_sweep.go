package results

import (
	"context"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/jobs"
)

// promptCell is the prompt tokens a length sweep's step sent as the
// runtime counted them (the median) and the most any was off the asked
// length; "not measured" when the runtime reported no usage.
func promptCell(ctx context.Context, s jobs.StepSummary) string {
	if s.PromptTokens == nil || s.PromptTokensOff == nil {
		return i18n.T(ctx, "results.not_measured")
	}
	return i18n.T(ctx, "results.prompt_tokens_off", "P50", dec(ctx, s.PromptTokens.P50, 0), "Off", dec(ctx, *s.PromptTokensOff, 0))
}

// prefillCell is a step's prefill tokens/s: the median and, with enough
// requests, its 95 % interval.
func prefillCell(ctx context.Context, s jobs.StepSummary) string {
	p := s.PrefillTokensPerS
	switch {
	case p == nil:
		return i18n.T(ctx, "results.not_measured")
	case p.Lo == nil || p.Hi == nil:
		return i18n.T(ctx, "results.prefill_no_interval", "Median", dec(ctx, p.Median, 0), "N", p.N)
	}
	return i18n.T(ctx, "results.prefill_interval", "Median", dec(ctx, p.Median, 0), "Lo", dec(ctx, *p.Lo, 0), "Hi", dec(ctx, *p.Hi, 0))
}

// runtimeCell is one of the runtime's figures at a step, as decimals
// (a share as a percentage), or "not measured".
func runtimeCell(ctx context.Context, r *jobs.RuntimeState, pick func(*jobs.RuntimeState) *float64, percent bool) string {
	if r == nil || r.Readings == 0 || pick(r) == nil {
		return i18n.T(ctx, "results.not_measured")
	}
	if percent {
		return dec(ctx, *pick(r)*100, 1) + " %"
	}
	return dec(ctx, *pick(r), 0)
}

func maxWaiting(r *jobs.RuntimeState) *float64  { return r.MaxWaiting }
func maxKVCache(r *jobs.RuntimeState) *float64  { return r.MaxKVCache }
func preemptions(r *jobs.RuntimeState) *float64 { return r.Preemptions }

// outputTarget is a step's asked answer length, or the sampling's
// max_tokens when it asked none.
func outputTarget(ctx context.Context, s jobs.StepSummary) string {
	if s.OutputTarget == 0 {
		return i18n.T(ctx, "results.max_tokens_only")
	}
	return dec(ctx, float64(s.OutputTarget), 0)
}
