package layout

import (
	"context"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
)

// DescribeScorer says in the reader's words what a scorer identity
// measures where its name alone would not: a judge's quality is
// judge-based, and says which judge model graded it with which rubric,
// scale and mode; refusal's mean is a refusal rate. Other identities are
// returned as they are.
func DescribeScorer(ctx context.Context, key string) string {
	if key == "refusal" {
		return i18n.T(ctx, "scorer_desc.refusal")
	}
	j, ok := store.ParseJudgeKey(key)
	switch {
	case !ok:
		return key
	case j.Model == "":
		return i18n.T(ctx, "scorer_desc.judge")
	}
	return i18n.T(ctx, "scorer_desc.judge_named", "Mode", j.Mode, "Model", j.Model, "Rubric", j.Rubric, "Scale", j.Scale)
}
