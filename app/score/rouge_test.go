package score

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// Where the ROUGE vectors come from. rouge-score cannot be installed here
// (no Debian package, no PyPI), so:
//   - TestRougeScorerTestVectors and the LCS tests below are rouge-score's
//     own tests (google-research/google-research, rouge/rouge_scorer_test.py)
//     with their inputs and expected values; the "AgainstRouge155" values
//     are ROUGE-1.5.5's, given there to 5 decimals, which rouge-score
//     passes;
//   - TestRougeLsumTies are worked by hand from rouge_scorer.py's
//     algorithm, the working in the comments;
//   - TestRougeLsumSingleLineIsRougeL and FuzzRouge are properties.
// The stemmer's vectors are NLTK's own (porter_test.go).

// rouge-score's testdata/target.txt and prediction.txt are the first two
// lines of pyrouge_files/target_multi.0.txt and prediction_multi.0.txt.
const (
	rougeTargetMulti = `ZfbCUIUuePaiLVUlCaUXxkpu XPeWing tUHfPMuZ',-Xd Y BrUgVJing M-HV.-DgdDaY.rFDJCRing Ht-LM EKBDXkME,yz'RBr q'wtion wIojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxer tKM L
KsJdPByEtAor fE-Qg Dpdbring cw-WeFyu vC MoBL Xdn g wkvcEiGvKtion BDFhrpMtion psing sbKao Q m qiing LMmer HqqLFXe,XPY,J XsurkMer ,ed nB'wH'bWVHjWFEing tQ.saefZwJtKrTlixYpMMsJing UCAPwNHeYVjDing c T BUySKtion gMPfJpwGw p'NvxAoping eu pBwMBKV'I DNxqelhu,PHPxDEq,mtion SN
NhETebUbBk'er WOvoHMTjSRizKgH'vHiing Xu,hWxfs VkNE QhgKiLHE -HidivzoM.dO anhtion jbLQiSGDTCsuhREebUaKM dv J dVN tmbOT
vMR HDm,xOAetion D,tion HJtodT.mHl UIv-p VjWH'BdyWjnfGU-OjT aEMdFICyLWfQMtion wEMfdOKing AwkeKbO 'DxqNOHBH qKtVvm OYJl mM
`
	rougePredictionMulti = `rFDJCRtion Ht-LM EKtDXkME,yz'RBr q'wer wrojNbN wL,b .a-'XdQggyFl jB-RPP'iyOIcUxi
n cw-WeFyu vC MoBL Xdn g wkvcEiGvKtion BDFhrpMer pstion sbKao Q m qier LMmed HqqLFXe,XPY,J XsurkMeo ,ed nB'wH'bWVHjWFEer tQ.saefZwJtKrTlixYpMMNJtion UCAPwNHeYVjD
xfs VkJE QhgKiLHE -HidivzoM.dO anhing jbLQiSGDTCsuhREebUaKM dv J
VjWH'BdyWjnfGU-OjTNaEMdFICyLWfQMing wEMfdOKijg AwkeKbO 'DxqNO
`
)

