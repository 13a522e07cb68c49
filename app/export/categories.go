package export

import (
	"encoding/csv"
	"io"
	"strconv"

	"github.com/ruckus/ruckus/app/score"
)

// CategoryColumns are the per-category quality CSV's columns.
var CategoryColumns = []string{"run_id", "category", "count", "mean", "ci_low", "ci_high"}

// WriteCategories writes a run's quality per category, one row each. The
// category names come from the uploaded file and are made FormulaSafe
// unless raw.
func WriteCategories(w io.Writer, runID int64, cats []score.CategoryFigure, raw bool) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CategoryColumns); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
	for _, c := range cats {
		name := c.Category
		if !raw {
			name = FormulaSafe(name)
		}
		if err := cw.Write([]string{strconv.FormatInt(runID, 10), name, strconv.Itoa(c.N), f(c.Mean), f(c.Low), f(c.High)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
