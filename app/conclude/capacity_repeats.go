package conclude

import (
	"github.com/ruckus/ruckus/app/stats"
)

// RepeatsOf is cs as MergeRepeats merges them (repeatGroups), each merged
// candidate beside the indices in cs of the runs it folds, the first run
// first: what the capacity planner needs to measure each repeat and size
// the target once (MergeMeasured).
func RepeatsOf(cs []Candidate) ([]Candidate, [][]int) {
	members := repeatIndices(cs)
	merged := make([]Candidate, len(members))
	for k, g := range repeatGroups(cs) {
		merged[k] = mergeRepeated(g)
	}
	return merged, members
}

// MergeMeasured is one target's repeats in one benchmark (ms, each
// measured on its own, the first run first) as one target the planner
// sizes, named by its first run and weighed as the merged candidate c
// (MergeRepeats: speed and cost the repeats' means, tested on the spread
// between them), so the plan never sets repeats of one target against
// each other (docs/benchmarks.md#capacity-planner). The rate one replica
// serves within the SLOs:
//   - when the SLOs held in no load of one repeat, the target is not
//     sized, with that repeat's reason: they did not hold every time;
//   - when each repeat measured one load, the engine's estimate over the
//     repeats (repeatsRate: the mean of the rates each repeat's steady
//     window gives, ReplicaRate's, its 95 % interval from the spread
//     between them, Student t on n − 1 degrees of freedom), sized on its
//     low end as a single run is;
//   - otherwise (sweeps, which keep no interval) the lowest rate any
//     repeat held the SLOs at.
//
// Quality, lengths and energy stay the first run's, as MergeRepeats keeps
// its quality; the busiest load measured is the busiest of any repeat.
func MergeMeasured(ms []Measured, c Candidate) Measured {
	if len(ms) == 1 {
		return ms[0]
	}
	m := ms[0].WeighedBy(c)
	m.Repeats = len(ms)
	m.RepeatRuns = make([]int64, len(ms))
	lowest, oneLoad := 0, true
	for i, x := range ms {
		m.RepeatRuns[i] = x.RunID
		m.MaxMeasuredRPS = max(m.MaxMeasuredRPS, x.MaxMeasuredRPS)
		if x.SLORate == nil {
			m.SLORate, m.SLORateLo, m.SLORateFrom, m.SLOFrom = nil, nil, "", Said{}
			m.Problem, m.ProblemSaid = x.Problem, x.ProblemSaid
			return m
		}
		if *x.SLORate < *ms[lowest].SLORate {
			lowest = i
		}
		oneLoad = oneLoad && x.SLORateLo != nil
	}
	if est, ok := repeatsRate(ms); oneLoad && ok {
		rate, lo := est.Mean, est.Lo
		m.SLORate, m.SLORateLo = &rate, &lo
		m.MaxMeasuredRPS = max(m.MaxMeasuredRPS, rate)
		m.SLOFrom = say("capacity.said.from_repeats", "Run", m.RunID, "N", len(ms))
		m.SLORateFrom = English(m.SLOFrom)
		return m
	}
	l := ms[lowest]
	m.SLORate, m.SLORateLo, m.SLORateFrom, m.SLOFrom = l.SLORate, nil, l.SLORateFrom, l.SLOFrom
	return m
}

// repeatsRate is the rate one replica serves over a target's repeats
// that each measured one load: the mean of their own rates (each the
// steady window's batch mean, ReplicaRate of the run, the estimator a
// single run is sized with) with the Student t interval of the spread
// between them (stats.MeanInterval), so a target run with repeats is
// sized as its repeats measured it, never on whole-run rates that warm-up
// and a straggling drain pull down (docs/benchmarks.md#capacity-planner).
// Not ok when the interval is not bounded away from +Inf or the mean is
// not positive.
func repeatsRate(ms []Measured) (stats.Estimate, bool) {
	xs := make([]float64, len(ms))
	for i, x := range ms {
		if x.SLORate == nil {
			return stats.Estimate{}, false
		}
		xs[i] = *x.SLORate
	}
	e := stats.MeanInterval(xs)
	e.Repeats = true
	if !e.OK() || !(e.Mean > 0) || !finite(e.Lo) {
		return stats.Estimate{}, false
	}
	return e, true
}

// ListLeft lists on the plan, as not sized, the runs PlannerRuns left
// out, each with its reason, after the targets PlanCapacity excluded.
func (p *CapacityPlan) ListLeft(left []PlannerLeft) {
	for _, l := range left {
		r := l.Run
		a := Capacity{Measured: Measured{RunID: r.ID, Model: r.ModelName, Runtime: r.Runtime, Hardware: r.HardwareProfile, Engine: r.Engine.Key()},
			Sources: map[string]string{}, Extrapolated: []string{}, SourcesSaid: map[string]Said{}}
		a.exclude(l.Code, l.Said)
		p.Excluded = append(p.Excluded, a)
	}
}
