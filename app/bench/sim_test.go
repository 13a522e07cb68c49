package bench

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/jobs"
)

// A right answer scores 1 with the scorer it is written for, a wrong one
// 0 (next to 0 for BLEU, whose 13a tokens keep the full stop), in the
// shape each scorer reads: partial-credit scorers see the accuracy too.
func TestSimAnswerIsRightOrWrongAsTheScorerSees(t *testing.T) {
	t.Parallel()
	summary := "The Danube rises in the Black Forest and flows roughly 2,850 kilometres to the Black Sea, passing ten countries and four capitals."
	for _, tc := range []struct {
		scorer, ref string
		shape       string // the right answer contains this
	}{
		{"numeric", `{"answer":"She has 16 - 3 = <<16-3=13>>13 eggs.\n#### 18","final":"18"}`, "#### 18"},
		{"numeric", `"1,212"`, "#### 1212"},
		{"choice", `"C"`, "(C)"},
		{"regex", `"b"`, "(B)"},
		{"exact", `"Canberra"`, "Canberra"},
		{"f1", `"the capital city"`, "capital"},
		{"contains", `"Paris"`, "Paris"},
		{"json", `"{\"a\":1}"`, `{"a":1}`},
		{"rouge", `"` + summary + `"`, "Danube"},
		{"rougeLsum", `"` + summary + `"`, "Danube"},
		{"rougeL-stem", `"` + summary + `"`, "Danube"},
		{"bleu", `"` + summary + `"`, "Danube"},
		{"f1", `"` + summary + `"`, "Danube"},
		{"", `"42"`, "#### 42"},
	} {
		f, err := score.ByName(tc.scorer)
		if tc.scorer == "" {
			f, _ = score.ByName("numeric")
		}
		if err != nil && tc.scorer != "" {
			t.Fatal(err)
		}
		refs := score.References(json.RawMessage(tc.ref))
		for seed := range uint64(20) {
			r := rand.New(rand.NewPCG(seed, 1))
			right, ok := SimAnswer(tc.scorer, json.RawMessage(tc.ref), true, r)
			if !ok || f(right, refs) != 1 || !strings.Contains(right, tc.shape) {
				t.Errorf("%s %s: right answer %q scores %v (ok %v), want 1 and %q in it", tc.scorer, tc.ref, right, f(right, refs), ok, tc.shape)
			}
			wrong, _ := SimAnswer(tc.scorer, json.RawMessage(tc.ref), false, r)
			s := f(wrong, refs)
			low := 0.0
			if tc.scorer == "bleu" {
				low = 0.05
			}
			if s > low || strings.TrimSpace(wrong) == "" {
				t.Errorf("%s %s: wrong answer %q scores %v", tc.scorer, tc.ref, wrong, s)
			}
		}
	}
	if _, ok := SimAnswer("exact", nil, true, rand.New(rand.NewPCG(1, 1))); ok {
		t.Error("an item without a reference got an answer; want filler")
	}
}

// binomialBound is how far a count of successes in n independent draws
// at p may stray from n·p before the test calls it a failure: 3.29
// standard deviations (a two-sided 0.1 % test), so a correct draw fails
// about once in a thousand seeds, and these seeds are fixed.
func binomialBound(n int, p float64) float64 {
	return 3.29 * math.Sqrt(float64(n)*p*(1-p))
}

// Each item is an independent draw at the accuracy: over many items the
// share right is within a binomial interval of p, for every model and
// benchmark; the same seed, benchmark, model and item always draw alike.
func TestSimRightDrawsEachItemAtTheAccuracy(t *testing.T) {
	t.Parallel()
	const n = 4000
	for _, p := range []float64{0, 0.1, 0.3, 0.55, 0.6, 0.8, 1} {
		for _, model := range []string{"acme/small-1b", "acme/large-8b"} {
			for _, bench := range []int64{1, 2, 977} {
				right := 0
				for i := range n {
					if SimRight(7, bench, model, i, p) {
						right++
					}
				}
				if d := math.Abs(float64(right) - n*p); d > binomialBound(n, p) || (p == 0 || p == 1) && d != 0 {
					t.Errorf("%s in benchmark %d at p=%v: %d of %d right, want %.0f ± %.0f", model, bench, p, right, n, n*p, binomialBound(n, p))
				}
			}
		}
	}
	// The draws are pinned: an installation's sim runs answer the same
	// after an upgrade (a change here changes every simulated quality).
	var first []bool
	right := 0
	for i := range 200 {
		first = append(first, SimRight(7, 3, "acme/small-1b", i, 0.55))
		if first[i] {
			right++
		}
	}
	for i := range 200 {
		if SimRight(7, 3, "acme/small-1b", i, 0.55) != first[i] {
			t.Fatalf("item %d drew differently twice", i)
		}
	}
	if right != pinnedRight {
		t.Errorf("seed 7, benchmark 3, acme/small-1b at 0.55: %d of the first 200 items right, want %d", right, pinnedRight)
	}
}

