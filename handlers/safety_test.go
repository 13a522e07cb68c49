package handlers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/ruckus/ruckus/app/dataset/starter"
	"github.com/ruckus/ruckus/app/score"
	"github.com/ruckus/ruckus/app/store"
)

// The starter safety set scored by refusal: the run's page gives its
// refusal rate, by category (harmful requests refused, benign ones
// answered), and says how a refusal is recognised. A quality graded by an
// LLM judge says it is judge-based and names the judge model and rubric.
func TestSafetyRefusalRateAndJudgeBasedScores(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	tok := e.token(e.createUser("ada@example.com", "correct horse", store.RoleUser))
	safety, err := starter.Open(starter.Dataset{File: "safety.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	// Lines alternate harmful, benign: refuse the first, answer the second.
	_, runID := runOnDataset(t, e, tok, safety, 24, func(i int) string {
		if i%2 == 0 {
			return "I'm sorry, but I can't help with that."
		}
		return "Here is what you can do safely: ..."
	})
	finishRun(t, e, runID)
	if err := (&score.Service{Store: e.store}).ScoreRun(ctx, runID, "refusal"); err != nil {
		t.Fatal(err)
	}
	c := e.client()
	c.signIn("ada@example.com", "correct horse")
	page := c.get(fmt.Sprintf("/runs/%d", runID))
	// 24 items, 12 refusals (items 9 and 19, benign, failed: no refusal).
	if got := page.text(`[data-testid="run-quality"]`); !strings.HasPrefix(got, "Refusal rate (refusal): 0.500, 95 % CI [0.292, 0.708] over 24 scored items") ||
		!strings.Contains(got, "refusal rate: the share of answers that refuse (XSTest's string match)") {
		t.Fatalf("refusal rate line: %q", got)
	}
	cats := map[string]string{}
	page.doc.Find(`[data-testid="category-row"]`).Each(func(_ int, r *goquery.Selection) {
		cats[strings.TrimSpace(r.Find(`[data-testid="category-name"]`).Text())] = r.Find(`[data-testid="category-mean"]`).Text()
	})
	if cats["harmful"] != "1.000" || cats["benign"] != "0.000" || !strings.HasPrefix(page.text(`[data-testid="category-scores"] summary`), "Refusal rate by category") {
		t.Fatalf("refusal rate by category: %v", cats)
	}
	if !strings.Contains(page.text(`[data-testid="run-scorer-options"]`), "XSTest's refusal phrases") {
		t.Errorf("scorer note: %q", page.text(`[data-testid="run-scorer-options"]`))
	}
	// The judge form offers the creativity and safety rubrics.
	var rubrics []string
	page.doc.Find(`[data-testid="judge-form"] select[name="rubric"] option`).Each(func(_ int, s *goquery.Selection) {
		rubrics = append(rubrics, s.AttrOr("value", ""))
	})
	for _, want := range []string{"creativity-originality", "creativity-coherence", "creativity-style", "safety-harmful-compliance", "safety-refusal-appropriateness"} {
		if !slices.Contains(rubrics, want) {
			t.Errorf("the judge form offers %q, not %s", rubrics, want)
		}
	}

	// A judging with the safety rubric: judge-based, the judge named.
	graded := 0.9
	judge := store.JudgeIdentity{Model: "m/judge", Mode: "single", Rubric: "safety-refusal-appropriateness", Template: "t", ScaleMin: 1, ScaleMax: 10}
	if err := e.store.SaveScores(ctx, runID, nil, nil, nil, store.RunQuality{Scorer: "judge", Scored: 24, Mean: &graded, Low: &graded, High: &graded, Judge: &judge}); err != nil {
		t.Fatal(err)
	}
	page = c.get(fmt.Sprintf("/runs/%d", runID))
	want := "judge-based: single graded by m/judge with the safety-refusal-appropriateness rubric, scale 1-10"
	if got := page.text(`[data-testid="run-quality-how"]`); !strings.Contains(got, want) {
		t.Fatalf("judge-based line %q, want %q", got, want)
	}
	var under []string
	page.doc.Find(`[data-testid="run-quality-under"]`).Each(func(_ int, s *goquery.Selection) { under = append(under, s.Text()) })
	if len(under) != 2 || !strings.Contains(strings.Join(under, "|"), want) || !strings.Contains(strings.Join(under, "|"), "refusal rate") {
		t.Fatalf("qualities under each scorer: %q", under)
	}
}
