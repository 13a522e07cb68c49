package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"

	"github.com/ruckus/ruckus/app/ingest"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// ErrRunState is returned when a run cannot be cancelled or retried in its
// present state.
var ErrRunState = errors.New("not possible in the run's present state")

// CancelRun cancels a queued or running run: its River job is cancelled
// (an agent working it sees its context end, stops sending and keeps the
// partial results) and the run is marked cancelled, in one transaction.
func (p *Service) CancelRun(ctx context.Context, v store.Viewer, benchmarkID, runID int64) error {
	return p.Store.InLockingTx(ctx, func(tx pgx.Tx, q *store.Queries) error {
		return cancelRun(ctx, tx, q, p.River, v, benchmarkID, runID)
	})
}

func cancelRun(ctx context.Context, tx pgx.Tx, q *store.Queries, c Queue, v store.Viewer, benchmarkID, runID int64) error {
	r, err := q.RunForUpdate(ctx, v, benchmarkID, runID)
	if err != nil {
		return err
	}
	if r.State != "queued" && r.State != "running" {
		return fmt.Errorf("run %d is %s: %w", r.ID, r.State, ErrRunState)
	}
	if r.RiverJobID != nil {
		if _, err := c.JobCancelTx(ctx, tx, *r.RiverJobID); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
			return fmt.Errorf("cancel job of run %d: %w", r.ID, err)
		}
	}
	if err := q.SetRunCancelled(ctx, r.ID); err != nil {
		return err
	}
	if r.State == "running" {
		return nil // its agent records the end and queues the scoring
	}
	// A queued run has no agent to end it: its end is scored here, so that
	// it is signed and its benchmark's end is told (docs/operations.md#webhooks).
	if _, err := c.InsertTx(ctx, tx, jobs.ScoreRunArgs{RunID: r.ID}, nil); err != nil {
		return fmt.Errorf("queue the scoring of cancelled run %d: %w", r.ID, err)
	}
	return nil
}

