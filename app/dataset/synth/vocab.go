package synth

import (
	"math/rand/v2"
	"strings"
)

// words are space-prefixed common English words that byte-level BPE
// vocabularies (GPT-2, cl100k/o200k, Llama 3, Qwen 2) and the 32k
// SentencePiece vocabularies of Llama 2 and Mistral 7B each keep as a
// single token: short, frequent, lower-case, no punctuation. A prompt of n
// of them is about n tokens on those tokenizers, without needing the
// served model's tokenizer. A tokenizer with a small vocabulary splits
// them and counts more (the e2e test measures by how much on its tiny
// model).
var words = strings.Fields(`the of and to in is that for it as was with be by on not he this are or his from at
which but have an had they you were their one all we can her has there been if more when will would who so no
time people year way day man thing woman life child world school state family group country problem hand part
place case week company system program question work number night point home water room mother area money story
fact month lot right study book eye job word business issue side kind head house service friend father power
hour game line end member law car city name team minute idea body back parent face level office door health
person art war history party result change morning reason girl moment air teacher force good new first last
long great little own other old big high different small large next early young important few public bad same
able make know take see come think look want give use find tell ask seem feel try leave call keep let begin
help talk turn start show hear play run move like live believe hold bring happen write provide sit stand lose
pay meet include continue set learn lead understand watch follow stop create speak read spend grow open walk
win offer remember love consider appear buy wait serve die send expect build stay fall cut reach kill remain`)

// text appends n words drawn from rng to b.
func text(b *strings.Builder, rng *rand.Rand, n int) {
	for range n {
		b.WriteByte(' ')
		b.WriteString(words[rng.IntN(len(words))])
	}
}
