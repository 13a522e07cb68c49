// Package said words app/conclude's sentences (conclude.Said) and their
// figures in the reader's language, for every page that shows them.
package said

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
)

// saidKeys are the catalogue's message for each sentence code of
// app/conclude (conclude.Said) that the analysis pages show.
var saidKeys = map[string]string{
	// Comparability and tests (conclude.Compare).
	"not_comparable_scorer":     "compare.said.not_comparable_scorer",
	"not_ranked_refusal":        "compare.said.not_ranked_refusal",
	"not_comparable_no_loads":   "compare.said.not_comparable_no_loads",
	"not_comparable_no_load":    "compare.said.not_comparable_no_load",
	"not_comparable_load":       "compare.said.not_comparable_load",
	"differs_load":              "compare.said.differs_load",
	"differs_sampling":          "compare.said.differs_sampling",
	"differs_dataset":           "compare.said.differs_dataset",
	"differs_input":             "compare.said.differs_input",
	"differs_output":            "compare.said.differs_output",
	"differs_prompts":           "compare.said.differs_prompts",
	"no_scorer":                 "compare.said.no_scorer",
	"basis_paired":              "compare.said.basis_paired",
	"basis_paired_left_out":     "compare.said.basis_paired_left_out",
	"basis_quality_z":           "compare.said.basis_quality_z",
	"basis_speed":               "compare.said.basis_speed",
	"basis_cost":                "compare.said.basis_cost",
	"basis_latency":             "compare.said.basis_latency",
	"basis_not_tested":          "compare.said.basis_not_tested",
	"regression_quality":        "compare.said.regression_quality",
	"regression_latency":        "compare.said.regression_latency",
	"regression_throughput":     "compare.said.regression_throughput",
	"estimate_repeats":          "compare.said.estimate_repeats",
	"estimate_batches":          "compare.said.estimate_batches",
	"estimate_batches_measured": "compare.said.estimate_batches_measured",
	"test_mcnemar-exact":        "compare.said.test_mcnemar_exact",
	"test_mcnemar-chi2-uc":      "compare.said.test_mcnemar_chi2_uc",
	"test_mcnemar-chi2":         "compare.said.test_mcnemar_chi2",
	"test_paired-bootstrap":     "compare.said.test_paired_bootstrap",
	"basis_cost_log":            "compare.said.basis_cost_log",
	"basis_latency_repeats":     "compare.said.basis_latency_repeats",
	"basis_latency_few":         "compare.said.basis_latency_few",
	"basis_latency_os":          "compare.said.basis_latency_os",
	"basis_not_established":     "compare.said.basis_not_established",
	"basis_need_repeats":        "compare.said.basis_need_repeats",
	"basis_need_requests":       "compare.said.basis_need_requests",
	"basis_need_items":          "compare.said.basis_need_items",
	"not_ranked_open_loop":      "compare.said.not_ranked_open_loop",
	"differs_mean_input":        "compare.said.differs_mean_input",
	"differs_mean_output":       "compare.said.differs_mean_output",
	"test_paired-permutation":   "compare.said.test_paired_permutation",
	// The capacity plan (conclude.PlanCapacity, handlers' measurements).
	"capacity_no_lengths":                "capacity.said.no_lengths",
	"capacity_short_answers":             "capacity.said.short_answers",
	"capacity_not_at_length":             "capacity.said.not_at_length",
	"capacity_quality_not_measured":      "capacity.said.quality_not_measured",
	"capacity_quality_not_measured_with": "capacity.said.quality_not_measured_with",
	"capacity_other_scorer":              "capacity.said.other_scorer",
	"capacity_below_min":                 "capacity.said.below_min",
	"capacity_slos_nowhere":              "capacity.said.slos_nowhere",
	"capacity_no_price":                  "capacity.said.no_price",
	"capacity_one_output_token":          "capacity.said.one_output_token",
	"capacity_output_tokens":             "capacity.said.output_tokens",
	"capacity_above_busiest":             "capacity.said.above_busiest",
	"capacity_other_input_length":        "capacity.said.other_input_length",
	"capacity_other_output_length":       "capacity.said.other_output_length",
	"capacity_source_replicas":           "capacity.said.source_replicas",
	"capacity_source_cost_per_hour":      "capacity.said.source_cost_per_hour",
	"capacity_source_energy":             "capacity.said.source_energy",
	"capacity_source_energy_none":        "capacity.said.source_energy_none",
	"capacity_source_monthly":            "capacity.said.source_monthly",
	"capacity_source_per_1m":             "capacity.said.source_per_1m",
	"capacity_no_figures":                "capacity.said.no_figures",
	"capacity_slos_no_step":              "capacity.said.slos_no_step",
	"capacity_slos_one_load":             "capacity.said.slos_one_load",
	"capacity_from_step":                 "capacity.said.from_step",
	"capacity_from_one_load":             "capacity.said.from_one_load",
	// Against what runs today (conclude.PlanROI).
	"roi_source_hardware":       "capacity.said.roi_source_hardware",
	"roi_source_energy":         "capacity.said.roi_source_energy",
	"roi_source_energy_none":    "capacity.said.roi_source_energy_none",
	"roi_energy_left_out_today": "capacity.said.roi_energy_left_out_today",
	"roi_energy_left_out_run":   "capacity.said.roi_energy_left_out_run",
	"roi_no_scored_run":         "capacity.said.roi_no_scored_run",
	"roi_same_run":              "capacity.said.roi_same_run",
	"roi_no_common_scorer":      "capacity.said.roi_no_common_scorer",
	"roi_no_quality_under":      "capacity.said.roi_no_quality_under",
	// The recommendation (conclude.RecommendWith).
	"explain_only":                  "recommend.said.explain_only",
	"explain_none_measured":         "recommend.said.explain_none_measured",
	"explain_tail_one":              "recommend.said.explain_tail_one",
	"explain_tail_many":             "recommend.said.explain_tail_many",
	"explain_first":                 "recommend.said.explain_first",
	"explain_first_parts":           "recommend.said.explain_first_parts",
	"explain_first_tie":             "recommend.said.explain_first_tie",
	"part_leads":                    "recommend.said.part_leads",
	"part_tied":                     "recommend.said.part_tied",
	"best_quality":                  "recommend.said.best_quality",
	"best_speed":                    "recommend.said.best_speed",
	"best_cost":                     "recommend.said.best_cost",
	"explain_below":                 "recommend.said.explain_below",
	"explain_below_tie":             "recommend.said.explain_below_tie",
	"explain_below_bare":            "recommend.said.explain_below_bare",
	"explain_below_tie_bare":        "recommend.said.explain_below_tie_bare",
	"part_measured_where_not":       "recommend.said.part_measured_where_not",
	"part_within_noise":             "recommend.said.part_within_noise",
	"note_left_out_quality":         "recommend.said.note_left_out_quality",
	"note_left_out_speed":           "recommend.said.note_left_out_speed",
	"note_left_out_cost":            "recommend.said.note_left_out_cost",
	"note_unmeasured_one":           "recommend.said.note_unmeasured_one",
	"note_unmeasured_many":          "recommend.said.note_unmeasured_many",
	"title_quality":                 "recommend.said.title_quality",
	"title_speed":                   "recommend.said.title_speed",
	"title_cost":                    "recommend.said.title_cost",
	"lower_quality":                 "recommend.said.lower_quality",
	"lower_speed":                   "recommend.said.lower_speed",
	"lower_cost":                    "recommend.said.lower_cost",
	"unmet_none":                    "recommend.said.unmet_none",
	"unmet_above":                   "recommend.said.unmet_above",
	"unmet_below":                   "recommend.said.unmet_below",
	"unmet_hardware":                "recommend.said.unmet_hardware",
	"figure_quality":                "recommend.said.figure_quality",
	"figure_ttft":                   "recommend.said.figure_ttft",
	"figure_e2e":                    "recommend.said.figure_e2e",
	"figure_cost":                   "recommend.said.figure_cost",
	"figure_gpu_mem":                "recommend.said.figure_gpu_mem",
	"label_run":                     "recommend.said.label_run",
	"label_target":                  "recommend.said.label_target",
	"label_model_run":               "recommend.said.label_model_run",
	"value_quality":                 "recommend.said.value_quality",
	"value_speed":                   "recommend.said.value_speed",
	"value_latency":                 "recommend.said.value_latency",
	"value_cost":                    "recommend.said.value_cost",
	"figures_quality":               "recommend.said.figures_quality",
	"figures_speed":                 "recommend.said.figures_speed",
	"figures_latency":               "recommend.said.figures_latency",
	"figures_cost":                  "recommend.said.figures_cost",
	"phrase_quality_equal":          "recommend.said.phrase_quality_equal",
	"phrase_quality_equal_than":     "recommend.said.phrase_quality_equal_than",
	"phrase_quality_better":         "recommend.said.phrase_quality_better",
	"phrase_quality_better_than":    "recommend.said.phrase_quality_better_than",
	"phrase_quality_worse":          "recommend.said.phrase_quality_worse",
	"phrase_quality_worse_than":     "recommend.said.phrase_quality_worse_than",
	"phrase_quality_ns_better":      "recommend.said.phrase_quality_ns_better",
	"phrase_quality_ns_better_than": "recommend.said.phrase_quality_ns_better_than",
	"phrase_quality_ns_worse":       "recommend.said.phrase_quality_ns_worse",
	"phrase_quality_ns_worse_than":  "recommend.said.phrase_quality_ns_worse_than",
	"phrase_speed_equal":            "recommend.said.phrase_speed_equal",
	"phrase_speed_equal_than":       "recommend.said.phrase_speed_equal_than",
	"phrase_speed_better":           "recommend.said.phrase_speed_better",
	"phrase_speed_better_than":      "recommend.said.phrase_speed_better_than",
	"phrase_speed_worse":            "recommend.said.phrase_speed_worse",
	"phrase_speed_worse_than":       "recommend.said.phrase_speed_worse_than",
	"phrase_latency_equal":          "recommend.said.phrase_latency_equal",
	"phrase_latency_equal_than":     "recommend.said.phrase_latency_equal_than",
	"phrase_latency_better":         "recommend.said.phrase_latency_better",
	"phrase_latency_better_than":    "recommend.said.phrase_latency_better_than",
	"phrase_latency_worse":          "recommend.said.phrase_latency_worse",
	"phrase_latency_worse_than":     "recommend.said.phrase_latency_worse_than",
	"phrase_cost_equal":             "recommend.said.phrase_cost_equal",
	"phrase_cost_equal_than":        "recommend.said.phrase_cost_equal_than",
	"phrase_cost_better":            "recommend.said.phrase_cost_better",
	"phrase_cost_better_than":       "recommend.said.phrase_cost_better_than",
	"phrase_cost_worse":             "recommend.said.phrase_cost_worse",
	"phrase_cost_worse_than":        "recommend.said.phrase_cost_worse_than",
}

