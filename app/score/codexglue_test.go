package score

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// testdata/codexglue_bleu.json holds CodeXGLUE's code-to-text evaluator's
// own scores (Code-Text/code-to-text/evaluator/evaluator.py of
// microsoft/CodeXGLUE, run with Debian's python3): bleu(refs,
// candidate)[0] on 300 seeded random docstring-like cases prepared as
// computeMaps prepares them (HTML entities, "<skipped>", hyphenated line
// ends, numbers with points, commas and dashes, Unicode words, empty
// hypotheses and references, two references), and bleuFromMaps over the
// evaluator's sample prediction and reference files. lm-evaluation-harness's
// smoothed_bleu_4 gave the same for every single-reference case.
func TestCodeXGLUEBLEUAgainstTheEvaluator(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/codexglue_bleu.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Cases []struct {
			Hyp   string
			Refs  []string
			Score float64
		}
		EvaluatorSample struct {
			Predictions, References []string
			BLEU                    float64
		} `json:"evaluator_sample"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Cases) < 200 {
		t.Fatalf("%d cases, want at least 200", len(v.Cases))
	}
	f, err := ByName("codexglue-bleu")
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, c := range v.Cases {
		if got := f(c.Hyp, c.Refs); math.Abs(got-c.Score) > 1e-12 {
			bad++
			t.Errorf("bleu(%q, %q) = %.15g, want %.15g", c.Refs, c.Hyp, got, c.Score)
		}
	}
	// The sample files: "id\ttext" lines, the run's mean times 100.
	refs := map[string]string{}
	for _, l := range v.EvaluatorSample.References {
		id, text, _ := strings.Cut(l, "\t")
		refs[id] = text
	}
	sum := 0.0
	for _, l := range v.EvaluatorSample.Predictions {
		id, text, _ := strings.Cut(l, "\t")
		sum += f(text, []string{refs[id]})
	}
	if got := 100 * sum / float64(len(v.EvaluatorSample.Predictions)); math.Abs(got-v.EvaluatorSample.BLEU) > 1e-9 {
		t.Errorf("the evaluator's sample files: %.12g, want %.12g", got, v.EvaluatorSample.BLEU)
	}
	t.Logf("%d/%d cases agree to 1e-12; sample files %.6f", len(v.Cases)-bad, len(v.Cases), v.EvaluatorSample.BLEU)
}
