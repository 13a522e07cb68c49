package conclude

import "github.com/ruckus/ruckus/app/store"

// AsWeighed is f with the quality its run is compared on: its candidate's
// among cands (Weigh: the quality under the scorer identity the runs are
// ranked by, else the run's latest under its own, which no claim sets
// against the others), so that a figures table, its header and its charts
// show the mean the claims beside them test, not whichever scorer scored
// the run last (docs/verdict.md#which-runs-and-which-scorer). A run with
// no candidate among cands (left out) shows no quality.
func (f Figures) AsWeighed(cands []Candidate) Figures {
	f.Quality, f.QualityLo, f.QualityHi, f.ScorerKey = nil, nil, nil, ""
	for _, c := range cands {
		if c.RunID == f.Run.ID {
			f.Quality, f.QualityLo, f.QualityHi, f.ScorerKey = c.Quality, c.QualityLo, c.QualityHi, c.ScorerKey
			break
		}
	}
	return f
}

// DatasetsApart says why runs cannot be set side by side item by item —
// they answered more than one dataset — and whether they cannot: the
// comparison page shows items side by side and so refuses them, where the
// claims (Compare) call such runs not comparable on quality and on the
// load identity, whose dataset differs too (docs/verdict.md#not-comparable).
func DatasetsApart(runs []store.RunFigures) (Said, bool) {
	for _, r := range runs {
		if r.DatasetID != runs[0].DatasetID {
			return say("compare.error_other_dataset", "Run", r.ID, "First", runs[0].ID), true
		}
	}
	return Said{}, false
}
