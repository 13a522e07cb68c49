package jobs_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/riverqueue/river"

	"github.com/ruckus/ruckus/jobs"
)

// steps records what a score job did, and to which run.
type steps struct {
	scored jobs.Scored
	did    []string
}

func (s *steps) ScoreRunOptions(context.Context, int64, string, json.RawMessage) (jobs.Scored, error) {
	return s.scored, nil
}
func (s *steps) note(what string, run int64) error {
	s.did = append(s.did, what+" "+string(rune('0'+run)))
	return nil
}
func (s *steps) ComputeRunStats(_ context.Context, run int64) error  { return s.note("stats", run) }
func (s *steps) PairRunQualities(_ context.Context, run int64) error { return s.note("pairs", run) }
func (s *steps) RunConcluded(_ context.Context, run int64) error     { return s.note("concluded", run) }
func (s *steps) CheckRegressions(_ context.Context, run int64) error {
	return s.note("regressions", run)
}
func (s *steps) RunEnded(_ context.Context, run int64) error { return s.note("told", run) }

// A score job concludes its run when the run is scored; when the run's
// quality comes later (the sandbox, a judging) it concludes nothing, and
// a judge's run concludes the run it judged
// (docs/verdict.md#when-a-verdict-is-final).
func TestScoreJobConcludesOnlyAScoredRun(t *testing.T) {
	for _, c := range []struct {
		name   string
		scored jobs.Scored
		want   []string
	}{
		{"scored here", jobs.Scored{}, []string{"stats 1", "pairs 1", "regressions 1", "concluded 1", "told 1"}},
		{"scored later", jobs.Scored{Continues: true}, []string{"stats 1"}},
		{"a judge's run", jobs.Scored{JudgeOf: 7}, []string{"stats 1", "pairs 7", "regressions 7", "concluded 7", "told 7"}},
	} {
		s := &steps{scored: c.scored}
		w := &jobs.ScoreRunWorker{Scorer: s, Stats: s, Regressions: s, Notifier: s}
		if err := w.Work(context.Background(), &river.Job[jobs.ScoreRunArgs]{Args: jobs.ScoreRunArgs{RunID: 1}}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.did, c.want) {
			t.Errorf("%s: %v, want %v", c.name, s.did, c.want)
		}
	}
	s := &steps{}
	cw := &jobs.ConcludeRunWorker{Stats: s, Regressions: s, Notifier: s}
	if err := cw.Work(context.Background(), &river.Job[jobs.ConcludeRunArgs]{Args: jobs.ConcludeRunArgs{RunID: 3}}); err != nil ||
		!slices.Equal(s.did, []string{"pairs 3", "regressions 3", "concluded 3", "told 3"}) {
		t.Errorf("conclude_run: %v %v", s.did, err)
	}
}
