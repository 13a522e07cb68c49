package conclude

import (
	"math"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/i18n"
	"github.com/ruckus/ruckus/app/store"
)

func TestPayback(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cost, saving float64
		months       *float64
		words        string
	}{
		{20000, 8766, ptr(20000.0 / 8766), "2.3 months ($20000.00 ÷ $8766.00 a month)"},
		{0, 100, ptr(0.0), "at once: no migration cost"},
		{5000, 0, nil, "never: it saves nothing"},
		{5000, -250, nil, "never: it costs $250.00 a month more than today"},
	} {
		m, said := payback(c.cost, c.saving)
		w := English(said)
		if c.cost == 20000 && said.In(i18n.Default().Lang("de")) != "2,3 Monate (20000,00 $ ÷ 8766,00 $ im Monat)" {
			t.Errorf("German payback %q", said.In(i18n.Default().Lang("de")))
		}
		if w != c.words || (m == nil) != (c.months == nil) || (m != nil && math.Abs(*m-*c.months) > 1e-12) {
			t.Errorf("payback(%v, %v) = %v %q, want %v %q", c.cost, c.saving, m, w, c.months, c.words)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// Energy counts on both sides or on neither; a target without a price is
// not weighed; today without a price gives no saving and says why.
func TestPlanROIEnergyOnBothSidesOrNeither(t *testing.T) {
	t.Parallel()
	tr := Traffic{PeakRPS: 10, AverageRPS: 1, InputTokens: 10, OutputTokens: 100}
	costs := Costs{HoursPerMonth: 100, Utilisation: 1, EnergyPricePerKWh: 0.36}
	// 1 req/s × 100 tokens × 3600 s × 100 h = 3.6e7 tokens; at 1 J/token 10 kWh = $3.60.
	plan := CapacityPlan{Feasible: []Capacity{
		{Measured: Measured{RunID: 1, Model: "a", Hardware: "h1"}, Replicas: 2, MonthlyHardware: ptr(200.0), MonthlyEnergy: ptr(3.6)},
		{Measured: Measured{RunID: 2, Model: "b", Hardware: "h2"}, Replicas: 1, MonthlyHardware: ptr(50.0)},
		{Measured: Measured{RunID: 3, Model: "c", Hardware: "h3"}, Replicas: 1}, // no price
	}}
	none := func(Capacity) QualityChange { return QualityChange{Basis: "x"} }
	today := TodayMeasured{Today: Today{Model: "t", Hardware: "h0", Replicas: 3, MigrationCost: 100}, PricePerHour: ptr(1.0),
		JoulesPerToken: ptr(2.0), EnergyRun: 9}
	roi := PlanROI(today, tr, costs, plan, none)
	if *roi.Today.MonthlyHardware != 300 || math.Abs(*roi.Today.MonthlyEnergy-7.2) > 1e-9 || len(roi.Rows) != 2 {
		t.Fatalf("today %+v, rows %d", roi.Today, len(roi.Rows))
	}
	byRun := map[int64]ROIRow{}
	for _, r := range roi.Rows {
		byRun[r.RunID] = r
	}
	// Run 2 saves 250 (energy left out: run 2 has none), run 1 saves
	// 307.2 − 203.6 = 103.6; the bigger saving first.
	if r := byRun[2]; *r.MonthlySaving != 250 || !strings.Contains(r.EnergyLeftOut, "not measured for run 2") || roi.Rows[0].RunID != 2 {
		t.Errorf("run 2: %+v", r)
	}
	if r := byRun[1]; math.Abs(*r.MonthlySaving-103.6) > 1e-9 || r.EnergyLeftOut != "" || math.Abs(*r.PaybackMonths-100/103.6) > 1e-12 {
		t.Errorf("run 1: %+v", r)
	}
	// What the API says is each message's English from the catalogue.
	en := i18n.Default().Lang("en")
	if r := byRun[2]; r.EnergyLeftOut != r.EnergyLeftOutSaid.In(en) || r.EnergyLeftOut != en.T("capacity.said.roi_energy_left_out_run", "Run", int64(2)) {
		t.Errorf("run 2's energy left out: %q", r.EnergyLeftOut)
	}
	if len(roi.Today.Sources) != 2 || len(roi.Today.SourcesSaid) != 2 {
		t.Errorf("today's sources %v", roi.Today.Sources)
	}
	for k, said := range roi.Today.SourcesSaid {
		if got, want := roi.Today.Sources[k], said.In(en); got != want || want == "" {
			t.Errorf("today's %s: %q, want the catalogue's %q", k, got, want)
		}
	}
	today.PricePerHour = nil
	roi = PlanROI(today, tr, costs, plan, none)
	if r := roi.Rows[0]; r.MonthlySaving != nil || !strings.HasPrefix(r.Payback, "unknown: no price per hour for h0") {
		t.Errorf("no price today: %+v", r)
	}
	// The page words the same message: in German too.
	de := i18n.Default().Lang("de")
	if got, want := roi.Rows[0].PaybackSaid.In(de), "unbekannt: kein Preis pro Stunde für h0"; !strings.HasPrefix(got, want) || roi.Rows[0].Payback != roi.Rows[0].PaybackSaid.In(en) {
		t.Errorf("no price today in German %q, want %q…", got, want)
	}
}

// A target is compared with today under the target's latest scorer
// identity when today's run has it, else under one both have; never
// across identities.
func TestScorerInCommon(t *testing.T) {
	t.Parallel()
	q := func(keys ...string) []store.Quality {
		var out []store.Quality
		for _, k := range keys {
			out = append(out, store.Quality{ScorerKey: k, Mean: ptr(0.5)})
		}
		return out
	}
	for _, c := range []struct {
		target, today []store.Quality
		want          string
	}{
		{q("exact", "rougeL"), q("rougeL", "exact"), "rougeL"},
		{q("exact", "bleu"), q("exact"), "exact"},
		{q("bleu"), q("exact"), ""},
		{nil, q("exact"), ""},
	} {
		if got := ScorerInCommon(c.target, c.today); got != c.want {
			t.Errorf("ScorerInCommon(%v, %v) = %q, want %q", c.target, c.today, got, c.want)
		}
	}
	// Under different identities, QualityAgainst does not compare.
	got := QualityAgainst(2, q("bleu"), TodayMeasured{Today: Today{Model: "t"}, QualityRun: 1, Qualities: q("exact")}, "", Evidence{})
	if got.Comparable || got.Difference != nil || !strings.Contains(got.Basis, "not comparable: run 2 was scored with bleu, today's run 1 with exact") {
		t.Errorf("across identities: %+v", got)
	}
	for _, c := range []QualityChange{got,
		QualityAgainst(2, q("bleu"), TodayMeasured{Today: Today{Model: "t"}, QualityRun: 2, Qualities: q("bleu")}, "bleu", Evidence{}),
		QualityAgainst(2, q("bleu"), TodayMeasured{Today: Today{Model: "t"}}, "", Evidence{})} {
		if want := c.BasisSaid.In(i18n.Default().Lang("en")); c.Basis != want || want == "" {
			t.Errorf("basis %q, want the catalogue's %q", c.Basis, want)
		}
	}
}