// Word is one of app/conclude's sentences in the reader's language; "" for
// none. A code without a message shows as itself, so a gap is visible.
func Word(ctx context.Context, s conclude.Said) string {
	if s.Code == "" {
		return ""
	}
	key, ok := saidKeys[s.Code]
	if !ok {
		return s.Code
	}
	args := make([]any, 0, len(s.Args))
	for i := 0; i+1 < len(s.Args); i += 2 {
		args = append(args, s.Args[i], wordValue(ctx, s.Args[i+1]))
	}
	return i18n.T(ctx, key, args...)
}

// WordAll is each sentence in the reader's language.
func WordAll(ctx context.Context, ss []conclude.Said) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Word(ctx, s)
	}
	return out
}

func wordValue(ctx context.Context, v any) string {
	switch x := v.(type) {
	case string:
		return x
	case conclude.Dec:
		if x.Trim {
			return DecimalSign(ctx, strconv.FormatFloat(math.Round(x.V*100)/100, 'f', -1, 64))
		}
		return Fixed(ctx, x.V, x.Places)
	case conclude.Signed:
		return DecimalSign(ctx, fmt.Sprintf("%+.*f", x.Places, x.V))
	case conclude.P:
		return DecimalSign(ctx, fmt.Sprintf("%.3g", float64(x)))
	case conclude.Sig:
		if x.Digits == 0 {
			return DecimalSign(ctx, strconv.FormatFloat(x.V, 'g', -1, 64))
		}
		return DecimalSign(ctx, fmt.Sprintf("%.*g", x.Digits, x.V))
	case conclude.Pct:
		return Percent(ctx, float64(x))
	case conclude.AndList:
		parts := make([]string, len(x))
		for i, v := range x {
			parts[i] = wordValue(ctx, v)
		}
		return JoinAnd(ctx, parts)
	case conclude.Said:
		return Word(ctx, x)
	case []conclude.Said:
		return strings.Join(WordAll(ctx, x), "; ")
	}
	return fmt.Sprint(v)
}

