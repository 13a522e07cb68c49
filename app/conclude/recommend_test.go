package conclude

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/jobs"
)

func f(v float64) *float64 { return &v }

// load is the one load every fixture was measured under.
var load = &jobs.LoadIdentity{Profile: "concurrency", Params: "(concurrency=8)", Sampling: "max_tokens=256 n=1 temperature=0", DatasetID: 1,
	InputClass: "64–255", OutputClass: "64–255"}

// tpsEstimate is output tokens/s measured with a 1 % standard error over
// 10 batches.
func tpsEstimate(tps float64) stats.Estimate {
	return stats.Estimate{Mean: tps, SE: tps / 100, DF: 9, N: 10, Lo: tps * 0.977, Hi: tps * 1.023}
}

func cand(id int64, hw string, q, lo, hi, ttft, e2e, tps, cost, mem float64) Candidate {
	return Candidate{RunID: id, Model: fmt.Sprint("m", id), Hardware: hw, Quality: f(q), QualityLo: f(lo), QualityHi: f(hi),
		TTFTp95: f(ttft), E2Ep95: f(e2e), TokensPS: f(tps), CostPer1M: f(cost), GPUMemGiB: f(mem), ScorerKey: "exact", Load: load, TPS: tpsEstimate(tps)}
}

func TestRecommend(t *testing.T) {
	cs := []Candidate{
		cand(1, "h100", 0.90, 0.86, 0.94, 200, 4000, 2000, 2.0, 60), // best quality, dear
		cand(2, "a10", 0.80, 0.75, 0.85, 300, 6000, 800, 0.8, 20),   // cheap
		cand(3, "a10", 0.70, 0.65, 0.75, 900, 9000, 500, 1.5, 20),   // dominated by 2
		cand(4, "h100", 0.88, 0.84, 0.92, 150, 3000, 2500, 2.5, 70), // fastest
		{RunID: 5, Model: "m5", Hardware: "cpu"},                    // nothing measured
	}
	// No constraints: everything with figures is feasible; run 5 too.
	r := Recommend(cs, Constraints{}, Weights{Quality: 1})
	if len(r.Feasible) != 5 || r.Feasible[0].RunID != 1 || r.Feasible[0].Score != 1 {
		t.Fatalf("by quality: %+v", r.Feasible)
	}
	// Pareto, quality vs cost: 2 (cheapest), 1 (best); 3 and 4 dominated.
	if fmt.Sprint(r.ParetoQualityCost) != "[2 1]" {
		t.Errorf("quality–cost front %v", r.ParetoQualityCost)
	}
	// Quality vs p95 E2E: 4 (fastest, 0.88) and 1 (0.90).
	if fmt.Sprint(r.ParetoQualityLaten) != "[4 1]" {
		t.Errorf("quality–latency front %v", r.ParetoQualityLaten)
	}
	// Runs 1 and 4 overlap ([0.86, 0.94] and [0.84, 0.92]).
	for _, x := range r.Feasible {
		if x.RunID == 1 && fmt.Sprint(x.SameQualityAs) != "[4]" {
			t.Errorf("run 1 not significantly different from %v", x.SameQualityAs)
		}
	}
	// Cost only: run 2 first.
	if r := Recommend(cs[:4], Constraints{}, Weights{Cost: 1}); r.Feasible[0].RunID != 2 {
		t.Errorf("by cost: %d first", r.Feasible[0].RunID)
	}
	// Constraints exclude with reasons.
	r = Recommend(cs, Constraints{MinQuality: f(0.75), MaxE2Ep95: f(5000), Hardware: []string{"h100", "a10"}}, Weights{1, 1, 1})
	if len(r.Feasible) != 2 || len(r.Excluded) != 3 {
		t.Fatalf("feasible %+v excluded %+v", r.Feasible, r.Excluded)
	}
	reasons := map[int64]string{}
	for _, x := range r.Excluded {
		reasons[x.RunID] = strings.Join(x.Reasons, "; ")
	}
	if !strings.Contains(reasons[2], "p95 E2E 6000 ms is above the limit 5000 ms") ||
		!strings.Contains(reasons[3], "quality 0.7 is below the minimum 0.75") ||
		!strings.Contains(reasons[5], "no quality measured") || !strings.Contains(reasons[5], "hardware cpu") {
		t.Fatalf("reasons %v", reasons)
	}
}

