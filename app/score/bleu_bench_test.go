package score

import (
	"strings"
	"testing"
)

// A long answer (about 16 KB: 4096 tokens of prose with numbers and
// punctuation) against one reference: the per-item cost of the bleu
// scorer on a large run.
var longAnswer = strings.Repeat("The 3-4 results, in 2024, were \"good\" (mostly); costs fell 1,000.50 units. ", 200)

func BenchmarkSentenceBLEULong(b *testing.B) {
	ref := strings.Repeat("The results in 2024 were good; costs fell by 1,000 units. ", 200)
	b.SetBytes(int64(len(longAnswer)))
	for b.Loop() {
		SentenceBLEU(longAnswer, []string{ref})
	}
}

func BenchmarkTokenize13aLong(b *testing.B) {
	b.SetBytes(int64(len(longAnswer)))
	for b.Loop() {
		Tokenize13a(longAnswer)
	}
}

func BenchmarkTokenize13aRegexpLong(b *testing.B) {
	b.SetBytes(int64(len(longAnswer)))
	for b.Loop() {
		tokenize13aRegexp(longAnswer)
	}
}
