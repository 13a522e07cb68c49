package conclude

import (
	"context"
	"slices"

	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
)

// PairSource is where paired comparisons of quality come from
// (*store.Store): those kept in quality_pairs, the runs' stored item
// scores to compute the others from, and where to keep them.
type PairSource interface {
	KeptQualityPairs(ctx context.Context, key string, want [][2]int64) ([]store.QualityPair, error)
	RunItemScores(ctx context.Context, key string, runIDs []int64) (map[int64]store.ItemScores, error)
	KeepQualityPairs(ctx context.Context, pairs []store.QualityPair) error
}

// QualityPairs returns the paired comparisons under scorer identity key
// of every two of the runs that have a quality under it (A the lower id).
// A pair compared before is read; one not yet is computed from the runs'
// stored item scores (stats.PairScores, stats.ComparePaired) and kept, so
// a page never reads the results to draw it. Pairs with no item in common
// are absent.
func QualityPairs(ctx context.Context, src PairSource, key string, runIDs []int64) ([]store.QualityPair, error) {
	ids := slices.Clone(runIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var want [][2]int64
	for i, a := range ids {
		for _, b := range ids[i+1:] {
			want = append(want, [2]int64{a, b})
		}
	}
	return qualityPairs(ctx, src, key, want)
}

// QualityPairsWith returns the paired comparisons under scorer identity
// key of run a with each of others, as QualityPairs does: what a verdict
// needs, its leader against the rest.
func QualityPairsWith(ctx context.Context, src PairSource, key string, a int64, others []int64) ([]store.QualityPair, error) {
	var want [][2]int64
	for _, b := range others {
		if b != a && !slices.Contains(want, [2]int64{min(a, b), max(a, b)}) {
			want = append(want, [2]int64{min(a, b), max(a, b)})
		}
	}
	return qualityPairs(ctx, src, key, want)
}

// qualityPairs reads the wanted pairs (each lower id first) that were
// kept and computes and keeps the others.
func qualityPairs(ctx context.Context, src PairSource, key string, want [][2]int64) ([]store.QualityPair, error) {
	if len(want) == 0 {
		return nil, nil
	}
	out, err := src.KeptQualityPairs(ctx, key, want)
	if err != nil {
		return nil, err
	}
	have := map[[2]int64]bool{}
	for _, p := range out {
		have[[2]int64{p.A, p.B}] = true
	}
	var missing [][2]int64
	var ids []int64 // the runs of the pairs not kept yet
	for _, w := range want {
		if !have[w] {
			missing = append(missing, w)
			ids = append(ids, w[0], w[1])
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	slices.Sort(ids)
	vecs, err := src.RunItemScores(ctx, key, slices.Compact(ids))
	if err != nil {
		return nil, err
	}
	var computed []store.QualityPair
	for _, m := range missing {
		if p, ok := pairQuality(key, m, vecs); ok {
			computed = append(computed, p)
		}
	}
	if err := src.KeepQualityPairs(ctx, computed); err != nil {
		return nil, err
	}
	return append(out, computed...), nil
}

// pairQuality is the paired comparison of runs m under scorer identity
// key over the items both scored (false when either has no scores under
// it or they share no item).
func pairQuality(key string, m [2]int64, vecs map[int64]store.ItemScores) (store.QualityPair, bool) {
	va, okA := vecs[m[0]]
	vb, okB := vecs[m[1]]
	if !okA || !okB {
		return store.QualityPair{}, false
	}
	xa, xb, onlyA, onlyB := stats.PairScores(va.Idx, va.Scores, vb.Idx, vb.Scores)
	if len(xa) == 0 {
		return store.QualityPair{}, false
	}
	r := stats.ComparePaired(xa, xb, stats.PairSeed(m[0], m[1]))
	return store.QualityPair{A: m[0], B: m[1], ScorerKey: key, Items: r.N, Mean: r.Mean, Lo: r.Lo, Hi: r.Hi, P: r.P, Test: r.Test,
		OnlyA: onlyA, OnlyB: onlyB}, true
}

// PeerSource gives a scored run's peers: the other runs of its benchmark
// under each scorer identity it was scored under (*store.Store).
type PeerSource interface {
	PairSource
	RunQualityPeers(ctx context.Context, runID int64) (map[string][]int64, error)
}

// PairRunQualities computes and keeps the paired comparisons of run
// runID's qualities with every other run of its benchmark scored under
// the same identity, when the run is scored, so that the benchmark's
// verdict and recommendation read them from quality_pairs instead of
// computing them on a page's request.
func PairRunQualities(ctx context.Context, src PeerSource, runID int64) error {
	peers, err := src.RunQualityPeers(ctx, runID)
	if err != nil {
		return err
	}
	for key, ids := range peers {
		// Only this run's pairs: the others' with each other were kept
		// when they were scored.
		if _, err := QualityPairsWith(ctx, src, key, runID, ids); err != nil {
			return err
		}
	}
	return nil
}
