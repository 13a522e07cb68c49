package conclude

import (
	"math"

	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// MergeRepeats folds the runs of one target (model × runtime × hardware ×
// engine settings,
// under one configured load: profile, sampling, dataset and few-shot
// setting, see repeatKey) repeated in a benchmark into one candidate, the first run's, whose speed,
// latency and cost are the means over its runs with intervals from the
// spread between them (stats.MeanInterval: mean ± t(0.975, n−1)·s/√n,
// AIPerf's multi-run confidence reporting), so they are tested on the
// between-run variance. Quality stays the first run's, with its interval
// over items: its uncertainty is the items' (repeats of a deterministic
// model score alike, and a between-run interval of zero width would call
// any difference significant), and it is tested item by item against the
// other targets' first runs. Targets run once stay as they are. The order
// is the first runs' order.
func MergeRepeats(cs []Candidate) []Candidate {
	groups := repeatGroups(cs)
	out := make([]Candidate, 0, len(groups))
	for _, g := range groups {
		out = append(out, mergeRepeated(g))
	}
	return out
}

// targetKey is what makes runs one target: model × runtime × hardware ×
// engine settings (docs/benchmarks.md#engine-settings). Repeats merge
// within a target under one configured load (repeatGroups); a regression
// is drawn against the same target's previous benchmark (Regressions).
type targetKey struct{ model, runtime, hardware, engine string }

func targetOf(c Candidate) targetKey { return targetKey{c.Model, c.Runtime, c.Hardware, c.Engine} }

// targetOfRun is a stored run's target, as targetOf is its candidate's
// (Candidates takes the same four fields), without weighing the run.
func targetOfRun(r store.RunFigures) targetKey {
	return targetKey{r.ModelName, r.Runtime, r.HardwareProfile, r.Engine.Key()}
}

// repeatGroups are cs as MergeRepeats merges them: by target and the
// configured part of the load (repeatKey), in the order of each group's
// first candidate.
func repeatGroups(cs []Candidate) [][]Candidate {
	idx := repeatIndices(cs)
	out := make([][]Candidate, len(idx))
	for k, is := range idx {
		out[k] = make([]Candidate, len(is))
		for j, i := range is {
			out[k][j] = cs[i]
		}
	}
	return out
}

// repeatIndices are repeatGroups as indices into cs, for a caller that
// keeps something beside each candidate (its run, its measurement).
func repeatIndices(cs []Candidate) [][]int {
	at := map[repeatGroup]int{}
	var out [][]int
	for i, c := range cs {
		g := repeatGroupOf(c)
		k, ok := at[g]
		if !ok {
			k = len(out)
			at[g] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], i)
	}
	return out
}

// repeatGroup is what a target's repeats share: the target (targetKey)
// and the load its benchmark set (repeatKey).
type repeatGroup struct {
	targetKey
	load string
}

func repeatGroupOf(c Candidate) repeatGroup { return repeatGroup{targetOf(c), repeatKey(c.Load)} }

// mergeRepeated is one repeat group (repeatGroups) as one candidate, the
// first run's (MergeRepeats); a group of one stays as it is.
func mergeRepeated(g []Candidate) Candidate {
	if len(g) == 1 {
		return g[0]
	}
	m := g[0]
	m.Repeats = len(g)
	mean := func(v func(Candidate) *float64) (*float64, stats.Estimate) {
		var xs []float64
		for _, c := range g {
			if x := v(c); x != nil && !math.IsNaN(*x) {
				xs = append(xs, *x)
			}
		}
		if len(xs) != len(g) {
			return nil, stats.Estimate{}
		}
		e := stats.MeanInterval(xs)
		e.Repeats = true
		return &e.Mean, e
	}
	m.TokensPS, m.TPS = mean(func(c Candidate) *float64 { return c.TokensPS })
	m.CostPer1M, _ = mean(func(c Candidate) *float64 { return c.CostPer1M })
	// Requests/s is each repeat's as goodput per dollar takes a single
	// run's (requestsPerS: the steady window's batch mean where it was
	// kept, else the whole run's), so a repeated target's rate is not
	// pulled down by warm-up and straggling drains a single run's is not.
	m.RequestsPS, m.RPS = mean(requestsPerS)
	m.TTFTp95, _ = mean(func(c Candidate) *float64 { return c.TTFTp95 })
	var e2e stats.Estimate
	m.E2Ep95, e2e = mean(func(c Candidate) *float64 { return c.E2Ep95 })
	// The p95 is tested on the spread between the repeats' p95s
	// (Welch), never by an order-statistic interval: its Lo–Hi and
	// request count belong to one run.
	m.E2Ep95Lo, m.E2Ep95Hi, m.E2EN, m.E2ECoverage, m.E2E = nil, nil, 0, 0, nil
	if m.E2Ep95 != nil && e2e.OK() {
		m.E2Ep95Lo, m.E2Ep95Hi, m.E2E = &e2e.Lo, &e2e.Hi, &e2e
	}
	m.GPUMemGiB, _ = mean(func(c Candidate) *float64 { return c.GPUMemGiB })
	// Goodput is a share of requests: the repeats' requests pooled.
	m.Requests, m.GoodRequests = 0, 0
	for _, c := range g {
		m.Requests += c.Requests
		m.GoodRequests += c.GoodRequests
	}
	return m
}

// repeatKey is the part of a run's load identity its benchmark set, the
// same for every repeat of a target: a 0-shot and a 5-shot run of one
// model are two targets, not repeats. The measured length classes are
// left out (two repeats may fall either side of a class boundary; their
// comparability is still judged on the whole identity).
func repeatKey(l *jobs.LoadIdentity) string {
	if l == nil {
		return ""
	}
	c := *l
	c.InputClass, c.OutputClass = "", ""
	return c.Key()
}
