package capacity

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ruckus/ruckus/app/conclude"
	"github.com/ruckus/ruckus/app/i18n"
)

// A sized target without a measured SLO-bound rate (a plan not built by
// conclude.PlanCapacity, or a row whose rate was never kept) renders as
// "not measured", in the reader's language, instead of failing the page
// on a nil rate.
func TestPageWithoutASLORate(t *testing.T) {
	price := 2.0
	plan := &conclude.CapacityPlan{Feasible: []conclude.Capacity{
		{Measured: conclude.Measured{RunID: 7, Model: "m/a", Hardware: "h1", PricePerHour: &price}, Replicas: 1, TotalGPUs: 1},
	}}
	for _, lang := range []string{"en", "de"} {
		loc := i18n.Default().Lang(lang)
		ctx := i18n.With(context.Background(), loc)
		var buf bytes.Buffer
		if err := Page(Data{Plan: plan}).Render(ctx, &buf); err != nil {
			t.Fatalf("%s: %v", lang, err)
		}
		row := buf.String()
		if i := strings.Index(row, `data-testid="capacity-run-7"`); i < 0 {
			t.Fatalf("%s: no row for run 7 in %s", lang, row)
		} else {
			row = row[i:]
		}
		if !strings.Contains(row, "<td title=\"\">"+loc.T("capacity.not_measured")+" <small>") {
			t.Errorf("%s: the rate is not said to be unmeasured: %s", lang, row[:min(len(row), 600)])
		}
	}
}