// Fixed writes v with places decimals and the reader's decimal sign, and
// no thousands separator (a figure as the API writes it: 8766.00, in
// German 8766,00).
func Fixed(ctx context.Context, v float64, places int) string {
	return DecimalSign(ctx, fmt.Sprintf("%.*f", places, v))
}

// decimalSign swaps a formatted number's decimal point for the reader's
// decimal sign.
func DecimalSign(ctx context.Context, s string) string {
	if i18n.From(ctx).Code() == "de" {
		return strings.ReplaceAll(s, ".", ",")
	}
	return s
}

// USD is an amount in US dollars with places decimals: $12.50.
func USD(ctx context.Context, v float64, places int) string {
	return i18n.T(ctx, "compare.usd", "N", Fixed(ctx, v, places))
}

// Signed writes v with its sign and places decimals: +0.120.
func Signed(ctx context.Context, v float64, places int) string {
	return DecimalSign(ctx, fmt.Sprintf("%+.*f", places, v))
}

// PValue writes a p-value with three significant digits.
func PValue(ctx context.Context, p float64) string {
	return DecimalSign(ctx, fmt.Sprintf("%.3g", p))
}

// WordOr is s in the reader's language, or english when conclude gave it
// no code.
func WordOr(ctx context.Context, s conclude.Said, english string) string {
	if s.Code == "" {
		return english
	}
	return Word(ctx, s)
}

