package conclude

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// DriftSource reads a deployment's recent runs, from which its
// between-run spread is measured (*store.Store's DeploymentRuns;
// docs/concepts.md#drift): a deployment is a hardware profile, a runtime
// and its engine settings.
type DriftSource interface {
	DeploymentRuns(ctx context.Context, hardware, runtime string, engine jobs.Engine, asOf []int64) ([]store.DeploymentRun, error)
}

// WithDrift sets each candidate's Drift: its deployment's between-run
// spread (DeploymentDrift over its recent runs), read once per deployment.
// Only what draws conclusions (verdict, comparison, recommendation,
// report, regression flags) needs it, so reading a run's figures does
// not.
//
// The spread is measured as of the newest end among the candidates: the
// deployment's runs that ended later do not move a conclusion about runs
// that had already ended.
func WithDrift(ctx context.Context, src DriftSource, cands []Candidate) error {
	drifts := map[[3]string]stats.Drift{}
	asOf := make([]int64, len(cands))
	for i, c := range cands {
		asOf[i] = c.RunID
	}
	for i, c := range cands {
		k := [3]string{c.Hardware, c.Runtime, c.Settings.Key()}
		d, ok := drifts[k]
		if !ok {
			rs, err := src.DeploymentRuns(ctx, k[0], k[1], c.Settings, asOf)
			if err != nil {
				return fmt.Errorf("drift of %s/%s %s: %w", k[0], k[1], k[2], err)
			}
			d = DeploymentDrift(rs)
			drifts[k] = d
		}
		cands[i].Drift = d
	}
	return nil
}

// DeploymentDrift is the between-run spread of a deployment's runs
// (stats.PoolDrift; docs/concepts.md#drift).
//
// A run's goodput share counts towards the goodput run effect only under
// an open loop, where goodput is compared (docs/verdict.md#goodput); a
// closed loop's share depends on the pace the target set itself.
func DeploymentDrift(runs []store.DeploymentRun) stats.Drift {
	rs := make([]stats.RepeatedRun, len(runs))
	for i, r := range runs {
		rs[i] = stats.RepeatedRun{Target: r.Target, TPS: r.TPS, P95: r.P95, Good: r.Good, Requests: r.Requests, SLO: r.SLO}
		if !OpenLoop(jobs.LoadIdentity{Profile: r.Profile}) {
			rs[i].SLO = ""
		}
	}
	return stats.PoolDrift(rs)
}

// Weigh is runs as every conclusion weighs them: each with the between-run
// spread of its deployment (read here, where conclusions are drawn, not
// wherever a run's figures are read) and its quality under scorer identity
// key, so a run rescored under another scorer keeps the quality it is
// compared on instead of leaving the comparison.
func Weigh(ctx context.Context, src DriftSource, runs []store.RunFigures, key string) ([]Candidate, error) {
	cands := Under(runs, key)
	if err := WithDrift(ctx, src, cands); err != nil {
		return nil, err
	}
	return cands, nil
}

// Under is runs as candidates (Candidates) with each run's quality under
// scorer identity key: none when the run was not scored under it.
func Under(runs []store.RunFigures, key string) []Candidate {
	return underScorer(Candidates(runs), runs, key)
}

// WeighWithEvidence is Weigh with the paired comparisons of quality
// between every pair scored under the same identity (GatherEvidence), as a
// comparison needs them.
func WeighWithEvidence(ctx context.Context, src interface {
	DriftSource
	PairSource
}, runs []store.RunFigures, key string) ([]Candidate, Evidence, error) {
	cands, err := Weigh(ctx, src, runs, key)
	if err != nil {
		return nil, Evidence{}, err
	}
	ev, err := GatherEvidence(ctx, src, cands)
	return cands, ev, err
}