// target is a candidate on one price: cost follows speed, as it does on
// one hardware profile ($1.80 an hour).
func target(id int64, model string, q, lo, hi, tps float64) Candidate {
	cost := 1.8 / (tps * 3600) * 1e6
	return Candidate{RunID: id, Model: model, Runtime: "sim", Hardware: "cpu", Quality: f(q), QualityLo: f(lo), QualityHi: f(hi),
		TokensPS: f(tps), CostPer1M: f(cost), ScorerKey: "exact", Load: load, TPS: tpsEstimate(tps)}
}

func TestRecommendScalesRelativeToTheBestAndTiesNoise(t *testing.T) {
	type want struct {
		first int64
		ranks map[int64]int
		// scores within ±0.0005
		scores map[int64]float64
		// every fragment must appear in the run's explanation
		explain map[int64][]string
		notes   []string
	}
	for _, tc := range []struct {
		name   string
		cs     []Candidate
		w      Weights
		ev     Evidence
		want   want
		ranked string
	}{
		{
			// 0.6 % apart in speed and cost, quality intervals overlapping:
			// min–max scaling made this 1.000 against 0.333.
			name: "near-equal targets tie",
			cs: []Candidate{
				target(1, "a", 0.800, 0.760, 0.840, 1000),
				target(2, "b", 0.803, 0.763, 0.843, 1006),
			},
			w: Weights{1, 1, 1},
			want: want{first: 2, ranks: map[int64]int{1: 1, 2: 1}, scores: map[int64]float64{1: 1, 2: 1},
				explain: map[int64][]string{
					1: {"a is not significantly worse on quality, 0.6 % slower and 0.6 % more expensive: no difference from b established."},
					2: {"Ranked first: best quality (0.803), fastest (1006.0 tokens/s)", "No difference from a established."},
				}},
			ranked: "[quality speed cost]",
		},
		{
			name: "a clear winner",
			cs: []Candidate{
				target(1, "small", 0.600, 0.570, 0.630, 1000),
				target(2, "large", 0.900, 0.880, 0.920, 2000),
			},
			w: Weights{1, 1, 1},
			// small: quality 0.6/0.9, speed 0.5, cost 0.5 → (0.667 + 0.5 + 0.5) / 3.
			want: want{first: 2, ranks: map[int64]int{2: 1, 1: 2}, scores: map[int64]float64{2: 1, 1: 0.5556},
				explain: map[int64][]string{
					1: {"small is", "50 % slower (1000.0 vs 2000.0 tokens/s)", "significantly worse on quality (0.600 vs 0.900)",
						"100 % more expensive", "ranked below large"},
					2: {"Ranked first: best quality (0.900), fastest (2000.0 tokens/s) and cheapest ($0.250 per 1M output tokens)."},
				}},
		},
		{
			// 8 points apart on 0.82 vs 0.74, but the intervals overlap: not
			// significant, so the ranking on quality alone is a tie…
			name: "a quality difference that is not significant",
			cs: []Candidate{
				target(1, "a", 0.820, 0.700, 0.940, 1000),
				target(2, "b", 0.740, 0.620, 0.860, 1000),
			},
			w: Weights{Quality: 1},
			want: want{first: 1, ranks: map[int64]int{1: 1, 2: 1}, scores: map[int64]float64{1: 1, 2: 1},
				explain: map[int64][]string{2: {"b is not significantly worse on quality: no difference from a established."}}},
			ranked: "[quality]",
		},
		{
			// …unless a paired comparison on the same items finds it.
			name: "a paired comparison finds the quality difference",
			cs: []Candidate{
				target(1, "a", 0.820, 0.700, 0.940, 1000),
				target(2, "b", 0.740, 0.620, 0.860, 1000),
			},
			w:  Weights{Quality: 1},
			ev: Evidence{Paired: []QualityDiff{{A: 2, B: 1, N: 200, Mean: -0.08, Lo: -0.11, Hi: -0.05, P: 0.001, Test: "mcnemar-chi2-uc"}}},
			want: want{first: 1, ranks: map[int64]int{1: 1, 2: 2}, scores: map[int64]float64{1: 1, 2: 0.74 / 0.82},
				explain: map[int64][]string{2: {"significantly worse on quality (0.740 vs 0.820): ranked below a."}}},
		},
		{
			// Intervals apart, but the paired comparison says the difference
			// is noise: the paired test decides.
			name: "a paired comparison that is not significant",
			cs: []Candidate{
				target(1, "a", 0.820, 0.800, 0.840, 1000),
				target(2, "b", 0.760, 0.740, 0.780, 1000),
			},
			w:  Weights{Quality: 1},
			ev: Evidence{Paired: []QualityDiff{{A: 1, B: 2, N: 20, Mean: 0.06, Lo: -0.01, Hi: 0.13, P: 0.3, Test: "mcnemar-exact"}}},
			want: want{first: 1, ranks: map[int64]int{1: 1, 2: 1}, scores: map[int64]float64{1: 1, 2: 1},
				explain: map[int64][]string{2: {"not significantly worse on quality"}}},
		},
		{
			// No price anywhere: cost is left out (not 0 for everyone, not
			// 1), and the ranking stands on quality and speed.
			name: "one criterion not measured for any target",
			cs: func() []Candidate {
				a, b := target(1, "a", 0.9, 0.88, 0.92, 1000), target(2, "b", 0.9, 0.88, 0.92, 1500)
				a.CostPer1M, b.CostPer1M = nil, nil
				return []Candidate{a, b}
			}(),
			w: Weights{1, 1, 1},
			// a: quality 1, speed 1000/1500 → (1 + 0.667) / 2.
			want: want{first: 2, ranks: map[int64]int{2: 1, 1: 2}, scores: map[int64]float64{2: 1, 1: 0.8333},
				explain: map[int64][]string{1: {"33 % slower", "ranked below b"}},
				notes:   []string{"Cost per 1M output tokens is not measured for any feasible target"}},
			ranked: "[quality speed]",
		},
		{
			// Cost measured for one only: the other counts 0 on it, and
			// says so.
			name: "one criterion not measured for one target",
			cs: func() []Candidate {
				a, b := target(1, "a", 0.9, 0.88, 0.92, 1000), target(2, "b", 0.9, 0.88, 0.92, 1000)
				b.CostPer1M = nil
				return []Candidate{a, b}
			}(),
			w: Weights{1, 1, 1},
			want: want{first: 1, ranks: map[int64]int{1: 1, 2: 2}, scores: map[int64]float64{1: 1, 2: 2.0 / 3},
				explain: map[int64][]string{2: {"b is equal in quality and as fast: ranked below a.", "Its cost per 1M output tokens is not measured, so it counts as the worst."}},
				notes:   []string{"Cost per 1M output tokens is not measured for b"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := RecommendWith(tc.cs, Constraints{}, tc.w, tc.ev)
			if got := r.Feasible[0].RunID; got != tc.want.first {
				t.Errorf("first %d, want %d: %+v", got, tc.want.first, r.Feasible)
			}
			byID := map[int64]Ranked{}
			for _, x := range r.Feasible {
				byID[x.RunID] = x
			}
			for id, rank := range tc.want.ranks {
				if byID[id].Rank != rank {
					t.Errorf("run %d rank %d, want %d", id, byID[id].Rank, rank)
				}
			}
			for id, score := range tc.want.scores {
				if math.Abs(byID[id].Score-score) > 0.0005 {
					t.Errorf("run %d score %.4f, want %.4f", id, byID[id].Score, score)
				}
			}
			for id, parts := range tc.want.explain {
				for _, p := range parts {
					if !strings.Contains(byID[id].Explanation, p) {
						t.Errorf("run %d explanation %q lacks %q", id, byID[id].Explanation, p)
					}
				}
			}
			notes := strings.Join(r.Notes, " ")
			for _, n := range tc.want.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes %q lack %q", notes, n)
				}
			}
			if tc.ranked != "" && fmt.Sprint(r.Ranked) != tc.ranked {
				t.Errorf("ranked on %v, want %s", r.Ranked, tc.ranked)
			}
		})
	}
}

