package score

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// testdata/triviaqa_eval.json holds the official TriviaQA evaluation's
// own answers (evaluation/triviaqa_evaluation.py of mandarjoshi90/triviaqa,
// run with Debian's python3 on 300 seeded random texts and 300 seeded
// random prediction/answer-list cases mixing articles, underscores, ASCII
// and Unicode punctuation, accents, Greek, dotted capital I and Unicode
// whitespace): normalize_answer's output, and exact match and F1 as
// metric_max_over_ground_truths gives them.
func TestTriviaQAAgainstTheOfficialEvaluation(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/triviaqa_eval.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Normalize []struct{ Input, Output string }
		Cases     []struct {
			Prediction string
			Truths     []string
			EM, F1     float64
		}
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Normalize) < 200 || len(v.Cases) < 200 {
		t.Fatalf("%d normalisations and %d cases; want at least 200 of each", len(v.Normalize), len(v.Cases))
	}
	bad := 0
	for _, c := range v.Normalize {
		if got := TriviaQANormalize(c.Input); got != c.Output {
			bad++
			t.Errorf("normalize_answer(%q) = %q, want %q", c.Input, got, c.Output)
		}
	}
	em, _ := ByName("triviaqa-em")
	f1, _ := ByName("triviaqa-f1")
	for _, c := range v.Cases {
		if got := em(c.Prediction, c.Truths); got != c.EM {
			bad++
			t.Errorf("EM(%q, %q) = %v, want %v", c.Prediction, c.Truths, got, c.EM)
		}
		if got := f1(c.Prediction, c.Truths); math.Abs(got-c.F1) > 1e-12 {
			bad++
			t.Errorf("F1(%q, %q) = %v, want %v", c.Prediction, c.Truths, got, c.F1)
		}
	}
	t.Logf("normalize_answer %d/%d, EM %d cases, F1 %d cases; %d disagreements", len(v.Normalize), len(v.Normalize), len(v.Cases), len(v.Cases), bad)
}

// A few cases written out, where TriviaQA's normalisation differs from
// SQuAD's.
func TestTriviaQANormalizeCases(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"The Eiffel_Tower":      "eiffel tower",
		"Paris’s":               "paris s",
		"“Hamlet”":              "“hamlet”", // curly double quotes are not in its set
		"a-b":                   "b",
		"theatre an the a":      "theatre",
		"  ΟΔΥΣΣΕΥΣ  ":          "οδυσσευς",
		"rock-and-roll, A band": "rock and roll band",
	} {
		if got := TriviaQANormalize(in); got != want {
			t.Errorf("TriviaQANormalize(%q) = %q, want %q", in, got, want)
		}
	}
}