// pinnedRight is how many of the first 200 items acme/small-1b answers
// right at 0.55 in benchmark 3 under seed 7.
const pinnedRight = 98

// Two models at the same accuracy p are right on different items: they
// disagree on about 2p(1−p) of them, as two independent draws do (an
// evenly spread sequence shared by every model disagrees on far fewer).
// So do one model's runs in two benchmarks, or under two seeds. Neighbour
// items are independent too: both right about p² of the time.
func TestSimRightDiffersBetweenModelsAsIndependentDraws(t *testing.T) {
	t.Parallel()
	const n = 5000
	type side struct {
		seed  uint64
		bench int64
		model string
	}
	for _, p := range []float64{0.3, 0.5, 0.6, 0.9} {
		for _, pair := range [][2]side{
			{{7, 1, "acme/small-1b"}, {7, 1, "acme/large-8b"}},
			{{7, 1, "acme/small-1b"}, {7, 2, "acme/small-1b"}},
			{{7, 1, "acme/small-1b"}, {8, 1, "acme/small-1b"}},
		} {
			a, b := pair[0], pair[1]
			disagree, neighbours := 0, 0
			for i := range n {
				ra := SimRight(a.seed, a.bench, a.model, i, p)
				if ra != SimRight(b.seed, b.bench, b.model, i, p) {
					disagree++
				}
				if ra && SimRight(a.seed, a.bench, a.model, i+1, p) {
					neighbours++
				}
			}
			want := 2 * p * (1 - p)
			if d := math.Abs(float64(disagree) - n*want); d > binomialBound(n, want) {
				t.Errorf("p=%v, %+v vs %+v: disagree on %d of %d items, want %.0f ± %.0f", p, a, b, disagree, n, n*want, binomialBound(n, want))
			}
			if d := math.Abs(float64(neighbours) - n*p*p); d > binomialBound(n, p*p) {
				t.Errorf("p=%v, %+v: item and next both right %d times of %d, want %.0f ± %.0f", p, a, neighbours, n, n*p*p, binomialBound(n, p*p))
			}
		}
	}
}

// wilson is the Wilson score interval (95 %) of k successes in n.
func wilson(k, n int) (lo, hi float64) {
	const z = 1.959963984540054
	p, fn := float64(k)/float64(n), float64(n)
	mid := (p + z*z/(2*fn)) / (1 + z*z/fn)
	half := z / (1 + z*z/fn) * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn))
	return mid - half, mid + half
}

// Quality A/A on the simulated runtime: two models at the same accuracy,
// each benchmark under its own seed, compared item by item with the
// paired test the verdict uses (stats.ComparePaired: McNemar for 0/1
// scores). Its false-positive rate must be near α = 5 %: with every
// model's right items on one shared sequence it was about 0 (quality A/A
// passed by construction), which this test refuses.
func TestSimQualityAAFalsePositiveRateIsNearAlpha(t *testing.T) {
	t.Parallel()
	const seeds, n, p = 2000, 200, 0.6
	hits := 0
	a, b := make([]float64, n), make([]float64, n)
	for seed := range uint64(seeds) {
		for i := range n {
			a[i], b[i] = 0, 0
			if SimRight(seed, 1, "acme/a-7b", i, p) {
				a[i] = 1
			}
			if SimRight(seed, 1, "acme/b-7b", i, p) {
				b[i] = 1
			}
		}
		if stats.ComparePaired(a, b, seed).Significant() {
			hits++
		}
	}
	lo, hi := wilson(hits, seeds)
	t.Logf("quality A/A on sim: %d of %d benchmarks called significant at α = 0.05 (%.1f %%, Wilson 95 %% [%.1f %%, %.1f %%]), %d items at accuracy %v",
		hits, seeds, 100*float64(hits)/seeds, 100*lo, 100*hi, n, p)
	if lo > 0.05 || hi < 0.05 || hits < seeds/50 {
		t.Errorf("quality A/A false-positive rate %d of %d, Wilson [%.3f, %.3f]: want an interval holding 0.05", hits, seeds, lo, hi)
	}
}

