package conclude

import (
	"fmt"
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// The planner weighs each run's quality under the minimum's identity
// where the run has it, else under the identity the runs share; a run
// scored under neither keeps its latest, under its own identity.
func TestCapacityQualitiesPreferTheWantedThenTheSharedIdentity(t *testing.T) {
	q := func(key string, v float64) store.Quality { return store.Quality{ScorerKey: key, Mean: &v} }
	run := func(id int64, qs ...store.Quality) store.RunFigures {
		r := store.RunFigures{Qualities: qs}
		r.ID = id
		if len(qs) > 0 {
			r.Quality = qs[len(qs)-1].Mean
		}
		return r
	}
	runs := []store.RunFigures{
		run(1, q("rougeL", 0.5), q("judge", 0.7)), // rescored: shared rougeL kept
		run(2, q("rougeL", 0.6)),
		run(3, q("bleu", 0.9)),
		run(4),
	}
	show := func(qs []CapacityQuality) string {
		s := ""
		for _, x := range qs {
			if x.Mean == nil {
				s += "- "
				continue
			}
			s += fmt.Sprintf("%s=%.1f ", x.Scorer, *x.Mean)
		}
		return s
	}
	qs, scorers := CapacityQualities(runs, "")
	if got := show(qs); got != "rougeL=0.5 rougeL=0.6 bleu=0.9 - " || fmt.Sprint(scorers) != "[bleu rougeL]" {
		t.Errorf("shared: %q %v", got, scorers)
	}
	qs, scorers = CapacityQualities(runs, "judge")
	if got := show(qs); got != "judge=0.7 rougeL=0.6 bleu=0.9 - " || fmt.Sprint(scorers) != "[bleu judge rougeL]" {
		t.Errorf("judge wanted: %q %v", got, scorers)
	}
}