// Python's readlines(): lines with their "\n".
func readlines(s string) []string { return strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n") }

func TestRougeScorerTestVectors(t *testing.T) {
	targets, predictions := readlines(rougeTargetMulti)[:2], readlines(rougePredictionMulti)[:2]
	if len(rougeTargetMulti) != 669 || len(rougePredictionMulti) != 370 ||
		len(targets[0]+targets[1]) != 429 || len(predictions[0]+predictions[1]) != 243 {
		t.Fatal("rouge-score's test texts are not the files' lengths")
	}
	const exact, places5 = 1e-9, 5e-6 // assertAlmostEqual's default 7 places / places=5
	for _, c := range []struct {
		test, scorer         string
		target, predict      string
		precision, recall, f float64
		tol                  float64
	}{
		{"testRouge1", "rouge1", "testing one two", "testing", 1, 1.0 / 3, 1.0 / 2, exact},
		{"testRougeEmpty", "rouge1", "testing one two", "", 0, 0, 0, exact},
		{"testRougeEmpty", "rouge2", "testing one two", "", 0, 0, 0, exact},
		{"testRougeEmpty", "rougeL", "testing one two", "", 0, 0, 0, exact},
		{"testRougeEmpty", "rougeLsum", "testing one two", "", 0, 0, 0, exact},
		{"testRouge2", "rouge2", "testing one two", "testing one", 1, 1.0 / 2, 2.0 / 3, exact},
		{"testRougeLConsecutive", "rougeL", "testing one two", "testing one", 1, 2.0 / 3, 4.0 / 5, exact},
		{"testRougeLNonConsecutive", "rougeL", "testing one two", "testing two", 1, 2.0 / 3, 4.0 / 5, exact},
		{"testMultipleRougeTypes", "rouge1", "testing one two", "testing one", 1, 2.0 / 3, 4.0 / 5, exact},
		{"testMultipleRougeTypes", "rougeL", "testing one two", "testing one", 1, 2.0 / 3, 4.0 / 5, exact},
		{"testRouge1AgainstRouge155", "rouge1", targets[0], predictions[0], 0.68750, 0.40741, 0.51163, places5},
		{"testRouge1AgainstRouge155", "rouge1", targets[1], predictions[1], 0.65385, 0.40476, 0.50000, places5},
		{"testRouge1AgainstRouge155WithStemming", "rouge1-stem", targets[0], predictions[0], 0.68750, 0.40741, 0.51163, places5},
		{"testRouge1AgainstRouge155WithStemming", "rouge1-stem", targets[1], predictions[1], 0.69231, 0.42857, 0.52941, places5},
		{"testRouge2AgainstRouge155", "rouge2", targets[0], predictions[0], 0.53333, 0.30769, 0.39024, places5},
		{"testRouge2AgainstRouge155", "rouge2", targets[1], predictions[1], 0.48000, 0.29268, 0.36364, places5},
		{"testRouge2AgainstRouge155WithStemming", "rouge2-stem", targets[0], predictions[0], 0.53333, 0.30769, 0.39024, places5},
		{"testRouge2AgainstRouge155WithStemming", "rouge2-stem", targets[1], predictions[1], 0.48000, 0.29268, 0.36364, places5},
		{"testRougeLAgainstRouge155", "rougeL", targets[0], predictions[0], 0.68750, 0.40741, 0.51163, places5},
		{"testRougeLAgainstRouge155", "rougeL", targets[1], predictions[1], 0.65385, 0.40476, 0.50000, places5},
		{"testRougeLSumAgainstRouge155WithStemming", "rougeLsum-stem", rougeTargetMulti, rougePredictionMulti, 0.66667, 0.36538, 0.47205, places5},
		{"testRougeLsum", "rougeLsum", "w1 w2 w3 w4 w5", "w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5", 0.4, 0.8, 0.5333, 5e-4}, // F to places=3
		{"testRougeLsum (empty)", "rougeLsum", "w1 w2 w3 w4 w5", "", 0, 0, 0, exact},
		{"testRougeLsum (empty)", "rougeLsum", "", "w1", 0, 0, 0, exact},
		{"testRougeLsum (all non-word)", "rougeLsum", "w1 w2 w3 w4 w5", "/", 0, 0, 0, exact},
	} {
		got := rougeScoresByName(c.scorer, c.predict, c.target)
		if math.Abs(got.precision-c.precision) > c.tol || math.Abs(got.recall-c.recall) > c.tol ||
			math.Abs(got.fmeasure-c.f) > max(c.tol, 5e-6) {
			t.Errorf("%s %s(target %.30q, prediction %.30q) = %+v, want P %v R %v F %v",
				c.test, c.scorer, c.target, c.predict, got, c.precision, c.recall, c.f)
		}
		if f, _ := ByName(c.scorer); f(c.predict, []string{c.target}) != got.fmeasure {
			t.Errorf("%s: ByName(%q) disagrees with its P/R/F", c.test, c.scorer)
		}
	}
}

// rougeScoresByName is P/R/F of the scorer ByName(name) takes the F of.
func rougeScoresByName(name, output, ref string) prf {
	stem := stemmed(name)
	switch strings.TrimSuffix(name, "-stem") {
	case "rouge1":
		return rougeNScores(output, ref, 1, stem)
	case "rouge2":
		return rougeNScores(output, ref, 2, stem)
	case "rougeL":
		return rougeLScores(output, ref, stem)
	case "rougeLsum":
		return rougeLsumScores(output, ref, stem)
	}
	panic(name)
}

// rouge_scorer_test.py's testLcsTable: lcs_ind on lists of ints.
func TestLCSBacktrack(t *testing.T) {
	var b lcsBuffer
	ascending := func(idx []int) []int {
		out := slices.Clone(idx)
		slices.Sort(out)
		return out
	}
	ref := []int{1, 2, 3, 4, 5}
	if got := ascending(b.indices(ref, []int{2, 5, 3, 4})); !slices.Equal(got, []int{1, 2, 3}) {
		t.Errorf("lcs_ind([1..5], [2 5 3 4]) = %v, want [1 2 3]", got)
	}
	if got := b.indices(ref, []int{8, 9}); len(got) != 0 {
		t.Errorf("lcs_ind([1..5], [8 9]) = %v, want []", got)
	}
	// The tie rule: ref [a b], can [b a] have the LCSs "a" and "b".
	// Table (rows ref, columns can):
	//        b  a
	//     a  0  1
	//     b  1  1
	// From (2,2): b ≠ a; left t[2][1] = 1 is not > up t[1][2] = 1, so up:
	// (1,2): a = a, index 0. rouge-score chooses "a".
	if got := b.indices([]int{0, 1}, []int{1, 0}); !slices.Equal(got, []int{0}) {
		t.Errorf("lcs_ind([a b], [b a]) = %v, want [0]", got)
	}
}

// rouge_scorer_test.py's testUnionLcs and testSummaryLevelLcs (the example
// of section 3.2 of Lin's ROUGE paper).
func TestSummaryLevelLCS(t *testing.T) {
	ref := []int{1, 2, 3, 4, 5}
	c1 := []int{1, 2, 6, 7, 8} // lcs [1 2]
	c2 := []int{1, 3, 8, 9, 5} // lcs [1 3 5]
	var b lcsBuffer
	union := map[int]bool{}
	for _, c := range [][]int{c1, c2} {
		for _, i := range b.indices(ref, c) {
			union[ref[i]] = true
		}
	}
	if len(union) != 4 || !union[1] || !union[2] || !union[3] || !union[5] {
		t.Errorf("union LCS %v, want [1 2 3 5]", union)
	}
	s := summaryLevelLCS([][]int{ref}, [][]int{c1, c2})
	if s.recall != 0.8 || s.precision != 0.4 || math.Abs(s.fmeasure-0.5333) > 5e-4 {
		t.Errorf("summary-level LCS %+v, want R 0.8 P 0.4 F 0.5333", s)
	}
	// "Tokenizer may drop all tokens, resulting in empty candidate list."
	if s := summaryLevelLCS([][]int{{1}}, [][]int{{}}); s.recall != 0 {
		t.Errorf("empty candidate: %+v", s)
	}
}

// Multi-line cases where several LCSs tie, worked by hand from
// rouge_scorer.py: for each reference sentence, the union of
// lcs_ind(ref sentence, output sentence) over the output sentences, the
// backtrack going up on ties (see TestLCSBacktrack); each union token, in
// order, a hit while both texts have an unused count of it. P = hits/n
// (output tokens), R = hits/m (reference tokens), F = 2PR/(P+R). The
// version before this port went left on ties, and its scores are given
// beside.
func TestRougeLsumTies(t *testing.T) {
	for _, c := range []struct {
		ref, out string
		p, r, f  float64
		working  string
	}{{
		"a b", "b a\nb", 2.0 / 3, 1, 0.8,
		`[a b]·[b a]: tie, up → {0} "a"; [a b]·[b] → {1} "b"; union {0,1}: 2 hits,
		 m 2, n 3 (going left: {1} ∪ {1} → 1 hit, F 0.4)`,
	}, {
		"a b\na", "b a", 1.0 / 2, 1.0 / 3, 0.4,
		`[a b]·[b a] → {0} "a": hit (out a 1→0, ref a 2→1); [a]·[b a] → {0} "a":
		 out a is used up; 1 hit, m 3, n 2 (going left: "b" then "a", 2 hits, F 0.8)`,
	}, {
		"a b\nb", "b a", 1, 2.0 / 3, 0.8,
		`[a b]·[b a] → "a": hit; [b]·[b a]: (1,2) b≠a, left t[1][1]=1 > up 0,
		 then b=b → "b": hit; 2 hits, m 3, n 2 (going left: "b", then "b" used up: F 0.4)`,
	}, {
		"x a b y", "x b a y\nb", 4.0 / 5, 1, 8.0 / 9,
		`[x a b y]·[x b a y]: y=y {3}; (3,3) b≠a, left t[3][2]=2 = up t[2][3]=2 → up;
		 (2,3) a=a {1}; (1,2) x≠b, left t[1][1]=1 > up 0 → left; (1,1) x=x {0}:
		 "x a y". ·[b] → {2}. Union all 4: 4 hits, m 4, n 5
		 (going left: "x b y" ∪ {2} → 3 hits, P 3/5, R 3/4, F 2/3)`,
	}, {
		"a b a", "b a a\nb", 3.0 / 4, 1, 6.0 / 7,
		`[a b a]·[b a a]: table rows a b a, columns b a a:
		   0 1 1 / 1 1 1 / 1 2 2. (3,3) a=a {2}; (2,2) b≠a, left 1 = up 1 → up;
		 (1,2) a=a {0}: "a a". ·[b] → {1}. Union {0,1,2}: a, b, a all hit
		 (out b 2, a 2; ref a 2, b 1): 3 hits, m 3, n 4
		 (going left: "b a" ∪ {1} = {1,2}, 2 hits, P 1/2, R 2/3, F 4/7)`,
	}, {
		// A worked-solution shape, no ties: sentences matched out of order.
		"She sells 16 - 3 - 4 = 9 eggs.\nShe makes 9 * 2 = 18 dollars.",
		"She makes 9 * 2 = 18\nShe sells 9 eggs", 1, 9.0 / 13, 9.0 / 11,
		`ref [she sells 16 3 4 9 eggs] [she makes 9 2 18 dollars] (m 13),
		 out [she makes 9 2 18] [she sells 9 eggs] (n 9). Ref 1: ∪ {0,5} ∪ {0,1,5,6}
		 → she sells 9 eggs, 4 hits. Ref 2: {0..4} ∪ {0,2} → she makes 9 2 18, 5 hits`,
	}} {
		got := rougeLsumScores(c.out, c.ref, false)
		if math.Abs(got.precision-c.p) > 1e-12 || math.Abs(got.recall-c.r) > 1e-12 || math.Abs(got.fmeasure-c.f) > 1e-12 {
			t.Errorf("Lsum(out %q, ref %q) = %+v, want P %v R %v F %v: %s", c.out, c.ref, got, c.p, c.r, c.f, c.working)
		}
	}
}

// With one sentence each, the union is the LCS and every LCS token is a
// hit, so Lsum is L: checked on every line of GSM8K's answers against the
// next item's lines and on every pair of lines within an answer.
func TestRougeLsumSingleLineIsRougeL(t *testing.T) {
	f, err := os.Open("../../../shared/datasets/gsm8k/test.jsonl")
	if err != nil {
		t.Skipf("GSM8K not at ../shared/datasets: %v", err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var item struct{ Answer string }
		if err := json.Unmarshal(sc.Bytes(), &item); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Split(item.Answer, "\n")...)
	}
	if len(lines) < 5000 {
		t.Fatalf("%d lines", len(lines))
	}
	n := 0
	for i := range lines {
		for _, j := range []int{i + 1, i + 2, i + 7} {
			o, r := lines[i], lines[j%len(lines)]
			for _, stem := range []bool{false, true} {
				if l, ls := rougeLScores(o, r, stem), rougeLsumScores(o, r, stem); l != ls {
					t.Fatalf("L %+v ≠ Lsum %+v (stem %v)\nout %q\nref %q", l, ls, stem, o, r)
				}
				n++
			}
		}
	}
	t.Logf("%d single-line pairs", n)
}

// Python's str.lower() then [^a-z0-9]+ → " ": for every code point, the
// tokens of "a" + it + "b". Python 3.11 (Unicode 14) makes "a"+c+"b" one
// token exactly for c in [A-Za-z0-9], "akb" for the Kelvin sign, "ai" and
// "b" for İ, and "a", "b" for everything else.
func TestRougeTokensEveryRune(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		var want []string
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			want = []string{"a" + string(r) + "b"}
		case 'A' <= r && r <= 'Z':
			want = []string{"a" + string(r+'a'-'A') + "b"}
		case r == 0x212A:
			want = []string{"akb"}
		case r == 0x130:
			want = []string{"ai", "b"}
		default:
			want = []string{"a", "b"}
		}
		if got := rougeTokens("a"+string(r)+"b", false); !slices.Equal(got, want) {
			t.Errorf("U+%04X: tokens %q, want %q", r, got, want)
		}
	}
}

