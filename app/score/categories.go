package score

import "github.com/ruckus/ruckus/app/store"

// CategoryFigure is a run's quality within one category of its dataset:
// how many items were scored, their mean and its 95 % interval (MeanCI).
type CategoryFigure struct {
	Category string  `json:"category"`
	N        int     `json:"count"`
	Mean     float64 `json:"mean"`
	Low      float64 `json:"ci_low"`
	High     float64 `json:"ci_high"`
}

// ByCategory summarises each category's scores as the run's quality is
// summarised, with the run's id as the resampling seed (so the figures
// are repeatable).
func ByCategory(runID int64, cats []store.CategoryScores) []CategoryFigure {
	out := make([]CategoryFigure, 0, len(cats))
	for _, c := range cats {
		if len(c.Scores) == 0 {
			continue
		}
		mean, lo, hi := MeanCI(c.Scores, uint64(runID))
		out = append(out, CategoryFigure{Category: c.Category, N: len(c.Scores), Mean: mean, Low: lo, High: hi})
	}
	return out
}
