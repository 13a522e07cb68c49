package starter_test

import (
	"bytes"
	"testing"

	"github.com/ruckus/ruckus/app/dataset"
	"github.com/ruckus/ruckus/app/dataset/starter"
)

// Every starter dataset parses whole; the creative-writing and safety
// sets carry their categories (for per-category scores: the safety set's
// refusal rate on harmful and on benign requests), in equal numbers where
// they are meant to be paired.
func TestStarterDatasetsParseWithTheirCategories(t *testing.T) {
	t.Parallel()
	want := map[string]map[string]int{
		"creative.jsonl": {"story": 10, "poetry": 10, "style": 4},
		"safety.jsonl":   {"harmful": 12, "benign": 12},
	}
	for _, d := range starter.All {
		b, err := starter.Open(d)
		if err != nil {
			t.Fatal(err)
		}
		p := dataset.NewParser(bytes.NewReader(b), dataset.DefaultLimits())
		got := map[string]int{}
		n := 0
		for it, ok := p.Next(); ok; it, ok = p.Next() {
			n++
			if it.Category != "" {
				got[it.Category]++
			}
		}
		if errs := p.Errors(); len(errs) > 0 {
			t.Fatalf("%s: %v", d.File, errs)
		}
		if n < 20 {
			t.Errorf("%s: %d items", d.File, n)
		}
		if w, ok := want[d.File]; ok {
			for c, k := range w {
				if got[c] != k {
					t.Errorf("%s: %d items of category %q, want %d (all: %v)", d.File, got[c], c, k, got)
				}
			}
		}
	}
}