// Every ROUGE variant is finite and in [0, 1]; rouge1, rouge2 and rougeL
// swap precision and recall when output and reference swap, so F is
// unchanged to the bit; Lsum equals L when neither text has a newline; a
// text scores 1 against itself when it has an n-gram to match. (Lsum is
// not symmetric: the union is taken per reference sentence.)
func FuzzRouge(f *testing.F) {
	for _, s := range [][2]string{
		{"the cat sat on the mat", "The cat lay on the mat."},
		{"b a\nb", "a b"},
		{"x b a y\nb", "x a b y"},
		{"She makes 9 * 2 = 18\nShe sells 9 eggs", "She sells 16 - 3 - 4 = 9 eggs.\nShe makes 9 * 2 = 18 dollars."},
		{"dying flies\n\nrunning", "die fly\nruns"},
		{"İx Kelvin", "ix kelvin"},
		{"", "x"},
		{"\n\n", " \n"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, out, ref string) {
		if len(out) > 4000 || len(ref) > 4000 {
			t.Skip()
		}
		for _, stem := range []bool{false, true} {
			n1, n1r := rougeNScores(out, ref, 1, stem), rougeNScores(ref, out, 1, stem)
			n2, n2r := rougeNScores(out, ref, 2, stem), rougeNScores(ref, out, 2, stem)
			l, lr := rougeLScores(out, ref, stem), rougeLScores(ref, out, stem)
			ls, lsr := rougeLsumScores(out, ref, stem), rougeLsumScores(ref, out, stem)
			for _, s := range []prf{n1, n1r, n2, n2r, l, lr, ls, lsr} {
				for _, v := range []float64{s.precision, s.recall, s.fmeasure} {
					if math.IsNaN(v) || v < 0 || v > 1 {
						t.Fatalf("score %+v out of [0, 1] (stem %v)", s, stem)
					}
				}
			}
			for _, p := range [][2]prf{{n1, n1r}, {n2, n2r}, {l, lr}} {
				if p[0].precision != p[1].recall || p[0].recall != p[1].precision || p[0].fmeasure != p[1].fmeasure {
					t.Fatalf("swap: %+v vs %+v (stem %v)", p[0], p[1], stem)
				}
			}
			if !strings.Contains(out, "\n") && !strings.Contains(ref, "\n") && (ls != l || lsr != lr) {
				t.Fatalf("single lines: Lsum %+v, L %+v (stem %v)", ls, l, stem)
			}
			toks := rougeTokens(out, stem)
			self := map[string]float64{
				"rouge1": rougeNScores(out, out, 1, stem).fmeasure, "rouge2": rougeNScores(out, out, 2, stem).fmeasure,
				"rougeL": rougeLScores(out, out, stem).fmeasure, "rougeLsum": rougeLsumScores(out, out, stem).fmeasure,
			}
			for name, v := range self {
				want := 1.0
				if len(toks) == 0 || (name == "rouge2" && len(toks) < 2) {
					want = 0
				}
				if v != want {
					t.Fatalf("%s of a text against itself %v, want %v (stem %v)", name, v, want, stem)
				}
			}
		}
	})
}
