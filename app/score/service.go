package score

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Store is the part of the store scoring needs.
type Store interface {
	RunScorer(ctx context.Context, runID int64) (manifest, dataset string, err error)
	RunScorerOptions(ctx context.Context, runID int64) (json.RawMessage, error)
	ScoreItems(ctx context.Context, runID int64) ([]store.ScoreItem, error)
	SaveScores(ctx context.Context, runID int64, idx, samples []int32, scores []*float64, q store.RunQuality) error
}

// ExecutionQueue queues a run's execution in the sandbox (the sandbox
// worker's execute_run job).
type ExecutionQueue interface {
	QueueExecution(ctx context.Context, runID int64, scorer string) error
}

// Judge is the LLM judge as scoring uses it (*bench.Service satisfies
// it): a run named by a score job may be a judge's run, whose answers
// become verdicts, and a run scored by the judge scorer starts a judging.
type Judge interface {
	// FinishJudgeRun returns the run judged (0 when runID is no judge's
	// run).
	FinishJudgeRun(ctx context.Context, runID int64) (int64, error)
	// JudgeFromManifest says whether a judging of the run is under way.
	JudgeFromManifest(ctx context.Context, runID int64) (bool, error)
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

// ScoreRun scores a run with scorer and the benchmark's scorer options
// (see ScoreRunOptions).
func (s *Service) ScoreRun(ctx context.Context, runID int64, scorer string) error {
	_, err := s.ScoreRunOptions(ctx, runID, scorer, nil)
	return err
}

// ScoreRunOptions scores every result of a run with scorer, or when empty
// the benchmark's scorer, else the dataset's default; a run with none
// stays unscored. A judge's run is read into verdicts instead, and the
// judge scorer starts a judging whose verdicts score the run when it is
// done. The scorer's options are options when given, else the
// benchmark's scorer_options when the scorer is the benchmark's own, else
// none. Failed requests score 0 (they count against quality); items
// without a reference are left unscored, except by scorers that need none
// (NeedsReference). The run's quality is the mean with its 95 % bootstrap
// interval (seeded with the run id, so scoring again gives the same
// interval); the bleu scorer also stores the corpus BLEU of the scored
// answers, a failed request counting as an empty hypothesis. What it
// returns says whether the run's quality comes later (execution, a
// judging) or whose quality a judge's run gave (jobs.Scored).
func (s *Service) ScoreRunOptions(ctx context.Context, runID int64, scorer string, options json.RawMessage) (jobs.Scored, error) {
	if s.Judge != nil {
		if judged, err := s.Judge.FinishJudgeRun(ctx, runID); judged != 0 || err != nil {
			return jobs.Scored{JudgeOf: judged}, err
		}
	}
	manifest, dataset, err := s.Store.RunScorer(ctx, runID)
	if err != nil {
		return jobs.Scored{}, err
	}
	if scorer == "" {
		scorer = manifest
		if scorer == "" {
			scorer = dataset
		}
	}
	if scorer == "" {
		return jobs.Scored{}, nil
	}
	if IsExecution(scorer) {
		if s.Exec == nil {
			return jobs.Scored{}, fmt.Errorf("run %d: %w", runID, jobs.ErrNoSandbox)
		}
		return jobs.Scored{Continues: true}, s.Exec.QueueExecution(ctx, runID, scorer)
	}
	if scorer == JudgeScorer {
		if s.Judge == nil {
			return jobs.Scored{}, fmt.Errorf("run %d: the judge scorer is not available here", runID)
		}
		judging, err := s.Judge.JudgeFromManifest(ctx, runID)
		return jobs.Scored{Continues: judging}, err
	}
	return jobs.Scored{}, s.scoreHere(ctx, runID, scorer, manifest, options)
}

// scoreHere scores a run with a scorer that runs on the server.
func (s *Service) scoreHere(ctx context.Context, runID int64, scorer, manifest string, options json.RawMessage) error {
	var err error
	if len(options) == 0 && scorer == manifest {
		if options, err = s.Store.RunScorerOptions(ctx, runID); err != nil {
			return err
		}
	}
	opts, err := ParseOptions(options)
	if err != nil {
		return fmt.Errorf("run %d: %w", runID, err)
	}
	f, err := New(scorer, opts)
	if err != nil {
		return fmt.Errorf("run %d: scorer %s: %w", runID, scorer, err)
	}
	items, err := s.Store.ScoreItems(ctx, runID)
	if err != nil {
		return err
	}
	idx, samples, scores, q := scoreItems(items, scorer, opts, f, runID)
	return s.Store.SaveScores(ctx, runID, idx, samples, scores, q)
}

// scoreItems scores a run's answers with f: each item's score (nil when
// left unscored) by item and sample, and the run's quality.
func scoreItems(items []store.ScoreItem, scorer string, opts Options, f Scorer, runID int64) (idx, samples []int32, scores []*float64, q store.RunQuality) {
	needsRef := NeedsReference(scorer, opts)
	idx, samples = make([]int32, len(items)), make([]int32, len(items))
	scores = make([]*float64, len(items))
	var all []float64
	var corpus []BLEUStats
	for i, it := range items {
		idx[i], samples[i] = int32(it.Idx), int32(it.Sample)
		refs := References(it.Reference)
		if scorer == "bleu" {
			refs = nonEmpty(refs)
		}
		if len(refs) == 0 && needsRef {
			continue
		}
		out := ""
		if it.Status == jobs.StatusOK {
			out = it.Output
		}
		v := 0.0
		if it.Status == jobs.StatusOK {
			v = f(out, refs)
		}
		if scorer == "bleu" {
			st, _ := SegmentBLEU(out, refs)
			corpus = append(corpus, st)
		}
		scores[i] = &v
		all = append(all, v)
	}
	q = store.RunQuality{Scorer: scorer, Scored: len(all), Options: storedOptions(scorer, opts)}
	if len(all) > 0 {
		mean, lo, hi := MeanCI(all, uint64(runID))
		q.Mean, q.Low, q.High = &mean, &lo, &hi
	}
	if len(corpus) > 0 {
		c := CorpusBLEU(corpus)
		q.CorpusBLEU = &c
	}
	return idx, samples, scores, q
}

// nonEmpty drops empty references, as sacreBLEU does.
func nonEmpty(refs []string) []string {
	out := refs[:0:0]
	for _, r := range refs {
		if r != "" {
			out = append(out, r)
		}
	}
	return out
}

// storedOptions are the options a run records: only those its scorer
// read, so the run page shows what the scores mean.
func storedOptions(scorer string, o Options) json.RawMessage {
	var keep Options
	switch scorer {
	case "regex":
		keep.Pattern = o.Pattern
	case "json-schema":
		keep.Schema = o.Schema
	}
	if keep.Pattern == "" && len(keep.Schema) == 0 {
		return nil
	}
	b, _ := json.Marshal(keep)
	return b
}