func TestParseSimAccuracy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want map[string]float64
		err  string
	}{
		{"", map[string]float64{}, ""},
		{"acme/small-1b=0.55,acme/large-8b=0.8", map[string]float64{"acme/small-1b": 0.55, "acme/large-8b": 0.8}, ""},
		{" acme/a = 1 , b=0 ", map[string]float64{"acme/a": 1, "b": 0}, ""},
		{"acme/a", nil, "want model=accuracy"},
		{"acme/a=1.5", nil, "from 0 to 1"},
		{"acme/a=-0.1", nil, "from 0 to 1"},
		{"acme/a=NaN", nil, "from 0 to 1"},
		{"acme/a=Inf", nil, "from 0 to 1"},
		{"acme/a=x", nil, "not a number"},
		{"--trust-remote-code=0.5", nil, "not a model id"},
		{"a=0.1,a=0.2", nil, "given twice"},
		{strings.Repeat("a", MaxSimAccuracyLen+1), nil, "at most"},
	} {
		got, err := ParseSimAccuracy(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%q: %s = %v, want %v", tc.in, k, got[k], v)
			}
		}
	}
}

func FuzzParseSimAccuracy(f *testing.F) {
	for _, s := range []string{"", "a=1", "acme/small-1b=0.55,acme/large-8b=0.8", "a=NaN", "a==", ",,", "a=1e309"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseSimAccuracy(s)
		if err != nil {
			return
		}
		if len(m) > maxSimModels {
			t.Fatalf("%d models", len(m))
		}
		for k, v := range m {
			if jobs.CheckModelName(k) != nil || !(v >= 0 && v <= 1) {
				t.Fatalf("accepted %q=%v", k, v)
			}
		}
	})
}

// The manifest's sim block is validated with errors naming the field.
func TestManifestSimBlockIsValidated(t *testing.T) {
	t.Parallel()
	m, err := Decode(strings.NewReader(`name: s
dataset: 1
targets: [{model: acme/a, runtime: sim, hardware: cpu}]
sampling: {max_tokens: 8}
load: {profile: sequential}
sim:
  accuracy: {acme/a: 0.8, "bad name!": 0.5, acme/b: 1.2, acme/c: .nan}
  seed: 3
`))
	if err != nil {
		t.Fatal(err)
	}
	errs := m.Validate()
	paths := map[string]bool{}
	for _, e := range errs {
		paths[e.Path] = true
	}
	for _, p := range []string{`sim.accuracy["bad name!"]`, `sim.accuracy["acme/b"]`, `sim.accuracy["acme/c"]`} {
		if !paths[p] {
			t.Errorf("no error at %s in %v", p, errs)
		}
	}
	if len(errs) != 3 {
		t.Errorf("errors %v, want 3", errs)
	}
	if _, err := Decode(strings.NewReader("name: s\nsim: {acuracy: {a: 1}}\n")); err == nil {
		t.Error("a misspelt sim field was accepted")
	}
}

