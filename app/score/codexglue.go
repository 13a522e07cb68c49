package score

import (
	"math"
	"regexp"
	"strings"
)

// CodeXGLUEBLEU is the smoothed sentence BLEU-4 of CodeXGLUE's
// code-to-text evaluator (microsoft/CodeXGLUE,
// Code-Text/code-to-text/evaluator/evaluator.py, the same file as
// code/bleu.py and lm-evaluation-harness's
// tasks/code_x_glue/code-text/bleu.py), as a share: each text is
// lower-cased and split into words and punctuation (splitPuncts), then
// NIST-normalised and tokenised again (normalize), and scored by
// bleu(refs, candidate) with +1 smoothing of the 2- to 4-gram precisions
// and the brevity penalty against the shortest reference. A run's mean
// times 100 is the number the evaluator prints (bleuFromMaps, which
// averages the per-item scores). The output is taken as one line: the
// evaluator reads predictions one per line, and line breaks are
// whitespace to its tokeniser anyway.
func CodeXGLUEBLEU(output string, refs []string) float64 {
	if len(refs) == 0 {
		return 0
	}
	hyp := nistTokens(splitPuncts(pyLower(pyStrip(output))))
	maxCounts := map[string]int{}
	refLen := -1
	for _, r := range refs {
		toks := nistTokens(splitPuncts(pyLower(pyStrip(r))))
		if refLen < 0 || len(toks) < refLen {
			refLen = len(toks)
		}
		for g, c := range ngramCounts(toks) {
			maxCounts[g] = max(maxCounts[g], c)
		}
	}
	var correct, guess [4]int
	for g, c := range ngramCounts(hyp) {
		n := strings.Count(g, " ") // ngramCounts (bleu.go) joins with spaces
		correct[n] += min(maxCounts[g], c)
	}
	for k := range 4 {
		guess[k] = max(len(hyp)-k, 0)
	}
	// score_cooked: sys.float_info.min keeps log() finite at zero.
	const tiny = 0x1p-1022
	logBLEU := 0.0
	for k := range 4 {
		smooth := 0.0
		if k > 0 {
			smooth = 1
		}
		logBLEU += math.Log(float64(correct[k])+smooth+tiny) - math.Log(float64(guess[k])+smooth+tiny)
	}
	logBLEU /= 4
	bp := math.Min(0, 1-float64(refLen+1)/float64(len(hyp)+1))
	return math.Exp(logBLEU + bp)
}

// splitPuncts is bleu.py's: the runs of word characters and the single
// other non-space characters, joined by spaces (re.findall(r"[\w]+|[^\s\w]")).
func splitPuncts(s string) string {
	var toks []string
	word := -1
	for i, r := range s {
		switch {
		case pyWordRune(r):
			if word < 0 {
				word = i
			}
			continue
		case word >= 0:
			toks = append(toks, s[word:i])
			word = -1
		}
		if !pySpace(r) {
			toks = append(toks, string(r))
		}
	}
	if word >= 0 {
		toks = append(toks, s[word:])
	}
	return strings.Join(toks, " ")
}

var (
	nistHyphen = regexp.MustCompile(`-\n`)
	nistSteps  = []struct {
		re  *regexp.Regexp
		rep string
	}{
		{regexp.MustCompile(`([\{-\~\[-\x60 -\&\(-\+\:-\@\/])`), " $1 "}, // punctuation; the apostrophe is not
		{regexp.MustCompile(`([^0-9])([\.,])`), "$1 $2 "},                // period and comma unless after a digit
		{regexp.MustCompile(`([\.,])([^0-9])`), " $1 $2"},                // period and comma unless before a digit
		{regexp.MustCompile(`([0-9])(-)`), "$1 $2 "},                     // dash after a digit
	}
)

// nistTokens is bleu.py's normalize (NIST mteval-v11a's): "<skipped>"
// and hyphenation at line ends removed, lines joined, &lt; &gt; &quot;
// &amp; unescaped, lower case, punctuation split off, then split on
// whitespace.
func nistTokens(s string) []string {
	s = strings.ReplaceAll(s, "<skipped>", "")
	s = nistHyphen.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "\n", " ")
	// xml.sax.saxutils.unescape with {"&quot;": '"'}: &amp; last.
	s = strings.ReplaceAll(s, "&lt;", "<")
	s = strings.ReplaceAll(s, "&gt;", ">")
	s = strings.ReplaceAll(s, "&quot;", `"`)
	s = strings.ReplaceAll(s, "&amp;", "&")
	s = pyLower(" " + s + " ")
	for _, st := range nistSteps {
		s = st.re.ReplaceAllString(s, st.rep)
	}
	return pyFields(s)
}

// pyStrip is Python's str.strip() without arguments.
func pyStrip(s string) string { return strings.TrimFunc(s, pySpace) }
