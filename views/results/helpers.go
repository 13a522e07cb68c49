package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

func ms(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f", *v)
}

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }

func score(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.3g", *v)
}

func tokens(r store.ResultRow) string {
	s := fmt.Sprintf("%d → %d", r.PromptTokens, r.CompletionTokens)
	if r.TokensEstimated {
		s += " (est.)"
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
func offered(s jobs.StepSummary) string {
	if s.OfferedRPS == nil {
		return "closed loop"
	}
	return fmt.Sprintf("%.2f", *s.OfferedRPS)
}

func triple(d jobs.Dist) string { return fmt.Sprintf("%.1f / %.1f / %.1f", d.P50, d.P95, d.P99) }

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
func passAtLine(run store.Run) string {
	var parts []string
	for _, k := range []string{"1", "10", "100"} {
		if v, ok := run.Exec.PassAt[k]; ok {
			parts = append(parts, fmt.Sprintf("pass@%s %.3f", k, v))
		}
	}
	if len(parts) == 0 {
		return "pass@k: no item could be executed"
	}
	return strings.Join(parts, " · ") + fmt.Sprintf(" (%d answers per item, Chen et al.'s unbiased estimator)", max(run.Samples, 1))
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
func qualityUnder(q store.Quality) string {
	switch {
	case q.Mean == nil:
		return "no item could be scored"
	case q.Lo != nil && q.Hi != nil:
		return fmt.Sprintf("%.3f, 95 %% CI [%.3f, %.3f] over %d items", *q.Mean, *q.Lo, *q.Hi, q.Items)
	}
	return fmt.Sprintf("%.3f over %d items", *q.Mean, q.Items)
}

// metricName is what a run's mean score is under scorer: a refusal rate
// for refusal, a quality otherwise.
func metricName(scorer string) string {
	if scorer == "refusal" {
		return "Refusal rate"
	}
	return "Quality"
}

// latestDescription says how the run's latest quality was measured when
// its scorer identity needs words (a judge named, a refusal rate); ""
// otherwise.
func latestDescription(scorer string, qs []store.Quality) string {
	key := scorer
	if n := len(qs); n > 0 && qs[n-1].Scorer == scorer {
		key = qs[n-1].ScorerKey
	}
	if desc := store.DescribeScorer(key); desc != key {
		return desc
	}
	if scorer == "judge" {
		return "judge-based (LLM judge)"
	}
	return ""
}
