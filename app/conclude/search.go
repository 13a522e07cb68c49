package conclude

import (
	"fmt"
	"math"
	"strings"

	"github.com/ruckus/ruckus/app/store"
)

// The budgeted search over a benchmark's configurations is successive
// halving (Karnin, Koren & Somekh, "Almost Optimal Exploration in
// Multi-Armed Bandits", ICML 2013; Jamieson & Talwalkar, "Non-stochastic
// Best Arm Identification and Hyperparameter Optimization", AISTATS
// 2016): rung 0 runs every configuration with a small request budget;
// after each rung the best 1/η by goodput per dollar (as the
// configurations page ranks them, RankConfigurations) go on, each with η
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

// SearchVerdict is one configuration's outcome of a rung's cut, with the
// evidence it was decided on: the figures the configurations page ranks
// by (RankConfigurations), so the search's choice is the page's winner.
type SearchVerdict struct {
	// Config is the configuration's key (SearchConfig); RunID its run in
	// this rung.
	Config string `json:"configuration"`
	RunID  int64  `json:"run_id"`
	// Measured is false when the run ended without figures (failed or
	// cancelled before a request, or without a request measured): it is
	// cut, as unmeasured.
	Measured bool `json:"measured"`
	// Requests measured, Good those meeting every SLO.
	Requests int `json:"requests"`
	Good     int `json:"good_requests"`
	// PricePerHour is the configuration's replica's price (ReplicaPrice;
	// nil when the profile has no price); GPUs the GPUs it holds.
	PricePerHour *float64 `json:"price_per_hour"`
	GPUs         int      `json:"gpus"`
	// GoodputRPS and PerDollar are the configurations page's goodput and
	// goodput per dollar (GoodputPerDollar); nil where it ranks nothing.
	GoodputRPS *float64 `json:"goodput_rps"`
	PerDollar  *float64 `json:"goodput_per_dollar"`
	Priced     bool     `json:"priced"`
	// Rank is its place among the ranked, 1 the best; 0 when not ranked.
	Rank int  `json:"rank"`
	Kept bool `json:"kept"`
	// Reason is why it was cut: "ranked" (below the best Keep),
	// "unmeasured" or "not_ranked" (the configurations page leaves it out:
	// no SLO, no price, paid by the token; Detail says which); "" when
	// kept.
	Reason     string `json:"reason,omitempty"`
	Detail     string `json:"detail,omitempty"`
	DetailSaid *Said  `json:"detail_said,omitempty"`
}

// SearchCut is a rung's decision: every candidate ranked, the best keep
// kept. When none could be ranked though some were measured, Unranked
// says why (the first such configuration's reason) and the search ends
// without a choice.
type SearchCut struct {
	Rung         int             `json:"rung"`
	Keep         int             `json:"keep"`
	Verdicts     []SearchVerdict `json:"verdicts"`
	Unranked     string          `json:"unranked,omitempty"`
	UnrankedSaid *Said           `json:"unranked_said,omitempty"`
}

// SearchConfig names a configuration in a search: its target and engine
// settings (as jobs.Engine.Key writes them).
func SearchConfig(model, runtime, hardware, engine string) string {
	return strings.TrimSpace(fmt.Sprintf("%s %s %s %s", model, runtime, hardware, engine))
}

// CutRung ranks a rung's configurations as the configurations page ranks
// a benchmark's (RankConfigurations: goodput per dollar under the
// benchmark's SLOs, the ones it cannot rank left out with its reason)
// and keeps the best keep of those ranked. cands are the rung's succeeded
// runs (Candidates; one run each, a search has no repeats), failed its
// runs that did not succeed; gpus gives each run's replica's GPUs.
func CutRung(rung, keep int, cands []Candidate, failed []store.Run, gpus map[int64]int) SearchCut {
	out := SearchCut{Rung: rung, Keep: keep}
	r := RankConfigurations(cands, nil)
	byRun := make(map[int64]Candidate, len(cands))
	for _, c := range cands {
		byRun[c.RunID] = c
	}
	for i, cfg := range r.Ranked {
		v := searchVerdict(cfg.cand, gpus)
		v.Rank, v.Kept = i+1, i < keep
		if !v.Kept {
			v.Reason = "ranked"
		}
		out.Verdicts = append(out.Verdicts, v)
	}
	for _, l := range r.LeftOut {
		v := searchVerdict(byRun[l.RunID], gpus)
		v.Reason = "unmeasured"
		if v.Measured {
			said := l.Said
			v.Reason, v.Detail, v.DetailSaid = "not_ranked", l.Reason, &said
			if len(r.Ranked) == 0 && out.UnrankedSaid == nil {
				out.Unranked, out.UnrankedSaid = l.Reason, &said
			}
		}
		out.Verdicts = append(out.Verdicts, v)
	}
	for _, f := range failed {
		out.Verdicts = append(out.Verdicts, SearchVerdict{Config: SearchConfig(f.ModelName, f.Runtime, f.HardwareProfile, f.Engine.Key()),
			RunID: f.ID, GPUs: gpus[f.ID], Reason: "unmeasured"})
	}
	return out
}

// searchVerdict is candidate c's figures as a cut shows them, those the
// configurations page ranks it by (configuration).
func searchVerdict(c Candidate, gpus map[int64]int) SearchVerdict {
	cfg := configuration(c)
	return SearchVerdict{Config: SearchConfig(c.Model, c.Runtime, c.Hardware, c.Engine), RunID: c.RunID,
		Measured: c.Requests > 0 && requestsPerS(c) != nil, Requests: c.Requests, Good: c.GoodRequests,
		PricePerHour: c.PricePerHour, GPUs: gpus[c.RunID], GoodputRPS: cfg.GoodputRPS, PerDollar: cfg.GoodputPerDollar,
		Priced: c.PricePerHour != nil && !c.TokenPriced}
}

// Best is the cut's best configuration (its first kept), "" when none was
// ranked.
func (c SearchCut) Best() string {
	for _, v := range c.Verdicts {
		if v.Kept {
			return v.Config
		}
	}
	return ""
}
