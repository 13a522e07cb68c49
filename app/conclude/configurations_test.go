package conclude

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
	"github.com/ruckus/ruckus/jobs"
)

// config is a configuration of model m on sim/l4 under a closed loop of
// 8 concurrent requests with an SLO set: rps requests/s (its batch means'
// standard error 1 % of it over 9 degrees of freedom), good of n requests
// within the SLO, a replica price of price per hour, a p95 of e2e ms and
// tps output tokens/s.
func config(id int64, engine jobs.Engine, rps float64, good, n int, price, e2e, tps float64) Candidate {
	c := Candidate{RunID: id, Model: "m", Runtime: "sim", Hardware: "l4", Engine: engine.Key(), Settings: engine, Load: load,
		TokensPS: f(tps), TPS: tpsEstimate(tps), CostPer1M: f(price / (tps * 3600) * 1e6), E2Ep95: f(e2e), PricePerHour: f(price),
		RequestsPS: f(rps), RPS: stats.Estimate{Mean: rps, SE: rps / 100, DF: 9, N: 10}, Requests: n, GoodRequests: good, SLOSet: true}
	return c
}

// Configurations are ranked by requests within the SLOs per dollar of a
// replica: a batch of 16 serves four times the requests of a batch of 2
// at one price; tensor parallelism over 2 GPUs serves more but costs
// twice, and ranks between. The winner's lead is tested (Welch on the log
// scale) and the recommendation names its settings.
func TestConfigurationsRankByGoodputPerDollar(t *testing.T) {
	small := config(1, jobs.Engine{"max_num_seqs": "2"}, 2, 190, 200, 1, 300, 100)
	batch := config(2, jobs.Engine{"max_num_seqs": "16"}, 8, 180, 200, 1, 800, 400)
	tp := config(3, jobs.Engine{"max_num_seqs": "16", "tensor_parallel_size": "2"}, 12, 190, 200, 2, 500, 600)
	r := RankConfigurations([]Candidate{small, batch, tp}, nil)
	ids := func(cs []Configuration) []int64 {
		var out []int64
		for _, c := range cs {
			out = append(out, c.RunID)
		}
		return out
	}
	if got := ids(r.Ranked); !slices.Equal(got, []int64{2, 3, 1}) {
		t.Fatalf("ranked %v, want [2 3 1]", got)
	}
	// 8 × 0.9 × 3600 ÷ 1 = 25,920; 12 × 0.95 × 3600 ÷ 2 = 20,520; 2 × 0.95 × 3600 = 6,840.
	for i, want := range []float64{25920, 20520, 6840} {
		if g := r.Ranked[i].GoodputPerDollar; g == nil || math.Abs(*g-want) > 1e-6 || r.Ranked[i].Rank != i+1 {
			t.Errorf("rank %d: %v requests per dollar, want %g", i+1, g, want)
		}
	}
	m := r.Lead
	if m == nil || m.Criterion != GoodputPerDollar || m.Test != "t-log-goodput-per-dollar" || m.Tie || m.P == nil || *m.P >= 0.05 || m.Better != 1 {
		t.Fatalf("lead: %+v", m)
	}
	if !strings.Contains(r.Recommendation, "max_num_seqs=16") || !strings.Contains(r.Recommendation, "significant") ||
		!strings.Contains(r.Recommendation, "m on sim/l4 with max_num_seqs=16 tensor_parallel_size=2") {
		t.Errorf("recommendation %q", r.Recommendation)
	}
	de := r.RecommendationSaid.In(i18n.Default().Lang("de"))
	if !strings.Contains(de, "je Dollar") || !strings.Contains(de, "signifikant") {
		t.Errorf("German recommendation %q", de)
	}
	if len(r.LeftOut) != 0 {
		t.Errorf("left out: %+v", r.LeftOut)
	}
}

