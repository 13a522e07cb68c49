package bench

import (
	"fmt"
	"strings"

	"github.com/ruckus/ruckus/app/judge"
	"github.com/ruckus/ruckus/jobs"
)

// ScorerJudge is the scorer that hands a run's answers to an LLM judge
// (scorer_options.judge says which and how).
const ScorerJudge = "judge"

// JudgeOptions name the judge (a registered model on a runtime and
// hardware some agent serves) and how it judges.
type JudgeOptions struct {
	Model    string `json:"model" yaml:"model"`
	Runtime  string `json:"runtime" yaml:"runtime"`
	Hardware string `json:"hardware" yaml:"hardware"`
	// Rubric is a shipped rubric's name (correctness, helpfulness,
	// faithfulness; pairwise, pairwise-correctness for a pair), or custom
	// with Template; empty picks correctness when the items have
	// references, else helpfulness.
	Rubric string `json:"rubric,omitempty" yaml:"rubric,omitempty"`
	// Template is a custom prompt with placeholders ({{question}},
	// {{answer}}, {{reference}}; {{answer_a}}, {{answer_b}} for a pair).
	Template string `json:"template,omitempty" yaml:"template,omitempty"`
	// Scale is the rating scale of a single grading (default 1 to 10).
	Scale *JudgeScale `json:"scale,omitempty" yaml:"scale,omitempty"`
	// MaxTokens bounds each verdict (default 512).
	MaxTokens int `json:"max_tokens,omitempty" yaml:"max_tokens,omitempty"`
	// Concurrency is how many judge requests are in flight (default 4).
	Concurrency int `json:"concurrency,omitempty" yaml:"concurrency,omitempty"`
}

// JudgeScale is a rating scale, integers Min < Max.
type JudgeScale struct {
	Min int `json:"min" yaml:"min"`
	Max int `json:"max" yaml:"max"`
}

// Judge defaults and bounds.
const (
	defaultJudgeMaxTokens   = 512
	maxJudgeMaxTokens       = 8192
	defaultJudgeConcurrency = 4
	maxJudgeConcurrency     = 64
)

// Bounds returns the scale, 1 to 10 when none is set.
func (o JudgeOptions) Bounds() (lo, hi int) {
	if o.Scale == nil {
		return 1, 10
	}
	return o.Scale.Min, o.Scale.Max
}

// RubricName is the rubric the options pick for mode, given whether the
// items have references.
func (o JudgeOptions) RubricName(mode string, haveRefs bool) string {
	switch {
	case o.Template != "":
		return judge.Custom
	case o.Rubric != "":
		return o.Rubric
	}
	return judge.DefaultRubric(mode, haveRefs)
}

// Validate checks the options for a judging of mode (single or pairwise),
// naming each field under path.
func (o JudgeOptions) Validate(path, mode string) Errors {
	var errs Errors
	add := func(field, format string, args ...any) {
		errs = append(errs, FieldError{Path: path + "." + field, Message: fmt.Sprintf(format, args...)})
	}
	if o.Model == "" {
		add("model", "choose the judge model")
	} else if err := jobs.CheckModelName(o.Model); err != nil {
		add("model", "%v", err)
	}
	if !contains(Runtimes, o.Runtime) {
		add("runtime", "must be one of %s (got %q)", strings.Join(Runtimes, ", "), o.Runtime)
	}
	if o.Hardware == "" {
		add("hardware", "choose the judge's hardware profile")
	} else if msg := checkText(o.Hardware); msg != "" || len(o.Hardware) > 64 {
		add("hardware", "a hardware profile such as h100-80gb-x1")
	}
	switch {
	case o.Template != "" && o.Rubric != "" && o.Rubric != judge.Custom:
		add("rubric", "give a rubric or a template, not both (rubric %q with a template)", o.Rubric)
	case o.Rubric == judge.Custom && o.Template == "":
		add("template", "the custom rubric needs a template")
	case o.Template == "" && o.Rubric != "":
		if r, ok := judge.RubricByName(o.Rubric); !ok || r.Mode != mode {
			names := []string{}
			for _, r := range judge.Rubrics(mode) {
				names = append(names, r.Name)
			}
			add("rubric", "a %s judging takes one of %s, or custom with a template (got %q)", mode, strings.Join(names, ", "), o.Rubric)
		}
	}
	if o.Template != "" {
		if err := judge.CheckTemplate(mode, o.Template); err != nil {
			add("template", "%v", err)
		}
	}
	if s := o.Scale; s != nil {
		if mode == judge.Pairwise {
			add("scale", "a pairwise judging has no scale (its verdicts are A, B or a tie)")
		} else if s.Min < judge.MinScale || s.Max > judge.MaxScale || s.Min >= s.Max {
			add("scale", "whole numbers min < max, from %d to %d (got %d to %d)", judge.MinScale, judge.MaxScale, s.Min, s.Max)
		}
	}
	if o.MaxTokens < 0 || o.MaxTokens > maxJudgeMaxTokens {
		add("max_tokens", "from 1 to %d tokens per verdict (0: %d)", maxJudgeMaxTokens, defaultJudgeMaxTokens)
	}
	if o.Concurrency < 0 || o.Concurrency > maxJudgeConcurrency {
		add("concurrency", "from 1 to %d requests in flight (0: %d)", maxJudgeConcurrency, defaultJudgeConcurrency)
	}
	return errs
}

// validateScorerOptions checks scorer_options against the scorer named.
func (m Manifest) validateScorerOptions() Errors {
	var errs Errors
	var j *JudgeOptions
	if m.ScorerOptions != nil {
		j = m.ScorerOptions.Judge
	}
	switch {
	case m.Scorer == ScorerJudge && j == nil:
		errs = append(errs, FieldError{Path: "scorer_options.judge", Message: "the judge scorer needs its judge: model, runtime, hardware"})
	case m.Scorer != ScorerJudge && j != nil:
		errs = append(errs, FieldError{Path: "scorer_options.judge", Message: fmt.Sprintf("only with scorer: %s (the scorer is %q)", ScorerJudge, m.Scorer)})
	case j != nil:
		errs = append(errs, j.Validate("scorer_options.judge", judge.Single)...)
	}
	return errs
}