// CancelBenchmark cancels every run of the benchmark still queued or
// running.
func (p *Service) CancelBenchmark(ctx context.Context, v store.Viewer, benchmarkID int64) (int, error) {
	b, err := p.Store.BenchmarkByID(ctx, v, benchmarkID)
	if err != nil {
		return 0, err
	}
	n := 0
	err = p.Store.InLockingTx(ctx, func(tx pgx.Tx, q *store.Queries) error {
		for _, r := range b.Runs {
			err := cancelRun(ctx, tx, q, p.River, v, benchmarkID, r.ID)
			if errors.Is(err, ErrRunState) {
				continue
			}
			if err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// RetryRun queues a failed or cancelled run again as a new attempt. The new
// attempt starts from the first item and replaces the earlier attempt's
// results (result rows are keyed by run and item).
func (p *Service) RetryRun(ctx context.Context, v store.Viewer, benchmarkID, runID int64) error {
	return p.Store.InLockingTx(ctx, func(tx pgx.Tx, q *store.Queries) error {
		r, err := q.RunForUpdate(ctx, v, benchmarkID, runID)
		if err != nil {
			return err
		}
		if r.State != "failed" && r.State != "cancelled" {
			return fmt.Errorf("run %d is %s: %w", r.ID, r.State, ErrRunState)
		}
		jobID, waiting, err := p.queueAgain(ctx, tx, q, r)
		if err != nil {
			return err
		}
		return q.RequeueRun(ctx, r.ID, jobID, waiting)
	})
}

// queueAgain inserts a new River job for run r from its benchmark's
// manifest and says whether it waits for an agent.
func (p *Service) queueAgain(ctx context.Context, tx pgx.Tx, q *store.Queries, r store.Run) (int64, bool, error) {
	raw, datasetID, err := q.BenchmarkManifest(ctx, r.BenchmarkID)
	if err != nil {
		return 0, false, err
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return 0, false, fmt.Errorf("read benchmark %d's manifest: %w", r.BenchmarkID, err)
	}
	n, err := q.CountServingAgents(ctx, r.HardwareProfile, r.Runtime, jobs.ProtocolVersion, p.StaleAfter)
	if err != nil {
		return 0, false, err
	}
	model, err := q.ModelByName(ctx, r.ModelName)
	if err != nil {
		return 0, false, err
	}
	load := m.Load
	if r.SearchRung != nil {
		// A search's run sends its rung's requests, not the benchmark's.
		load.MaxRequests = r.Total / max(r.Samples, 1)
	}
	res, err := p.River.InsertTx(ctx, tx, jobs.RunArgs{
		ProtocolVersion: jobs.ProtocolVersion, RunID: r.ID, BenchmarkID: r.BenchmarkID, DatasetID: datasetID,
		Model: r.ModelName, AdapterOf: adapterBase(model), Runtime: r.Runtime, HardwareProfile: r.HardwareProfile,
		Load: load, Sampling: m.Sampling, SLO: m.SLO, Engine: r.Engine,
	}, nil)
	if err != nil {
		return 0, false, err
	}
	return res.Job.ID, n == 0, nil
}

// ReassignStaleRuns is the reaper: every run held by an agent that stopped
// heartbeating and writing the run's progress (store.StaleRuns) is taken
// from it (its fence moves on, so it can write no more even if it comes
// back), its old job is cancelled and a new job
// queues it for another agent, which resumes from the persisted results.
// This happens long before River's own rescuer would act, which is tuned
// for the longest allowed run. A run whose row (or job's row) another
// transaction holds, such as an agent that keeps one open, is left for a
// later period and the others are reassigned meanwhile: one agent must not
// keep every other dead agent's runs where they are
// (docs/gpu-nodes.md#locks-an-agent-may-hold-and-its-time).
//
// It also queues again every queued run whose job no worker will finish
// (store.OrphanedRuns): a worker that took the job and died before it
// claimed the run leaves the run queued, which no agent would ever take.
func (p *Service) ReassignStaleRuns(ctx context.Context) (int, error) {
	stale, err := p.Store.StaleRuns(ctx, p.StaleAfter)
	if err != nil {
		return 0, err
	}
	orphaned, err := p.Store.OrphanedRuns(ctx, p.StaleAfter)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, s := range stale {
		done, err := p.reassignStaleRun(ctx, s)
		if done {
			n++
		}
		if err != nil && !store.IsBusy(err) {
			errs = append(errs, fmt.Errorf("reassign run %d: %w", s.RunID, err))
		}
	}
	for _, s := range orphaned {
		done, err := p.requeueOrphanedRun(ctx, s)
		if done {
			n++
		}
		if err != nil && !store.IsBusy(err) {
			errs = append(errs, fmt.Errorf("queue orphaned run %d again: %w", s.RunID, err))
		}
	}
	return n, errors.Join(errs...)
}

// requeueOrphanedRun closes a queued run's dead job and queues the run on
// a new one, in one transaction, and says whether it did.
func (p *Service) requeueOrphanedRun(ctx context.Context, s store.StaleRun) (bool, error) {
	done := false
	err := p.Store.InTxWith(ctx, func(tx pgx.Tx, q *store.Queries) error {
		r, err := q.StaleRunForUpdate(ctx, s.BenchmarkID, s.RunID)
		if err != nil {
			return err
		}
		if r.RiverJobID == nil {
			return nil
		}
		if orphaned, err := q.RunIsOrphaned(ctx, r.ID, p.StaleAfter); err != nil || !orphaned {
			return err
		}
		old := *r.RiverJobID
		if _, err := q.FinishAbandonedJob(ctx, old, "its worker never claimed the run; the run was queued again"); err != nil {
			return err
		}
		jobID, waiting, err := p.queueAgain(ctx, tx, q, r)
		if err != nil {
			return err
		}
		if err := q.RequeueOrphanedRun(ctx, r.ID, old, jobID, waiting, fmt.Sprintf("job %d was taken and never claimed the run; queued again", old)); err != nil {
			return err
		}
		done = true
		return nil
	})
	return done && err == nil, err
}

// reassignStaleRun reassigns one stale run, in one transaction, and says
// whether it did.
func (p *Service) reassignStaleRun(ctx context.Context, s store.StaleRun) (bool, error) {
	done := false
	err := p.Store.InTxWith(ctx, func(tx pgx.Tx, q *store.Queries) error {
		r, err := q.StaleRunForUpdate(ctx, s.BenchmarkID, s.RunID)
		if err != nil {
			return err
		}
		if r.State != "running" || r.AgentID == nil {
			return nil // finished or handed back meanwhile
		}
		if stillStale, err := q.RunIsStale(ctx, r.ID, p.StaleAfter); err != nil || !stillStale {
			return err
		}
		if r.RiverJobID != nil {
			if _, err := p.River.JobCancelTx(ctx, tx, *r.RiverJobID); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
				return fmt.Errorf("cancel job of run %d: %w", r.ID, err)
			}
			// Its worker is gone and will never see the cancel: close
			// the job now rather than leave it "running" for the rescuer.
			if _, err := q.FinishAbandonedJob(ctx, *r.RiverJobID, fmt.Sprintf("agent %s stopped heartbeating; the run was reassigned", s.AgentName)); err != nil {
				return err
			}
		}
		jobID, waiting, err := p.queueAgain(ctx, tx, q, r)
		if err != nil {
			return err
		}
		why := fmt.Sprintf("agent %s stopped heartbeating after %d of %d items", s.AgentName, r.Completed, r.Total)
		if s.JobEnded {
			why = fmt.Sprintf("the run's job ended while agent %s held it, after %d of %d items", s.AgentName, r.Completed, r.Total)
		}
		if err := q.ReassignStaleRun(ctx, r.ID, r.Fence, jobID, waiting, why); err != nil {
			return err
		}
		done = true
		return nil
	})
	return done && err == nil, err
}

// ErrScorer is returned for a scorer name Ruckus does not have.
var ErrScorer = errors.New("unknown scorer")

// Rescoring is a scoring Rescore queued.
type Rescoring struct {
	RunID  int64  `json:"run_id"`
	Scorer string `json:"scorer"`
	// ScorerOptions are the options it scores with: those given, else the
	// benchmark's own when the scorer is the benchmark's; null for none.
	ScorerOptions json.RawMessage `json:"scorer_options"`
}

// Rescore queues the scoring of a run the viewer may change with scorer
// and its options (the server's score_run job); its item scores and
// quality are replaced when the job has run. Without options, a scorer
// that is the benchmark's own scores with the benchmark's scorer_options;
// another scorer takes none. Options that do not validate come back as
// Errors naming the scorer_options field.
func (p *Service) Rescore(ctx context.Context, v store.Viewer, benchmarkID, runID int64, scorer string, opts *ScorerOptions) (Rescoring, error) {
	if scorer == "" || !contains(Scorers, scorer) {
		return Rescoring{}, fmt.Errorf("%q: %w (use %s)", scorer, ErrScorer, strings.Join(Scorers[1:], ", "))
	}
	queued := Rescoring{RunID: runID, Scorer: scorer}
	err := p.Store.InLockingTx(ctx, func(tx pgx.Tx, q *store.Queries) error {
		if _, err := q.RunForUpdate(ctx, v, benchmarkID, runID); err != nil {
			return err
		}
		var raw json.RawMessage
		if opts.empty() {
			mraw, _, err := q.BenchmarkManifest(ctx, benchmarkID)
			if err != nil {
				return err
			}
			var m struct {
				Scorer        string          `json:"scorer"`
				ScorerOptions json.RawMessage `json:"scorer_options"`
			}
			if json.Unmarshal(mraw, &m) != nil || m.Scorer != scorer {
				opts = nil
				if errs := opts.validate(scorer); len(errs) > 0 {
					return errs
				}
			} else if len(m.ScorerOptions) > 0 && string(m.ScorerOptions) != "null" {
				queued.ScorerOptions = m.ScorerOptions
			}
		} else {
			if errs := opts.validate(scorer); len(errs) > 0 {
				return errs
			}
			b, err := json.Marshal(opts)
			if err != nil {
				return err
			}
			raw = b
			queued.ScorerOptions = raw
		}
		// The run's conclusions are drawn again once it is rescored: until
		// then its benchmark's verdict says they are being computed.
		if err := q.UnconcludeRun(ctx, runID); err != nil {
			return err
		}
		_, err := p.River.InsertTx(ctx, tx, jobs.ScoreRunArgs{RunID: runID, Scorer: scorer, Options: raw}, nil)
		return err
	})
	return queued, err
}

// ImportRun stores results made outside Ruckus, read from file as it
// arrives, as a run on a dataset and queues their scoring, in one
// transaction (an ingest.Results upload; rest reads settings that follow
// the file).
func (p *Service) ImportRun(ctx context.Context, v store.Viewer, in store.NewImport, file io.Reader, rest func(*store.NewImport) error) (store.ImportedRun, error) {
	if err := checkImportScorer(in.Scorer); err != nil {
		return store.ImportedRun{}, err
	}
	res, err := (&ingest.Uploader{Store: p.Store}).Upload(ctx, ingest.Source{
		File: file,
		Rest: func(req *ingest.Request) error {
			in := store.NewImport{DatasetID: req.DatasetID, Name: req.Name, Model: req.Model, Scorer: req.Scorer}
			if rest != nil {
				if err := rest(&in); err != nil {
					return err
				}
			}
			req.Name, req.Model, req.Scorer = in.Name, in.Model, in.Scorer
			return checkImportScorer(in.Scorer)
		},
		Then: func(tx pgx.Tx, res ingest.Result, req ingest.Request) error {
			_, err := p.River.InsertTx(ctx, tx, jobs.ScoreRunArgs{RunID: res.Run.RunID, Scorer: req.Scorer}, nil)
			return err
		},
	}, ingest.Request{Kind: ingest.Results, Viewer: v, DatasetID: in.DatasetID, Name: in.Name, Model: in.Model, Scorer: in.Scorer})
	return res.Run, err
}

// checkImportScorer refuses a scorer an import cannot be scored with.
func checkImportScorer(scorer string) error {
	if scorer != "" && !contains(Scorers, scorer) {
		return fmt.Errorf("%q: %w (use %s)", scorer, ErrScorer, strings.Join(Scorers[1:], ", "))
	}
	if scorer == "json-schema" {
		// An import carries no scorer options; json-schema needs a schema.
		return fmt.Errorf("%q needs a schema, which an import cannot give: %w; import with another scorer and score the run again with json-schema from its page", scorer, ErrScorer)
	}
	return nil
}

// SweepStalledAgents is the reaper's other half: it ends agent sessions
// that stall the others, idle in a transaction or in one statement past
// their bounds (store.SweepStalledAgents), and returns how many.
func (p *Service) SweepStalledAgents(ctx context.Context) (int, error) {
	return p.Store.SweepStalledAgents(ctx)
}