// The Pareto front is cost per 1M tokens against p95 latency under a
// closed loop: a configuration another beats on both is off it; under an
// open loop the cost is per hour.
func TestConfigurationsParetoFront(t *testing.T) {
	small := config(1, jobs.Engine{"max_num_seqs": "2"}, 2, 190, 200, 1, 300, 100)
	batch := config(2, jobs.Engine{"max_num_seqs": "16"}, 8, 180, 200, 1, 800, 400)
	tp := config(3, jobs.Engine{"max_num_seqs": "16", "tensor_parallel_size": "2"}, 12, 190, 200, 2, 500, 600)
	// Dearer per token than batch and slower at p95: dominated.
	worse := config(4, jobs.Engine{"max_num_seqs": "64"}, 7, 150, 200, 1, 900, 350)
	r := RankConfigurations([]Candidate{small, batch, tp, worse}, nil)
	if r.FrontCost != "cost_per_1m_tokens" || !slices.Equal(r.Front, []int64{2, 3, 1}) {
		t.Fatalf("front %s %v, want cost_per_1m_tokens [2 3 1]", r.FrontCost, r.Front)
	}
	for _, c := range r.Ranked {
		if c.OnFront != (c.RunID != 4) {
			t.Errorf("run %d on the front: %v", c.RunID, c.OnFront)
		}
	}
	open := jobs.LoadIdentity{Profile: jobs.LoadPoisson, Params: "(rate=2)", Sampling: load.Sampling, DatasetID: 1, MeanIn: load.MeanIn, MeanOut: load.MeanOut}
	for _, c := range []*Candidate{&small, &batch, &tp, &worse} {
		c.Load = &open
	}
	r = RankConfigurations([]Candidate{small, batch, tp, worse}, nil)
	// Per hour: small, batch and worse cost 1, tp 2; small, at 1 and the
	// lowest p95, beats every other on both.
	if r.FrontCost != "cost_per_hour" || !slices.Equal(r.Front, []int64{1}) {
		t.Errorf("open loop front %s %v, want cost_per_hour [1]", r.FrontCost, r.Front)
	}
}

// Two configurations alike within noise: the winner's lead is "not
// established" with the smallest difference the comparison could detect,
// never a tie called a win.
func TestConfigurationsLeadNotEstablished(t *testing.T) {
	a := config(1, jobs.Engine{"max_num_seqs": "16"}, 8.0, 180, 200, 1, 800, 400)
	b := config(2, jobs.Engine{"max_num_seqs": "24"}, 7.9, 179, 200, 1, 810, 395)
	r := RankConfigurations([]Candidate{b, a}, nil)
	m := r.Lead
	if r.Winner().RunID != 1 || m == nil || !m.Tie || m.P == nil || m.Detectable == nil || *m.Detectable <= 1.3 {
		t.Fatalf("lead: %+v", m)
	}
	if !strings.Contains(r.Recommendation, "not established") || !strings.Contains(r.Recommendation, "smallest difference") ||
		!strings.Contains(r.Recommendation, "max_num_seqs=16") {
		t.Errorf("recommendation %q", r.Recommendation)
	}
}

// Every configuration not ranked is listed with its reason: no SLO, no
// price, paid by the token, no measured requests, a run that failed.
func TestConfigurationsLeftOutSayWhy(t *testing.T) {
	ok := config(1, jobs.Engine{"max_num_seqs": "16"}, 8, 180, 200, 1, 800, 400)
	noSLO := config(2, jobs.Engine{"max_num_seqs": "2"}, 2, 200, 200, 1, 300, 100)
	noSLO.SLOSet = false
	unpriced := config(3, jobs.Engine{"max_num_seqs": "4"}, 4, 190, 200, 1, 400, 200)
	unpriced.PricePerHour, unpriced.Hardware = nil, "a10"
	token := config(4, nil, 4, 190, 200, 1, 400, 200)
	token.TokenPriced = true
	empty := config(5, jobs.Engine{"max_num_seqs": "8"}, 0, 0, 0, 1, 400, 200)
	empty.RequestsPS, empty.RPS = nil, stats.Estimate{}
	failed := store.Run{ID: 6, ModelName: "m", Runtime: "sim", HardwareProfile: "l4", State: "failed", Engine: jobs.Engine{"max_num_seqs": "32"}}
	r := RankConfigurations([]Candidate{ok, noSLO, unpriced, token, empty}, []store.Run{failed})
	if len(r.Ranked) != 1 || r.Lead != nil || !strings.Contains(r.Recommendation, "the only configuration ranked") {
		t.Fatalf("ranked %+v, recommendation %q", r.Ranked, r.Recommendation)
	}
	want := map[int64]string{2: "sets no SLO", 3: "a10 has no price per hour", 4: "paid by the token", 5: "no requests were measured", 6: "the run failed"}
	for _, l := range r.LeftOut {
		if !strings.Contains(l.Reason, want[l.RunID]) {
			t.Errorf("run %d left out: %q, want %q", l.RunID, l.Reason, want[l.RunID])
		}
		delete(want, l.RunID)
	}
	if len(want) != 0 {
		t.Errorf("not listed: %v", want)
	}
	if l := r.LeftOut[len(r.LeftOut)-1]; !strings.Contains(l.Label, "max_num_seqs=32") {
		t.Errorf("failed run's label %q", l.Label)
	}
	if l := r.LeftOut[2]; !strings.Contains(l.Label, "the runtime's default settings") {
		t.Errorf("defaults' label %q", l.Label)
	}
}

