package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Service checks fleet manifests against what exists and creates them,
// each scenario through the benchmark service.
type Service struct {
	Bench *bench.Service
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Providers is the provider table (jobs.DefaultProviders when nil).
	Providers jobs.Providers
}

// PlannedRun is one scenario × target of a fleet.
type PlannedRun struct {
	FleetRunID string `json:"fleet_run_id"`
	Scenario   string `json:"scenario"`
	// Repository is the scenario's group ("" for none).
	Repository string `json:"repository,omitempty"`
	// Provider is the remote provider of a "provider:model" target.
	Provider    string `json:"provider,omitempty"`
	BenchmarkID int64  `json:"benchmark_id,omitempty"`
	bench.PlannedRun
}

// Plan is what a fleet manifest becomes.
type Plan struct {
	Manifest    Manifest
	SubmittedAt time.Time
	Runs        []PlannedRun
	scenarios   []bench.Plan
}

// Plan validates m for viewer and lists the runs it would create, with the
// ids they would have if submitted now.
func (p *Service) Plan(ctx context.Context, v store.Viewer, m Manifest) (Plan, error) {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	plan := Plan{Manifest: m, SubmittedAt: now().UTC().Truncate(time.Second)}
	if errs := m.ValidateFor(p.providers()); len(errs) > 0 {
		return plan, errs
	}
	var errs Errors
	seen := map[string]bool{}
	for i, s := range m.Scenarios {
		bp, err := p.Bench.Plan(ctx, v, m.benchManifest(i))
		var berrs bench.Errors
		switch {
		case errors.As(err, &berrs):
			for _, e := range berrs {
				// A target's error is the same in every scenario: say it once.
				if strings.HasPrefix(e.Path, "targets") {
					if key := e.Path + "\x00" + e.Message; !seen[key] {
						seen[key] = true
						errs = append(errs, e)
					}
					continue
				}
				e.Path = scenarioPath(i, e.Path)
				errs = append(errs, e)
			}
			continue
		case err != nil:
			return plan, err
		}
		plan.scenarios = append(plan.scenarios, bp)
		for j, r := range bp.Runs {
			t := m.Targets[j]
			plan.Runs = append(plan.Runs, PlannedRun{FleetRunID: RunID(m.Name, plan.SubmittedAt, s.Key(), t), Scenario: s.Name,
				Repository: s.Repository, Provider: t.Provider, PlannedRun: r})
		}
	}
	if errs = m.docPaths(errs); len(errs) > 0 {
		return plan, errs
	}
	return plan, nil
}

// providers is the provider table the benchmark service checks targets against.
func (p *Service) providers() jobs.Providers {
	if p.Providers != nil {
		return p.Providers
	}
	return jobs.DefaultProviders()
}

// Created is a fleet just created.
type Created struct {
	FleetID     int64     `json:"fleet_id"`
	Name        string    `json:"name"`
	SubmittedAt time.Time `json:"submitted_at"`
	// BenchmarkIDs are the scenarios' benchmarks, in scenario order.
	BenchmarkIDs []int64      `json:"benchmark_ids"`
	Runs         []PlannedRun `json:"runs"`
}

// Create plans m and, in one transaction, inserts the fleet, a benchmark
// per scenario with its runs and their River jobs, and the runs' fleet
// ids: all of it or nothing. store.ErrFleetRunIDTaken means the same
// fleet name was submitted within the same second.
func (p *Service) Create(ctx context.Context, v store.Viewer, m Manifest) (Created, error) {
	plan, err := p.Plan(ctx, v, m)
	if err != nil {
		return Created{}, err
	}
	snapshot, err := json.Marshal(m)
	if err != nil {
		return Created{}, err
	}
	out := Created{Name: m.Name, SubmittedAt: plan.SubmittedAt}
	err = p.Bench.Store.InTxWith(ctx, func(tx pgx.Tx, q *store.Queries) error {
		out.BenchmarkIDs, out.Runs = nil, nil
		id, err := q.CreateFleet(ctx, v.UserID, m.Name, plan.SubmittedAt, snapshot)
		if err != nil {
			return err
		}
		out.FleetID = id
		k := 0
		for i, bp := range plan.scenarios {
			created, err := p.Bench.CreateTx(ctx, tx, q, v, bp)
			if err != nil {
				return err
			}
			if err := q.AddBenchmarkToFleet(ctx, created.BenchmarkID, id, m.Scenarios[i].Name, m.Scenarios[i].Repository); err != nil {
				return err
			}
			out.BenchmarkIDs = append(out.BenchmarkIDs, created.BenchmarkID)
			for _, r := range created.Runs {
				pr := plan.Runs[k]
				k++
				if err := q.SetFleetRunID(ctx, r.RunID, pr.FleetRunID); err != nil {
					return err
				}
				if pr.Provider != "" {
					if _, err := q.RecordRunProvider(ctx, r.RunID, pr.Provider, r.Model); err != nil {
						return err
					}
				}
				pr.PlannedRun, pr.BenchmarkID = r, created.BenchmarkID
				out.Runs = append(out.Runs, pr)
			}
		}
		if k != len(plan.Runs) {
			return fmt.Errorf("fleet %s: created %d runs of %d planned", m.Name, k, len(plan.Runs))
		}
		return nil
	})
	return out, err
}
