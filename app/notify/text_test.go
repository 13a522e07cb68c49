package notify

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
)

// The notification's sentence is in its owner's language; English when the
// owner follows the browser (a notification has none).
func TestTextsFollowTheOwnersLanguage(t *testing.T) {
	rn := store.RunNotice{RunID: 7, BenchmarkID: 3, BenchmarkName: "Klein oder groß", Model: "acme/small-1b", Runtime: "sim", Hardware: "h100",
		Runs:        map[string]int{"completed": 2, "failed": 1},
		Regressions: []store.Regression{{Metric: "quality", Delta: -0.25, AgainstRunID: 5}}}
	for lang, want := range map[string][2]string{
		"": {"Benchmark “Klein oder groß” (#3) finished: 2 completed, 1 failed.",
			"Run 7 of benchmark “Klein oder groß” (#3), acme/small-1b on sim/h100, regressed: quality -0.25 against run 5."},
		"de": {"Benchmark „Klein oder groß“ (#3) ist fertig: 2 abgeschlossen, 1 gescheitert.",
			"Lauf 7 des Benchmarks „Klein oder groß“ (#3), acme/small-1b auf sim/h100, hat sich verschlechtert: quality -0.25 gegenüber Lauf 5."},
	} {
		rn.OwnerLanguage = lang
		if got := benchmarkText(EventBenchmarkFinished, rn); got != want[0] {
			t.Errorf("%q benchmark text = %q, want %q", lang, got, want[0])
		}
		if got := regressionText(rn); got != want[1] {
			t.Errorf("%q regression text = %q, want %q", lang, got, want[1])
		}
	}
}

// A regression the engine concluded is told as it concluded it, in the
// owner's language: the catalogue's sentence of its Said, not the
// metric and delta alone.
func TestRegressionTextIsTheEnginesConclusion(t *testing.T) {
	said := conclude.Say("compare.said.regression_throughput", "A", conclude.Dec{V: 50, Places: 1}, "Run", 5, "B", conclude.Dec{V: 100, Places: 1},
		"Pct", conclude.Signed{V: -50, Places: 1}, "Basis", conclude.Say("compare.said.basis_latency_repeats", "A", 3, "B", 3, "P", conclude.P(0.001)), "N", 2)
	raw, err := json.Marshal(said)
	if err != nil {
		t.Fatal(err)
	}
	rn := store.RunNotice{RunID: 7, BenchmarkID: 3, BenchmarkName: "b", Model: "m", Runtime: "sim", Hardware: "cpu",
		Regressions: []store.Regression{{Metric: "throughput", Delta: -50, AgainstRunID: 5, DetailSaid: raw}}}
	for _, lang := range []string{"en", "de"} {
		rn.OwnerLanguage = lang
		want := said.In(i18n.Default().Lang(lang))
		if strings.Contains(want, "no value") {
			t.Fatalf("%s: the sentence lacks a value: %q", lang, want)
		}
		if got := regressionText(rn); !strings.Contains(got, want) || strings.Contains(got, "throughput -50") {
			t.Errorf("%s: %q, want it to tell %q", lang, got, want)
		}
	}
	if en, de := said.In(i18n.Default().Lang("en")), said.In(i18n.Default().Lang("de")); en == de {
		t.Errorf("the sentence is not worded per language: %q", en)
	}
}
