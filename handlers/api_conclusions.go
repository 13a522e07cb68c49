package handlers

import (
	"context"
	"fmt"
	"github.com/ruckus/ruckus/app/i18n"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/jobs"
)

// apiClaim is one conclusion as the API gives it: who leads on a metric,
// by how much, by which test, and whether the two were comparable at all
// (docs/concepts.md#comparability-and-noise).
type apiClaim struct {
	Metric string `json:"metric"`
	// Scorer is the scorer identity of a quality claim; Load the load
	// identity of a speed, latency or cost claim (the leader's).
	Scorer   *string            `json:"scorer,omitempty"`
	Load     *jobs.LoadIdentity `json:"load,omitempty"`
	Leader   *apiClaimRun       `json:"leader"`
	RunnerUp *apiClaimRun       `json:"runner_up"`
	// Margin is the leader's advantage in per cent of the runner-up's
	// figure; Difference the leader's figure minus the runner-up's.
	Margin     *float64 `json:"margin"`
	Difference *float64 `json:"difference"`
	// Interval is the test's 95 % interval of the leader's figure minus
	// the runner-up's (of ln leader − ln runner-up for cost and for a
	// single run's p95).
	Interval    []float64 `json:"interval"`
	Test        string    `json:"test"`
	P           *float64  `json:"p"`
	Significant bool      `json:"significant"`
	Comparable  bool      `json:"comparable"`
	Reason      string    `json:"reason"`
	// Detectable and ToDetect5 say, for a lead not established, the
	// smallest difference the comparison could have detected (per cent)
	// and what would detect 5 %.
	Detectable *float64       `json:"detectable_pct,omitempty"`
	ToDetect5  *conclude.Need `json:"to_detect_5pct,omitempty"`
}

type apiClaimRun struct {
	RunID    int64   `json:"run_id"`
	Model    string  `json:"model"`
	Runtime  string  `json:"runtime"`
	Hardware string  `json:"hardware"`
	Value    float64 `json:"value"`
	// Repeats is how many runs of the target the value is the mean of.
	Repeats int `json:"repeats,omitempty"`
}

// metricNames are the API's names of conclude's criteria.
var metricNames = map[conclude.Criterion]string{conclude.Quality: "quality", conclude.Speed: "output_tokens_per_s",
	conclude.Latency: "e2e_p95_ms", conclude.Cost: "cost_per_1m_tokens", conclude.Goodput: "goodput_share"}

func claimRun(c conclude.Candidate, crit conclude.Criterion) *apiClaimRun {
	r := &apiClaimRun{RunID: c.RunID, Model: c.Model, Runtime: c.Runtime, Hardware: c.Hardware, Repeats: c.Repeats}
	if v := crit.Value(c); v != nil {
		r.Value = *v
	}
	return r
}

// newClaim is the claim of margin m between leader a and runner-up b
// (m compares a with b); b is nil when a stands alone — alone among runs
// that are not comparable with it when othersNotComparable, and then the
// claim is not comparable either, as the comparison of the pair says.
// Its reasons are the catalogue's English.
func newClaim(crit conclude.Criterion, a conclude.Candidate, b *conclude.Candidate, m conclude.Margin, othersNotComparable bool) apiClaim {
	en := i18n.Default().Lang("en")
	cl := apiClaim{Metric: metricNames[crit], Leader: claimRun(a, crit), Test: "none", Comparable: true, Interval: []float64{}}
	if crit == conclude.Quality {
		key := a.ScorerKey
		cl.Scorer = &key
	} else {
		cl.Load = a.Load
	}
	if b == nil {
		cl.Reason = en.T("verdict_claim.alone")
		if othersNotComparable {
			cl.Comparable, cl.Reason = false, en.T("verdict_claim.none_comparable")
		}
		return cl
	}
	cl.RunnerUp = claimRun(*b, crit)
	if m.Measured && !m.Comparable {
		// A pair the engine cannot rank has no leader: the claim says
		// "not comparable" and why (docs/verdict.md#not-comparable).
		return unrankedClaim(crit, m.Reason)
	}
	if !m.Measured {
		cl.Reason = en.T("verdict_claim.not_measured")
		return cl
	}
	pct, diff := m.Pct, m.A-m.B
	cl.Difference = &diff
	if m.Relative {
		cl.Margin = &pct
	}
	cl.Comparable, cl.Reason, cl.Test, cl.P = m.Comparable, m.Reason, m.Test, m.P
	if m.Lo != nil && m.Hi != nil {
		cl.Interval = []float64{*m.Lo, *m.Hi}
	}
	cl.Significant = m.Comparable && m.P != nil && !m.Tie
	cl.Detectable, cl.ToDetect5 = m.Detectable, m.ToDetect5
	if cl.Comparable && cl.Reason == "" {
		cl.Reason = m.Basis
	}
	return cl
}

// unrankedClaim is the claim on a metric where the engine ranks no pair:
// no leader or runner-up, not comparable, and the engine's reason.
func unrankedClaim(crit conclude.Criterion, reason string) apiClaim {
	return apiClaim{Metric: metricNames[crit], Test: "none", Interval: []float64{}, Reason: reason}
}

