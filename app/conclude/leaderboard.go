package conclude

import "github.com/ruckus/ruckus/app/store"

// LeaderboardWithin is the identity a leaderboard sorted by sortBy ranks
// within (docs/concepts.md#comparability-and-noise): quality within one
// scorer identity, the one asked, else the one most of the dataset's runs
// were scored under; speed, latency and cost within one load identity,
// the one asked, else the one most runs were measured under. A sort by
// date ranks nothing and keeps what was asked.
func LeaderboardWithin(sortBy string, q store.LeaderboardQuery, f store.LeaderboardFacets) (scorer, load string) {
	scorer, load = q.Scorer, q.Load
	switch sortBy {
	case store.SortQuality:
		if scorer == "" && len(f.Scorers) > 0 {
			scorer = f.Scorers[0]
		}
	case store.SortSpeed, store.SortLatency, store.SortCost:
		if load == "" && len(f.Loads) > 0 {
			load = f.Loads[0]
		}
	}
	return scorer, load
}
