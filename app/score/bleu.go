package score

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// BLEU as sacreBLEU 2.x computes it by default (sacrebleu/metrics/bleu.py):
// the 13a tokeniser (mteval-v13a's, tokenizers/tokenizer_13a.py with the
// regular expressions of tokenizer_re.py), case kept (lowercase=False),
// n-grams up to order 4, the reference length closest to the hypothesis
// (the shorter on a tie), clipped counts taken against the most any one
// reference holds of an n-gram, and the brevity penalty
// exp(1 − ref/hyp) when the hypothesis is shorter. Smoothing is 'exp'
// (mteval's: the k-th order with no match counts as 1/(2^k · total)).
//
// A sentence score is sacrebleu.sentence_bleu's (use_effective_order=True:
// orders the hypothesis is too short to have are left out of the mean);
// a corpus score is sacrebleu.corpus_bleu's (statistics summed over the
// segments, effective order off). sacreBLEU reports 0–100; Ruckus divides
// by 100 so BLEU sits in [0, 1] with the other scorers, and a rounding
// excess over 1 (sacreBLEU's exp(log(100)) is 100.00000000000004) is
// clamped to 1.
//
// Empty references are dropped as sacreBLEU drops them; sacreBLEU refuses
// a segment with no reference left, and Ruckus leaves such an item
// unscored.

// bleuMaxOrder is sacreBLEU's MAX_NGRAM_ORDER.
const bleuMaxOrder = 4

// Tokenize13a is sacreBLEU's 13a tokeniser: "<skipped>" removed, a dash at
// a line end joins the lines, other newlines become spaces, the entities
// &quot; &amp; &lt; &gt; decoded (each in turn, as sacreBLEU replaces them
// one after the other), then the mteval regular expressions, and the
// tokens joined by single spaces. Whitespace is Python's str.split's
// (Go's unicode.IsSpace plus U+001C–U+001F).
func Tokenize13a(line string) string {
	line = strings.ReplaceAll(line, "<skipped>", "")
	line = strings.ReplaceAll(line, "-\n", "")
	line = strings.ReplaceAll(line, "\n", " ")
	line = strings.ReplaceAll(line, "&quot;", `"`)
	line = strings.ReplaceAll(line, "&amp;", "&")
	line = strings.ReplaceAll(line, "&lt;", "<")
	line = strings.ReplaceAll(line, "&gt;", ">")
	line = " " + line + " "
	line = splitSymbols(line)
	line = pairs(line, func(a, b rune) bool { return !isDigit(a) && (b == '.' || b == ',') }, false)
	line = pairs(line, func(a, b rune) bool { return (a == '.' || a == ',') && !isDigit(b) }, true)
	line = pairs(line, func(a, b rune) bool { return isDigit(a) && b == '-' }, false)
	return strings.Join(pyFields(line), " ")
}

