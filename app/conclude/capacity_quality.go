package conclude

import (
	"slices"

	"github.com/ruckus/ruckus/app/store"
)

// CapacityQuality is a run's quality as the capacity planner weighs it
// and the scorer identity it was measured under ("" with none).
type CapacityQuality struct {
	Scorer       string
	Mean, Lo, Hi *float64
}

// CapacityQualities is each run's quality as the capacity planner weighs
// it, and the identities those are under, sorted: the quality under
// wanted (a minimum quality's scorer identity, else the dataset's:
// PlannerRuns) where the run was scored under it, else under the identity
// the runs share (SharedScorer), as
// every conclusion ranks quality, so a rescored run keeps the quality it
// is weighed on. A run scored under neither keeps its latest quality
// under its own identity, which a minimum quality then excludes naming
// that identity (ExcludedOtherScorer).
func CapacityQualities(runs []store.RunFigures, wanted string) ([]CapacityQuality, []string) {
	shared := SharedScorer(runs)
	out := make([]CapacityQuality, len(runs))
	var scorers []string
	for i, r := range runs {
		var q store.Quality
		var ok bool
		for _, key := range []string{wanted, shared} {
			if q, ok = r.QualityUnder(key); ok && key != "" && q.Mean != nil {
				out[i] = CapacityQuality{Scorer: key, Mean: q.Mean, Lo: q.Lo, Hi: q.Hi}
				break
			}
		}
		switch {
		case out[i].Scorer != "":
		case len(r.Qualities) > 0:
			q = r.Qualities[len(r.Qualities)-1]
			out[i] = CapacityQuality{Scorer: q.ScorerKey, Mean: q.Mean, Lo: q.Lo, Hi: q.Hi}
		case r.Quality != nil:
			out[i] = CapacityQuality{Mean: r.Quality, Lo: r.QualityLo, Hi: r.QualityHi}
		}
		if out[i].Scorer != "" && !slices.Contains(scorers, out[i].Scorer) {
			scorers = append(scorers, out[i].Scorer)
		}
	}
	slices.Sort(scorers)
	return out, scorers
}