// A/A: two configurations drawn from one, each run's requests/s moved by
// a between-run effect of DriftCV and measured with 1 % batch-means
// noise, its share within the SLOs binomial: the lead is called
// significant in about 5 % of pairs, not more.
func TestConfigurationsLeadAA(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 7))
	const pairs = 2000
	draw := func(id int64) Candidate {
		rps := 8 * math.Exp(rng.NormFloat64()*stats.DriftCV)
		rps *= 1 + rng.NormFloat64()/100
		good := 0
		for range 200 {
			if rng.Float64() < 0.9 {
				good++
			}
		}
		return config(id, jobs.Engine{"max_num_seqs": "16"}, rps, good, 200, 1, 800, 400)
	}
	sig := 0
	for range pairs {
		r := RankConfigurations([]Candidate{draw(1), draw(2)}, nil)
		if r.Lead != nil && r.Lead.P != nil && !r.Lead.Tie {
			sig++
		}
	}
	if rate := float64(sig) / pairs; rate > 0.07 {
		t.Errorf("A/A called significant in %.1f %% of %d pairs, want at most 7 %%", rate*100, pairs)
	} else {
		t.Logf("A/A called significant in %.1f %% of %d pairs", rate*100, pairs)
	}
}

// Two configurations of one model, runtime and hardware are two
// candidates: repeats merge only within one configuration, and a label
// names the settings that tell them apart.
func TestConfigurationsAreTwoCandidates(t *testing.T) {
	a1 := config(1, jobs.Engine{"max_num_seqs": "2"}, 2, 190, 200, 1, 300, 100)
	a2 := config(2, jobs.Engine{"max_num_seqs": "2"}, 2.1, 190, 200, 1, 310, 105)
	b := config(3, jobs.Engine{"max_num_seqs": "16"}, 8, 180, 200, 1, 800, 400)
	d := config(4, nil, 4, 180, 200, 1, 500, 200)
	merged := MergeRepeats([]Candidate{a1, b, a2, d})
	if len(merged) != 3 || merged[0].Repeats != 2 || merged[1].Repeats != 0 || merged[2].Repeats != 0 {
		t.Fatalf("merged %+v", merged)
	}
	if merged[0].RPS.Mean != 2.05 || !merged[0].RPS.Repeats {
		t.Errorf("repeats' requests/s %+v, want their mean 2.05 with the spread between them", merged[0].RPS)
	}
	for i, want := range []string{"m on sim/l4 with max_num_seqs=2", "m on sim/l4 with max_num_seqs=16", "m on sim/l4 with the runtime's default settings"} {
		if got := Label(merged[i], merged); got != want {
			t.Errorf("label %d: %q, want %q", i, got, want)
		}
	}
	if got := LabelSaid(merged[1], merged).(Said).In(i18n.Default().Lang("de")); got != "m auf sim/l4 mit max_num_seqs=16" {
		t.Errorf("German label %q", got)
	}
}