// underScorer gives each candidate its run's quality under scorer
// identity key. A run not scored under it keeps its latest quality under
// its own identity, so that it is shown as not comparable on quality (the
// scorers differ) rather than as unmeasured, and no surface ranks the
// pair (docs/verdict.md#not-comparable); an unscored run has none.
func underScorer(cs []Candidate, runs []store.RunFigures, key string) []Candidate {
	for i, r := range runs {
		q, ok := r.QualityUnder(key)
		if !ok && len(r.Qualities) > 0 {
			q, ok = r.Qualities[len(r.Qualities)-1], true
		}
		cs[i].ScorerKey = key
		cs[i].Quality, cs[i].QualityLo, cs[i].QualityHi = nil, nil, nil
		if ok {
			cs[i].ScorerKey = q.ScorerKey
			cs[i].Quality, cs[i].QualityLo, cs[i].QualityHi = q.Mean, q.Lo, q.Hi
		}
	}
	return cs
}

// Scorers are the scorer identities benchmark b's runs were scored under,
// in the order they first were, and the one its conclusions rank quality
// by: the one its owner chose, else the one most runs were scored under
// (on a tie, the earliest: the benchmark's own scorer scores first).
// Runs of no one benchmark pass a zero Benchmark.
func Scorers(b store.Benchmark, runs []store.RunFigures) (key string, keys []string) {
	count := map[string]int{}
	first := map[string]time.Time{}
	for _, r := range runs {
		for _, q := range r.Qualities {
			count[q.ScorerKey]++
			if t, ok := first[q.ScorerKey]; !ok || q.ScoredAt.Before(t) {
				first[q.ScorerKey] = q.ScoredAt
			}
		}
	}
	for k := range count {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y string) int {
		if c := first[x].Compare(first[y]); c != 0 {
			return c
		}
		return strings.Compare(x, y)
	})
	if b.VerdictScorerKey != "" {
		return b.VerdictScorerKey, keys
	}
	for _, k := range keys {
		if key == "" || count[k] > count[key] {
			key = k
		}
	}
	return key, keys
}

// SharedScorer is the scorer identity most of the runs were scored under
// (on a tie, the earliest), as runs of no one benchmark are ranked by.
func SharedScorer(runs []store.RunFigures) string {
	key, _ := Scorers(store.Benchmark{}, runs)
	return key
}

// ScorerFor is the scorer identity runs are ranked on quality by, on
// every surface that compares them: for runs all of one benchmark, the
// one its verdict ranks by (Scorers: the owner's choice first), so a
// comparison reached from the verdict names its quality leader; for runs
// of several benchmarks, the one most of them share (SharedScorer)
// (docs/verdict.md#which-runs-and-which-scorer).
func ScorerFor(runs []store.RunFigures) string {
	for _, r := range runs {
		if r.BenchmarkID != runs[0].BenchmarkID {
			return SharedScorer(runs)
		}
	}
	if len(runs) == 0 {
		return ""
	}
	key, _ := Scorers(store.Benchmark{ID: runs[0].BenchmarkID, VerdictScorerKey: runs[0].VerdictScorerKey}, runs)
	return key
}

// AgainstBaseline weighs each candidate against the baseline on every
// criterion, only where they are comparable, by the criterion's test;
// quality item by item where they share scored items. It gives each
// run's paired quality comparison and its claims, keyed by run.
func AgainstBaseline(cands []Candidate, ev Evidence, baseline int64) (map[int64]QualityDiff, map[int64][]Margin) {
	paired, claims := map[int64]QualityDiff{}, map[int64][]Margin{}
	var base Candidate
	for _, x := range cands {
		if x.RunID == baseline {
			base = x
		}
	}
	for _, x := range cands {
		if x.RunID == baseline {
			continue
		}
		for _, crit := range Criteria {
			m := Compare(x, base, crit, ev)
			if crit == Goodput && m.AMissing && m.BMissing {
				continue // closed loops: no goodput claim (docs/verdict.md#goodput)
			}
			if crit == Quality && m.Paired != nil {
				paired[x.RunID] = *m.Paired
			}
			claims[x.RunID] = append(claims[x.RunID], m)
		}
	}
	return paired, claims
}
