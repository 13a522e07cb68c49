package conclude

import (
	"testing"
	"time"

	"github.com/ruckus/ruckus/app/store"
)

// ScorerFor ranks runs of one benchmark under its verdict's scorer (the
// owner's choice first), and runs of several under the one most share,
// whatever any one benchmark chose.
func TestScorerForFollowsTheVerdict(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := func(id, bench int64, chosen string) store.RunFigures {
		r := store.RunFigures{VerdictScorerKey: chosen}
		r.ID, r.BenchmarkID = id, bench
		r.Qualities = []store.Quality{{RunID: id, ScorerKey: "exact", ScoredAt: t0}, {RunID: id, ScorerKey: "contains", ScoredAt: t0.Add(time.Hour)}}
		return r
	}
	for _, tc := range []struct {
		name string
		runs []store.RunFigures
		want string
	}{
		{"one benchmark, no choice: the earliest of the most used", []store.RunFigures{run(1, 7, ""), run(2, 7, "")}, "exact"},
		{"one benchmark, the owner's choice", []store.RunFigures{run(1, 7, "contains"), run(2, 7, "contains")}, "contains"},
		{"two benchmarks: the one most share", []store.RunFigures{run(1, 7, "contains"), run(2, 8, "")}, "exact"},
		{"no runs", nil, ""},
	} {
		if got := ScorerFor(tc.runs); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Quality is compared item by item, so only between runs of one dataset:
// runs of two are not comparable on it, with the reason in the catalogue,
// and no leader either way round.
func TestQualityOfTwoDatasetsIsNotComparable(t *testing.T) {
	q1, q2, lo, hi := 0.9, 0.5, 0.4, 0.95
	a := Candidate{RunID: 1, DatasetID: 3, ScorerKey: "exact", Quality: &q1, QualityLo: &lo, QualityHi: &hi}
	b := Candidate{RunID: 2, DatasetID: 4, ScorerKey: "exact", Quality: &q2, QualityLo: &lo, QualityHi: &hi}
	ev := Evidence{Paired: []QualityDiff{{A: 1, B: 2, N: 30, Mean: 0.4, Lo: 0.2, Hi: 0.6, P: 0.001, Test: "mcnemar-exact"}}}
	for _, m := range []Margin{Compare(a, b, Quality, ev), Compare(b, a, Quality, ev)} {
		if !m.Measured || m.Comparable || m.Better != 0 || m.P != nil || m.ReasonSaid.Code != "compare.said.not_comparable_dataset" {
			t.Errorf("quality of two datasets: %+v", m)
		}
	}
	if l := Leads([]Candidate{a, b}, Quality, ev); l.Best != nil {
		t.Errorf("a quality leader across two datasets: run %d", l.Best.RunID)
	}
	b.DatasetID = 3
	if m := Compare(a, b, Quality, ev); !m.Comparable || m.P == nil {
		t.Errorf("quality of one dataset: %+v", m)
	}
}

// A run that did not succeed is listed with its state; one still queued or
// running as not finished yet, in both languages' own words.
func TestLeftOutSaysWhy(t *testing.T) {
	j := Weighed{Left: []store.Run{{ID: 3, ModelName: "m/a", Runtime: "sim", HardwareProfile: "cpu", State: "cancelled"},
		{ID: 4, ModelName: "m/b", Runtime: "sim", HardwareProfile: "cpu", State: "running"}}}
	got := j.LeftOut()
	if len(got) != 2 || got[0].Reason != "Run 3 (m/a on sim/cpu) cancelled, so it is left out, as in the verdict." ||
		got[1].Reason != "Run 4 (m/b on sim/cpu) has not finished yet, so it is not weighed yet." || got[1].State != "running" {
		t.Errorf("left out: %+v", got)
	}
	if rec := j.Recommend(Constraints{}, Weights{1, 1, 1}, Evidence{}); len(rec.LeftOut) != 2 || len(rec.Feasible) != 0 {
		t.Errorf("the recommendation of a benchmark with no run succeeded: %+v", rec)
	}
}