// A 0.6 % difference stays 0.6 % on the relative scale when it is beyond
// a (tighter) noise floor: it is not magnified into 1 against 0.
func TestRelativeScaleKeepsSmallDifferencesSmall(t *testing.T) {
	cs := []Candidate{target(1, "a", 0.8, 0.76, 0.84, 1000), target(2, "b", 0.8, 0.76, 0.84, 1006)}
	// Measured precisely enough, between repeats, that 0.6 % is a real
	// difference.
	cs[0].TPS.SE, cs[1].TPS.SE = 0.5, 0.5
	cs[0].TPS.Repeats, cs[1].TPS.Repeats = true, true
	r := RecommendWith(cs, Constraints{}, Weights{Speed: 1}, Evidence{})
	if r.Feasible[0].RunID != 2 || r.Feasible[1].Rank != 2 {
		t.Fatalf("ranking %+v", r.Feasible)
	}
	if got := r.Feasible[1].Score; math.Abs(got-1000.0/1006) > 1e-9 {
		t.Fatalf("score of the slower %.4f, want %.4f", got, 1000.0/1006)
	}
	if !strings.Contains(r.Feasible[1].Explanation, "a is 0.60 % slower") && !strings.Contains(r.Feasible[1].Explanation, "a is 0.6 % slower") {
		t.Fatalf("explanation %q", r.Feasible[1].Explanation)
	}
}

