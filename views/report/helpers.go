package report

import (
	"fmt"
	"strings"

	"github.com/ruckus/ruckus/views/compare"
)

func simulated(fs []compare.Figures) bool {
	for _, f := range fs {
		if f.Run.Mode == "sim" {
			return true
		}
	}
	return false
}

func qualityText(f compare.Figures) string {
	r := f.Run
	switch {
	case r.Quality == nil:
		return "not scored"
	case r.QualityLo != nil && r.QualityHi != nil:
		return fmt.Sprintf("%.3f [%.3f, %.3f] (%s)", *r.Quality, *r.QualityLo, *r.QualityHi, r.Scorer)
	}
	return fmt.Sprintf("%.3f (%s)", *r.Quality, r.Scorer)
}

func opt(v *float64, format string) string {
	if v == nil {
		return "not measured"
	}
	return fmt.Sprintf(format, *v)
}

func join(s []string) string { return strings.Join(s, ", ") }

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