// testName names a paired comparison's test in the reader's language.
func TestName(ctx context.Context, p conclude.QualityDiff) string {
	if _, ok := saidKeys["test_"+p.Test]; ok {
		return Word(ctx, conclude.Say("test_"+p.Test))
	}
	return p.TestName()
}

// JoinAnd joins "a", "a and b", "a, b and c" in the reader's language.
func JoinAnd(ctx context.Context, parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return i18n.T(ctx, "recommend.list_and", "Rest", strings.Join(parts[:len(parts)-1], ", "), "Last", parts[len(parts)-1])
}

// Percent writes a relative difference's size as conclude.FormatPct does,
// with the reader's decimal sign: "0.6 %", "12 %".
func Percent(ctx context.Context, p float64) string {
	return DecimalSign(ctx, conclude.FormatPct(p))
}

// Excluded are the reasons a target was left out of a recommendation, in
// the reader's language.
func Excluded(ctx context.Context, x conclude.Excluded) []string {
	if len(x.ReasonsSaid) != len(x.Reasons) {
		return x.Reasons
	}
	return WordAll(ctx, x.ReasonsSaid)
}

// Label names a candidate among others in the reader's language
// (conclude.LabelSaid: "m/a on sim/cpu", "m/a (run 12)").
func Label(ctx context.Context, c conclude.Candidate, all []conclude.Candidate) string {
	switch l := conclude.LabelSaid(c, all).(type) {
	case conclude.Said:
		return Word(ctx, l)
	case string:
		return l
	}
	return conclude.Label(c, all)
}
