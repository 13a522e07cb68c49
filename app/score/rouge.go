package score

import "strings"

// ROUGE F-measures exactly as Google's rouge-score (rouge_score/
// rouge_scorer.py, tokenize.py) computes them, with use_stemmer=False, or
// True for the "-stem" scorers. Each function is a port of the one named
// in its comment; rouge_test.go says which of its vectors come from
// rouge-score's own tests and which were worked by hand.

// rougeTokens is rouge-score's tokenize.tokenize: Python's text.lower(),
// every run of characters other than a–z and 0–9 replaced by a space, a
// split on whitespace; with stem, each token longer than three characters
// goes through NLTK's PorterStemmer (Stem).
//
// Python's lower() turns two non-ASCII characters into ASCII letters: the
// Kelvin sign K (U+212A) into "k", and İ (U+0130) into "i" followed by a
// combining dot (U+0307), which then ends the token. Go's simple case
// mapping would make İ a plain "i", so both are written out here (every
// code point checked against Python 3.11 in TestRougeTokensEveryRune).
func rougeTokens(s string, stem bool) []string {
	var tokens []string
	var tok []byte
	flush := func() {
		if len(tok) == 0 {
			return
		}
		t := string(tok)
		if stem && len(t) > 3 {
			t = Stem(t)
		}
		tokens = append(tokens, t)
		tok = tok[:0]
	}
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			tok = append(tok, byte(r))
		case 'A' <= r && r <= 'Z':
			tok = append(tok, byte(r-'A'+'a'))
		case r == '\u212A': // KELVIN SIGN: lower() is "k"
			tok = append(tok, 'k')
		case r == '\u0130': // İ: lower() is "i\u0307", the dot a separator
			tok = append(tok, 'i')
			flush()
		default:
			flush()
		}
	}
	flush()
	return tokens
}

// prf is rouge-score's scoring.Score: precision, recall and F-measure.
type prf struct{ precision, recall, fmeasure float64 }

// newPRF is precision hits/predicted and recall hits/reference (0 when
// the denominator is) and scoring.fmeasure of the two, computed in the
// same order as rouge-score so the floats agree to the bit.
func newPRF(hits, predicted, reference int) prf {
	var s prf
	if predicted > 0 {
		s.precision = float64(hits) / float64(predicted)
	}
	if reference > 0 {
		s.recall = float64(hits) / float64(reference)
	}
	if s.precision+s.recall > 0 {
		s.fmeasure = 2 * s.precision * s.recall / (s.precision + s.recall)
	}
	return s
}

// RougeN is ROUGE-N F1: clipped n-gram overlap (rouge-score's
// _create_ngrams and _score_ngrams).
func RougeN(output, ref string, n int) float64 { return rougeN(output, ref, n, false) }

func rougeN(output, ref string, n int, stem bool) float64 {
	return rougeNScores(output, ref, n, stem).fmeasure
}

func rougeNScores(output, ref string, n int, stem bool) prf {
	o, r := ngrams(rougeTokens(output, stem), n), ngrams(rougeTokens(ref, stem), n)
	po, pr := 0, 0
	for _, c := range o {
		po += c
	}
	for _, c := range r {
		pr += c
	}
	inter := 0
	for g, c := range r {
		inter += min(c, o[g])
	}
	return newPRF(inter, po, pr)
}

func ngrams(tokens []string, n int) map[string]int {
	out := map[string]int{}
	for i := 0; i+n <= len(tokens); i++ {
		out[strings.Join(tokens[i:i+n], " ")]++ // tokens hold no spaces
	}
	return out
}

// RougeL is ROUGE-L F1 on the whole texts as one sequence each
// (rouge-score's _score_lcs).
func RougeL(output, ref string) float64 { return rougeL(output, ref, false) }

func rougeL(output, ref string, stem bool) float64 { return rougeLScores(output, ref, stem).fmeasure }