// The mteval regular expressions of tokenizer_re.py, applied in turn as
// Python's re.sub applies them (leftmost match first, matches not
// overlapping), written out as scans: the expressions are a character
// class and three two-character patterns, and a scan is about four times
// faster than Go's regexp on long outputs (BenchmarkTokenize13aLong). bleu_test.go checks them against the
// regular expressions themselves.
//
//	([\{-\~\[-\` -\&\(-\+\:-\@\/])  ->  ' \1 '
//	([^0-9])([\.,])                     ->  '\1 \2 '
//	([\.,])([^0-9])                     ->  ' \1 \2'
//	([0-9])(-)                          ->  '\1 \2 '

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// isSymbol13a is the first expression's class: every ASCII symbol but
// . , - and '.
func isSymbol13a(c byte) bool {
	return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
		(c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/'
}

// splitSymbols puts spaces around each character of the first class.
func splitSymbols(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < utf8.RuneSelf && isSymbol13a(c) {
			b.WriteByte(' ')
			b.WriteByte(c)
			b.WriteByte(' ')
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// pairs replaces each non-overlapping match of a two-character pattern,
// leftmost first, with the two characters (as they were written, invalid
// UTF-8 included) and a space after each ("\1 \2 "), or with lead a
// space before each (" \1 \2").
func pairs(s string, match func(a, b rune) bool, lead bool) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for i := 0; i < len(s); {
		a, na := utf8.DecodeRuneInString(s[i:])
		if i+na < len(s) {
			c, nc := utf8.DecodeRuneInString(s[i+na:])
			if match(a, c) {
				if lead {
					b.WriteByte(' ')
				}
				b.WriteString(s[i : i+na])
				b.WriteByte(' ')
				b.WriteString(s[i+na : i+na+nc])
				if !lead {
					b.WriteByte(' ')
				}
				i += na + nc
				continue
			}
		}
		b.WriteString(s[i : i+na])
		i += na
	}
	return b.String()
}

// pySpace is Python's str.isspace for one character.
func pySpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// pyFields is Python's str.split() with no separator.
func pyFields(s string) []string { return strings.FieldsFunc(s, pySpace) }

// bleuPreprocess is BLEU._preprocess_segment with lowercase=False:
// trailing whitespace stripped, then the 13a tokeniser.
func bleuPreprocess(s string) []string {
	return pyFields(Tokenize13a(strings.TrimRightFunc(s, pySpace)))
}

// BLEUStats are one segment's (or, summed, a corpus's) sufficient
// statistics: hypothesis length, the effective reference length, and per
// n-gram order the clipped matches and the hypothesis's n-grams.
type BLEUStats struct {
	HypLen, RefLen int
	Correct, Total [bleuMaxOrder]int
}

// Add sums two segments' statistics (sacreBLEU's sum_of_lists).
func (s BLEUStats) Add(o BLEUStats) BLEUStats {
	s.HypLen += o.HypLen
	s.RefLen += o.RefLen
	for n := range s.Correct {
		s.Correct[n] += o.Correct[n]
		s.Total[n] += o.Total[n]
	}
	return s
}

// ngramCounts counts a token list's n-grams of orders 1 to 4, keyed by
// the tokens joined with a space (no token holds one).
func ngramCounts(tokens []string) map[string]int {
	c := map[string]int{}
	for n := 1; n <= bleuMaxOrder; n++ {
		for i := 0; i+n <= len(tokens); i++ {
			c[strings.Join(tokens[i:i+n], " ")]++
		}
	}
	return c
}

// SegmentBLEU returns a hypothesis's statistics against its references;
// false when no reference is left once empty ones are dropped.
func SegmentBLEU(hyp string, refs []string) (BLEUStats, bool) {
	var st BLEUStats
	var refNgrams map[string]int
	var refLens []int
	for _, r := range refs {
		if r == "" {
			continue
		}
		toks := bleuPreprocess(r)
		refLens = append(refLens, len(toks))
		c := ngramCounts(toks)
		if refNgrams == nil {
			refNgrams = c
			continue
		}
		for g, k := range c {
			refNgrams[g] = max(refNgrams[g], k)
		}
	}
	if len(refLens) == 0 {
		return st, false
	}
	toks := bleuPreprocess(hyp)
	st.HypLen = len(toks)
	// The closest reference length; the shorter on a tie.
	closestDiff, closest := -1, -1
	for _, l := range refLens {
		d := st.HypLen - l
		if d < 0 {
			d = -d
		}
		if closestDiff == -1 || d < closestDiff {
			closestDiff, closest = d, l
		} else if d == closestDiff && l < closest {
			closest = l
		}
	}
	st.RefLen = closest
	for g, k := range ngramCounts(toks) {
		n := strings.Count(g, " ")
		st.Total[n] += k
		if rk, ok := refNgrams[g]; ok {
			st.Correct[n] += min(k, rk)
		}
	}
	return st, true
}

// mylog is sacreBLEU's my_log: log with log(0) floored.
func mylog(x float64) float64 {
	if x == 0 {
		return -9999999999
	}
	return math.Log(x)
}

// Percent is sacreBLEU's BLEU.compute_bleu with smooth_method 'exp', on
// sacreBLEU's 0–100 scale.
func (s BLEUStats) Percent(effectiveOrder bool) float64 {
	bp := 1.0
	if s.HypLen < s.RefLen {
		bp = 0
		if s.HypLen > 0 {
			bp = math.Exp(1 - float64(s.RefLen)/float64(s.HypLen))
		}
	}
	matched := false
	for _, c := range s.Correct {
		matched = matched || c != 0
	}
	if !matched {
		return 0
	}
	var precisions [bleuMaxOrder]float64
	smooth := 1.0
	eff := bleuMaxOrder
	for n := 1; n <= bleuMaxOrder; n++ {
		if s.Total[n-1] == 0 {
			break
		}
		if effectiveOrder {
			eff = n
		}
		if s.Correct[n-1] == 0 {
			smooth *= 2
			precisions[n-1] = 100 / (smooth * float64(s.Total[n-1]))
		} else {
			precisions[n-1] = 100 * float64(s.Correct[n-1]) / float64(s.Total[n-1])
		}
	}
	sum := 0.0
	for _, p := range precisions[:eff] {
		sum += mylog(p)
	}
	return bp * math.Exp(sum/float64(eff))
}

// unit turns a sacreBLEU score (0–100) into Ruckus's [0, 1].
func unit(percent float64) float64 { return math.Min(percent/100, 1) }

// SentenceBLEU is sacrebleu.sentence_bleu(hyp, refs) / 100; false when
// every reference is empty.
func SentenceBLEU(hyp string, refs []string) (float64, bool) {
	st, ok := SegmentBLEU(hyp, refs)
	if !ok {
		return 0, false
	}
	return unit(st.Percent(true)), true
}

// CorpusBLEU is sacrebleu.corpus_bleu over the segments' statistics / 100.
func CorpusBLEU(stats []BLEUStats) float64 {
	var sum BLEUStats
	for _, s := range stats {
		sum = sum.Add(s)
	}
	return unit(sum.Percent(false))
}
