package score

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestNormalizeAndF1(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"The  Eiffel Tower!", "eiffel tower"},
		{"an apple, a day", "apple day"},
		{"Paris.", "paris"},
	} {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// SQuAD F1: 2 shared of 3 predicted and 2 reference tokens → P 2/3, R 1.
	if got := TokenF1("the big red car", "red car"); got < 0.7999 || got > 0.8001 {
		t.Errorf("F1 = %v, want 0.8", got)
	}
	if TokenF1("", "") != 1 || TokenF1("x", "") != 0 || TokenF1("blue", "red") != 0 {
		t.Error("F1 edge cases")
	}
}

func TestChoice(t *testing.T) {
	for in, want := range map[string]string{
		"The answer is (C).":           "C",
		"Answer: b":                    "B",
		"D":                            "D",
		"A) because it is larger":      "A",
		"I think (E) fits best":        "E",
		"none of these seem right":     "",
		"Because apples are red, yes.": "",
	} {
		if got := Choice(in); got != want {
			t.Errorf("Choice(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFinalNumber(t *testing.T) {
	for in, want := range map[string]string{
		"She has 3 apples, then 5 more. #### 8":        "8",
		"So the total is 1,234 dollars.":               "1234",
		"The answer is $1,000.50.":                     "1000.5",
		"The final answer is −7 degrees":               "-7",
		"Work: 2+2=4\nA: 42 apples":                    "42",
		"42.00":                                        "42",
		"First 10, then 20, so 30 km.":                 "30",
		"#### 18\nbut later I say 19":                  "18",
		"The answer is 5. Then 6 more steps happen: 7": "5",
	} {
		got, ok := FinalNumber(in)
		if !ok || got != want {
			t.Errorf("FinalNumber(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	if _, ok := FinalNumber("no digits here"); ok {
		t.Error("a number found in text without one")
	}
}

func TestScorersByName(t *testing.T) {
	cases := []struct {
		scorer, output string
		refs           []string
		want           float64
	}{
		{"exact", "The Paris.", []string{"paris"}, 1},
		{"exact", "Paris, France", []string{"paris"}, 0},
		{"exact", "Lyon", []string{"Paris", "Lyon"}, 1},
		{"contains", "It is Paris, of course", []string{"paris"}, 1},
		{"choice", "The answer is (B)", []string{"B"}, 1},
		{"choice", "The answer is (B)", []string{"C"}, 0},
		{"numeric", "5 + 3 = 8. The answer is 8.", []string{"8"}, 1},
		{"numeric", "The answer is 9.", []string{"8"}, 0},
		{"json", "```json\n{\"a\": 1}\n```", nil, 1},
		{"json", "{a: 1}", nil, 0},
		{"rouge", "the cat sat on the mat", []string{"the cat sat on the mat"}, 1},
		{"rouge", "", []string{"x"}, 0},
	}
	for _, c := range cases {
		f, err := ByName(c.scorer)
		if err != nil {
			t.Fatal(err)
		}
		if got := f(c.output, c.refs); got != c.want {
			t.Errorf("%s(%q, %q) = %v, want %v", c.scorer, c.output, c.refs, got, c.want)
		}
	}
	if _, err := ByName("meteor"); err == nil {
		t.Error("unknown scorer accepted")
	}
	if _, err := ByName("json-schema"); err == nil {
		t.Error("json-schema without its schema accepted")
	}
	for _, name := range Names() {
		if IsExecution(name) {
			continue // run in the sandbox, not in process
		}
		if _, err := New(name, Options{Schema: []byte(`{"type":"string"}`)}); err != nil {
			t.Errorf("%s is listed but not made: %v", name, err)
		}
	}
}

func TestReferences(t *testing.T) {
	for raw, want := range map[string]string{
		`"Paris"`:                              "Paris",
		`42`:                                   "42",
		`["a","b"]`:                            "a|b",
		`{"answer":"long #### 8","final":"8"}`: "8",
		`{"answer":"x"}`:                       "x",
		`null`:                                 "",
	} {
		if got := strings.Join(References(json.RawMessage(raw)), "|"); got != want {
			t.Errorf("References(%s) = %q, want %q", raw, got, want)
		}
	}
}

// GSM8K's own worked answers score 1 against their references with the
// numeric scorer, every one of the 1,319; an answer off by one does not.
func TestNumericScorerOnGSM8K(t *testing.T) {
	f, err := os.Open("../../../shared/datasets/gsm8k/test.jsonl")
	if err != nil {
		t.Skipf("GSM8K test split not beside the checkout: %v", err)
	}
	defer f.Close()
	numeric, _ := ByName("numeric")
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n, right, perturbedRight := 0, 0, 0
	for sc.Scan() {
		var line struct{ Answer string }
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		i := strings.LastIndex(line.Answer, "####")
		final := strings.ReplaceAll(strings.TrimSpace(line.Answer[i+4:]), ",", "")
		n++
		right += int(numeric(line.Answer, []string{final}))
		perturbedRight += int(numeric(line.Answer[:i]+"#### "+final+"1", []string{final}))
	}
	if n != 1319 || right != 1319 || perturbedRight != 0 {
		t.Fatalf("%d items: %d scored right, %d perturbed scored right", n, right, perturbedRight)
	}
}

// Expected values worked by hand the way rouge-score computes them
// (use_stemmer=False).
func TestRouge(t *testing.T) {
	near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
	// ref "the cat sat on the mat" (6), out "the cat lay on the mat" (6):
	// unigrams shared 5 → F1 5/6; bigrams: ref {the cat, cat sat, sat on,
	// on the, the mat}, out {the cat, cat lay, lay on, on the, the mat}:
	// 3 shared of 5 → 0.6; LCS "the cat on the mat" = 5 → 5/6.
	ref, out := "The cat sat on the mat.", "the cat lay on the mat"
	if got := RougeN(out, ref, 1); !near(got, 5.0/6) {
		t.Errorf("rouge1 %v", got)
	}
	if got := RougeN(out, ref, 2); !near(got, 0.6) {
		t.Errorf("rouge2 %v", got)
	}
	if got := RougeL(out, ref); !near(got, 5.0/6) {
		t.Errorf("rougeL %v", got)
	}
	// Lsum, one sentence each: the same as ROUGE-L.
	if got := RougeLsum(out, ref); !near(got, 5.0/6) {
		t.Errorf("rougeLsum one sentence %v", got)
	}
	// Sentence order matters to ROUGE-L, not to Lsum: reference "a b\nc d",
	// output "c d\na b": Lsum 1; L (one sequence "c d a b" vs "a b c d",
	// LCS 2) 0.5.
	if got := RougeLsum("c d\na b", "a b\nc d"); !near(got, 1) {
		t.Errorf("rougeLsum reordered %v", got)
	}
	if got := RougeL("c d\na b", "a b\nc d"); !near(got, 0.5) {
		t.Errorf("rougeL reordered %v", got)
	}
	if RougeN("", "x", 1) != 0 || RougeLsum("x", "") != 0 {
		t.Error("empty texts score 0")
	}
}
