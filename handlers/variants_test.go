package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/ruckus/ruckus/app/store"
)

// variantsWorld is a dataset of 40 items in two categories (math: 0–19,
// history: 20–39) benchmarked with a base model, m/small, and its
// variants, each run scored item by item:
//   - base: m/small, right on the even items (20 of 40);
//   - ft: a fine-tune of it, right on every math item as well (30);
//   - lora: a LoRA adapter on it, right where the base is (20);
//   - fewshot: m/small with 5-shot prompts (the run's fewshot_k),
//     right on the even items and items 1, 3, 5 (23);
//   - other: another fine-tune, scored only with contains.
type variantsWorld struct {
	e                              *env
	tok                            string
	datasetID                      int64
	base, ft, lora, fewshot, other int64
}

func newVariantsWorld(t *testing.T) variantsWorld {
	t.Helper()
	e := newEnv(t)
	ctx := context.Background()
	w := variantsWorld{e: e, tok: e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))}
	var ds strings.Builder
	for i := range 40 {
		cat := "math"
		if i >= 20 {
			cat = "history"
		}
		fmt.Fprintf(&ds, "{\"id\":\"q%02d\",\"prompt\":\"question %d\",\"reference\":\"%d\",\"category\":%q}\n", i, i, i, cat)
	}
	_, w.base = runOnDataset(t, e, w.tok, []byte(ds.String()), 40, func(i int) string { return "x" })
	finishRun(t, e, w.base)
	w.datasetID = datasetOfRun(t, e, w.base)
	small, err := e.store.ModelByName(ctx, "m/small")
	if err != nil {
		t.Fatal(err)
	}
	variant := func(name string, adapter bool) int64 {
		id, err := e.store.CreateModel(ctx, store.ModelFields{Name: name, ParamsB: 0.5, Quantization: "bf16", ContextLength: 4096,
			BaseModelID: &small.ID, Adapter: adapter})
		if err != nil {
			t.Fatal(err)
		}
		run := finishedRun(t, e, w.tok, w.datasetID, 40, func(int) int { return 6 })
		if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET model_id = $2 WHERE id = $1`, run, id); err != nil {
			t.Fatal(err)
		}
		return run
	}
	w.ft = variant("m/small-ft", false)
	w.lora = variant("m/small-lora", true)
	w.other = variant("m/small-other", false)
	w.fewshot = finishedRun(t, e, w.tok, w.datasetID, 40, func(int) int { return 6 })
	// The run's few-shot setting, as the benchmark service records a manifest's
	// fewshot: {k: 5, seed: 1}: its quality is kept as "exact 5-shot
	// seed=1", and the view still sets it beside the 0-shot base.
	if _, err := e.store.Pool().Exec(ctx, `UPDATE runs SET fewshot_k = 5, fewshot_seed = 1 WHERE id = $1`, w.fewshot); err != nil {
		t.Fatal(err)
	}
	even := func(i int) float64 { return float64(1 - i%2) }
	scoreItems(t, e, w.base, "exact", even)
	scoreItems(t, e, w.ft, "exact", func(i int) float64 {
		if i < 20 {
			return 1
		}
		return even(i)
	})
	scoreItems(t, e, w.lora, "exact", even)
	scoreItems(t, e, w.fewshot, "exact", func(i int) float64 {
		if i == 1 || i == 3 || i == 5 {
			return 1
		}
		return even(i)
	})
	scoreItems(t, e, w.other, "contains", even)
	return w
}

// The variants page puts the base model beside its fine-tune, its adapter
// and its 5-shot run under the scorer identity they share: the fine-tune
// is significantly better overall (+0.250, McNemar on 10 discordant
// items) and in math (+0.500, significant after Benjamini–Hochberg), not
// in history; the adapter's and the 5-shot run's differences are not
// established, the 5-shot run's with the smallest difference it could
// have detected; a variant scored only with another scorer is set apart.
func TestVariantsPage(t *testing.T) {
	t.Parallel()
	w := newVariantsWorld(t)
	c := w.e.client()
	c.signIn("ada@example.com", "correct horse")
	if got := c.get(fmt.Sprintf("/datasets/%d", w.datasetID)); !strings.Contains(got.text(`[data-testid="variants-link"]`), "variants") {
		t.Fatalf("no variants link on the dataset page")
	}
	page := c.get(fmt.Sprintf("/datasets/%d/variants", w.datasetID))
	if page.status != 200 || page.doc.Find(`[data-testid="variants-family-m/small"]`).Length() != 1 {
		t.Fatalf("page: %d %s", page.status, page.text("main"))
	}
	row := func(run int64, cell string) string {
		return page.text(fmt.Sprintf(`[data-testid="variant-run-%d"] [data-testid="%s"]`, run, cell))
	}
	if got := row(w.base, "variant-kind"); got != "base model" || !strings.Contains(page.text(fmt.Sprintf(`[data-testid="variant-run-%d"]`, w.base)), "baseline") {
		t.Errorf("baseline row: %q", page.text(fmt.Sprintf(`[data-testid="variant-run-%d"]`, w.base)))
	}
	if got := row(w.ft, "variant-delta"); !strings.HasPrefix(got, "+0.250 [") || !strings.Contains(got, ", significant (") {
		t.Errorf("fine-tune's delta: %q", got)
	}
	if got := row(w.ft, "variant-test"); !strings.Contains(got, "paired comparison on 40 items (McNemar") {
		t.Errorf("fine-tune's test: %q", got)
	}
	if got := row(w.ft, "variant-kind"); got != "fine-tune of m/small" {
		t.Errorf("fine-tune's kind: %q", got)
	}
	if got := row(w.lora, "variant-kind"); got != "LoRA adapter on m/small" || !strings.HasPrefix(row(w.lora, "variant-delta"), "+0.000") ||
		!strings.Contains(row(w.lora, "variant-delta"), "not established (") {
		t.Errorf("adapter: %q, %q", got, row(w.lora, "variant-delta"))
	}
	if row(w.fewshot, "variant-shots") != "5" || !strings.HasPrefix(row(w.fewshot, "variant-delta"), "+0.075") ||
		!strings.Contains(row(w.fewshot, "variant-delta"), "not established (") ||
		!strings.Contains(row(w.fewshot, "variant-delta"), "the smallest difference it could detect is") {
		t.Errorf("5-shot: shots %q, delta %q", row(w.fewshot, "variant-shots"), row(w.fewshot, "variant-delta"))
	}
	// Per category: the columns are the 5-shot run (the base model's),
	// the fine-tune and the adapter, in that order.
	cells := func(cat string) []string {
		var out []string
		page.doc.Find(fmt.Sprintf(`[data-testid="variants-category-%s"] td`, cat)).Each(func(_ int, s *goquery.Selection) {
			out = append(out, strings.TrimSpace(s.Text()))
		})
		return out
	}
	if got := cells("math"); len(got) != 3 || got[0] != "+0.150" || got[1] != "+0.500 *" || got[2] != "+0.000" {
		t.Errorf("math: %q", got)
	}
	if got := cells("history"); len(got) != 3 || got[0] != "+0.000" || got[1] != "+0.000" || got[2] != "+0.000" {
		t.Errorf("history: %q", got)
	}
	if got := page.text(`[data-testid="variants-not-comparable"]`); !strings.Contains(got, "m/small-other, 0-shot") ||
		!strings.Contains(got, "not comparable: scored with contains, not exact") {
		t.Errorf("not comparable: %q", got)
	}
	// Another user sees none of ada's private runs.
	w.e.createUser("bob@example.com", "correct horse", store.RoleUser)
	bob := w.e.client()
	bob.signIn("bob@example.com", "correct horse")
	if got := bob.get(fmt.Sprintf("/datasets/%d/variants", w.datasetID)); got.status != 404 {
		t.Errorf("bob: %d", got.status)
	}
}
