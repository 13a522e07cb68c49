package conclude

import (
	"fmt"
	"math"
	"math/rand/v2"
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

// lengthsComparable is the engine's pairwise rule for two runs' lengths
// (jobs.LoadIdentity.LengthsDiffer), which a ranking must keep.
func lengthsComparable(a, b store.RunLengths) bool {
	in, out := jobs.LoadIdentity{MeanIn: a.MeanIn, MeanOut: a.MeanOut}.LengthsDiffer(jobs.LoadIdentity{MeanIn: b.MeanIn, MeanOut: b.MeanOut})
	return !in && !out
}

// A leaderboard ranks the largest set of runs every two of which the
// engine compares, and names each run it leaves out with a ranked run it
// cannot be set against (the one furthest from it): 20, 35 and 60 tokens are two comparable pairs
// (35/20, 60/35 within 2×) but 60/20 is not, so one of the ends is left
// out; 63.8 and 64.0 tokens rank together; input lengths count as well.
func TestLeaderboardRanksOnlyComparableLengths(t *testing.T) {
	run := func(id int64, in, out float64) store.RunLengths {
		return store.RunLengths{RunID: id, Model: "m", MeanIn: in, MeanOut: out}
	}
	for _, c := range []struct {
		name    string
		runs    []store.RunLengths
		leftOut []int64
		against []int64
		why     string
	}{
		{"one set", []store.RunLengths{run(1, 30, 63.8), run(2, 30, 64), run(3, 31, 100)}, nil, nil, ""},
		{"a chain", []store.RunLengths{run(1, 30, 20), run(2, 30, 35), run(3, 30, 60)}, []int64{3}, []int64{1}, "mean output length 60.0 vs 20.0 tokens (more than 2× apart)"},
		{"the larger set wins", []store.RunLengths{run(1, 30, 10), run(2, 30, 100), run(3, 30, 120), run(4, 30, 180)}, []int64{1}, []int64{4}, "mean output length 10.0 vs 180.0 tokens (more than 2× apart)"},
		{"prompts too", []store.RunLengths{run(1, 30, 50), run(2, 100, 50), run(3, 32, 50)}, []int64{2}, []int64{1}, "mean input length 100.0 vs 30.0 tokens (more than 2× apart)"},
		{"not measured apart from measured", []store.RunLengths{run(1, 0, 0), run(2, 30, 50), run(3, 30, 60)}, []int64{1}, nil, ""},
		{"exactly 2× compares", []store.RunLengths{run(1, 30, 32), run(2, 30, 64)}, nil, nil, ""},
	} {
		got := LeaderboardLengths(c.runs)
		var ids []int64
		for i, l := range got {
			ids = append(ids, l.RunID)
			if i < len(c.against) && l.Reason != fmt.Sprintf("not ranked with run %d: %s", c.against[i], c.why) {
				t.Errorf("%s: run %d: %q", c.name, l.RunID, l.Reason)
			}
		}
		if fmt.Sprint(ids) != fmt.Sprint(c.leftOut) {
			t.Errorf("%s: left out %v, want %v", c.name, ids, c.leftOut)
		}
	}
}

// Against every set up to 9 runs drawn at random: the runs ranked are
// pairwise comparable, no larger such set exists (by trying every
// subset), and every run left out is named with a ranked run it is not
// comparable with.
func TestLeaderboardLengthsAgreeWithThePairwiseRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(40, 2))
	for trial := range 2000 {
		n := 1 + rng.IntN(9)
		runs := make([]store.RunLengths, n)
		for i := range runs {
			// Lengths on a coarse grid, so that ties and exact ratios of 2 occur.
			runs[i] = store.RunLengths{RunID: int64(i + 1), MeanIn: float64(rng.IntN(4)) * 10, MeanOut: float64(1+rng.IntN(16)) * 8}
		}
		out := LeaderboardLengths(runs)
		left := map[int64]string{}
		for _, l := range out {
			left[l.RunID] = l.Reason
		}
		var kept []store.RunLengths
		for _, r := range runs {
			if _, ok := left[r.RunID]; !ok {
				kept = append(kept, r)
			}
		}
		for i, a := range kept {
			for _, b := range kept[i+1:] {
				if !lengthsComparable(a, b) {
					t.Fatalf("trial %d: runs %d and %d ranked together: %+v %+v", trial, a.RunID, b.RunID, a, b)
				}
			}
		}
		if best := largestComparable(runs); best != len(kept) {
			t.Fatalf("trial %d: %d ranked, %d could be: %+v", trial, len(kept), best, runs)
		}
		for _, r := range runs {
			why, ok := left[r.RunID]
			if !ok {
				continue
			}
			var against int64
			if _, err := fmt.Sscanf(why, "not ranked with run %d:", &against); err != nil {
				t.Fatalf("trial %d: run %d: %q", trial, r.RunID, why)
			}
			if _, gone := left[against]; gone || lengthsComparable(r, runs[against-1]) {
				t.Fatalf("trial %d: run %d is left out against run %d: %q", trial, r.RunID, against, why)
			}
		}
	}
}

// largestComparable is the size of the largest pairwise comparable subset
// of runs, by trying every subset.
func largestComparable(runs []store.RunLengths) int {
	best := 0
	for mask := 1; mask < 1<<len(runs); mask++ {
		var set []store.RunLengths
		for i, r := range runs {
			if mask&(1<<i) != 0 {
				set = append(set, r)
			}
		}
		ok := true
		for i := range set {
			for j := i + 1; j < len(set) && ok; j++ {
				ok = lengthsComparable(set[i], set[j])
			}
		}
		if ok && len(set) > best {
			best = len(set)
		}
	}
	return best
}

// BenchmarkLeaderboardLengths chooses among 2,000 runs of one load, their
// lengths spread over two orders of magnitude: what a leaderboard page
// sorted by speed adds before its query.
func BenchmarkLeaderboardLengths(b *testing.B) {
	rng := rand.New(rand.NewPCG(40, 3))
	runs := make([]store.RunLengths, 2000)
	for i := range runs {
		runs[i] = store.RunLengths{RunID: int64(i + 1), MeanIn: 100 + rng.Float64()*50, MeanOut: math.Exp(rng.Float64() * math.Log(100))}
	}
	for b.Loop() {
		LeaderboardLengths(runs)
	}
}
