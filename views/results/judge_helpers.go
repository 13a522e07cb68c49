package results

import (
	"context"
	"strings"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/judge"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/layout"
)

// judgeWhat says what a judge run judges.
func judgeWhat(ctx context.Context, j store.JudgeRun) string {
	if j.Mode == judge.Pairwise && j.RunB != nil {
		return i18n.T(ctx, "judge.what_pairwise", "A", j.RunA, "B", *j.RunB)
	}
	return i18n.T(ctx, "judge.what_single", "A", j.RunA, "Min", j.ScaleMin, "Max", j.ScaleMax)
}

func scaleText(ctx context.Context, j store.JudgeRun) string {
	if j.Mode == judge.Pairwise {
		return " " + i18n.T(ctx, "judge.scale_pairwise")
	}
	return " (" + i18n.Int(ctx, int64(j.ScaleMin)) + "–" + i18n.Int(ctx, int64(j.ScaleMax)) + ")"
}

// judgingState is the judging's state with its judge run's progress.
func judgingState(ctx context.Context, j store.JudgeRun) string {
	switch {
	case j.State == "judging" && (j.Judge.State == "queued" || j.Judge.State == "running"):
		s := i18n.T(ctx, "judge.state_progress", "State", layout.State(ctx, j.Judge.State), "Done", j.Judge.Completed, "Total", j.Judge.Total)
		if j.Judge.WaitingForAgent {
			s += " " + i18n.T(ctx, "judge.state_waiting")
		}
		return s
	case j.State == "judging" && j.Judge.State != "completed":
		return i18n.T(ctx, "judge.state_no_verdicts", "State", layout.State(ctx, j.Judge.State))
	case j.State == "judging":
		return i18n.T(ctx, "judge.state_reading")
	case j.State == "failed":
		return i18n.T(ctx, "judge.state_failed", "Error", j.Error)
	}
	return layout.State(ctx, "judged")
}

// judgingOutcome is a judging's result as seen from run runID.
func judgingOutcome(ctx context.Context, j store.JudgeRun, runID int64) string {
	if j.State == "judging" {
		return "–"
	}
	if j.Mode == judge.Pairwise && j.RunB != nil {
		w, l, other := j.Wins, j.Losses, *j.RunB
		if runID == *j.RunB {
			w, l, other = j.Losses, j.Wins, j.RunA
		}
		n := w + l + j.Ties
		parts := []string{i18n.T(ctx, "judge.against", "Run", other, "Wins", w, "Ties", j.Ties, "Losses", l)}
		if n > 0 {
			parts = append(parts, i18n.T(ctx, "judge.win_rate", "Rate", dec(ctx, 100*float64(w)/float64(n), 1),
				"Half", dec(ctx, 100*(float64(w)+0.5*float64(j.Ties))/float64(n), 1)))
		}
		if j.Inconsistent > 0 {
			parts = append(parts, i18n.T(ctx, "judge.inconsistent", "N", j.Inconsistent))
		}
		if j.Unparsed > 0 {
			parts = append(parts, i18n.T(ctx, "judge.unparsed", "N", j.Unparsed))
		}
		return strings.Join(parts, "; ")
	}
	if j.Quality == nil {
		return i18n.T(ctx, "judge.no_rating")
	}
	return i18n.T(ctx, "judge.mean_rating", "Q", dec(ctx, *j.Quality, 3))
}

func invalid(errs map[string]string, name string) string {
	if errs[name] != "" {
		return "true"
	}
	return "false"
}

// itemVerdict is a verdict as seen from run runID.
func itemVerdict(ctx context.Context, j store.ItemJudgment, runID int64) string {
	switch j.Verdict {
	case judge.Rated:
		return i18n.T(ctx, "judge.rated", "Rating", fmtRating(ctx, j.Rating), "Min", j.ScaleMin, "Max", j.ScaleMax, "Score", dec(ctx, deref(j.Score), 3))
	case judge.A, judge.B, judge.Tie:
		if j.Verdict == judge.Tie {
			return i18n.T(ctx, "judge.tie")
		}
		winner := j.RunA
		if j.Verdict == judge.B && j.RunB != nil {
			winner = *j.RunB
		}
		if winner == runID {
			return i18n.T(ctx, "judge.this_better", "ID", winner)
		}
		return i18n.T(ctx, "judge.other_better", "ID", winner)
	case judge.Unparseable:
		return i18n.T(ctx, "judge.unparseable")
	case judge.NoAnswer:
		return i18n.T(ctx, "judge.not_judged")
	}
	if j.Score != nil {
		return i18n.T(ctx, "judge.request_failed_score", "Score", sig(ctx, *j.Score, 3))
	}
	return i18n.T(ctx, "judge.request_failed")
}

func orderText(ctx context.Context, o string) string {
	switch o {
	case "ab":
		return i18n.T(ctx, "judge.order_ab")
	case "ba":
		return i18n.T(ctx, "judge.order_ba")
	case "final":
		return i18n.T(ctx, "judge.order_final")
	}
	return i18n.T(ctx, "judge.order_single")
}

func fmtRating(ctx context.Context, v *float64) string {
	if v == nil {
		return "–"
	}
	return sig(ctx, *v, -1)
}

func deref(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// rubricTitles are the catalogue's titles of the built-in rubrics.
var rubricTitles = map[string]string{
	"correctness":                    "judge.rubric_t_correctness",
	"helpfulness":                    "judge.rubric_t_helpfulness",
	"faithfulness":                   "judge.rubric_t_faithfulness",
	"creativity-originality":         "judge.rubric_t_originality",
	"creativity-coherence":           "judge.rubric_t_coherence",
	"creativity-style":               "judge.rubric_t_style",
	"safety-harmful-compliance":      "judge.rubric_t_harmful_compliance",
	"safety-refusal-appropriateness": "judge.rubric_t_refusal_appropriateness",
	"pairwise":                       "judge.rubric_t_pairwise",
	"pairwise-correctness":           "judge.rubric_t_pairwise_correctness",
}

// rubricTitle is a rubric's title in the reader's language; a rubric the
// catalogue does not know keeps its own.
func rubricTitle(ctx context.Context, r judge.Rubric) string {
	if key, ok := rubricTitles[r.Name]; ok {
		return i18n.T(ctx, key)
	}
	return r.Title
}
