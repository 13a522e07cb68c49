package score

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The open-domain QA scorers (triviaqa-em, triviaqa-f1) are the official
// TriviaQA evaluation's (mandarjoshi90/triviaqa,
// evaluation/triviaqa_evaluation.py: normalize_answer, exact_match_score,
// f1_score, metric_max_over_ground_truths): the best over every
// acceptable answer (TriviaQA's normalised aliases, Natural Questions
// open's answer list) of exact match or token F1 after its
// normalisation. It differs from SQuAD's (Normalize): underscores and
// punctuation — ASCII's plus ‘ ’ ´ ` — become spaces instead of
// vanishing, and other Unicode punctuation stays.

// triviaPunct is the script's exclude set: string.punctuation and the
// four quote marks it adds.
const triviaPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~‘’´`"

// TriviaQANormalize is triviaqa_evaluation.py's normalize_answer:
// underscores to spaces, lower case, punctuation to spaces, the articles
// a, an and the removed as whole words, whitespace collapsed.
func TriviaQANormalize(s string) string {
	s = pyLower(strings.ReplaceAll(s, "_", " "))
	s = strings.Map(func(r rune) rune {
		if strings.ContainsRune(triviaPunct, r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(pyFields(removeArticles(s)), " ")
}

// removeArticles is re.sub(r'\b(a|an|the)\b', ' ', text) with Python's
// Unicode word characters: a run of word characters that is exactly a,
// an or the becomes a space.
func removeArticles(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		j := i
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if !pyWordRune(r) {
				break
			}
			j += n
		}
		if j > i {
			switch s[i:j] {
			case "a", "an", "the":
				b.WriteByte(' ')
			default:
				b.WriteString(s[i:j])
			}
			i = j
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}

// TriviaQAExact is exact_match_score: the normalised texts are equal.
func TriviaQAExact(prediction, truth string) float64 {
	return bool01(TriviaQANormalize(prediction) == TriviaQANormalize(truth))
}

// TriviaQAF1 is f1_score: token F1 of the normalised texts, 0 when no
// token is shared (even when both are empty).
func TriviaQAF1(prediction, truth string) float64 {
	return tokensF1(pyFields(TriviaQANormalize(prediction)), pyFields(TriviaQANormalize(truth)))
}

// pyWordRune is a character Python's re counts as \w in a str pattern:
// a letter, a number or the underscore.
func pyWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }

// pyLower is Python's str.lower where it differs from Go's per-rune
// mapping in text a model writes: capital I with dot above becomes i and
// a combining dot (Unicode's SpecialCasing), and a capital sigma ending a
// word becomes the final sigma ς.
func pyLower(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r == 'İ' || r == 'Σ' }) < 0 {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		switch {
		case r == 'İ':
			b.WriteString("i\u0307")
		case r == 'Σ' && i > 0 && unicode.IsLetter(rs[i-1]) && (i+1 == len(rs) || !unicode.IsLetter(rs[i+1])):
			b.WriteRune('ς')
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}
