package handlers

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
	"github.com/ruckus/ruckus/views/benchmarks"
)

// configurations ranks the benchmark's configurations through the
// engine (conclude.RankConfigurations over the runs WeighBenchmark
// weighs; docs/verdict.md#the-best-configuration).
func (s *server) configurations(c *fiber.Ctx) (benchmarks.Configurations, error) {
	b, err := s.benchmarkParam(c)
	if err != nil {
		return benchmarks.Configurations{}, err
	}
	j, err := conclude.WeighBenchmark(c.UserContext(), s.Store, viewer(c), b, false)
	if err != nil {
		return benchmarks.Configurations{}, err
	}
	// Until the benchmark's conclusions are complete (the engine's rule:
	// a search rung's cut, a run's figures, scores or judging to come)
	// no winner is final.
	d := benchmarks.Configurations{Benchmark: b, Ranking: conclude.RankConfigurations(j.Cands, j.Left), Pending: j.Pending()}
	if w := d.Ranking.Winner(); w != nil {
		d.PlanURL = planURL(b.DatasetID, *w)
	}
	return d, nil
}

// planURL opens the capacity planner on dataset with configuration w
// chosen, so it sizes replicas from it alone, under the SLOs it was
// ranked under (0: none, as the planner reads it).
func planURL(dataset int64, w conclude.Configuration) string {
	ms := func(d jobs.Duration) string {
		return strconv.FormatFloat(float64(time.Duration(d))/float64(time.Millisecond), 'f', -1, 64)
	}
	q := url.Values{"dataset": {fmt.Sprint(dataset)}, "config_model": {w.Model}, "config_runtime": {w.Runtime},
		"config_hardware": {w.Hardware}, "config_engine": {strings.ReplaceAll(w.Engine.Key(), " ", ", ")},
		"ttft_ms": {ms(w.SLO.TTFT)}, "tpot_ms": {ms(w.SLO.TPOT)}}
	if w.SLO.E2E > 0 {
		q.Set("e2e_ms", ms(w.SLO.E2E))
	}
	return "/capacity?" + q.Encode()
}

// configurationCount is how many configurations (model × runtime ×
// hardware × engine settings) the benchmark has: the page is linked from
// the benchmark's when there are two or more to choose between.
func configurationCount(b store.Benchmark) int {
	seen := map[string]bool{}
	for _, r := range b.Runs {
		seen[fmt.Sprintf("%s\x00%s\x00%s\x00%s", r.ModelName, r.Runtime, r.HardwareProfile, r.Engine.Key())] = true
	}
	return len(seen)
}

func (s *server) showConfigurationsPage(c *fiber.Ctx) error {
	d, err := s.configurations(c)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, benchmarks.ConfigurationsPage(d))
}

// apiConfigurations is the ranking as JSON: lists empty, never null, and
// the planner's address for the winner.
func (s *server) apiConfigurations(c *fiber.Ctx) error {
	d, err := s.configurations(c)
	if err != nil {
		return err
	}
	r := d.Ranking
	if r.Ranked == nil {
		r.Ranked = []conclude.Configuration{}
	}
	if r.LeftOut == nil {
		r.LeftOut = []conclude.LeftOutConfiguration{}
	}
	if r.Front == nil {
		r.Front = []int64{}
	}
	return c.JSON(apiConfigurationRanking{BenchmarkID: d.Benchmark.ID, ConfigurationRanking: r, Pending: d.Pending, CapacityURL: d.PlanURL})
}

// apiConfigurationRanking is GET /api/v1/benchmarks/{id}/configurations.
type apiConfigurationRanking struct {
	BenchmarkID int64 `json:"benchmark_id"`
	conclude.ConfigurationRanking
	// Pending: runs are still queued or running, or a finished run's
	// figures are still being kept (its lead untested until then).
	Pending     bool   `json:"pending"`
	CapacityURL string `json:"capacity_url"`
}
