package score

import "strings"

// ROUGE as Google's rouge-score computes it (F-measure), on its tokens:
// lower case, every run of characters other than a–z and 0–9 becomes a
// space, and with stemming (the "-stem" scorers, rouge-score's
// use_stemmer=True) tokens longer than three characters Porter-stemmed.

// RougeN is ROUGE-N F1: clipped n-gram overlap.
func RougeN(output, ref string, n int) float64 { return rougeN(output, ref, n, false) }

func rougeN(output, ref string, n int, stem bool) float64 {
	o, r := ngrams(rougeTokens(output, stem), n), ngrams(rougeTokens(ref, stem), n)
	po, pr := 0, 0
	for _, c := range o {
		po += c
	}
	for _, c := range r {
		pr += c
	}
	inter := 0
	for g, c := range o {
		inter += min(c, r[g])
	}
	return fmeasure(inter, po, pr)
}

func ngrams(tokens []string, n int) map[string]int {
	out := map[string]int{}
	for i := 0; i+n <= len(tokens); i++ {
		out[strings.Join(tokens[i:i+n], " ")]++
	}
	return out
}

func fmeasure(hits, predicted, reference int) float64 {
	if hits == 0 || predicted == 0 || reference == 0 {
		return 0
	}
	p, r := float64(hits)/float64(predicted), float64(hits)/float64(reference)
	return 2 * p * r / (p + r)
}

// lcsTable is the longest-common-subsequence table of a and b.
func lcsTable(a, b []string) [][]int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				t[i][j] = t[i-1][j-1] + 1
			} else {
				t[i][j] = max(t[i-1][j], t[i][j-1])
			}
		}
	}
	return t
}

// lcsIndices are the positions in a of one longest common subsequence
// with b, backtracking as rouge-score does.
func lcsIndices(a, b []string) []int {
	t := lcsTable(a, b)
	var idx []int
	i, j := len(a), len(b)
	for i > 0 && j > 0 {
		switch {
		case a[i-1] == b[j-1]:
			idx = append(idx, i-1)
			i, j = i-1, j-1
		case t[i-1][j] > t[i][j-1]:
			i--
		default:
			j--
		}
	}
	return idx
}

// RougeLsum is summary-level ROUGE-L F1: texts are split into sentences at
// newlines; each reference sentence's tokens hit by the union of its LCSs
// with every output sentence count once, clipped by how often each token
// occurs in either text.
func RougeLsum(output, ref string) float64 { return rougeLsum(output, ref, false) }

func rougeLsum(output, ref string, stem bool) float64 {
	sents := func(s string) [][]string {
		var out [][]string
		for _, line := range strings.Split(s, "\n") {
			if t := rougeTokens(line, stem); len(t) > 0 {
				out = append(out, t)
			}
		}
		return out
	}
	o, r := sents(output), sents(ref)
	oCount, rCount := map[string]int{}, map[string]int{}
	no, nr := 0, 0
	for _, s := range o {
		for _, t := range s {
			oCount[t]++
			no++
		}
	}
	for _, s := range r {
		for _, t := range s {
			rCount[t]++
			nr++
		}
	}
	hits := 0
	for _, rs := range r {
		union := map[int]bool{}
		for _, os := range o {
			for _, i := range lcsIndices(rs, os) {
				union[i] = true
			}
		}
		for i := range rs {
			if !union[i] {
				continue
			}
			t := rs[i]
			if oCount[t] > 0 && rCount[t] > 0 {
				hits++
				oCount[t]--
				rCount[t]--
			}
		}
	}
	return fmeasure(hits, no, nr)
}
