package conclude

import (
	"cmp"
	"math"
	"slices"

	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// Configuration is one target of a benchmark (model × runtime × hardware ×
// engine settings) as the best-configuration ranking weighs it
// (docs/verdict.md#the-best-configuration): its goodput per dollar under
// the benchmark's SLOs, its cost against its p95 latency, and its quality
// alongside. A figure that was not measured is nil.
type Configuration struct {
	// Rank is its place by goodput per dollar, 1 the best; 0 for one left
	// out (ConfigurationRanking.LeftOut says why).
	Rank     int         `json:"rank"`
	RunID    int64       `json:"run_id"`
	Label    string      `json:"label"`
	Model    string      `json:"model"`
	Runtime  string      `json:"runtime"`
	Hardware string      `json:"hardware"`
	Engine   jobs.Engine `json:"engine"`
	// Repeats is how many runs of the target the figures are the means of
	// (0 for one run).
	Repeats      int      `json:"repeats,omitempty"`
	Requests     int      `json:"requests"`
	GoodRequests int      `json:"good_requests"`
	GoodputShare *float64 `json:"goodput_share"`
	// GoodputRPS is requests/s within the SLOs; GoodputPerDollar those
	// requests per dollar of one replica's hourly price.
	GoodputRPS       *float64 `json:"goodput_rps"`
	GoodputPerDollar *float64 `json:"good_requests_per_dollar"`
	PricePerHour     *float64 `json:"price_per_hour"`
	CostPer1M        *float64 `json:"cost_per_1m_tokens"`
	E2Ep95           *float64 `json:"e2e_p95_ms"`
	Quality          *float64 `json:"quality"`
	OnFront          bool     `json:"on_pareto_front"`
	// LabelSaid names it for a page (the model with its runtime, hardware
	// and settings); SLO is the benchmark's it was ranked under.
	LabelSaid Said     `json:"-"`
	SLO       jobs.SLO `json:"-"`
	cand      Candidate
}

// LeftOutConfiguration is a configuration the ranking could not weigh,
// with why.
type LeftOutConfiguration struct {
	RunID     int64  `json:"run_id"`
	Label     string `json:"label"`
	Reason    string `json:"reason"`
	LabelSaid Said   `json:"-"`
	Said      Said   `json:"-"`
}

// ConfigurationRanking is a benchmark's configurations ranked by goodput
// per dollar under its SLOs, the Pareto front of cost against p95
// latency, the winner's lead over the runner-up as the engine tests every
// lead, and the configurations left out with their reasons.
type ConfigurationRanking struct {
	// Ranked are the weighed configurations, best first; Configurations
	// are they and then the ones left out (the front is drawn over all
	// that have a cost and a latency).
	Ranked []Configuration `json:"ranked"`
	// FrontCost names the cost the front is drawn on: cost_per_1m_tokens
	// under closed loops, cost_per_hour under an open loop (whose speed
	// is the rate offered, so a cost per token is not the target's).
	FrontCost string  `json:"pareto_cost"`
	Front     []int64 `json:"pareto_front"`
	// Lead is the winner against the runner-up on goodput per dollar
	// (nil with fewer than two ranked).
	Lead    *Margin                `json:"lead"`
	LeftOut []LeftOutConfiguration `json:"left_out"`
	// Recommendation names the winning configuration and how sure its
	// lead is ("" when nothing is ranked); RecommendationSaid for a page.
	Recommendation     string `json:"recommendation"`
	RecommendationSaid Said   `json:"-"`
}

// Winner is the first-ranked configuration (nil when none is ranked).
func (r ConfigurationRanking) Winner() *Configuration {
	if len(r.Ranked) == 0 {
		return nil
	}
	return &r.Ranked[0]
}

// RankConfigurations ranks a benchmark's configurations: cands are its
// succeeded runs as Weigh gives them with repeats merged (MergeRepeats),
// failed its runs that did not succeed. A configuration is ranked by its
// goodput per dollar (GoodputPerDollar) when the benchmark set an SLO,
// its replica has a price per hour and its requests were measured; the
// others are listed with their reason. A budgeted search cuts each rung
// by it (CutRung), so its choice is this ranking's winner.
func RankConfigurations(cands []Candidate, failed []store.Run) ConfigurationRanking {
	var r ConfigurationRanking
	all := make([]Configuration, 0, len(cands))
	for _, c := range cands {
		cfg := configuration(c)
		if why, ok := leftOutWhy(c); ok {
			r.LeftOut = append(r.LeftOut, leftOut(c.RunID, cfg.LabelSaid, why))
		} else {
			r.Ranked = append(r.Ranked, cfg)
		}
		all = append(all, cfg)
	}
	for _, f := range failed {
		l := configLabel(f.ModelName, f.Runtime, f.HardwareProfile, f.Engine.Key())
		r.LeftOut = append(r.LeftOut, leftOut(f.ID, l, say("configurations.said.left_failed", "State", say(stateKey(f.State)))))
	}
	// Ties go to the cheaper replica (fewer GPUs), then by name, so a
	// search's cut over them is the same whenever it is made.
	slices.SortStableFunc(r.Ranked, func(a, b Configuration) int {
		return cmp.Or(cmp.Compare(*b.GoodputPerDollar, *a.GoodputPerDollar), cmp.Compare(*a.PricePerHour, *b.PricePerHour), cmp.Compare(a.Label, b.Label))
	})
	for i := range r.Ranked {
		r.Ranked[i].Rank = i + 1
	}
	if len(r.Ranked) > 1 {
		m := Compare(r.Ranked[0].cand, r.Ranked[1].cand, GoodputPerDollar, Evidence{})
		r.Lead = &m
	}
	r.FrontCost, r.Front = configurationFront(all)
	for i := range r.Ranked {
		r.Ranked[i].OnFront = slices.Contains(r.Front, r.Ranked[i].RunID)
	}
	r.RecommendationSaid = r.recommend()
	if r.RecommendationSaid.Code != "" {
		r.Recommendation = English(r.RecommendationSaid)
	}
	return r
}

// configuration is a candidate's figures as the ranking shows them.
func configuration(c Candidate) Configuration {
	l := configLabel(c.Model, c.Runtime, c.Hardware, c.Engine)
	cfg := Configuration{RunID: c.RunID, Label: English(l), LabelSaid: l, Model: c.Model, Runtime: c.Runtime, Hardware: c.Hardware,
		Engine: c.Settings, Repeats: c.Repeats, Requests: c.Requests, GoodRequests: c.GoodRequests, PricePerHour: c.PricePerHour,
		CostPer1M: Cost.Value(c), E2Ep95: Latency.Value(c), Quality: Quality.Value(c), SLO: c.SLO, cand: c}
	if cfg.Engine == nil {
		cfg.Engine = jobs.Engine{}
	}
	if c.Requests > 0 {
		s := float64(c.GoodRequests) / float64(c.Requests)
		cfg.GoodputShare = &s
	}
	if rps := requestsPerS(c); rps != nil && c.SLOSet && cfg.GoodputShare != nil {
		g := *rps * *cfg.GoodputShare
		cfg.GoodputRPS = &g
	}
	cfg.GoodputPerDollar = GoodputPerDollar.Value(c)
	return cfg
}

// configLabel names a configuration: its model on its runtime and
// hardware with its engine settings, always, since configurations of one
// target differ in nothing else.
func configLabel(model, runtime, hardware, engine string) Said {
	return say("recommend.said.label_config", "Model", model, "Runtime", runtime, "Hardware", hardware, "Engine", engineSaid(engine))
}

func leftOut(id int64, label, why Said) LeftOutConfiguration {
	return LeftOutConfiguration{RunID: id, Label: English(label), Reason: English(why), LabelSaid: label, Said: why}
}

// leftOutWhy says why a succeeded configuration is not ranked (ok false
// when it is).
func leftOutWhy(c Candidate) (Said, bool) {
	switch {
	case !c.SLOSet:
		return say("configurations.said.left_no_slo"), true
	case c.TokenPriced:
		return say("configurations.said.left_token_priced"), true
	case c.PricePerHour == nil:
		return say("configurations.said.left_unpriced", "Hardware", c.Hardware), true
	case c.Requests <= 0 || requestsPerS(c) == nil:
		return say("configurations.said.left_unmeasured"), true
	}
	return Said{}, false
}

// stateKey is the catalogue key of how a run that did not succeed ended
// (or has not yet).
func stateKey(s string) string {
	switch s {
	case "failed":
		return "configurations.state_failed"
	case "cancelled":
		return "configurations.state_cancelled"
	case "queued":
		return "configurations.state_queued"
	case "running":
		return "configurations.state_running"
	}
	return "configurations.state_other"
}

// requestsPerS is the requests/s goodput per dollar rests on: the
// estimate its test takes (the steady window's batch means, or the
// repeats' mean) where there is one, else the whole run's.
func requestsPerS(c Candidate) *float64 {
	if c.RPS.OK() && c.RPS.Mean > 0 && finite(c.RPS.Mean) {
		v := c.RPS.Mean
		return &v
	}
	return c.RequestsPS
}

// goodputPerDollar is a candidate's requests within the SLOs per dollar
// of its replica's price: requests/s × the share within the SLOs × 3600
// ÷ price per hour; nil without an SLO, a price or measured requests.
func goodputPerDollar(x Candidate) *float64 {
	rps := requestsPerS(x)
	if !x.SLOSet || x.TokenPriced || x.PricePerHour == nil || *x.PricePerHour <= 0 || x.Requests <= 0 || rps == nil {
		return nil
	}
	v := *rps * float64(x.GoodRequests) / float64(x.Requests) * 3600 / *x.PricePerHour
	return &v
}

// configurationFront is the Pareto front of cost against p95 latency
// (both lower is better): the configurations no other is at least as good
// as on both and better on one, cheapest first. The cost is per 1M tokens
// under closed loops and per hour under an open loop.
func configurationFront(cs []Configuration) (string, []int64) {
	name, cost := "cost_per_1m_tokens", func(c Configuration) *float64 { return c.CostPer1M }
	for _, c := range cs {
		if c.cand.Load != nil && OpenLoop(*c.cand.Load) {
			name, cost = "cost_per_hour", func(c Configuration) *float64 { return c.PricePerHour }
			break
		}
	}
	var pts []Configuration
	for _, c := range cs {
		if x := cost(c); x != nil && c.E2Ep95 != nil && finite(*x) {
			pts = append(pts, c)
		}
	}
	var front []Configuration
	for _, a := range pts {
		dominated := slices.ContainsFunc(pts, func(b Configuration) bool {
			ca, cb := *cost(a), *cost(b)
			return b.RunID != a.RunID && cb <= ca && *b.E2Ep95 <= *a.E2Ep95 && (cb < ca || *b.E2Ep95 < *a.E2Ep95)
		})
		if !dominated {
			front = append(front, a)
		}
	}
	slices.SortStableFunc(front, func(a, b Configuration) int { return cmp.Compare(*cost(a), *cost(b)) })
	ids := make([]int64, len(front))
	for i, c := range front {
		ids[i] = c.RunID
	}
	return name, ids
}

// recommend words the recommendation: the winning configuration by name
// and settings, its goodput per dollar, and its lead over the runner-up
// as the test found it (established with its p, or not established with
// the smallest difference this comparison could detect).
func (r ConfigurationRanking) recommend() Said {
	w := r.Winner()
	if w == nil {
		return Said{}
	}
	v := dec(*w.GoodputPerDollar, 0)
	if r.Lead == nil {
		return say("configurations.said.recommend_alone", "Config", w.LabelSaid, "V", v)
	}
	m, runner := *r.Lead, r.Ranked[1].LabelSaid
	switch {
	case !m.Comparable:
		return say("configurations.said.recommend_not_comparable", "Config", w.LabelSaid, "V", v, "B", runner, "Reason", m.ReasonSaid)
	case m.P == nil:
		return say("configurations.said.recommend_untested", "Config", w.LabelSaid, "V", v, "B", runner, "Basis", m.BasisSaid)
	case m.Tie:
		det := any("")
		if m.Detectable != nil && !math.IsNaN(*m.Detectable) {
			det = Pct(*m.Detectable)
		}
		return say("configurations.said.recommend_not_established", "Config", w.LabelSaid, "V", v, "B", runner, "Pct", Pct(m.Pct),
			"P", pval(*m.P), "Detectable", det)
	}
	return say("configurations.said.recommend_established", "Config", w.LabelSaid, "V", v, "B", runner, "Pct", Pct(m.Pct), "P", pval(*m.P))
}
