package conclude

import (
	"cmp"
	"slices"

	"github.com/ruckus/ruckus/app/stats"
	"github.com/ruckus/ruckus/app/store"
)

// The kinds of a model family's variants (the registry's base model and
// adapter flag).
const (
	KindBase     = "base"
	KindFineTune = "fine-tune"
	KindAdapter  = "adapter"
)

// VariantRow is one variant of a model family on a dataset — a model at
// a number of shots — by its newest run scored under the family's scorer
// identity, and how it differs from the family's baseline.
type VariantRow struct {
	RunID     int64    `json:"run_id"`
	Model     string   `json:"model"`
	Kind      string   `json:"kind"`
	BaseModel string   `json:"base_model,omitempty"`
	Shots     int      `json:"shots"`
	Runtime   string   `json:"runtime"`
	Hardware  string   `json:"hardware"`
	Simulated bool     `json:"simulated,omitempty"`
	Quality   *float64 `json:"quality"`
	QualityLo *float64 `json:"quality_lo"`
	QualityHi *float64 `json:"quality_hi"`
	// ScorerKey is the identity the row's quality was kept under: the
	// family's scorer with, for a k-shot run, its few-shot part.
	ScorerKey string `json:"scorer_key,omitempty"`
	// Delta is the variant against the baseline (Compare on quality: the
	// kept paired comparison over the items both scored, else a z-test
	// from the intervals); nil for the baseline itself.
	Delta *Margin `json:"delta,omitempty"`
	// Categories are the per-category differences from the baseline,
	// paired item by item within each category, significant after
	// Benjamini–Hochberg over the row's categories.
	Categories []CategoryDelta `json:"categories,omitempty"`
	// Reason says why a variant is not compared (no quality under the
	// family's scorer identity): ReasonSaid's English, for the API.
	Reason     string `json:"reason,omitempty"`
	ReasonSaid Said   `json:"-"`
}

// CategoryDelta is a variant's difference from the baseline on one
// category's items.
type CategoryDelta struct {
	Category string      `json:"category"`
	Base     float64     `json:"baseline_mean"`
	Variant  float64     `json:"variant_mean"`
	Diff     QualityDiff `json:"difference"`
	// Significant: the paired test's p passes Benjamini–Hochberg at 5 %
	// among the row's categories.
	Significant bool `json:"significant"`
}

// VariantFamily is a base model with its fine-tuned and adapter variants
// and their runs at different shots, compared under one scorer identity.
type VariantFamily struct {
	Family    string       `json:"family"`
	ScorerKey string       `json:"scorer"`
	Baseline  VariantRow   `json:"baseline"`
	Rows      []VariantRow `json:"variants"`
	// NotComparable are variants scored only under other identities.
	NotComparable []VariantRow `json:"not_comparable"`
	// Categories are the dataset's categories the rows have scores in.
	Categories []string `json:"categories"`
}

// variantKey is what tells variants apart: the model and the shots.
type variantKey struct {
	model int64
	shots int
}

// kindOf is a run's model's kind in its family.
func kindOf(r store.VariantRun) string {
	switch {
	case r.BaseModel == "":
		return KindBase
	case r.Adapter:
		return KindAdapter
	}
	return KindFineTune
}

// PlanVariants groups a dataset's scored runs (newest first) into model
// families with at least two variants, and picks for each the scorer
// identity most of its variants were scored under (ties: the first by
// name), each variant's newest run under it, and the baseline: the
// family's root model at its fewest shots (else the variant with the
// fewest). Variants scored only otherwise are set apart, with why.
// Compare then fills in the differences.
func PlanVariants(runs []store.VariantRun, qualities map[int64][]store.Quality) []VariantFamily {
	byFamily := map[int64][]store.VariantRun{}
	var order []int64
	for _, r := range runs {
		if _, ok := byFamily[r.FamilyID]; !ok {
			order = append(order, r.FamilyID)
		}
		byFamily[r.FamilyID] = append(byFamily[r.FamilyID], r)
	}
	var out []VariantFamily
	for _, id := range order {
		if f, ok := planFamily(byFamily[id], qualities); ok {
			out = append(out, f)
		}
	}
	return out
}

