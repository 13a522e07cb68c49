package score

import (
	"encoding/json"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// The BLEU vectors in testdata/sacrebleu_bleu.json are sacreBLEU's own
// output: testdata/gen_bleu.py ran sacreBLEU 2.x's BLEU, 13a tokeniser and
// regular-expression tokeniser (sacrebleu/metrics/bleu.py, base.py,
// helpers.py, tokenizers/tokenizer_13a.py, tokenizer_re.py) over the
// hand-picked cases in the script (among them sacreBLEU's own test cases:
// the README corpus at 48.530827, test_sentence_bleu.py's 8.493 and 0.0,
// empty hypotheses) and 500 seeded random ones. The reference produced
// the same scores for those of its own tests as its test files expect.
type bleuVectors struct {
	Tokenizer []struct {
		Input  string `json:"input"`
		Tokens string `json:"tokens"`
	} `json:"tokenizer"`
	Sentence []struct {
		Hyp  string   `json:"hyp"`
		Refs []string `json:"refs"`
		bleuExpected
	} `json:"sentence"`
	SentenceErrors []struct {
		Hyp  string   `json:"hyp"`
		Refs []string `json:"refs"`
	} `json:"sentence_errors"`
	Corpus []struct {
		Hyps []string   `json:"hyps"`
		Refs [][]string `json:"refs"`
		bleuExpected
	} `json:"corpus"`
}

type bleuExpected struct {
	Score  float64 `json:"score"`
	Counts []int   `json:"counts"`
	Totals []int   `json:"totals"`
	SysLen int     `json:"sys_len"`
	RefLen int     `json:"ref_len"`
}

func loadBLEUVectors(t *testing.T) bleuVectors {
	t.Helper()
	b, err := os.ReadFile("testdata/sacrebleu_bleu.json")
	if err != nil {
		t.Fatal(err)
	}
	var v bleuVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Tokenizer) < 300 || len(v.Sentence) < 200 || len(v.Corpus) < 5 {
		t.Fatalf("the vectors file is short: %d/%d/%d", len(v.Tokenizer), len(v.Sentence), len(v.Corpus))
	}
	return v
}

// checkStats compares statistics exactly and the score to within what
// two libm implementations of exp and log may differ by.
func checkStats(t *testing.T, what string, st BLEUStats, got float64, want bleuExpected) {
	t.Helper()
	if st.HypLen != want.SysLen || st.RefLen != want.RefLen ||
		!equalInts(st.Correct[:], want.Counts) || !equalInts(st.Total[:], want.Totals) {
		t.Errorf("%s: stats %+v, sacreBLEU has counts %v totals %v sys_len %d ref_len %d",
			what, st, want.Counts, want.Totals, want.SysLen, want.RefLen)
	}
	if math.Abs(got-want.Score) > 1e-9 {
		t.Errorf("%s: BLEU %.15g, sacreBLEU %.15g", what, got, want.Score)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTokenize13aMatchesSacreBLEU(t *testing.T) {
	for _, c := range loadBLEUVectors(t).Tokenizer {
		if got := Tokenize13a(c.Input); got != c.Tokens {
			t.Errorf("Tokenize13a(%q) = %q, sacreBLEU %q", c.Input, got, c.Tokens)
		}
		if got := tokenize13aRegexp(c.Input); got != c.Tokens {
			t.Errorf("the regular expressions on %q give %q, sacreBLEU %q", c.Input, got, c.Tokens)
		}
	}
}

// mteval13a are tokenizer_re.py's regular expressions as Go's regexp
// writes them: the oracle for the scans Tokenize13a does instead.
var mteval13a = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`([{-~\[-` + "`" + ` -&(-+:-@/])`), " $1 "},
	{regexp.MustCompile(`([^0-9])([.,])`), "$1 $2 "},
	{regexp.MustCompile(`([.,])([^0-9])`), " $1 $2"},
	{regexp.MustCompile(`([0-9])(-)`), "$1 $2 "},
}

// tokenize13aRegexp is Tokenize13a with the regular expressions applied
// by regexp.ReplaceAllString.
func tokenize13aRegexp(line string) string {
	for _, r := range [][2]string{{"<skipped>", ""}, {"-\n", ""}, {"\n", " "}, {"&quot;", `"`}, {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}} {
		line = strings.ReplaceAll(line, r[0], r[1])
	}
	line = " " + line + " "
	for _, r := range mteval13a {
		line = r.re.ReplaceAllString(line, r.repl)
	}
	return strings.Join(pyFields(line), " ")
}