// apiBenchmarkVerdict is GET /api/v1/benchmarks/{id}/verdict: the
// verdict's claims, one per metric, between the leader and the runner-up
// of the comparable group, and the runs left out with why.
func (s *server) apiBenchmarkVerdict(c *fiber.Ctx) error {
	b, err := s.benchmarkParam(c)
	if err != nil {
		return err
	}
	out := apiVerdict{BenchmarkID: b.ID, Claims: []apiClaim{}, NotComparable: []apiNotComparable{}, LeftOut: []apiLeftOut{}}
	if b.Active() {
		out.Pending, out.Reason = true, "runs are still queued or running"
		return c.JSON(out)
	}
	j, err := conclude.WeighBenchmark(c.UserContext(), s.Store, viewer(c), b, false)
	if err != nil {
		return err
	}
	// Conclusions are drawn only once every finished run's scores and
	// figures are kept (its score job has run): until then the verdict
	// says it is being computed rather than "only one run has this
	// figure".
	if j.StatsPending(time.Now()) {
		out.Pending, out.Reason = true, "conclusions are being computed: the finished runs' scores and figures are not kept yet"
		return c.JSON(out)
	}
	out.Scorer = &j.ScorerKey
	for _, r := range j.Left {
		out.LeftOut = append(out.LeftOut, apiLeftOut{RunID: r.ID, State: r.State})
	}
	for _, crit := range conclude.Criteria {
		l := conclude.Leads(j.Cands, crit, j.Ev)
		for _, x := range l.NotComparable {
			out.NotComparable = append(out.NotComparable, apiNotComparable{RunID: x.RunID, Metric: metricNames[crit], Reason: x.Reason})
		}
		if l.Best == nil {
			if len(l.NotComparable) > 0 {
				out.Claims = append(out.Claims, unrankedClaim(crit, l.NotComparable[0].Reason))
			}
			continue
		}
		out.Claims = append(out.Claims, newClaim(crit, *l.Best, l.RunnerUp, l.Margin, len(l.NotComparable) > 0))
	}
	return c.JSON(out)
}

// apiVerdict is GET /benchmarks/{id}/verdict. Scorer is left out while
// the verdict is pending, Reason once it is not.
type apiVerdict struct {
	BenchmarkID   int64              `json:"benchmark_id"`
	Pending       bool               `json:"pending"`
	Reason        string             `json:"reason,omitempty"`
	Scorer        *string            `json:"scorer,omitempty"`
	Claims        []apiClaim         `json:"claims"`
	NotComparable []apiNotComparable `json:"not_comparable"`
	LeftOut       []apiLeftOut       `json:"left_out"`
}

// apiNotComparable is a run measured otherwise than the group it would be
// ranked in, on one metric, and what differs.
type apiNotComparable struct {
	RunID  int64  `json:"run_id"`
	Metric string `json:"metric"`
	Reason string `json:"reason"`
}

// apiLeftOut is a run the verdict leaves out: it did not complete.
type apiLeftOut struct {
	RunID int64  `json:"run_id"`
	State string `json:"state"`
}

// parseCompareRuns reads /compare's runs=1,2,3: 2 to 8 distinct run ids.
func parseCompareRuns(ctx context.Context, raw string) ([]int64, string) {
	var ids []int64
	for _, part := range strings.Split(raw, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		id, err := parseID("runs", part)
		if err != nil {
			return nil, i18n.ErrorText(ctx, err)
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) < 2 || len(ids) > 8 {
		return nil, "Choose 2 to 8 runs to compare (runs=1,2,…)."
	}
	return ids, ""
}

// apiCompare is GET /api/v1/compare?runs=…[&baseline=]: each run against
// the baseline (the first run unless named) on every metric, as the
// comparison page draws it.
func (s *server) apiCompare(c *fiber.Ctx) error {
	ids, problem := parseCompareRuns(context.Background(), c.Query("runs"))
	if problem != "" {
		return apiFieldErrors(c, map[string]string{"runs": problem})
	}
	baseline := ids[0]
	if raw := c.Query("baseline"); raw != "" {
		b, err := parseID("baseline", raw)
		if err != nil || !slices.Contains(ids, b) {
			return apiFieldErrors(c, map[string]string{"baseline": fmt.Sprintf("must be one of the runs compared (got %q)", raw)})
		}
		baseline = b
	}
	runs, err := s.Store.RunFiguresByID(c.UserContext(), viewer(c), ids)
	if err != nil {
		return err
	}
	if len(runs) != len(ids) {
		return fiber.NewError(fiber.StatusNotFound, "One of these runs does not exist or is not yours.")
	}
	// Runs of two datasets are compared too: the engine calls them not
	// comparable on every criterion (the dataset is part of the load
	// identity, and quality is compared item by item).
	cands, ev, err := conclude.WeighWithEvidence(c.UserContext(), s.Store, runs, conclude.ScorerFor(runs))
	if err != nil {
		return err
	}
	var base conclude.Candidate
	for _, x := range cands {
		if x.RunID == baseline {
			base = x
		}
	}
	claims := []apiCompareClaim{}
	for _, x := range cands {
		if x.RunID == baseline {
			continue
		}
		for _, crit := range conclude.Criteria {
			lead, other, m := conclude.Ordered(x, base, crit, ev)
			if !m.Measured {
				continue
			}
			claims = append(claims, apiCompareClaim{RunID: x.RunID, Against: baseline, Claim: newClaim(crit, lead, &other, m, false)})
		}
	}
	return c.JSON(apiComparison{Baseline: baseline, Runs: ids, Claims: claims})
}

// apiComparison is GET /compare: each run against the baseline on every
// metric measured.
type apiComparison struct {
	Baseline int64             `json:"baseline"`
	Runs     []int64           `json:"runs"`
	Claims   []apiCompareClaim `json:"claims"`
}

// apiCompareClaim is one run against the baseline on one metric.
type apiCompareClaim struct {
	RunID   int64    `json:"run_id"`
	Against int64    `json:"against"`
	Claim   apiClaim `json:"claim"`
}
