package benchmarks

import (
	"context"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/views/said"
)

// WordVerdict is the engine's verdict (conclude.Weighed.Verdict) in the
// reader's language on v, the block's links and counts already set: the
// words are the catalogue's, the choice of them the engine's.
func WordVerdict(ctx context.Context, v Verdict, w conclude.Verdict) Verdict {
	v.Notes = append(v.Notes, said.WordAll(ctx, w.Notes)...)
	v.Empty = said.Word(ctx, w.Empty)
	for _, l := range w.Lines {
		v.Lines = append(v.Lines, wordLine(ctx, l))
	}
	return v
}

// wordLine is one of the verdict's lines in the reader's language.
func wordLine(ctx context.Context, l conclude.VerdictLine) VerdictLine {
	return VerdictLine{
		ID:            string(l.Criterion),
		Title:         said.Word(ctx, l.Title),
		Missing:       said.Word(ctx, l.Missing),
		Winner:        said.Word(ctx, l.Winner),
		Value:         said.Word(ctx, l.Value),
		RunnerUp:      said.Word(ctx, l.RunnerUp),
		Margin:        said.Word(ctx, l.Margin),
		Tie:           l.Tie,
		Significance:  said.Word(ctx, l.Significance),
		Basis:         said.Word(ctx, l.Basis),
		AlsoTied:      said.Word(ctx, l.AlsoTied),
		Unmeasured:    said.Word(ctx, l.Unmeasured),
		NotComparable: said.WordAll(ctx, l.NotComparable),
	}
}
