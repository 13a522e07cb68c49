package conclude

import (
	"testing"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
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

// Speed and cost rank within the most used closed loop, not an open loop
// (whose tokens/s is the offered load), and a list asked for by speed or
// cost under an open loop ranks nothing: it is by date.
func TestLeaderboardRanksNoSpeedUnderAnOpenLoop(t *testing.T) {
	open := jobs.LoadIdentity{Profile: jobs.LoadPoisson, Params: "(rate=10)", Sampling: "max_tokens=32", DatasetID: 1}.Key()
	closed := jobs.LoadIdentity{Profile: jobs.LoadConcurrency, Params: "(concurrency=4)", Sampling: "max_tokens=32", DatasetID: 1}.Key()
	f := store.LeaderboardFacets{Loads: []string{open, closed}}
	for _, c := range []struct {
		sort, load, wantLoad, wantSort string
	}{
		{store.SortSpeed, "", closed, store.SortSpeed},
		{store.SortCost, "", closed, store.SortCost},
		{store.SortLatency, "", open, store.SortLatency},
		{store.SortSpeed, open, open, store.SortDate},
		{store.SortCost, open, open, store.SortDate},
	} {
		_, l := LeaderboardWithin(c.sort, store.LeaderboardQuery{Load: c.load}, f)
		if s, _ := LeaderboardSort(c.sort, "", l); l != c.wantLoad || s != c.wantSort {
			t.Errorf("%s under %q: within %q by %s; want %q by %s", c.sort, c.load, l, s, c.wantLoad, c.wantSort)
		}
	}
	if _, l := LeaderboardWithin(store.SortSpeed, store.LeaderboardQuery{}, store.LeaderboardFacets{Loads: []string{open}}); func() string { s, _ := LeaderboardSort(store.SortSpeed, "", l); return s }() != store.SortDate {
		t.Errorf("only open loops: ranked by speed within %q", l)
	}
}
