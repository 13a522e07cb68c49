package said

import (
	"context"
	"testing"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
)

// A candidate is named in the reader's language wherever a page names it
// (the verdict's lines, the start page's summary, the recommendation):
// German pages do not say "on" or "run".
func TestLabelSpeaksTheReadersLanguage(t *testing.T) {
	a := conclude.Candidate{RunID: 12, Model: "m/a", Runtime: "sim", Hardware: "cpu"}
	b := conclude.Candidate{RunID: 13, Model: "m/a", Runtime: "vllm", Hardware: "h100"}
	c := conclude.Candidate{RunID: 14, Model: "m/a", Runtime: "sim", Hardware: "cpu"}
	de := i18n.With(context.Background(), i18n.Default().Lang("de"))
	en := i18n.With(context.Background(), i18n.Default().Lang("en"))
	for _, tc := range []struct {
		ctx       context.Context
		among     []conclude.Candidate
		want      string
		candidate conclude.Candidate
	}{
		{en, []conclude.Candidate{a, b}, conclude.Label(a, []conclude.Candidate{a, b}), a},
		{de, []conclude.Candidate{a, b}, "m/a auf sim/cpu", a},
		{de, []conclude.Candidate{a, c}, "m/a (Lauf 12)", a},
		{de, []conclude.Candidate{{RunID: 9}}, "Lauf 9", conclude.Candidate{RunID: 9}},
	} {
		if got := Label(tc.ctx, tc.candidate, tc.among); got != tc.want {
			t.Errorf("%s: %q, want %q", i18n.From(tc.ctx).Code(), got, tc.want)
		}
	}
	if got := Label(de, a, []conclude.Candidate{a, b}); got == conclude.Label(a, []conclude.Candidate{a, b}) {
		t.Errorf("German label %q is the English one", got)
	}
}
