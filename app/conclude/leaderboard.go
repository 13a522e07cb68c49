package conclude

import (
	"strings"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// LeaderboardWithin is the identity a leaderboard sorted by sortBy ranks
// within (docs/concepts.md#comparability-and-noise): quality within one
// scorer identity, the one asked, else the one most of the dataset's runs
// were scored under; speed, latency and cost within one load identity,
// the one asked, else the one most runs were measured under — for speed
// and cost the most used closed loop, as an open loop's tokens/s is the
// offered load (LeaderboardSort). A sort by date ranks nothing and keeps
// what was asked.
func LeaderboardWithin(sortBy string, q store.LeaderboardQuery, f store.LeaderboardFacets) (scorer, load string) {
	scorer, load = q.Scorer, q.Load
	switch sortBy {
	case store.SortQuality:
		if scorer == "" && len(f.Scorers) > 0 {
			scorer = f.Scorers[0]
		}
	case store.SortSpeed, store.SortLatency, store.SortCost:
		if load != "" || len(f.Loads) == 0 {
			break
		}
		load = f.Loads[0]
		if sortBy == store.SortLatency {
			break
		}
		for _, l := range f.Loads {
			if !openLoopKey(l) {
				return scorer, l
			}
		}
	}
	return scorer, load
}

// LeaderboardSort is the sort a leaderboard asked to sort by sortBy
// within scorer identity scorer and load identity load ranks by, and why
// when it is by date instead: speed and cost rank nothing under an open
// loop, where every target's tokens/s is the rate offered, and quality
// ranks nothing under a scorer whose mean is not a quality where more is
// better (a refusal rate: HigherIsBetter) — the rules the verdict and the
// comparison follow (docs/verdict.md#not-comparable), so such a list is by
// date, saying why.
func LeaderboardSort(sortBy, scorer, load string) (string, Said) {
	switch {
	case (sortBy == store.SortSpeed || sortBy == store.SortCost) && openLoopKey(load):
		profile, _, _ := strings.Cut(load, " ")
		return store.SortDate, say("compare.said.not_ranked_open_loop", "Profile", profile)
	case sortBy == store.SortQuality && scorer != "" && !HigherIsBetter(scorer):
		return store.SortDate, say("compare.said.not_ranked_refusal", "Scorer", scorer)
	}
	return sortBy, Said{}
}

// openLoopKey says whether a load identity's key (jobs.LoadIdentity.Key,
// which opens with the profile) is an open loop's.
func openLoopKey(key string) bool {
	profile, _, _ := strings.Cut(key, " ")
	return key != "" && OpenLoop(jobs.LoadIdentity{Profile: profile})
}