// planFamily plans one family's comparison from its runs, newest first;
// false when it has fewer than two variants scored under one identity.
func planFamily(fr []store.VariantRun, qualities map[int64][]store.Quality) (VariantFamily, bool) {
	variants, perKey := scoredVariants(fr, qualities)
	if variants < 2 || len(perKey) == 0 {
		return VariantFamily{}, false
	}
	keys := make([]string, 0, len(perKey))
	for k := range perKey {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(perKey[b]), len(perKey[a])), cmp.Compare(a, b))
	})
	f := VariantFamily{Family: fr[0].Family, ScorerKey: keys[0], Rows: []VariantRow{}, NotComparable: []VariantRow{}, Categories: []string{}}
	rows := f.variantRows(fr, qualities, perKey[f.ScorerKey])
	if len(rows) < 2 {
		return VariantFamily{}, false
	}
	// The root model first (by shots), then fine-tunes, then adapters.
	rank := map[string]int{KindBase: 0, KindFineTune: 1, KindAdapter: 2}
	slices.SortStableFunc(rows, func(a, b VariantRow) int {
		return cmp.Or(cmp.Compare(rank[a.Kind], rank[b.Kind]), cmp.Compare(a.Model, b.Model), cmp.Compare(a.Shots, b.Shots))
	})
	base := 0
	for i, r := range rows {
		if r.Model == f.Family {
			base = i
			break
		}
	}
	f.Baseline = rows[base]
	f.Rows = append(rows[:base:base], rows[base+1:]...)
	return f, true
}

// scoredVariants counts the family's variants and finds, for each base
// scorer identity, the variants with a quality under it.
func scoredVariants(fr []store.VariantRun, qualities map[int64][]store.Quality) (int, map[string]map[variantKey]bool) {
	variants := map[variantKey]bool{}
	perKey := map[string]map[variantKey]bool{}
	for _, r := range fr {
		k := variantKey{r.ModelID, r.Shots}
		variants[k] = true
		for _, q := range qualities[r.RunID] {
			if q.Mean == nil {
				continue
			}
			bk := store.BaseScorerKey(q.ScorerKey)
			if perKey[bk] == nil {
				perKey[bk] = map[variantKey]bool{}
			}
			perKey[bk][k] = true
		}
	}
	return len(variants), perKey
}

// variantRows is a row for each variant's newest run with a quality under
// f's scorer identity (scored holds the variants that have one); a
// variant with none goes to f.NotComparable, its newest run with the
// identities it was scored under.
func (f *VariantFamily) variantRows(fr []store.VariantRun, qualities map[int64][]store.Quality, scored map[variantKey]bool) []VariantRow {
	seen := map[variantKey]bool{}
	var rows []VariantRow
	for _, r := range fr { // newest first: the first run of a variant under the key is its newest
		k := variantKey{r.ModelID, r.Shots}
		if seen[k] {
			continue
		}
		q, ok := qualityUnder(qualities[r.RunID], f.ScorerKey)
		if !ok && scored[k] {
			continue // an older run of this variant has it
		}
		seen[k] = true
		row := VariantRow{RunID: r.RunID, Model: r.Model, Kind: kindOf(r), BaseModel: r.BaseModel, Shots: r.Shots,
			Runtime: r.Runtime, Hardware: r.Hardware, Simulated: r.Mode == "sim"}
		if !ok {
			row.ReasonSaid = say("variants.not_comparable_scorer", "Keys", keysOf(qualities[r.RunID]), "Key", f.ScorerKey)
			row.Reason = English(row.ReasonSaid)
			f.NotComparable = append(f.NotComparable, row)
			continue
		}
		row.Quality, row.QualityLo, row.QualityHi, row.ScorerKey = q.Mean, q.Lo, q.Hi, q.ScorerKey
		rows = append(rows, row)
	}
	return rows
}