func TestLeadsAndMargins(t *testing.T) {
	cs := []Candidate{target(1, "a", 0.80, 0.78, 0.82, 1000), target(2, "b", 0.70, 0.68, 0.72, 1010), {RunID: 3, Model: "c"}}
	q := Leads(cs, Quality, Evidence{})
	if q.Best.RunID != 1 || q.RunnerUp.RunID != 2 || q.Margin.Tie || math.Abs(q.Margin.Abs-0.1) > 1e-9 ||
		math.Abs(q.Margin.Pct-100*0.1/0.7) > 1e-9 || len(q.Unmeasured) != 1 || !strings.Contains(q.Margin.Basis, "bootstrap intervals") ||
		q.Margin.Test != "z-from-intervals" || q.Margin.P == nil || *q.Margin.P >= 0.05 {
		t.Errorf("quality lead %+v", q)
	}
	s := Leads(cs, Speed, Evidence{})
	if s.Best.RunID != 2 || !s.Margin.Tie || len(s.TiedWith) != 1 || s.Margin.Test != "welch-t" || !strings.Contains(s.Margin.Basis, "batch means") {
		t.Errorf("speed lead %+v", s)
	}
	c := Leads(cs, Cost, Evidence{})
	if c.Best.RunID != 2 || c.Margin.Better != 1 || c.Margin.Pct <= 0 {
		t.Errorf("cost lead %+v", c)
	}
	// p95 latency: 3 % apart, within the runs' own spread.
	a, b := cs[0], cs[1]
	a.E2Ep95, a.E2Ep95Lo, a.E2Ep95Hi = f(1000), f(950), f(1100)
	b.E2Ep95, b.E2Ep95Lo, b.E2Ep95Hi = f(1030), f(980), f(1150)
	if m := Compare(a, b, Latency, Evidence{}); !m.Tie || !strings.Contains(m.Basis, "exact order-statistic intervals") || m.Phrase() != "2.9 % quicker at p95" {
		t.Errorf("latency margin %+v %q", m, m.Phrase())
	}
	b.E2Ep95, b.E2Ep95Lo, b.E2Ep95Hi = f(1160), f(1120), f(1200)
	if m := Compare(a, b, Latency, Evidence{}); m.Tie {
		t.Errorf("apart intervals tie: %+v", m)
	}
	if l := Leads([]Candidate{{RunID: 9}}, Quality, Evidence{}); l.Best != nil || len(l.Unmeasured) != 1 {
		t.Errorf("nothing measured: %+v", l)
	}
}

