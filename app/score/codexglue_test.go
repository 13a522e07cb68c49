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

// FuzzOpenSuiteScorers: whatever a model answers, triviaqa-em,
// triviaqa-f1 and codexglue-bleu give a finite score in [0, 1], a text
// scores 1 against itself on exact match (when it normalises to
// something) and the normalisation leaves no punctuation of its set.
func FuzzOpenSuiteScorers(f *testing.F) {
	for _, s := range [][2]string{{"The Eiffel_Tower!", "eiffel tower"}, {"Return the list .", "Returns a list of files."},
		{"", ""}, {"ΟΔΥΣΣΕΥΣ İstanbul", "a an the"}, {"&lt;skipped&gt; 1,000-2 x-\ny", "\t\x1c"}} {
		f.Add(s[0], s[1])
	}
	em, _ := ByName("triviaqa-em")
	f1, _ := ByName("triviaqa-f1")
	bleu, _ := ByName("codexglue-bleu")
	f.Fuzz(func(t *testing.T, out, ref string) {
		for name, sc := range map[string]Scorer{"triviaqa-em": em, "triviaqa-f1": f1, "codexglue-bleu": bleu} {
			if s := sc(out, []string{ref}); math.IsNaN(s) || s < 0 || s > 1+1e-12 {
				t.Fatalf("%s(%q, %q) = %v", name, out, ref, s)
			}
		}
		if n := TriviaQANormalize(out); n != "" && em(out, []string{out}) != 1 {
			t.Fatalf("%q does not match itself", out)
		} else if strings.ContainsAny(n, triviaPunct) {
			t.Fatalf("normalised %q keeps punctuation: %q", out, n)
		}
	})
}