// qualityUnder is the quality among qs under base scorer identity key
// (store.BaseScorerKey: a k-shot run's quality carries its k), with a
// mean.
func qualityUnder(qs []store.Quality, key string) (store.Quality, bool) {
	for _, q := range qs {
		if store.BaseScorerKey(q.ScorerKey) == key && q.Mean != nil {
			return q, true
		}
	}
	return store.Quality{}, false
}

// Compare fills in each variant's difference from the baseline: overall
// by Compare's rule for quality (ev holds the kept paired comparisons
// under the family's scorer identity), and per category by the paired
// test over the category's items (items: the runs' item scores under the
// identity; cats: the items' categories), Benjamini–Hochberg over the
// row's categories deciding which are significant.
func (f *VariantFamily) Compare(ev Evidence, items map[int64]store.ItemScores, cats map[int32]string) {
	base := Candidate{RunID: f.Baseline.RunID, ScorerKey: f.ScorerKey, Quality: f.Baseline.Quality,
		QualityLo: f.Baseline.QualityLo, QualityHi: f.Baseline.QualityHi}
	present := map[string]bool{}
	baseByCat := splitByCategory(items[f.Baseline.RunID], cats)
	for i := range f.Rows {
		r := &f.Rows[i]
		c := Candidate{RunID: r.RunID, ScorerKey: f.ScorerKey, Quality: r.Quality, QualityLo: r.QualityLo, QualityHi: r.QualityHi}
		// The kept paired comparisons are between runs under one exact
		// identity; a run at another k than the baseline's is paired here,
		// item by item, from the runs' kept item scores.
		rev := ev
		if r.ScorerKey != f.Baseline.ScorerKey {
			rev = Evidence{}
			if d, ok := PairRuns(r.RunID, f.Baseline.RunID, allScores(items[r.RunID]), allScores(items[f.Baseline.RunID])); ok {
				rev.Paired = []QualityDiff{d}
			}
		}
		m := Compare(c, base, Quality, rev)
		r.Delta = &m
		rowByCat := splitByCategory(items[r.RunID], cats)
		var ps []float64
		for _, cat := range sortedKeys(rowByCat) {
			d, ok := PairRuns(r.RunID, f.Baseline.RunID, rowByCat[cat], baseByCat[cat])
			if !ok {
				continue
			}
			present[cat] = true
			r.Categories = append(r.Categories, CategoryDelta{Category: cat, Diff: d,
				Variant: meanOfPaired(rowByCat[cat], baseByCat[cat]), Base: meanOfPaired(baseByCat[cat], rowByCat[cat])})
			ps = append(ps, d.P)
		}
		for j, sig := range stats.BenjaminiHochberg(ps, stats.Alpha) {
			r.Categories[j].Significant = sig
		}
	}
	f.Categories = sortedKeys(present)
}

// allScores is a run's item scores, in index order.
func allScores(s store.ItemScores) []ItemScore {
	out := make([]ItemScore, 0, len(s.Idx))
	for i, idx := range s.Idx {
		if i < len(s.Scores) {
			out = append(out, ItemScore{Idx: int(idx), Score: s.Scores[i]})
		}
	}
	return out
}

// splitByCategory is a run's item scores by their items' category (items
// without one left out), each in index order.
func splitByCategory(s store.ItemScores, cats map[int32]string) map[string][]ItemScore {
	out := map[string][]ItemScore{}
	for i, idx := range s.Idx {
		if c, ok := cats[idx]; ok && i < len(s.Scores) {
			out[c] = append(out[c], ItemScore{Idx: int(idx), Score: s.Scores[i]})
		}
	}
	return out
}

// meanOfPaired is the mean of a's scores on the items b scored too.
func meanOfPaired(a, b []ItemScore) float64 {
	in := make(map[int]bool, len(b))
	for _, x := range b {
		in[x.Idx] = true
	}
	sum, n := 0.0, 0
	for _, x := range a {
		if in[x.Idx] {
			sum += x.Score
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
