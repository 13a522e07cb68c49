package conclude

import (
	"cmp"
	"math"
	"slices"
)

// The budgeted search over a benchmark's configurations is successive
// halving (Karnin, Koren & Somekh, "Almost Optimal Exploration in
// Multi-Armed Bandits", ICML 2013; Jamieson & Talwalkar, "Non-stochastic
// Best Arm Identification and Hyperparameter Optimization", AISTATS
// 2016): rung 0 runs every configuration with a small request budget;
// after each rung the best 1/η by goodput per dollar go on, each with η
// times the requests, until one is left. Every rung spends about the same
// requests (survivors × requests per run stays n × r₀), as in Karnin et
// al.'s rounds. docs/benchmarks.md#budgeted-search says why the cut is by
// point estimate.

// SearchRung is one rung of a search's plan: how many configurations run
// in it and how many requests each of their runs gets.
type SearchRung struct {
	Rung           int `json:"rung"`
	Configurations int `json:"configurations"`
	Requests       int `json:"requests_per_run"`
}

// SearchPlan is a search's schedule, fixed when the benchmark is created.
type SearchPlan struct {
	Configurations int `json:"configurations"`
	// Eta is the cut's ratio: after each rung the best ⌈survivors/η⌉ go on.
	Eta   int          `json:"eta"`
	Rungs []SearchRung `json:"rungs"`
	// Runs and Requests are the plan's totals; GridRequests what running
	// every configuration in full would send.
	Runs         int `json:"runs"`
	Requests     int `json:"requests"`
	GridRequests int `json:"grid_requests"`
}

// PlanSearch plans successive halving over n configurations within
// budgetRuns runs, full being a configuration's requests in the full grid
// and least the fewest requests a run may get. It takes the smallest η ≥ 2
// whose rungs fit the budget; ok is false when none does (fewer runs than
// configurations, or fewer than two configurations).
func PlanSearch(n, budgetRuns, full, least int) (SearchPlan, bool) {
	if n < 2 || full < 1 {
		return SearchPlan{}, false
	}
	for eta := 2; eta <= n; eta++ {
		var sizes []int
		runs := 0
		for s := n; s > 1; s = ceilDiv(s, eta) {
			sizes = append(sizes, s)
			runs += s
		}
		if runs > budgetRuns {
			continue
		}
		p := SearchPlan{Configurations: n, Eta: eta, Runs: runs, GridRequests: n * full}
		k := len(sizes)
		for i, s := range sizes {
			// Rung i gets full × η^(i−k): the last rung full/η.
			r := int(math.Ceil(float64(full) / math.Pow(float64(eta), float64(k-i))))
			r = min(max(r, least, 1), full)
			p.Rungs = append(p.Rungs, SearchRung{Rung: i, Configurations: s, Requests: r})
			p.Requests += s * r
		}
		return p, true
	}
	return SearchPlan{}, false
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// SearchCandidate is one configuration's run in a rung, as the cut weighs
// it.
type SearchCandidate struct {
	// Config is the configuration's key (model, runtime, hardware and
	// engine settings); RunID its run in this rung.
	Config string `json:"configuration"`
	RunID  int64  `json:"run_id"`
	// Measured is false when the run ended without figures (failed or
	// cancelled before a request): it is cut, as unmeasured.
	Measured bool `json:"measured"`
	// Requests sent, Good those meeting every SLO, over Seconds measured.
	Requests int     `json:"requests"`
	Good     int     `json:"good_requests"`
	Seconds  float64 `json:"measured_seconds"`
	// PricePerHour is what the configuration's GPUs cost an hour (its
	// share of the hardware profile's price); 0 when the profile has no
	// price, and the figure is then per GPU-hour.
	PricePerHour float64 `json:"price_per_hour"`
	GPUs         int     `json:"gpus"`
}

// GoodputRPS is the requests per second that met every SLO.
func (c SearchCandidate) GoodputRPS() float64 {
	if c.Seconds <= 0 {
		return 0
	}
	return float64(c.Good) / c.Seconds
}

// PerDollar is the search's figure: requests meeting the SLOs per dollar
// (goodput × 3600 ÷ price per hour), or per GPU-hour when unpriced.
func (c SearchCandidate) PerDollar() float64 {
	cost := c.PricePerHour
	if cost <= 0 {
		cost = float64(max(c.GPUs, 1))
	}
	return c.GoodputRPS() * 3600 / cost
}

// SearchVerdict is one configuration's outcome of a rung's cut, with the
// evidence it was decided on.
type SearchVerdict struct {
	SearchCandidate
	GoodputRPS float64 `json:"goodput_rps"`
	PerDollar  float64 `json:"goodput_per_dollar"`
	Priced     bool    `json:"priced"`
	Rank       int     `json:"rank"`
	Kept       bool    `json:"kept"`
	// Reason is why it was cut: "ranked" (below the best Keep) or
	// "unmeasured"; "" when kept.
	Reason string `json:"reason,omitempty"`
}

// SearchCut is a rung's decision: every candidate ranked, the best keep
// kept.
type SearchCut struct {
	Rung     int             `json:"rung"`
	Keep     int             `json:"keep"`
	Verdicts []SearchVerdict `json:"verdicts"`
}

// CutRung ranks a rung's candidates by goodput per dollar, best first
// (ties: fewer GPUs, then the configuration's key, so a decision is the
// same whenever it is made), and keeps the best keep of those measured.
func CutRung(rung, keep int, cands []SearchCandidate) SearchCut {
	out := SearchCut{Rung: rung, Keep: keep}
	for _, c := range cands {
		out.Verdicts = append(out.Verdicts, SearchVerdict{SearchCandidate: c, GoodputRPS: c.GoodputRPS(),
			PerDollar: c.PerDollar(), Priced: c.PricePerHour > 0})
	}
	slices.SortStableFunc(out.Verdicts, func(a, b SearchVerdict) int {
		if a.Measured != b.Measured {
			if a.Measured {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(b.PerDollar, a.PerDollar), cmp.Compare(a.GPUs, b.GPUs), cmp.Compare(a.Config, b.Config))
	})
	for i := range out.Verdicts {
		v := &out.Verdicts[i]
		v.Rank = i + 1
		switch {
		case !v.Measured:
			v.Reason = "unmeasured"
		case i < keep:
			v.Kept = true
		default:
			v.Reason = "ranked"
		}
	}
	return out
}

// Best is the cut's best configuration (its first kept), "" when none was
// measured.
func (c SearchCut) Best() string {
	for _, v := range c.Verdicts {
		if v.Kept {
			return v.Config
		}
	}
	return ""
}
