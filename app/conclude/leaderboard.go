package conclude

import (
	"cmp"
	"math"
	"slices"
	"sort"
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

// LeaderboardLeftOut is a run a leaderboard ranked by speed, latency or
// cost leaves out of its ranking, with why.
type LeaderboardLeftOut struct {
	RunID  int64  `json:"run_id"`
	Model  string `json:"model"`
	Reason string `json:"reason"`
	Said   Said   `json:"-"`
}

// LeaderboardLengths chooses, from the runs one leaderboard ranks by
// speed, latency or cost (one load identity), the runs it may set side by
// side, and returns the others with why. Two runs' speed is comparable
// only while their measured mean prompt and answer lengths are each
// within jobs.LengthRatio of the other's (jobs.LoadIdentity.LengthsDiffer,
// the rule every claim follows, docs/verdict.md#not-comparable). That rule
// is pairwise, not a class: 20, 35 and 60 tokens are two comparable pairs
// but no comparable three. So the ranking keeps the largest set of runs
// every two of which are comparable (ties to the set of shorter lengths),
// and every run it leaves out is named with a ranked run it cannot be set
// against (of the ranked runs with the shortest or longest prompts or
// answers, the one furthest from it) — one there always is, as no run
// comparable with every ranked run is left out of the largest set.
func LeaderboardLengths(runs []store.RunLengths) []LeaderboardLeftOut {
	kept := comparableLengths(runs)
	ends := lengthEnds(runs, kept)
	var out []LeaderboardLeftOut
	for i, r := range runs {
		if kept[i] {
			continue
		}
		why, ok := lengthsApartFrom(r, ends)
		if !ok {
			continue
		}
		out = append(out, LeaderboardLeftOut{RunID: r.RunID, Model: r.Model, Reason: English(why), Said: why})
	}
	return out
}

// comparableLengths marks the largest set of runs whose mean prompt
// lengths all lie within jobs.LengthRatio of the shortest of them, and
// their answer lengths likewise: every two such runs are comparable, and
// every set of pairwise comparable runs is one such set. The set is
// searched from each run's prompt length as its shortest, then each of
// those runs' answer lengths as theirs, skipping prompt lengths whose
// runs are a subset of the last searched (O(n²) for n runs at worst; 2,000
// runs of one load take about 30 ms, BenchmarkLeaderboardLengths).
func comparableLengths(runs []store.RunLengths) []bool {
	byIn, byOut := make([]int, len(runs)), make([]int, len(runs))
	for i := range byIn {
		byIn[i], byOut[i] = i, i
	}
	slices.SortStableFunc(byIn, func(a, b int) int { return cmp.Compare(runs[a].MeanIn, runs[b].MeanIn) })
	slices.SortStableFunc(byOut, func(a, b int) int { return cmp.Compare(runs[a].MeanOut, runs[b].MeanOut) })
	at := make([]int, len(runs)) // a run's place in byIn
	for k, i := range byIn {
		at[i] = k
	}
	var best, in []int
	reached := 0 // the end in byIn of the last prompt lengths searched
	for a, ia := range byIn {
		shortest := runs[ia].MeanIn
		if a > 0 && runs[byIn[a-1]].MeanIn == shortest {
			continue // the same shortest prompt length as the one before
		}
		// The runs from here whose prompts are within the ratio of the
		// shortest: a prefix of byIn[a:], as the rule is monotone.
		n := sort.Search(len(byIn)-a, func(k int) bool { return lengthApart(shortest, runs[byIn[a+k]].MeanIn) })
		if n <= len(best) || a+n <= reached {
			continue // too few to be a larger set, or a subset of the last
		}
		reached = a + n
		// The runs of these prompt lengths, by answer length.
		in = in[:0]
		for _, j := range byOut {
			if at[j] >= a && at[j] < a+n {
				in = append(in, j)
			}
		}
		// The window of answer lengths only grows as its shortest does.
		end := 0
		for o := range in {
			end = max(end, o)
			for end < len(in) && !lengthApart(runs[in[o]].MeanOut, runs[in[end]].MeanOut) {
				end++
			}
			if end-o > len(best) {
				best = slices.Clone(in[o:end])
			}
		}
	}
	kept := make([]bool, len(runs))
	for _, i := range best {
		kept[i] = true
	}
	return kept
}

// lengthApart says whether two measured mean lengths are more than
// jobs.LengthRatio apart, by the engine's rule.
func lengthApart(a, b float64) bool {
	in, _ := jobs.LoadIdentity{MeanIn: a}.LengthsDiffer(jobs.LoadIdentity{MeanIn: b})
	return in
}

// lengthEnds are the kept runs with the shortest and longest prompts and
// answers. A run not comparable with some kept run is not comparable with
// one of them: its lengths are more than jobs.LengthRatio from that run's
// on one side, and so from the kept run furthest on that side.
func lengthEnds(runs []store.RunLengths, kept []bool) []store.RunLengths {
	var ends [4]int
	first := true
	for i, r := range runs {
		if !kept[i] {
			continue
		}
		if first {
			ends, first = [4]int{i, i, i, i}, false
		}
		for k, better := range []bool{r.MeanIn < runs[ends[0]].MeanIn, r.MeanIn > runs[ends[1]].MeanIn,
			r.MeanOut < runs[ends[2]].MeanOut, r.MeanOut > runs[ends[3]].MeanOut} {
			if better {
				ends[k] = i
			}
		}
	}
	if first {
		return nil
	}
	return []store.RunLengths{runs[ends[0]], runs[ends[1]], runs[ends[2]], runs[ends[3]]}
}

// lengthsApartFrom says why run r is not ranked with the kept runs: the
// one of their ends (lengthEnds) its lengths are furthest from, and how
// (false when it is comparable with every end, and so with every kept run).
func lengthsApartFrom(r store.RunLengths, ends []store.RunLengths) (Said, bool) {
	l := jobs.LoadIdentity{MeanIn: r.MeanIn, MeanOut: r.MeanOut}
	var far store.RunLengths
	farthest := 0.0
	for _, o := range ends {
		if in, out := l.LengthsDiffer(jobs.LoadIdentity{MeanIn: o.MeanIn, MeanOut: o.MeanOut}); in || out {
			if d := math.Abs(math.Log(r.MeanIn+1)-math.Log(o.MeanIn+1)) + math.Abs(math.Log(r.MeanOut+1)-math.Log(o.MeanOut+1)); d > farthest {
				far, farthest = o, d
			}
		}
	}
	if farthest == 0 {
		return Said{}, false
	}
	fl := jobs.LoadIdentity{MeanIn: far.MeanIn, MeanOut: far.MeanOut}
	return say("history.said.not_ranked_lengths", "Run", far.RunID, "Why", loadDifferences(l, fl)), true
}

// LeaderboardRanksByLoad says whether a leaderboard sorted by sortBy (as
// LeaderboardSort gives it) ranks runs within one load identity, and so
// only runs whose lengths are comparable (LeaderboardLengths): speed,
// latency and cost do; quality (one scorer identity) and the date do not.
func LeaderboardRanksByLoad(sortBy string) bool {
	return sortBy == store.SortSpeed || sortBy == store.SortLatency || sortBy == store.SortCost
}
