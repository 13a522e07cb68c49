package conclude

import (
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// Quality ranks within the asked or most used scorer identity, speed,
// latency and cost within the asked or most used load identity, and a
// sort by date within neither.
func TestLeaderboardRanksWithinOneIdentity(t *testing.T) {
	f := store.LeaderboardFacets{Scorers: []string{"rougeL", "bleu"}, Loads: []string{"L1", "L2"}}
	for _, c := range []struct {
		sort, scorer, load string
		wantS, wantL       string
	}{
		{store.SortQuality, "", "", "rougeL", ""},
		{store.SortQuality, "bleu", "", "bleu", ""},
		{store.SortSpeed, "", "", "", "L1"},
		{store.SortLatency, "", "L2", "", "L2"},
		{store.SortCost, "", "", "", "L1"},
		{store.SortDate, "", "", "", ""},
	} {
		s, l := LeaderboardWithin(c.sort, store.LeaderboardQuery{Scorer: c.scorer, Load: c.load}, f)
		if s != c.wantS || l != c.wantL {
			t.Errorf("%s (%q, %q): within %q, %q; want %q, %q", c.sort, c.scorer, c.load, s, l, c.wantS, c.wantL)
		}
	}
	if s, l := LeaderboardWithin(store.SortSpeed, store.LeaderboardQuery{}, store.LeaderboardFacets{}); s != "" || l != "" {
		t.Errorf("no runs: %q %q", s, l)
	}
}
