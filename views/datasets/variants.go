package datasets

import (
	"context"
	"strconv"
	"strings"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/views/layout"
	"github.com/ruckus/ruckus/views/said"
)

// variantLabel names a variant: its model and shots.
func variantLabel(ctx context.Context, r conclude.VariantRow) string {
	return i18n.T(ctx, "variants.label", "Model", r.Model, "K", r.Shots)
}

// kindWords says what a variant is to its family.
func kindWords(ctx context.Context, r conclude.VariantRow) string {
	switch r.Kind {
	case conclude.KindFineTune:
		return i18n.T(ctx, "variants.fine_tune_of", "Base", r.BaseModel)
	case conclude.KindAdapter:
		return i18n.T(ctx, "variants.adapter_on", "Base", r.BaseModel)
	}
	return i18n.T(ctx, "variants.base_model")
}

func qualityWithCI(ctx context.Context, r conclude.VariantRow) string {
	switch {
	case r.Quality == nil:
		return i18n.T(ctx, "variants.not_scored")
	case r.QualityLo != nil && r.QualityHi != nil:
		return i18n.Num(ctx, *r.Quality, 3) + " " + i18n.T(ctx, "variants.interval", "Lo", i18n.Num(ctx, *r.QualityLo, 3), "Hi", i18n.Num(ctx, *r.QualityHi, 3))
	}
	return i18n.Num(ctx, *r.Quality, 3)
}

// deltaText is a variant's difference from the baseline with its interval
// and whether the test finds it.
func deltaText(ctx context.Context, r conclude.VariantRow) string {
	m := r.Delta
	if m == nil || !m.Measured || !m.Comparable {
		return i18n.T(ctx, "variants.not_compared")
	}
	d := m.A - m.B
	if m.Paired != nil {
		d = m.Paired.Mean
	}
	s := signed(ctx, d)
	if m.Lo != nil && m.Hi != nil {
		s += " " + i18n.T(ctx, "variants.interval", "Lo", signed(ctx, *m.Lo), "Hi", signed(ctx, *m.Hi))
	}
	// The claim as the engine words it (Margin.ClaimSaid): a difference
	// the test does not establish is "not established", with the smallest
	// difference this comparison could have detected.
	return s + " · " + said.Word(ctx, m.ClaimSaid())
}

// categoryOf is a variant's delta on one category.
func categoryOf(r conclude.VariantRow, cat string) (conclude.CategoryDelta, bool) {
	for _, c := range r.Categories {
		if c.Category == cat {
			return c, true
		}
	}
	return conclude.CategoryDelta{}, false
}

// scorerWords says in words what a scorer identity is when its name does
// not (a judge named, a refusal rate).
func scorerWords(ctx context.Context, key string) string {
	if d := layout.DescribeScorer(ctx, key); d != key {
		return " (" + d + ")"
	}
	return ""
}

// signed writes a difference with its sign, in the reader's number
// format; a difference that rounds to zero is +0.000.
func signed(ctx context.Context, v float64) string {
	s := i18n.Num(ctx, v, 3)
	if rest, neg := strings.CutPrefix(s, "-"); neg {
		if strings.Trim(rest, "0.,") != "" {
			return s
		}
		s = rest
	}
	return "+" + s
}

// pValue writes a p-value to three significant digits (0.0123, 1.2e-05)
// with the reader's decimal separator.
func pValue(ctx context.Context, p float64) string {
	s := strconv.FormatFloat(p, 'g', 3, 64)
	// The separator is what the language writes between 0 and 5 in a half.
	sep := strings.Trim(i18n.Num(ctx, 0.5, 1), "05")
	return strings.Replace(s, ".", sep, 1)
}
