package conclude

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
)

// The verdict's lines, its one-line summary and the comparison's claims
// are the engine's sentences (docs/verdict.md#what-the-verdict-says): a
// page only words them, in English and in German from the catalogue.
func TestVerdictIsWordedFromTheEngine(t *testing.T) {
	en, de := i18n.Default().Lang("en"), i18n.Default().Lang("de")
	a, b := target(1, "m/a", 0.9, 0.85, 0.95, 200), target(2, "m/b", 0.5, 0.45, 0.55, 100)
	a.CostPer1M, b.CostPer1M = f(0.2), f(0.6)
	j := Weighed{Cands: []Candidate{a, b}, Scoring: store.Scoring{Scorer: "exact"}, ScorerKey: "exact",
		Left: []store.Run{{ID: 9, ModelName: "m/x", Runtime: "sim", HardwareProfile: "cpu", State: "failed"}}}
	v := j.Verdict()
	i := slices.IndexFunc(v.Lines, func(l VerdictLine) bool { return l.Criterion == Speed })
	if i < 0 || len(v.Lines) != 4 {
		t.Fatalf("lines %+v", v.Lines)
	}
	speed := v.Lines[i]
	for _, tc := range []struct {
		s      Said
		en, de string
	}{
		{speed.Title, "Fastest: output tokens/s", "Am schnellsten: Ausgabetokens/s"},
		{speed.Winner, "m/a", "m/a"},
		{speed.Value, "200.0 tokens/s", "200,0 tokens/s"},
		{speed.Margin, "100 % faster than m/b (100.0 tokens/s), +100.0 tokens/s", "100 % schneller als m/b (100,0 tokens/s), +100,0 tokens/s"},
		{speed.Significance, "significant", "signifikant"},
		{v.Lines[slices.IndexFunc(v.Lines, func(l VerdictLine) bool { return l.Criterion == Cost })].Margin,
			"67 % cheaper than m/b ($0.600 per 1M output tokens), −$0.400 per 1M output tokens",
			"67 % günstiger als m/b ($0,600 pro 1 Mio. Ausgabetokens), −$0,400 pro 1 Mio. Ausgabetokens"},
		{v.Notes[0], "Run 9 (m/x on sim/cpu) failed, so the verdict leaves it out.", "Lauf 9 (m/x auf sim/cpu) ist gescheitert, daher lässt das Urteil ihn aus."},
		{j.Summary(), "Best quality: m/a (80 % higher) · Fastest: m/a (100 % faster) · Cheapest: m/a (67 % cheaper)",
			"Beste Qualität: m/a (80 % höher) · Am schnellsten: m/a (100 % schneller) · Am günstigsten: m/a (67 % günstiger)"},
		{Compare(a, b, Speed, Evidence{}).ClaimSaid(), "output tokens/s: +100.0 %, significant (welch-t, p = 2.16e-42)",
			"Ausgabe-Tokens/s: +100,0 %, signifikant (welch-t, p = 2,16e-42)"},
	} {
		if got := tc.s.In(en); got != tc.en {
			t.Errorf("%s: English %q, want %q", tc.s.Code, got, tc.en)
		}
		if got := tc.s.In(de); got != tc.de {
			t.Errorf("%s: German %q, want %q", tc.s.Code, got, tc.de)
		}
	}
	// Three level runs: the summary names them as tied, "≈" between each.
	c := target(3, "m/c", 0.9, 0.85, 0.95, 200)
	tie := Weighed{Cands: []Candidate{a, c, target(4, "m/d", 0.9, 0.85, 0.95, 200)}, Scoring: store.Scoring{Scorer: "exact"}}
	if got := tie.Summary().In(en); !strings.HasPrefix(got, "Best quality: m/a ≈ m/c ≈ m/d (tie) · ") {
		t.Errorf("tied summary %q", got)
	}
	// Against a cost of zero there is no relative margin: the claim gives
	// the absolute difference.
	z := b
	z.CostPer1M = f(0)
	if got := Compare(a, z, Cost, Evidence{}).ClaimSaid().In(de); !strings.HasPrefix(got, "Kosten pro 1 Mio.: Δ +0,2, ") {
		t.Errorf("claim against zero %q", got)
	}
	if got := (Weighed{}).Verdict().Empty.In(en); got != "No run succeeded, so there is nothing to compare. Retry a run from the table below." {
		t.Errorf("empty %q", got)
	}
}

// A rate run_stats keeps is read back with the Student t interval it was
// computed with: the store returns the columns, the engine the interval.
func TestKeptEstimate(t *testing.T) {
	se, df := 2.0, 9.0
	e := KeptEstimate(&store.KeptRate{Mean: 100, SE: &se, DF: &df}, 10)
	// t(0.975, 9) = 2.262157.
	if !e.OK() || e.N != 10 || math.Abs(e.Hi-100-2.262157*2) > 1e-5 || math.Abs(100-e.Lo-2.262157*2) > 1e-5 {
		t.Errorf("kept rate %+v", e)
	}
	if e := KeptEstimate(&store.KeptRate{Mean: 100}, 1); e.OK() || e.Mean != 100 || e.Lo != 100 || e.Hi != 100 {
		t.Errorf("a rate without batches %+v, want the mean alone", e)
	}
	if e := KeptEstimate(nil, 10); e.OK() || e.Mean != 0 {
		t.Errorf("no rate %+v", e)
	}
}
