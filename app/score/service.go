package score

import (
	"context"
	"fmt"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Store is the part of the store scoring needs.
type Store interface {
	RunScorer(ctx context.Context, runID int64) (manifest, dataset string, err error)
	ScoreItems(ctx context.Context, runID int64) ([]store.ScoreItem, error)
	SaveScores(ctx context.Context, runID int64, idx, samples []int32, scores []*float64, q store.RunQuality) error
}

// ExecutionQueue queues a run's execution in the sandbox (the sandbox
// worker's execute_run job).
type ExecutionQueue interface {
	QueueExecution(ctx context.Context, runID int64, scorer string) error
}

// Judge is the LLM judge as scoring uses it (*bench.Planner satisfies
// it): a run named by a score job may be a judge's run, whose answers
// become verdicts, and a run scored by the judge scorer starts a judging.
type Judge interface {
	FinishJudgeRun(ctx context.Context, runID int64) (bool, error)
	JudgeFromManifest(ctx context.Context, runID int64) error
}

// JudgeScorer is the scorer name that hands a run to the LLM judge.
const JudgeScorer = "judge"

// Service scores runs (the server's score_run job).
type Service struct {
	Store Store
	// Exec queues runs whose scorer executes code; nil refuses them.
	Exec ExecutionQueue
	// Judge, when set, reads judges' runs and starts judgings.
	Judge Judge
}

var _ jobs.RunScorer = (*Service)(nil)

// ScoreRun scores every result of a run with scorer, or when empty the
// benchmark's scorer, else the dataset's default; a run with none stays
// unscored. A judge's run is read into verdicts instead, and the judge
// scorer starts a judging whose verdicts score the run when it is done. Failed requests score 0 (they count against quality); items
// without a reference are left unscored, except for scorers that need
// none (json). The run's quality is the mean with its 95 % bootstrap
// interval (seeded with the run id, so scoring again gives the same
// interval).
func (s *Service) ScoreRun(ctx context.Context, runID int64, scorer string) error {
	if s.Judge != nil {
		if judged, err := s.Judge.FinishJudgeRun(ctx, runID); judged || err != nil {
			return err
		}
	}
	if scorer == "" {
		m, d, err := s.Store.RunScorer(ctx, runID)
		if err != nil {
			return err
		}
		scorer = m
		if scorer == "" {
			scorer = d
		}
	}
	if scorer == "" {
		return nil
	}
	if IsExecution(scorer) {
		if s.Exec == nil {
			return fmt.Errorf("run %d: %w", runID, jobs.ErrNoSandbox)
		}
		return s.Exec.QueueExecution(ctx, runID, scorer)
	}
	if scorer == JudgeScorer {
		if s.Judge == nil {
			return fmt.Errorf("run %d: the judge scorer is not available here", runID)
		}
		return s.Judge.JudgeFromManifest(ctx, runID)
	}
	f, err := ByName(scorer)
	if err != nil {
		return fmt.Errorf("run %d: %w", runID, err)
	}
	items, err := s.Store.ScoreItems(ctx, runID)
	if err != nil {
		return err
	}
	idx, samples := make([]int32, len(items)), make([]int32, len(items))
	scores := make([]*float64, len(items))
	var all []float64
	for i, it := range items {
		idx[i], samples[i] = int32(it.Idx), int32(it.Sample)
		refs := References(it.Reference)
		if len(refs) == 0 && scorer != "json" {
			continue
		}
		v := 0.0
		if it.Status == jobs.StatusOK {
			v = f(it.Output, refs)
		}
		scores[i] = &v
		all = append(all, v)
	}
	q := store.RunQuality{Scorer: scorer, Scored: len(all)}
	if len(all) > 0 {
		mean, lo, hi := MeanCI(all, uint64(runID))
		q.Mean, q.Low, q.High = &mean, &lo, &hi
	}
	return s.Store.SaveScores(ctx, runID, idx, samples, scores, q)
}