func rougeLScores(output, ref string, stem bool) prf {
	o, r := rougeTokens(output, stem), rougeTokens(ref, stem)
	if len(o) == 0 || len(r) == 0 {
		return prf{}
	}
	ids := tokenIDs{}
	oi, ri := ids.of(o), ids.of(r)
	prev := make([]int, len(oi)+1)
	cur := make([]int, len(oi)+1)
	for i := range ri {
		for j := range oi {
			if ri[i] == oi[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return newPRF(prev[len(oi)], len(o), len(r))
}

// RougeLsum is summary-level ROUGE-L F1 (rouge-score's rougeLsum without
// split_summaries, i.e. _summary_level_lcs): both texts are split into
// sentences at "\n" (empty lines dropped) and tokenised per sentence.
// For each reference sentence, in order, the union of the positions of
// one LCS with each output sentence is taken (rouge-score's backtracking
// picks which LCS when several tie: see lcsBuffer.indices); each token at
// those positions, in order, is a hit if it still has an unused
// occurrence in both texts, and uses one up. Precision is hits over the
// output's tokens, recall hits over the reference's. Single-line texts
// score as RougeL.
func RougeLsum(output, ref string) float64 { return rougeLsum(output, ref, false) }

func rougeLsum(output, ref string, stem bool) float64 {
	return rougeLsumScores(output, ref, stem).fmeasure
}

func rougeLsumScores(output, ref string, stem bool) prf {
	ids := tokenIDs{}
	sents := func(text string) [][]int {
		var out [][]int
		for _, line := range strings.Split(text, "\n") {
			if line != "" {
				out = append(out, ids.of(rougeTokens(line, stem)))
			}
		}
		return out
	}
	return summaryLevelLCS(sents(ref), sents(output))
}

// summaryLevelLCS is rouge-score's _summary_level_lcs on tokenised
// reference and output sentences.
func summaryLevelLCS(refSents, outSents [][]int) prf {
	m, n := 0, 0
	refCount, outCount := map[int]int{}, map[int]int{}
	for _, s := range refSents {
		m += len(s)
		for _, t := range s {
			refCount[t]++
		}
	}
	for _, s := range outSents {
		n += len(s)
		for _, t := range s {
			outCount[t]++
		}
	}
	if m == 0 || n == 0 {
		return prf{}
	}
	var lcs lcsBuffer
	hits := 0
	for _, r := range refSents {
		union := make([]bool, len(r))
		for _, c := range outSents {
			for _, i := range lcs.indices(r, c) {
				union[i] = true
			}
		}
		for i, t := range r {
			if union[i] && outCount[t] > 0 && refCount[t] > 0 {
				hits++
				outCount[t]--
				refCount[t]--
			}
		}
	}
	return newPRF(hits, n, m)
}

// lcsBuffer holds the LCS work space reused across sentence pairs.
type lcsBuffer struct {
	prev, cur []int
	left      []uint64 // per cell, bit set when the backtrack moves left
	idx       []int
}

// indices are the positions in ref of one longest common subsequence of
// ref and can: rouge-score's lcs_ind, i.e. _lcs_table then
// _backtrack_norec. The backtrack starts at the table's last cell and on
// a match takes the diagonal; otherwise it moves left (dropping a token of
// can) only when that cell is strictly greater than the one above, and up
// (dropping a token of ref) when they tie. Which LCS is chosen, and so
// which tokens enter RougeLsum's union, depends on that order.
//
// Only that left-or-up choice is kept per cell, a bit each, and the table
// itself in two rows: 1/64 of the memory of the full table of ints.
func (b *lcsBuffer) indices(ref, can []int) []int {
	rows, cols := len(ref)+1, len(can)+1
	if cap(b.prev) < cols {
		b.prev, b.cur = make([]int, cols), make([]int, cols)
	}
	prev, cur := b.prev[:cols], b.cur[:cols]
	clear(prev)
	words := (rows*cols + 63) / 64
	if cap(b.left) < words {
		b.left = make([]uint64, words)
	}
	left := b.left[:words]
	clear(left)
	for i := 1; i < rows; i++ {
		cur[0] = 0
		for j := 1; j < cols; j++ {
			switch up, l := prev[j], cur[j-1]; {
			case ref[i-1] == can[j-1]:
				cur[j] = prev[j-1] + 1
			case l > up:
				cur[j] = l
				k := i*cols + j
				left[k/64] |= 1 << (k % 64)
			default:
				cur[j] = up
			}
		}
		prev, cur = cur, prev
	}
	b.idx = b.idx[:0]
	i, j := len(ref), len(can)
	for i > 0 && j > 0 {
		k := i*cols + j
		switch {
		case ref[i-1] == can[j-1]:
			b.idx = append(b.idx, i-1)
			i--
			j--
		case left[k/64]&(1<<(k%64)) != 0:
			j--
		default:
			i--
		}
	}
	return b.idx // descending; RougeLsum only takes their union
}

// tokenIDs numbers distinct tokens so that LCS tables compare ints.
type tokenIDs map[string]int

func (ids tokenIDs) of(tokens []string) []int {
	out := make([]int, len(tokens))
	for k, t := range tokens {
		id, ok := ids[t]
		if !ok {
			id = len(ids)
			ids[t] = id
		}
		out[k] = id
	}
	return out
}
