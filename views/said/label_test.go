package said

import (
	"context"
	"testing"

	"github.com/ruckus/ruckus/app/advise"
	"github.com/ruckus/ruckus/app/i18n"
)

// A candidate is named in the reader's language wherever a page names it
// (the verdict's lines, the start page's summary, the recommendation):
// German pages do not say "on" or "run".
func TestLabelSpeaksTheReadersLanguage(t *testing.T) {
	a := advise.Candidate{RunID: 12, Model: "m/a", Runtime: "sim", Hardware: "cpu"}
	b := advise.Candidate{RunID: 13, Model: "m/a", Runtime: "vllm", Hardware: "h100"}
	c := advise.Candidate{RunID: 14, Model: "m/a", Runtime: "sim", Hardware: "cpu"}
	de := i18n.With(context.Background(), i18n.Default().Lang("de"))
	en := i18n.With(context.Background(), i18n.Default().Lang("en"))
	for _, tc := range []struct {
		ctx       context.Context
		among     []advise.Candidate
		want      string
		candidate advise.Candidate
	}{
		{en, []advise.Candidate{a, b}, advise.Label(a, []advise.Candidate{a, b}), a},
		{de, []advise.Candidate{a, b}, "m/a auf sim/cpu", a},
		{de, []advise.Candidate{a, c}, "m/a (Lauf 12)", a},
		{de, []advise.Candidate{{RunID: 9}}, "Lauf 9", advise.Candidate{RunID: 9}},
	} {
		if got := Label(tc.ctx, tc.candidate, tc.among); got != tc.want {
			t.Errorf("%s: %q, want %q", i18n.From(tc.ctx).Code(), got, tc.want)
		}
	}
	if got := Label(de, a, []advise.Candidate{a, b}); got == advise.Label(a, []advise.Candidate{a, b}) {
		t.Errorf("German label %q is the English one", got)
	}
}
