package conclude

import (
	"testing"

	"github.com/ruckus/ruckus/app/store"
)

// Families are planned from the runs, newest first: a family with one
// variant is left out; the scorer identity is the one most variants share;
// each variant is its newest run under it (an older run when the newest
// was scored otherwise); the root model at its fewest shots is the
// baseline; a variant scored only otherwise is set apart.
func TestPlanVariants(t *testing.T) {
	t.Parallel()
	q := func(run int64, key string, mean float64) store.Quality {
		return store.Quality{RunID: run, ScorerKey: key, Mean: &mean}
	}
	runs := []store.VariantRun{ // newest first
		{RunID: 9, ModelID: 2, Model: "b/ft", BaseModel: "b/base", FamilyID: 1, Family: "b/base"},
		{RunID: 8, ModelID: 1, Model: "b/base", FamilyID: 1, Family: "b/base", Shots: 5},
		{RunID: 7, ModelID: 3, Model: "b/lora", BaseModel: "b/base", Adapter: true, FamilyID: 1, Family: "b/base"},
		{RunID: 6, ModelID: 2, Model: "b/ft", BaseModel: "b/base", FamilyID: 1, Family: "b/base"},
		{RunID: 5, ModelID: 1, Model: "b/base", FamilyID: 1, Family: "b/base"},
		{RunID: 4, ModelID: 4, Model: "c/solo", FamilyID: 4, Family: "c/solo"},
	}
	qs := map[int64][]store.Quality{
		9: {q(9, "bleu", 0.3)}, 8: {q(8, "exact", 0.6)}, 7: {q(7, "contains", 0.2)}, 6: {q(6, "exact", 0.7)}, 5: {q(5, "exact", 0.5)},
		4: {q(4, "exact", 0.4)},
	}
	fams := PlanVariants(runs, qs)
	if len(fams) != 1 {
		t.Fatalf("%d families, want the one with variants", len(fams))
	}
	f := fams[0]
	if f.Family != "b/base" || f.ScorerKey != "exact" || f.Baseline.RunID != 5 || f.Baseline.Kind != KindBase || f.Baseline.Shots != 0 {
		t.Fatalf("family %+v", f)
	}
	if len(f.Rows) != 2 || f.Rows[0].RunID != 8 || f.Rows[0].Shots != 5 || f.Rows[1].RunID != 6 || f.Rows[1].Kind != KindFineTune {
		t.Fatalf("rows %+v", f.Rows)
	}
	if len(f.NotComparable) != 1 || f.NotComparable[0].RunID != 7 || f.NotComparable[0].Kind != KindAdapter ||
		f.NotComparable[0].Reason != "not comparable: scored with contains, not exact" {
		t.Fatalf("not comparable %+v", f.NotComparable)
	}
}
