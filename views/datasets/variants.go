package datasets

import (
	"fmt"

	"github.com/ruckus/ruckus/app/advise"
	"github.com/ruckus/ruckus/app/store"
)

// variantLabel names a variant: its model and shots.
func variantLabel(r advise.VariantRow) string {
	return fmt.Sprintf("%s, %d-shot", r.Model, r.Shots)
}

// kindWords says what a variant is to its family.
func kindWords(r advise.VariantRow) string {
	switch r.Kind {
	case advise.KindFineTune:
		return "fine-tune of " + r.BaseModel
	case advise.KindAdapter:
		return "LoRA adapter on " + r.BaseModel
	}
	return "base model"
}

func qualityWithCI(r advise.VariantRow) string {
	switch {
	case r.Quality == nil:
		return "not scored"
	case r.QualityLo != nil && r.QualityHi != nil:
		return fmt.Sprintf("%.3f [%.3f, %.3f]", *r.Quality, *r.QualityLo, *r.QualityHi)
	}
	return fmt.Sprintf("%.3f", *r.Quality)
}

// deltaText is a variant's difference from the baseline with its interval
// and whether the test finds it.
func deltaText(r advise.VariantRow) string {
	m := r.Delta
	if m == nil || !m.Measured || !m.Comparable {
		return "not compared"
	}
	d := m.A - m.B
	if m.Paired != nil {
		d = m.Paired.Mean
	}
	s := signed(d)
	if m.Lo != nil && m.Hi != nil {
		s += " [" + signed(*m.Lo) + ", " + signed(*m.Hi) + "]"
	}
	if m.Tie {
		return s + " · not significant"
	}
	return s + fmt.Sprintf(" · significant (p = %.3g)", *m.P)
}

// categoryOf is a variant's delta on one category.
func categoryOf(r advise.VariantRow, cat string) (advise.CategoryDelta, bool) {
	for _, c := range r.Categories {
		if c.Category == cat {
			return c, true
		}
	}
	return advise.CategoryDelta{}, false
}

// scorerWords says in words what a scorer identity is when its name does
// not (a judge named, a refusal rate).
func scorerWords(key string) string {
	if d := store.DescribeScorer(key); d != key {
		return " (" + d + ")"
	}
	return ""
}

// signed writes a difference with its sign, a negative zero as +0.000.
func signed(v float64) string { return fmt.Sprintf("%+.3f", v+0) }
