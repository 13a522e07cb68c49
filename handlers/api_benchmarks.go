package handlers

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/bench"
	"github.com/ruckus/ruckus/app/store"
)

// Benchmarks plans and creates benchmarks; *bench.Planner satisfies it.
type Benchmarks interface {
	Plan(ctx context.Context, v store.Viewer, m bench.Manifest) (bench.Plan, error)
	Create(ctx context.Context, v store.Viewer, m bench.Manifest) (bench.Created, error)
	CancelRun(ctx context.Context, v store.Viewer, benchmarkID, runID int64) error
	CancelBenchmark(ctx context.Context, v store.Viewer, benchmarkID int64) (int, error)
	RetryRun(ctx context.Context, v store.Viewer, benchmarkID, runID int64) error
}

type benchmarkStore interface {
	BenchmarkByID(ctx context.Context, v store.Viewer, id int64) (store.Benchmark, error)
	ListBenchmarks(ctx context.Context, v store.Viewer) ([]store.BenchmarkSummary, error)
}

// apiCreateBenchmark takes a manifest in JSON or YAML. With ?dry_run=true
// it validates and returns the plan without creating anything.
func (s *server) apiCreateBenchmark(c *fiber.Ctx) error {
	m, err := bench.Decode(bytes.NewReader(c.Body()))
	if err == nil {
		if c.QueryBool("dry_run") {
			var plan bench.Plan
			plan, err = s.Benchmarks.Plan(c.UserContext(), viewer(c), m)
			if err == nil {
				return c.JSON(fiber.Map{"dry_run": true, "dataset_id": plan.Dataset.ID, "runs": plan.Runs})
			}
		} else {
			var created bench.Created
			created, err = s.Benchmarks.Create(c.UserContext(), viewer(c), m)
			if err == nil {
				return c.Status(fiber.StatusCreated).JSON(created)
			}
		}
	}
	var ferrs bench.Errors
	if errors.As(err, &ferrs) {
		return c.Status(fiber.StatusUnprocessableEntity).JSON(fiber.Map{"errors": ferrs})
	}
	return err
}

type apiRun struct {
	ID              int64     `json:"run_id"`
	Model           string    `json:"model"`
	Runtime         string    `json:"runtime"`
	Hardware        string    `json:"hardware"`
	State           string    `json:"state"`
	WaitingForAgent bool      `json:"waiting_for_agent"`
	Total           int       `json:"total"`
	Completed       int       `json:"completed"`
	Errors          int       `json:"errors"`
	CreatedAt       time.Time `json:"created_at"`
}

func (s *server) apiGetBenchmark(c *fiber.Ctx) error {
	id, _ := strconv.ParseInt(c.Params("id"), 10, 64)
	b, err := s.Store.BenchmarkByID(c.UserContext(), viewer(c), id)
	if errors.Is(err, store.ErrNotFound) {
		return fiber.NewError(fiber.StatusNotFound, "no such benchmark")
	}
	if err != nil {
		return err
	}
	runs := make([]apiRun, len(b.Runs))
	for i, r := range b.Runs {
		runs[i] = apiRun{ID: r.ID, Model: r.ModelName, Runtime: r.Runtime, Hardware: r.HardwareProfile, State: r.State,
			WaitingForAgent: r.WaitingForAgent, Total: r.Total, Completed: r.Completed, Errors: r.Errors, CreatedAt: r.CreatedAt}
	}
	return c.JSON(fiber.Map{"benchmark_id": b.ID, "name": b.Name, "dataset_id": b.DatasetID, "dataset": b.DatasetName,
		"created_at": b.CreatedAt, "runs": runs})
}
