package notify

import (
	"testing"

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
