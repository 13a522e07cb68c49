package handlers

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/views/benchmarks"
	"github.com/ruckus/ruckus/views/said"
)

// benchmarkVerdict is the verdict block of benchmark b: a placeholder,
// saying what is still being computed, until its conclusions are
// complete. What it says is the engine's
// (conclude.Weighed.Verdict), worded in the reader's language.
func (s *server) benchmarkVerdict(ctx context.Context, v store.Viewer, b store.Benchmark) (benchmarks.Verdict, error) {
	vd := benchmarks.Verdict{BenchmarkID: b.ID, RecommendURL: fmt.Sprintf("/benchmarks/%d/recommend", b.ID)}
	if configurationCount(b) >= 2 {
		vd.ConfigurationsURL = fmt.Sprintf("/benchmarks/%d/configurations", b.ID)
	}
	// One rule for every surface: the engine's (conclude.StatusOf;
	// docs/verdict.md#when-a-verdict-is-final).
	j, err := conclude.WeighBenchmark(ctx, s.Store, v, b, true)
	if err != nil {
		return vd, err
	}
	if j.Pending() {
		vd.Pending = true
		if !b.Active() {
			vd.Reason = said.Word(ctx, j.Status.Reason)
		}
		return vd, nil
	}
	return verdictBlock(ctx, vd, j, b.Writable(v)), nil
}

// verdictBlock is the finished verdict of the weighed benchmark j on vd.
func verdictBlock(ctx context.Context, vd benchmarks.Verdict, j conclude.Weighed, writable bool) benchmarks.Verdict {
	if len(j.Cands) > 0 {
		vd.Compared, vd.Simulated = len(j.Cands), j.Simulated
		vd.Scorer, vd.Scorers, vd.Writable = j.ScorerKey, j.ScorerKeys, writable
	}
	if len(j.Cands) > 1 {
		ids := make([]string, 0, min(len(j.Cands), 8))
		for _, c := range j.Cands[:min(len(j.Cands), 8)] {
			ids = append(ids, strconv.FormatInt(c.RunID, 10))
		}
		vd.CompareURL = "/compare?runs=" + strings.Join(ids, ",")
	}
	return benchmarks.WordVerdict(ctx, vd, j.Verdict())
}

// showVerdictFragment is the verdict block alone, polled by the benchmark
// page while its runs are active (a shared live fragment, run -1).
func (s *server) showVerdictFragment(c *fiber.Ctx) error {
	return s.serveLive(c, -1, func(b store.Benchmark, _ bool) (templ.Component, error) {
		v, err := s.benchmarkVerdict(c.UserContext(), store.Viewer{UserID: b.OwnerID}, b)
		return benchmarks.VerdictBlock(v), err
	})
}
