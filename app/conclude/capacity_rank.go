package conclude

import (
	"context"

	"github.com/ruckus/ruckus/app/stats"
)

// CapacityLead is the engine's cost claim between the capacity plan's two
// cheapest sized targets, as every surface makes it
// (docs/benchmarks.md#capacity-planner): Ordered on Cost, so the leader
// is the verdict's for the same pair, with its test and p, or "not
// established" with the smallest difference the pair could show, or no
// leader at all when the pair is not comparable
// (docs/verdict.md#not-comparable).
type CapacityLead struct {
	// Leader and RunnerUp are the pair's runs, the one the test finds
	// cheaper first; both nil when the pair is not comparable.
	Leader   *int64 `json:"leader_run_id"`
	RunnerUp *int64 `json:"runner_up_run_id"`
	// Runs are the two runs compared, the plan's cheapest first.
	Runs [2]int64 `json:"runs"`
	// Significant: the test establishes the leader as cheaper.
	Significant bool `json:"significant"`
	// Margin is the leader's against the runner-up (the plan's first
	// against its second when not comparable).
	Margin Margin `json:"margin"`
	// Models are the models of Runs, and LeaderModel and RunnerUpModel
	// those of Leader and RunnerUp, for a page to name them.
	Models        [2]string `json:"-"`
	LeaderModel   string    `json:"-"`
	RunnerUpModel string    `json:"-"`
}

// Claim is the lead as a comparison's claim, for a page to word.
func (l CapacityLead) Claim() Said { return l.Margin.ClaimSaid() }

// WeighedBy is m with the run's figures as the engine weighs candidate c
// (its speed and cost as every conclusion shows them) and c kept for
// RankCapacity.
func (m Measured) WeighedBy(c Candidate) Measured {
	m.TokensPerS, m.RunCostPer1M, m.TokenPriced = Speed.Value(c), Cost.Value(c), c.TokenPriced
	m.Candidate = &c
	return m
}

// ReplicaRate is the requests/s one replica served at a run's one
// measured load, as the engine estimates it: the mean of the steady
// window's batch means (the estimate goodput per dollar is tested on),
// its 95 % interval widened by the between-run spread a single run
// carries (its deployment's, else the stats.DriftCV floor;
// docs/concepts.md#drift). ok is false when the run kept no interval.
func ReplicaRate(c Candidate) (stats.Estimate, bool) {
	e := rpsEffect(c)
	if !e.OK() || !(e.Mean > 0) || !finite(e.Lo) {
		return stats.Estimate{}, false
	}
	return e, true
}

// RankCapacity ranks a plan's sized targets as the engine tells them
// apart: each keeps its place by monthly cost, but shares the rank of the
// target before it unless the engine's cost test (Compare on Cost:
// comparable, significant, the earlier one cheaper) establishes the
// earlier one as cheaper; Lead is the claim between the two cheapest. A
// target without a Candidate shares the rank before it.
//
// Each pair is weighed with its deployments' between-run spread as of the
// newer of the two (WithDrift over the pair, read from src), as the
// comparison of the same two runs weighs them, so the plan's test and p
// are the compare API's; with a nil src the candidates keep the spread
// they came with.
func RankCapacity(ctx context.Context, src DriftSource, plan *CapacityPlan, ev Evidence) error {
	fs := plan.Feasible
	for i := 1; i < len(fs); i++ {
		a, b, ok, err := pairAsOf(ctx, src, fs[i-1], fs[i])
		if err != nil {
			return err
		}
		if !ok {
			fs[i].Rank = fs[i-1].Rank
			continue
		}
		if m := Compare(a, b, Cost, ev); !m.Comparable || m.Tie || m.P == nil || m.Better <= 0 {
			fs[i].Rank = fs[i-1].Rank
		}
	}
	if len(fs) < 2 {
		return nil
	}
	a, b, ok, err := pairAsOf(ctx, src, fs[0], fs[1])
	if err != nil || !ok {
		return err
	}
	lead, other, m := Ordered(a, b, Cost, ev)
	l := CapacityLead{Runs: [2]int64{fs[0].RunID, fs[1].RunID}, Models: [2]string{fs[0].Model, fs[1].Model}, Margin: m}
	if m.Comparable && m.Measured {
		l.Leader, l.RunnerUp = &lead.RunID, &other.RunID
		l.LeaderModel, l.RunnerUpModel = lead.Model, other.Model
		l.Significant = !m.Tie && m.P != nil
	}
	plan.Lead = &l
	return nil
}

// pairAsOf is the two targets' candidates with their deployments'
// between-run spread as of the pair (src nil: as they are); ok is false
// when either has none.
func pairAsOf(ctx context.Context, src DriftSource, x, y Capacity) (a, b Candidate, ok bool, err error) {
	if x.Candidate == nil || y.Candidate == nil {
		return a, b, false, nil
	}
	pair := []Candidate{*x.Candidate, *y.Candidate}
	if src != nil {
		if err := WithDrift(ctx, src, pair); err != nil {
			return a, b, false, err
		}
	}
	return pair[0], pair[1], true, nil
}