func TestSentenceBLEUMatchesSacreBLEU(t *testing.T) {
	v := loadBLEUVectors(t)
	for _, c := range v.Sentence {
		st, ok := SegmentBLEU(c.Hyp, c.Refs)
		if !ok {
			t.Errorf("%q vs %q: refused, sacreBLEU scores it", c.Hyp, c.Refs)
			continue
		}
		checkStats(t, c.Hyp, st, st.Percent(true), c.bleuExpected)
		s, _ := SentenceBLEU(c.Hyp, c.Refs)
		if math.Abs(s-math.Min(c.Score/100, 1)) > 1e-11 || s < 0 || s > 1 {
			t.Errorf("SentenceBLEU(%q) = %v, want sacreBLEU's %v / 100 in [0, 1]", c.Hyp, s, c.Score)
		}
	}
	for _, c := range v.SentenceErrors {
		if _, ok := SentenceBLEU(c.Hyp, c.Refs); ok {
			t.Errorf("%q vs %q: scored, sacreBLEU refuses a segment with only empty references", c.Hyp, c.Refs)
		}
	}
}

func TestCorpusBLEUMatchesSacreBLEU(t *testing.T) {
	for i, c := range loadBLEUVectors(t).Corpus {
		var all []BLEUStats
		var sum BLEUStats
		for j, h := range c.Hyps {
			st, ok := SegmentBLEU(h, c.Refs[j])
			if !ok {
				t.Fatalf("corpus %d item %d refused", i, j)
			}
			all = append(all, st)
			sum = sum.Add(st)
		}
		checkStats(t, c.Hyps[0], sum, sum.Percent(false), c.bleuExpected)
		if got := CorpusBLEU(all); math.Abs(got-math.Min(c.Score/100, 1)) > 1e-11 {
			t.Errorf("corpus %d: CorpusBLEU %v, sacreBLEU %v / 100", i, got, c.Score)
		}
	}
}

// Worked by hand from compute_bleu: hypothesis "the cat sat" against
// "the cat sat on the mat": 3/3 unigrams, 2/2 bigrams, 1/1 trigram, no
// 4-gram at all, so the effective order is 3 and the precisions are all
// 100; the brevity penalty is exp(1 − 6/3) = e⁻¹.
func TestSentenceBLEUByHand(t *testing.T) {
	got, ok := SentenceBLEU("the cat sat", []string{"the cat sat on the mat"})
	if want := math.Exp(-1); !ok || math.Abs(got-want) > 1e-15 {
		t.Fatalf("got %v, want e^-1 = %v", got, want)
	}
	// "a b" against "a c": 1/2 unigrams, 0/1 bigrams: exp smoothing makes
	// the bigram precision 100/(2·1) = 50; equal lengths, no penalty; the
	// geometric mean of 50 and 50 is 50.
	got, _ = SentenceBLEU("a b", []string{"a c"})
	if math.Abs(got-0.5) > 1e-15 {
		t.Fatalf("got %v, want 0.5", got)
	}
	// Identical texts score exactly 1 (sacreBLEU's 100.00000000000004
	// clamped).
	if got, _ := SentenceBLEU("The dog bit the man.", []string{"The dog bit the man."}); got != 1 {
		t.Fatalf("identical: %v", got)
	}
}

// FuzzTokenize13a: any text tokenises without panic into single-spaced
// tokens, the same as tokenizer_re.py's regular expressions give, and BLEU of any pair stays in [0, 1]. Tokenising twice is not
// checked: sacreBLEU's 13a is not idempotent ("1...2" gives "1 . . .2",
// which gives "1 . . . 2"), and neither is this port.
func FuzzTokenize13a(f *testing.F) {
	for _, s := range []string{"Hello, world!", "1...2", "&amp;quot;", "a-\nb", "<skipped>", "日本語。", "\x1c\u00a0x", "3-4 5.6,7"} {
		f.Add(s, "reference text.")
	}
	f.Fuzz(func(t *testing.T, hyp, ref string) {
		tok := Tokenize13a(hyp)
		if want := tokenize13aRegexp(hyp); tok != want {
			t.Fatalf("Tokenize13a(%q) = %q, the regular expressions give %q", hyp, tok, want)
		}
		if strings.HasPrefix(tok, " ") || strings.HasSuffix(tok, " ") || strings.Contains(tok, "  ") {
			t.Fatalf("Tokenize13a(%q) = %q: not single-spaced", hyp, tok)
		}
		if utf8.ValidString(hyp) && !utf8.ValidString(tok) {
			t.Fatalf("Tokenize13a(%q) = %q: broke UTF-8", hyp, tok)
		}
		for _, w := range strings.Split(tok, " ") {
			if strings.IndexFunc(w, pySpace) >= 0 {
				t.Fatalf("token %q holds whitespace", w)
			}
		}
		s, ok := SentenceBLEU(hyp, []string{ref})
		if ok != (ref != "") || s < 0 || s > 1 || math.IsNaN(s) {
			t.Fatalf("SentenceBLEU(%q, %q) = %v, %v", hyp, ref, s, ok)
		}
	})
}
