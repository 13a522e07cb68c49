package results

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/layout"
)

func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// dec is v with the given decimals and the language's decimal mark, with
// no thousands separator (the figures of a table read digit by digit).
func dec(ctx context.Context, v float64, decimals int) string {
	return i18n.Mark(ctx, strconv.FormatFloat(v, 'f', decimals, 64))
}

// sig is v with at most digits significant digits (%g) and the language's
// decimal mark.
func sig(ctx context.Context, v float64, digits int) string {
	return i18n.Mark(ctx, strconv.FormatFloat(v, 'g', digits, 64))
}

func ms(ctx context.Context, v *float64) string {
	if v == nil {
		return "–"
	}
	return dec(ctx, *v, 1)
}

func f1(ctx context.Context, v float64) string { return dec(ctx, v, 1) }

func score(ctx context.Context, v *float64) string {
	if v == nil {
		return "–"
	}
	return sig(ctx, *v, 3)
}

func tokens(ctx context.Context, r store.ResultRow) string {
	s := fmt.Sprintf("%d → %d", r.PromptTokens, r.CompletionTokens)
	if r.TokensEstimated {
		s += " " + i18n.T(ctx, "results.estimated_short")
	}
	return s
}

func errorClasses(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func statusBadge(s string) string {
	if s == "ok" {
		return "completed"
	}
	return "failed"
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func pretty(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// Scorers are the scorers a run can be scored with again.
var Scorers = []string{"exact", "f1", "contains", "choice", "regex", "numeric", "json", "json-schema", "refusal", "bleu", "rouge1", "rouge2", "rougeL", "rougeLsum",
	"rouge1-stem", "rouge2-stem", "rougeL-stem", "rougeLsum-stem", "triviaqa-em", "triviaqa-f1", "codexglue-bleu", "humaneval", "mbpp", "exec"}

// runOptions reads a run's stored scorer options.
func runOptions(raw []byte) (o struct {
	Pattern string          `json:"pattern"`
	Schema  json.RawMessage `json:"schema"`
}) {
	_ = json.Unmarshal(raw, &o)
	return o
}

// optionPattern is the regex pattern a run was scored with ("" if none).
func optionPattern(raw []byte) string { return runOptions(raw).Pattern }

// optionSchema is the JSON Schema a run was scored with, indented (""
// if none).
func optionSchema(raw []byte) string {
	s := runOptions(raw).Schema
	if len(s) == 0 {
		return ""
	}
	return pretty(s)
}

// offered is a step's offered rate; a closed-loop step offers what it
// achieves.
func offered(ctx context.Context, s jobs.StepSummary) string {
	if s.OfferedRPS == nil {
		return i18n.T(ctx, "results.closed_loop")
	}
	return dec(ctx, *s.OfferedRPS, 2)
}

func triple(ctx context.Context, d jobs.Dist) string {
	return dec(ctx, d.P50, 1) + " / " + dec(ctx, d.P95, 1) + " / " + dec(ctx, d.P99, 1)
}

// stepErrors is a step's errors with their classes.
func stepErrors(s jobs.StepSummary) string {
	if s.Errors == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", s.Errors, errorClasses(s.ErrorsByClass))
}

// itemURL is an answer's page: the item, and its sample when not the
// first.
func itemURL(runID int64, idx, sample int) string {
	if sample > 0 {
		return fmt.Sprintf("/runs/%d/items/%d?sample=%d", runID, idx, sample)
	}
	return fmt.Sprintf("/runs/%d/items/%d", runID, idx)
}

// execBadge colours an execution class.
func execBadge(class string) string {
	switch class {
	case "passed":
		return "completed"
	case "timeout", "killed":
		return "cancelled"
	}
	return "failed"
}

// passAtLine is a run's pass@k, k in 1, 10, 100 where measured.
func passAtLine(ctx context.Context, run store.Run) string {
	var parts []string
	for _, k := range []string{"1", "10", "100"} {
		if v, ok := run.Exec.PassAt[k]; ok {
			parts = append(parts, "pass@"+k+" "+dec(ctx, v, 3))
		}
	}
	if len(parts) == 0 {
		return i18n.T(ctx, "results.pass_at_none")
	}
	return strings.Join(parts, " · ") + " " + i18n.T(ctx, "results.pass_at_how", "N", max(run.Samples, 1))
}

// execCounts lists the answers by class, in the sandbox's order.
func execCounts(counts map[string]int) string {
	var parts []string
	for _, c := range []string{"passed", "failed", "exception", "syntax_error", "timeout", "killed"} {
		parts = append(parts, fmt.Sprintf("%s %d", c, counts[c]))
	}
	return strings.Join(parts, " · ")
}

// qualityUnder is one scoring's quality in words: its mean with its
// interval over the items scored.
func qualityUnder(ctx context.Context, q store.Quality) string {
	switch {
	case q.Mean == nil:
		return i18n.T(ctx, "results.under_unscorable")
	case q.Lo != nil && q.Hi != nil:
		return i18n.T(ctx, "results.under_ci", "Mean", dec(ctx, *q.Mean, 3), "Lo", dec(ctx, *q.Lo, 3), "Hi", dec(ctx, *q.Hi, 3), "N", q.Items)
	}
	return i18n.T(ctx, "results.under_mean", "Mean", dec(ctx, *q.Mean, 3), "N", q.Items)
}

// metricName is what a run's mean score is under scorer: a refusal rate
// for refusal, a quality otherwise.
func metricName(ctx context.Context, scorer string) string {
	if scorer == "refusal" {
		return i18n.T(ctx, "results.metric_refusal")
	}
	return i18n.T(ctx, "results.metric_quality")
}

// qualityLine is the run's quality with its interval, or why there is none.
func qualityLine(ctx context.Context, run store.Run) string {
	if run.Quality != nil && run.QualityLo != nil && run.QualityHi != nil {
		return i18n.T(ctx, "results.quality_line", "Metric", metricName(ctx, run.Scorer), "Scorer", run.Scorer,
			"Q", dec(ctx, *run.Quality, 3), "Lo", dec(ctx, *run.QualityLo, 3), "Hi", dec(ctx, *run.QualityHi, 3), "N", run.Scored)
	}
	return i18n.T(ctx, "results.quality_unscorable", "Scorer", run.Scorer)
}

// summaryFigures is a run's throughput and goodput line.
func summaryFigures(ctx context.Context, s jobs.RunSummary) string {
	return i18n.T(ctx, "results.figures", "TPS", dec(ctx, s.OutputTokensPerS, 1), "RPS", dec(ctx, s.RequestsPerS, 2),
		"Goodput", dec(ctx, s.GoodputRPS, 2), "Good", s.GoodRequests, "N", s.Requests, "Tokens", s.OutputTokens,
		"Seconds", dec(ctx, s.MeasuredSeconds, 1))
}

// latestDescription says how the run's latest quality was measured when
// its scorer identity needs words (a judge named, a refusal rate); ""
// otherwise.
func latestDescription(ctx context.Context, scorer string, qs []store.Quality) string {
	key := scorer
	if n := len(qs); n > 0 && qs[n-1].Scorer == scorer {
		key = qs[n-1].ScorerKey
	}
	if desc := layout.DescribeScorer(ctx, key); desc != key {
		return desc
	}
	if scorer == "judge" {
		return i18n.T(ctx, "results.judge_based")
	}
	return ""
}

// fewShotPrompts says how a few-shot run's prompts were built: drawn
// examples with their seed, or a fixed exemplar set.
func fewShotPrompts(ctx context.Context, r store.Run) string {
	if r.FewShotExemplars != "" {
		return i18n.T(ctx, "results.fewshot_exemplars", "K", r.FewShotK, "Set", r.FewShotExemplars)
	}
	return i18n.T(ctx, "results.fewshot", "K", r.FewShotK, "Seed", r.FewShotSeed)
}