// Runs measured under another load or scored with another scorer are
// shown apart, with what differs, and never ranked or tested.
func TestNotComparableIsNeverRanked(t *testing.T) {
	a, b, c := target(1, "a", 0.6, 0.58, 0.62, 1000), target(2, "b", 0.7, 0.68, 0.72, 1500), target(3, "c", 0.9, 0.88, 0.92, 3000)
	other := *load
	other.Profile, other.Params = "sweep", "(steps=4)"
	c.Load, c.ScorerKey = &other, "bleu"
	for _, crit := range []Criterion{Quality, Speed, Cost} {
		l := Leads([]Candidate{a, b, c}, crit, Evidence{})
		if l.Best == nil || l.Best.RunID != 2 || len(l.NotComparable) != 1 || l.NotComparable[0].RunID != 3 {
			t.Fatalf("%s: %+v", crit, l)
		}
		// The earlier run's first, whichever way the pair is asked.
		want := "concurrency (concurrency=8) vs sweep (steps=4)"
		if crit == Quality {
			want = "quality scored with exact vs bleu"
		}
		if _, why := comparable(c, b, crit); English(why) != l.NotComparable[0].Reason {
			t.Errorf("%s: the pair asked the other way round says %q, not %q", crit, English(why), l.NotComparable[0].Reason)
		}
		if r := l.NotComparable[0].Reason; !strings.HasPrefix(r, "not comparable: ") || !strings.Contains(r, want) {
			t.Errorf("%s: reason %q lacks %q", crit, r, want)
		}
	}
	m := Compare(c, a, Speed, Evidence{})
	if m.Comparable || m.P != nil || m.Test != "none" || !strings.Contains(m.Reason, "load") {
		t.Errorf("speed of another load compared: %+v", m)
	}
	r := RecommendWith([]Candidate{a, b, c}, Constraints{}, Weights{1, 1, 1}, Evidence{})
	if len(r.Feasible) != 2 || len(r.NotComparable) != 1 || r.NotComparable[0].RunID != 3 {
		t.Errorf("recommendation ranked what is not comparable: %+v", r)
	}
	// Without an interval nothing is tested: a tie that says so.
	a.TPS, b.TPS = stats.Estimate{}, stats.Estimate{}
	if m := Compare(b, a, Speed, Evidence{}); !m.Tie || m.P != nil || !strings.Contains(m.Basis, "not tested") {
		t.Errorf("untested speed: %+v", m)
	}
}

