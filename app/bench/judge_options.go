package bench

import (
	"strconv"
	"strings"

	"github.com/ruckus/ruckus/app/judge"
	"github.com/ruckus/ruckus/app/valid"
)

// ScorerJudge is the scorer that hands a run's answers to an LLM judge
// (scorer_options.judge says which and how).
const ScorerJudge = "judge"

// JudgeOptions name the judge (a registered model on a runtime and
// hardware some agent serves) and how it judges.
type JudgeOptions struct {
	Model    string `json:"model" yaml:"model" validate:"required,model_name" msg_required:"manifest.judge_model"`
	Runtime  string `json:"runtime" yaml:"runtime" validate:"runtime"`
	Hardware string `json:"hardware" yaml:"hardware" validate:"required,hardware" msg_required:"manifest.judge_hardware"`
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
	MaxTokens int `json:"max_tokens,omitempty" yaml:"max_tokens,omitempty" validate:"min=0,max=8192" msg:"manifest.judge_max_tokens"`
	// Concurrency is how many judge requests are in flight (default 4).
	Concurrency int `json:"concurrency,omitempty" yaml:"concurrency,omitempty" validate:"min=0,max=64" msg:"manifest.judge_concurrency"`
}

// JudgeScale is a rating scale, integers Min < Max.
type JudgeScale struct {
	Min int `json:"min" yaml:"min"`
	Max int `json:"max" yaml:"max"`
}

// Judge defaults and bounds (the struct tags and their messages above
// repeat them).
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
// naming each field under path: each field's own rules (its tags), then
// rubric, template and scale against each other and the mode.
func (o JudgeOptions) Validate(path, mode string) Errors {
	errs := rules().Struct(o)
	switch {
	case o.Template != "" && o.Rubric != "" && o.Rubric != judge.Custom:
		errs.Say("rubric", "manifest.rubric_or_template", "Rubric", strconv.Quote(o.Rubric))
	case o.Rubric == judge.Custom && o.Template == "":
		errs.Say("template", "manifest.custom_needs_template")
	case o.Template == "" && o.Rubric != "":
		if r, ok := judge.RubricByName(o.Rubric); !ok || r.Mode != mode {
			names := []string{}
			for _, r := range judge.Rubrics(mode) {
				names = append(names, r.Name)
			}
			errs.Say("rubric", "manifest.rubric_choice", "Mode", mode, "List", strings.Join(names, ", "), "Got", strconv.Quote(o.Rubric))
		}
	}
	if o.Template != "" {
		if err := judge.CheckTemplate(mode, o.Template); err != nil {
			errs.Add("template", "%v", err)
		}
	}
	if s := o.Scale; s != nil {
		if mode == judge.Pairwise {
			errs.Say("scale", "manifest.pairwise_no_scale")
		} else if s.Min < judge.MinScale || s.Max > judge.MaxScale || s.Min >= s.Max {
			errs.Say("scale", "manifest.scale", "Lo", judge.MinScale, "Hi", judge.MaxScale, "Min", s.Min, "Max", s.Max)
		}
	}
	return errs.Prefix(path)
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
		errs = append(errs, valid.E("scorer_options.judge", "manifest.judge_needed"))
	case m.Scorer != ScorerJudge && j != nil:
		errs = append(errs, valid.E("scorer_options.judge", "manifest.judge_only", "Judge", ScorerJudge, "Scorer", strconv.Quote(m.Scorer)))
	case j != nil:
		errs = append(errs, j.Validate("scorer_options.judge", judge.Single)...)
	}
	return errs
}