// GSM8K scored by the regex scorer with lm-eval's strict-match pattern:
// the simulated answers are in the pattern's form, so the regex score of
// a run is the accuracy asked for, item by item (each of the 1,319 test
// items scores 1 exactly when SimRight says the model gets it right).
func TestSimAnswersTakeTheRegexPatternsForm(t *testing.T) {
	t.Parallel()
	items := parseShared(t, "../../../shared/datasets/gsm8k/test.jsonl")
	for _, pattern := range []string{`#### (\-?[0-9\.\,]+)`, `(?i)the answer is \$?(\-?[0-9\.\,]+)`, `(?m)^Final answer:\s*(\S+)$`} {
		opts := score.Options{Pattern: pattern}
		f, err := score.New("regex", opts)
		if err != nil {
			t.Fatal(err)
		}
		var right, mismatch int
		for _, it := range items {
			ok := SimRight(3, 1, "acme/small-1b", it.Index, 0.6)
			out, has := SimAnswerWith("regex", opts, it.Reference, ok, rand.New(rand.NewPCG(3, uint64(it.Index))))
			s := f(out, score.References(it.Reference))
			if !has || (s == 1) != ok {
				mismatch++
				if mismatch < 4 {
					t.Errorf("%s item %d (right %v): %q scores %v", pattern, it.Index, ok, out, s)
				}
			}
			if s == 1 {
				right++
			}
		}
		if d := math.Abs(float64(right) - 0.6*float64(len(items))); mismatch > 0 || d > binomialBound(len(items), 0.6) {
			t.Errorf("%s: %d items disagree with SimRight; %d of %d right, want 0.6 of them", pattern, mismatch, right, len(items))
		}
	}
	// Letters in a pattern's form, and a worked solution that would
	// match first is left out.
	for _, tc := range []struct{ pattern, ref, shape string }{
		{`Answer: ([A-D])`, `"C"`, "Answer: C"},
		{`\[\[(\w+)\]\]`, `"Paris"`, "[[Paris]]"},
		{`#### (\d+)`, `{"answer":"2 + 2 = 4\n#### 4 then 5","final":"4"}`, "#### 4"},
	} {
		f, _ := score.New("regex", score.Options{Pattern: tc.pattern})
		refs := score.References(json.RawMessage(tc.ref))
		for seed := range uint64(10) {
			r := rand.New(rand.NewPCG(seed, 2))
			out, _ := SimAnswerWith("regex", score.Options{Pattern: tc.pattern}, json.RawMessage(tc.ref), true, r)
			if f(out, refs) != 1 || !strings.Contains(out, tc.shape) {
				t.Errorf("%s: right answer %q scores %v, want 1 with %q", tc.pattern, out, f(out, refs), tc.shape)
			}
			out, _ = SimAnswerWith("regex", score.Options{Pattern: tc.pattern}, json.RawMessage(tc.ref), false, r)
			if f(out, refs) != 0 {
				t.Errorf("%s: wrong answer %q scores %v", tc.pattern, out, f(out, refs))
			}
		}
	}
}

// A code item's right answer is its canonical solution and its wrong one
// a body that returns nothing; an item without a canonical solution gets
// filler, and a text scorer on a code item is not answered with code.
func TestSimAnswersCodeItemsWithTheirCanonicalSolution(t *testing.T) {
	t.Parallel()
	he := json.RawMessage(`{"task_id":"HumanEval/0","test":"def check(c): assert c(1) == 2","entry_point":"inc","canonical_solution":"    return x + 1\n"}`)
	mbpp := json.RawMessage(`{"task_id":2,"text":"t","code":"import math\ndef similar_elements(a, b):\n    return tuple(set(a) & set(b))","test_list":["assert similar_elements((1,),(1,)) == (1,)"],"test_setup_code":"","challenge_test_list":[]}`)
	r := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		scorer      string
		ref         json.RawMessage
		right, flop string
	}{
		{"humaneval", he, "    return x + 1\n", "    return None\n"},
		{"exec", he, "    return x + 1\n", "    return None\n"},
		{"mbpp", mbpp, "import math\ndef similar_elements(a, b):\n    return tuple(set(a) & set(b))", "def similar_elements(*args, **kwargs):\n    return None\n"},
		{"exec", mbpp, "import math\ndef similar_elements(a, b):\n    return tuple(set(a) & set(b))", "def similar_elements(*args, **kwargs):\n    return None\n"},
	} {
		got, ok := SimAnswer(tc.scorer, tc.ref, true, r)
		if !ok || got != tc.right {
			t.Errorf("%s right: %q (%v), want %q", tc.scorer, got, ok, tc.right)
		}
		got, ok = SimAnswer(tc.scorer, tc.ref, false, r)
		if !ok || got != tc.flop {
			t.Errorf("%s wrong: %q (%v), want %q", tc.scorer, got, ok, tc.flop)
		}
	}
	if got, ok := SimAnswer("humaneval", json.RawMessage(`{"task_id":"x","test":"t","entry_point":"f"}`), true, r); ok {
		t.Errorf("an item without its canonical solution was answered %q; want filler", got)
	}
	if got, ok := SimAnswer("mbpp", he, true, r); ok {
		t.Errorf("a HumanEval item under the mbpp scorer was answered %q; want filler", got)
	}
	if got, ok := SimAnswer("exact", he, true, r); ok {
		t.Errorf("a code item under exact was answered %q; want filler (its reference has no answer)", got)
	}
}

// parseShared parses a dataset file of ../shared/datasets.
func parseShared(t *testing.T, path string) []dataset.Item {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := dataset.NewParser(f, dataset.Limits{})
	var items []dataset.Item
	for {
		it, ok := p.Next()
		if !ok {
			break
		}
		items = append(items, it)
	}
	if p.ErrorCount() > 0 || len(items) == 0 {
		t.Fatalf("%s: %d items, errors %v", path, len(items), p.Errors())
	}
	return items
}
