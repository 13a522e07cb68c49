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
// within load identity load ranks by: speed and cost rank nothing under an
// open loop, where every target's tokens/s is the rate offered (the rule
// the verdict and the comparison follow, docs/verdict.md#not-comparable),
// so such a list is by date instead.
func LeaderboardSort(sortBy, load string) string {
	if (sortBy == store.SortSpeed || sortBy == store.SortCost) && openLoopKey(load) {
		return store.SortDate
	}
	return sortBy
}

// openLoopKey says whether a load identity's key (jobs.LoadIdentity.Key,
// which opens with the profile) is an open loop's.
func openLoopKey(key string) bool {
	profile, _, _ := strings.Cut(key, " ")
	return key != "" && OpenLoop(jobs.LoadIdentity{Profile: profile})
}
