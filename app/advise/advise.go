// Package advise is the old name of app/conclude, kept only as aliases for
// the callers that still spell it (make bench-verdict's program and three
// page templates); it holds no code of its own, so conclusions still have
// one home (docs/concepts.md#the-conclusions-engine). Remove it once those callers say
// conclude.
package advise

import (
	"context"

	"github.com/ruckus/ruckus/app/conclude"
)

// The names those callers use, each the engine's own.
type (
	Candidate      = conclude.Candidate
	Criterion      = conclude.Criterion
	Evidence       = conclude.Evidence
	Margin         = conclude.Margin
	Recommendation = conclude.Recommendation
	VariantFamily  = conclude.VariantFamily
	VariantRow     = conclude.VariantRow
)

// The criteria, as conclude names them.
const (
	Quality = conclude.Quality
	Latency = conclude.Latency
	Speed   = conclude.Speed
	Cost    = conclude.Cost
)

// Compare is conclude.Compare.
func Compare(a, b Candidate, c Criterion, ev Evidence) Margin {
	return conclude.Compare(a, b, c, ev)
}

// GatherEvidence is conclude.GatherEvidence.
func GatherEvidence(ctx context.Context, st conclude.PairSource, cands []Candidate) (Evidence, error) {
	return conclude.GatherEvidence(ctx, st, cands)
}

// Quantizations is conclude.Quantizations.
func Quantizations() []string { return conclude.Quantizations() }
