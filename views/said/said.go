// Package said words app/conclude's sentences (conclude.Said) and their
// figures in the reader's language, for every page that shows them.
package said

import (
	"context"
	"fmt"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
)

// Word is one of app/conclude's sentences in the reader's language
// (conclude.Said.In); "" for none.
func Word(ctx context.Context, s conclude.Said) string {
	return s.In(i18n.From(ctx))
}

// WordAll is each sentence in the reader's language.
func WordAll(ctx context.Context, ss []conclude.Said) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Word(ctx, s)
	}
	return out
}

// Fixed writes v with places decimals and the reader's decimal sign, and
// no thousands separator (a figure as the API writes it: 8766.00, in
// German 8766,00).
func Fixed(ctx context.Context, v float64, places int) string {
	return DecimalSign(ctx, fmt.Sprintf("%.*f", places, v))
}

// decimalSign swaps a formatted number's decimal point for the reader's
// decimal sign.
func DecimalSign(ctx context.Context, s string) string {
	return conclude.DecimalSign(i18n.From(ctx), s)
}

// USD is an amount in US dollars with places decimals: $12.50.
func USD(ctx context.Context, v float64, places int) string {
	return i18n.T(ctx, "compare.usd", "N", Fixed(ctx, v, places))
}

// Signed writes v with its sign and places decimals: +0.120.
func Signed(ctx context.Context, v float64, places int) string {
	return DecimalSign(ctx, fmt.Sprintf("%+.*f", places, v))
}

// PValue writes a p-value with three significant digits.
func PValue(ctx context.Context, p float64) string {
	return DecimalSign(ctx, fmt.Sprintf("%.3g", p))
}

// testName names a paired comparison's test in the reader's language.
func TestName(ctx context.Context, p conclude.QualityDiff) string {
	if s, ok := p.TestSaid().(conclude.Said); ok {
		return Word(ctx, s)
	}
	return p.TestName()
}

// JoinAnd joins "a", "a and b", "a, b and c" in the reader's language.
func JoinAnd(ctx context.Context, parts []string) string {
	return conclude.JoinAnd(i18n.From(ctx), parts)
}

// Percent writes a relative difference's size as conclude.FormatPct does,
// with the reader's decimal sign: "0.6 %", "12 %".
func Percent(ctx context.Context, p float64) string {
	return DecimalSign(ctx, conclude.FormatPct(p))
}

// Excluded are the reasons a target was left out of a recommendation, in
// the reader's language.
func Excluded(ctx context.Context, x conclude.Excluded) []string {
	if len(x.ReasonsSaid) != len(x.Reasons) {
		return x.Reasons
	}
	return WordAll(ctx, x.ReasonsSaid)
}

// Label names a candidate among others in the reader's language
// (conclude.LabelSaid: "m/a on sim/cpu", "m/a (run 12)").
func Label(ctx context.Context, c conclude.Candidate, all []conclude.Candidate) string {
	switch l := conclude.LabelSaid(c, all).(type) {
	case conclude.Said:
		return Word(ctx, l)
	case string:
		return l
	}
	return c.Model
}
