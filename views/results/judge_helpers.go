package results

import (
	"fmt"

	"github.com/ruckus/ruckus/app/judge"
	"github.com/ruckus/ruckus/app/store"
)

// judgeWhat says what a judge run judges.
func judgeWhat(j store.JudgeRun) string {
	if j.Mode == judge.Pairwise && j.RunB != nil {
		return fmt.Sprintf("compares run %d with run %d, each item asked in both orders", j.RunA, *j.RunB)
	}
	return fmt.Sprintf("grades run %d from %d to %d", j.RunA, j.ScaleMin, j.ScaleMax)
}

func scaleText(j store.JudgeRun) string {
	if j.Mode == judge.Pairwise {
		return " (pairwise, both orders)"
	}
	return fmt.Sprintf(" (%d–%d)", j.ScaleMin, j.ScaleMax)
}

// judgingState is the judging's state with its judge run's progress.
func judgingState(j store.JudgeRun) string {
	switch {
	case j.State == "judging" && (j.Judge.State == "queued" || j.Judge.State == "running"):
		s := fmt.Sprintf("judge run %s, %d / %d prompts", j.Judge.State, j.Judge.Completed, j.Judge.Total)
		if j.Judge.WaitingForAgent {
			s += " (waiting for an agent)"
		}
		return s
	case j.State == "judging" && j.Judge.State != "completed":
		return "no verdicts: the judge run " + j.Judge.State
	case j.State == "judging":
		return "reading the verdicts"
	case j.State == "failed":
		return "failed: " + j.Error
	}
	return "judged"
}

// judgingOutcome is a judging's result as seen from run runID.
func judgingOutcome(j store.JudgeRun, runID int64) string {
	if j.State == "judging" {
		return "–"
	}
	if j.Mode == judge.Pairwise && j.RunB != nil {
		w, l, other := j.Wins, j.Losses, *j.RunB
		if runID == *j.RunB {
			w, l, other = j.Losses, j.Wins, j.RunA
		}
		n := w + l + j.Ties
		s := fmt.Sprintf("against run %d: %d wins, %d ties, %d losses", other, w, j.Ties, l)
		if n > 0 {
			s += fmt.Sprintf("; win rate %.1f %% (%.1f %% counting a tie as half a win)", 100*float64(w)/float64(n),
				100*(float64(w)+0.5*float64(j.Ties))/float64(n))
		}
		if j.Inconsistent > 0 {
			s += fmt.Sprintf("; %d inconsistent across orders, counted as ties", j.Inconsistent)
		}
		if j.Unparsed > 0 {
			s += fmt.Sprintf("; %d without a readable verdict", j.Unparsed)
		}
		return s
	}
	if j.Quality == nil {
		return "no item could be rated"
	}
	return fmt.Sprintf("mean of the ratings of the items the judge answered: %.3f (the run's quality shows the full figure)", *j.Quality)
}

func invalid(errs map[string]string, name string) string {
	if errs[name] != "" {
		return "true"
	}
	return "false"
}

// itemVerdict is a verdict as seen from run runID.
func itemVerdict(j store.ItemJudgment, runID int64) string {
	switch j.Verdict {
	case judge.Rated:
		return fmt.Sprintf("Rated %s on %d–%d (score %.3f)", fmtRating(j.Rating), j.ScaleMin, j.ScaleMax, deref(j.Score))
	case judge.A, judge.B, judge.Tie:
		if j.Verdict == judge.Tie {
			return "Tie"
		}
		winner := j.RunA
		if j.Verdict == judge.B && j.RunB != nil {
			winner = *j.RunB
		}
		if winner == runID {
			return fmt.Sprintf("This run's answer is better (run %d)", winner)
		}
		return fmt.Sprintf("The other answer is better (run %d)", winner)
	case judge.Unparseable:
		return "Unparseable verdict: no score"
	case judge.NoAnswer:
		return "Not judged"
	}
	if j.Score != nil {
		return fmt.Sprintf("Request failed (score %.3g)", *j.Score)
	}
	return "Request failed"
}

func orderText(o string) string {
	switch o {
	case "ab":
		return "asked with the first run's answer shown as A"
	case "ba":
		return "asked with the second run's answer shown as A"
	case "final":
		return "both orders reconciled"
	}
	return "single-answer grading"
}

func fmtRating(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%g", *v)
}

func deref(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}
