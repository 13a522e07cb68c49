package conclude

import (
	"context"
	"slices"
	"time"

	"github.com/ruckus/ruckus/app/store"
)

// WeighSource is what weighing a finished benchmark reads (*store.Store).
type WeighSource interface {
	DriftSource
	BenchmarkScoring(ctx context.Context, id int64) (store.Scoring, error)
	RunFiguresByID(ctx context.Context, v store.Viewer, ids []int64) ([]store.RunFigures, error)
	PairSource
}

// ScoreWait is how long after a run finished its conclusions wait for its
// scores (the scoring job usually takes a second or two) before they show
// quality as not measured yet.
const ScoreWait = 2 * time.Minute

// Weighed is a finished benchmark's runs as its verdict weighs them; the
// verdict page, its API, the start page and the report read it.
type Weighed struct {
	// Cands are the succeeded runs, a repeated target merged into one
	// (MergeRepeats); Ev the paired comparisons the leads draw on.
	Cands []Candidate
	Ev    Evidence
	// Runs are the succeeded runs' figures as read, and Each their
	// candidates before repeats were merged: a figures table and its
	// claims set each run against a baseline.
	Runs []store.RunFigures
	Each []Candidate
	// Left are the runs that did not succeed, left out.
	Left []store.Run
	// Unpriced are the hardware profiles of compared runs without a price.
	Unpriced  []string
	Scoring   store.Scoring
	Simulated bool
	// ScorerKey is the scorer identity quality is ranked by; ScorerKeys
	// every identity the runs were scored under, oldest first.
	ScorerKey  string
	ScorerKeys []string
}

// ScoringSoon says whether scores are expected any moment: a succeeded
// run is not scored yet, finished less than ScoreWait ago.
func (j Weighed) ScoringSoon(now time.Time) bool {
	return j.Scoring.Scorer != "" && j.StatsPending(now)
}

// StatsPending says whether a run finished less than ScoreWait ago has
// not had its score job yet, which keeps its figures and intervals
// (run_stats) whether or not it is scored: until then its conclusions are
// still being computed.
func (j Weighed) StatsPending(now time.Time) bool {
	for _, at := range j.Scoring.Pending {
		if now.Sub(at) < ScoreWait {
			return true
		}
	}
	return false
}

// Leads are the weighed benchmark's lead on criterion c (Leads over its
// candidates and evidence).
func (j Weighed) Leads(c Criterion) Lead { return Leads(j.Cands, c, j.Ev) }

// WeighBenchmark reads the succeeded runs of the finished benchmark b with their
// evidence. With onlyWhenScored, a benchmark whose scores are due any
// moment (ScoringSoon) is weighed no further than that: the caller waits
// for them, and its poll need not read every result meanwhile.
func WeighBenchmark(ctx context.Context, src WeighSource, v store.Viewer, b store.Benchmark, onlyWhenScored bool) (Weighed, error) {
	var j Weighed
	var ids []int64
	for _, r := range b.Runs {
		if r.State != "completed" {
			j.Left = append(j.Left, r)
			continue
		}
		ids = append(ids, r.ID)
		if r.Mode == "sim" || r.Runtime == "sim" {
			j.Simulated = true
		}
	}
	if len(ids) == 0 {
		return j, nil
	}
	var err error
	if j.Scoring, err = src.BenchmarkScoring(ctx, b.ID); err != nil {
		return j, err
	}
	if onlyWhenScored && j.ScoringSoon(time.Now()) {
		return j, nil
	}
	runs, err := src.RunFiguresByID(ctx, v, ids)
	if err != nil {
		return j, err
	}
	j.ScorerKey, j.ScorerKeys = Scorers(b, runs)
	// A repeated target is one candidate, its speed, latency and cost
	// tested on the spread between its runs, its quality on its first
	// run's items.
	if j.Each, err = Weigh(ctx, src, runs, j.ScorerKey); err != nil {
		return j, err
	}
	j.Runs, j.Cands = runs, MergeRepeats(slices.Clone(j.Each))
	if j.Ev, err = leaderEvidence(ctx, src, j.Cands); err != nil {
		return j, err
	}
	for _, r := range runs {
		if r.PricePerHour == nil && !slices.Contains(j.Unpriced, r.HardwareProfile) {
			j.Unpriced = append(j.Unpriced, r.HardwareProfile)
		}
	}
	return j, nil
}

// leaderEvidence is the paired comparisons a verdict draws on: the
// quality leader's with each run comparable with it (Leads picks the
// leader by its figure, and tests it against the others), read from
// quality_pairs rather than all pairs of a large benchmark.
func leaderEvidence(ctx context.Context, src WeighSource, cands []Candidate) (Evidence, error) {
	var ev Evidence
	l := Leads(cands, Quality, ev)
	if l.Best == nil || l.RunnerUp == nil {
		return ev, nil
	}
	var others []int64
	for _, c := range cands {
		if c.Quality != nil && c.ScorerKey == l.Best.ScorerKey && c.RunID != l.Best.RunID {
			others = append(others, c.RunID)
		}
	}
	pairs, err := QualityPairsWith(ctx, src, l.Best.ScorerKey, l.Best.RunID, others)
	if err != nil {
		return ev, err
	}
	for _, p := range pairs {
		ev.Paired = append(ev.Paired, Diff(p))
	}
	return ev, nil
}

// LeftOut is each run of the benchmark that did not succeed, with its
// state, as every surface built on the weighed benchmark lists it: the
// verdict, the recommendation and the report weigh the same runs.
func (j Weighed) LeftOut() []LeftOut {
	out := make([]LeftOut, 0, len(j.Left))
	for _, r := range j.Left {
		s := say("recommend.said.left_out_run", "ID", r.ID, "Model", r.ModelName, "Runtime", r.Runtime,
			"Hardware", r.HardwareProfile, "State", say("state."+r.State))
		if r.State == "queued" || r.State == "running" {
			s = say("recommend.said.left_out_active", "ID", r.ID, "Model", r.ModelName, "Runtime", r.Runtime, "Hardware", r.HardwareProfile)
		}
		out = append(out, LeftOut{RunID: r.ID, BenchmarkID: r.BenchmarkID, Model: r.ModelName, Runtime: r.Runtime, Hardware: r.HardwareProfile,
			Engine: r.Engine.Key(), State: r.State, Reason: English(s), ReasonSaid: s})
	}
	return out
}

// LeftOut is a run a recommendation does not weigh, and why: a
// benchmark's run that did not succeed (failed, cancelled, or still queued
// or running; Weighed.LeftOut), or a dataset's run of a target measured
// again later (DatasetCandidates).
type LeftOut struct {
	RunID       int64  `json:"run_id"`
	BenchmarkID int64  `json:"benchmark_id"`
	Model       string `json:"model"`
	Runtime     string `json:"runtime"`
	Hardware    string `json:"hardware"`
	Engine      string `json:"engine,omitempty"`
	// State is a benchmark's run's state where it did not succeed; empty
	// for a dataset's run measured again later.
	State  string `json:"state,omitempty"`
	Reason string `json:"reason"`
	// ReasonSaid is Reason for a page to word.
	ReasonSaid Said `json:"-"`
}

// Recommend is the weighed benchmark's recommendation under constraints
// c and weights w: its candidates (repeats merged) ranked with the paired
// comparisons in ev, and the runs it leaves out listed with their state.
func (j Weighed) Recommend(c Constraints, w Weights, ev Evidence) Recommendation {
	rec := RecommendWith(j.Cands, c, w, ev)
	rec.LeftOut = j.LeftOut()
	return rec
}
