package bench

import (
	"fmt"
	"strings"
	"testing"
)

// Repeats run in alternating blocks across targets, so a drift shifts
// every target alike: A B | B A | A B, and A B C | C B A for three.
func TestCounterbalanceAlternatesBlocks(t *testing.T) {
	plan := func(targets string, repeats int) []PlannedRun {
		var runs []PlannedRun
		for _, m := range targets {
			for rep := range repeats {
				runs = append(runs, PlannedRun{Model: string(m), Repeat: rep})
			}
		}
		return runs
	}
	order := func(runs []PlannedRun) string {
		var b strings.Builder
		for _, r := range runs {
			fmt.Fprintf(&b, "%s%d ", r.Model, r.Repeat)
		}
		return strings.TrimSpace(b.String())
	}
	for _, tc := range []struct {
		targets string
		repeats int
		want    string
	}{
		{"AB", 3, "A0 B0 B1 A1 A2 B2"},
		{"AB", 4, "A0 B0 B1 A1 A2 B2 B3 A3"},
		{"ABC", 2, "A0 B0 C0 C1 B1 A1"},
		{"AB", 1, "A0 B0"},
	} {
		if got := order(counterbalance(plan(tc.targets, tc.repeats), tc.repeats)); got != tc.want {
			t.Errorf("%s × %d: %s, want %s", tc.targets, tc.repeats, got, tc.want)
		}
	}
	// Each target's mean position is the same over each pair of blocks:
	// a linear drift adds the same to every target.
	runs := counterbalance(plan("ABC", 4), 4)
	sum := map[string]int{}
	for i, r := range runs {
		sum[r.Model] += i
	}
	if sum["A"] != sum["B"] || sum["B"] != sum["C"] {
		t.Errorf("positions %v", sum)
	}
}