func TestPairRuns(t *testing.T) {
	t.Parallel()
	// Items 0..29 in both runs, item 30 only in a, item 31 only in b. A is
	// right on every shared item, B on the first 10: 20 discordant pairs,
	// all A's, so McNemar's exact p = 2·0.5²⁰.
	var as, bs []ItemScore
	for i := range 30 {
		as = append(as, ItemScore{Idx: i, Score: 1})
		bs = append(bs, ItemScore{Idx: i, Score: float64(min(1, max(0, 10-i)))})
	}
	as = append(as, ItemScore{Idx: 30, Score: 0})
	bs = append(bs, ItemScore{Idx: 31, Score: 1})
	d, ok := PairRuns(1, 2, as, bs)
	if !ok || d.N != 30 || d.OnlyA != 1 || d.OnlyB != 1 || d.Test != "mcnemar-exact" {
		t.Fatalf("%+v", d)
	}
	if want := 2 * math.Pow(0.5, 20); math.Abs(d.P-want) > 1e-15 || !d.Significant() || math.Abs(d.Mean-20.0/30) > 1e-12 {
		t.Fatalf("p = %g (want %g), mean %g: %+v", d.P, want, d.Mean, d)
	}
	// The other way round: the same test, negated.
	e, _ := PairRuns(2, 1, bs, as)
	if e.P != d.P || e.Mean != -d.Mean || e.Lo != -d.Hi || e.Hi != -d.Lo || e.OnlyA != 1 {
		t.Fatalf("%+v against %+v", e, d)
	}
	// Partial credit: the paired permutation test decides.
	pa := []ItemScore{{0, 0.5}, {1, 0.5}, {2, 0.4}}
	pb := []ItemScore{{0, 0.5}, {1, 0.4}, {2, 0.5}}
	if d, _ := PairRuns(1, 2, pa, pb); d.Test != "paired-permutation" || d.Significant() {
		t.Fatalf("%+v", d)
	}
	if _, ok := PairRuns(1, 2, pa, []ItemScore{{5, 1}}); ok {
		t.Fatal("runs with no item in common were paired")
	}
}

// A 0-shot and a 5-shot run of one dataset are not compared as like with
// like: their qualities carry the few-shot setting in the scorer key and
// their speeds in the load identity, and the reason names it.
func TestFewShotRunsAreNotComparable(t *testing.T) {
	t.Parallel()
	five := *load
	five.FewShot = "5-shot seed=1234"
	a := Candidate{RunID: 1, ScorerKey: "choice", Load: load}
	b := Candidate{RunID: 2, ScorerKey: "choice 5-shot seed=1234", Load: &five}
	if ok, why := Comparable(a, b, Quality); ok || !strings.Contains(why, "choice vs choice 5-shot seed=1234") {
		t.Errorf("quality: comparable %v (%q)", ok, why)
	}
	if ok, why := Comparable(a, b, Speed); ok || !strings.Contains(why, "prompts 0-shot vs 5-shot seed=1234") {
		t.Errorf("speed: comparable %v (%q)", ok, why)
	}
	if load.Key() == five.Key() {
		t.Error("the load keys of a 0-shot and a 5-shot run are equal")
	}
	b.Load, b.ScorerKey = load, "choice"
	if ok, why := Comparable(a, b, Speed); !ok {
		t.Errorf("two 0-shot runs: not comparable (%q)", why)
	}
}

// A refusal rate is no quality where more is better: two runs scored by
// the refusal scorer are never ranked on it, and say why.
func TestRefusalRateIsNeverRankedAsQuality(t *testing.T) {
	t.Parallel()
	a, b := target(1, "a", 0.2, 0.1, 0.3, 1000), target(2, "b", 0.9, 0.8, 1.0, 1000)
	a.ScorerKey, b.ScorerKey = "refusal", "refusal"
	l := Leads([]Candidate{a, b}, Quality, Evidence{})
	if l.Best != nil && l.RunnerUp != nil {
		t.Fatalf("refusal rates ranked: best %d over %d", l.Best.RunID, l.RunnerUp.RunID)
	}
	m := Compare(b, a, Quality, Evidence{})
	if m.Comparable || m.P != nil || !strings.Contains(m.Reason, "refusal rate") {
		t.Errorf("refusal rates compared: %+v", m)
	}
	if r := RecommendWith([]Candidate{a, b}, Constraints{}, Weights{1, 0, 0}, Evidence{}); len(r.Feasible) == 2 && r.Feasible[0].RunID == 2 && r.Feasible[0].Score > r.Feasible[1].Score {
		t.Errorf("the recommendation put the run refusing most first on quality: %+v", r.Feasible)
	}
	for key, want := range map[string]bool{"refusal": false, "refusal 5-shot seed=1234": false, "exact": true, "rougeL": true, `regex{"pattern":"x"}`: true} {
		if HigherIsBetter(key) != want {
			t.Errorf("HigherIsBetter(%q) = %v", key, !want)
		}
	}
}
