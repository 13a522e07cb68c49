package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/export"
	"github.com/ruckus/ruckus/app/store"
)

type resultStore interface {
	StreamResults(ctx context.Context, runIDs []int64, fn func(store.ResultRow) error) error
	ListResults(ctx context.Context, runID int64, f store.ResultFilter) ([]store.ResultListRow, error)
	ResultByIdx(ctx context.Context, runID int64, idx int) (store.ResultItem, error)
	CopyResultsCSV(ctx context.Context, w io.Writer, runIDs []int64, runColumns bool) error
	RunSamples(ctx context.Context, runID int64, limit int) ([]store.SampleRow, error)
	LatencyPoints(ctx context.Context, runID int64, limit int) ([]store.LatencyPoint, error)
	RunErrorClasses(ctx context.Context, runID int64) ([]store.ErrorClassCount, error)
}

// exportTimeout bounds one streamed export.
const exportTimeout = 30 * time.Minute

// runOf finds run :id in a benchmark the viewer may read.
func (s *server) runOf(c *fiber.Ctx) (store.Benchmark, store.Run, error) {
	runID, _ := strconv.ParseInt(c.Params("id"), 10, 64)
	bID, err := s.Store.BenchmarkOfRun(c.UserContext(), runID)
	if err == nil {
		var b store.Benchmark
		b, err = s.Store.BenchmarkByID(c.UserContext(), viewer(c), bID)
		if err == nil {
			for _, r := range b.Runs {
				if r.ID == runID {
					return b, r, nil
				}
			}
		}
	}
	if err == nil || errors.Is(err, store.ErrNotFound) {
		return store.Benchmark{}, store.Run{}, fiber.NewError(fiber.StatusNotFound, "There is no such run.")
	}
	return store.Benchmark{}, store.Run{}, err
}

// stream sends the body written by write after the handler returns, so
// rows go out as they are read (fasthttp's stream writer, not a buffer).
func (s *server) stream(c *fiber.Ctx, contentType, filename string, write func(ctx context.Context, w *bufio.Writer) error) error {
	c.Set(fiber.HeaderContentType, contentType)
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s"`, filename))
	c.Set(fiber.HeaderCacheControl, "no-store")
	logger := s.Logger
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		ctx, cancel := context.WithTimeout(context.Background(), exportTimeout)
		defer cancel()
		if err := write(ctx, w); err != nil {
			// Headers are gone: the client sees a cut-short file.
			logger.Error("export failed midway", "file", filename, "err", err)
		}
		_ = w.Flush()
	})
	return nil
}

// exportRun streams one run's results: ?format=csv (default) or jsonl
// (the OpenAI batch output format).
func (s *server) exportRun(c *fiber.Ctx) error {
	_, run, err := s.runOf(c)
	if err != nil {
		return err
	}
	ids := []int64{run.ID}
	switch format := c.Query("format", "csv"); format {
	case "csv":
		return s.stream(c, "text/csv; charset=utf-8", fmt.Sprintf("run-%d-results.csv", run.ID), func(ctx context.Context, w *bufio.Writer) error {
			return s.Store.CopyResultsCSV(ctx, w, ids, false)
		})
	case "jsonl":
		return s.stream(c, "application/jsonl; charset=utf-8", fmt.Sprintf("run-%d-results.jsonl", run.ID), func(ctx context.Context, w *bufio.Writer) error {
			return s.Store.StreamResults(ctx, ids, func(r store.ResultRow) error { return export.WriteBatchLine(w, run.ModelName, r) })
		})
	default:
		return fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("format %q: use csv or jsonl", format))
	}
}

// exportBenchmark streams a benchmark's results as one CSV with the run
// columns first, or (summary) one row of figures per run.
func (s *server) exportBenchmark(summary bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		b, err := s.benchmarkParam(c)
		if err != nil {
			return err
		}
		if format := c.Query("format", "csv"); format != "csv" {
			return fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("format %q: use csv", format))
		}
		if summary {
			sums := map[int64][2]json.RawMessage{}
			prices := map[int64]*float64{}
			ids := make([]int64, len(b.Runs))
			for i, r := range b.Runs {
				ids[i] = r.ID
			}
			crs, err := s.Store.CompareRuns(c.UserContext(), viewer(c), ids)
			if err != nil {
				return err
			}
			for _, r := range crs {
				sums[r.ID] = [2]json.RawMessage{r.Summary, r.GPUSummary}
				prices[r.ID] = r.PricePerHour
			}
			return s.stream(c, "text/csv; charset=utf-8", fmt.Sprintf("benchmark-%d-summary.csv", b.ID), func(_ context.Context, w *bufio.Writer) error {
				return export.WriteSummary(w, b.Runs, sums, prices, s.GridCO2)
			})
		}
		ids := make([]int64, len(b.Runs))
		for i, r := range b.Runs {
			ids[i] = r.ID
		}
		return s.stream(c, "text/csv; charset=utf-8", fmt.Sprintf("benchmark-%d-results.csv", b.ID), func(ctx context.Context, w *bufio.Writer) error {
			return s.Store.CopyResultsCSV(ctx, w, ids, true)
		})
	}
}
