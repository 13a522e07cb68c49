package score

import "strings"

// Stem is the Porter stemmer as M. F. Porter published it (1980), on
// lower-case ASCII words, which is what rouge-score's tokens are.
//
// rouge-score stems with NLTK's PorterStemmer in its default
// NLTK_EXTENSIONS mode, which departs from the original in a few places,
// so a stemmed ROUGE here may differ from rouge-score's on words such as:
// "dying", "lying", "tying", "sky", "news", "innings", "outing", "canning"
// (NLTK keeps a small irregular-word list); step 1c, where NLTK turns a
// final "y" into "i" only after a consonant in a stem longer than one
// letter (the original: after any vowel in the stem); and NLTK's extra
// step-2 rules ("fulli" → "ful", "logi" → "log") and its treatment of
// "alli"/"bli".
func Stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	b := []byte(w)
	b = step1a(b)
	b = step1b(b)
	b = step1c(b)
	b = step2(b)
	b = step3(b)
	b = step4(b)
	b = step5(b)
	return string(b)
}

func isConsonant(b []byte, i int) bool {
	switch b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !isConsonant(b, i-1)
	}
	return true
}

// measure is m in [C](VC)^m[V] of b.
func measure(b []byte) int {
	m, i, n := 0, 0, len(b)
	for i < n && isConsonant(b, i) {
		i++
	}
	for i < n {
		for i < n && !isConsonant(b, i) {
			i++
		}
		if i >= n {
			break
		}
		for i < n && isConsonant(b, i) {
			i++
		}
		m++
	}
	return m
}

func hasVowel(b []byte) bool {
	for i := range b {
		if !isConsonant(b, i) {
			return true
		}
	}
	return false
}

func doubleConsonant(b []byte) bool {
	n := len(b)
	return n >= 2 && b[n-1] == b[n-2] && isConsonant(b, n-1)
}

// cvc: consonant-vowel-consonant ending, the last not w, x or y.
func cvc(b []byte) bool {
	n := len(b)
	if n < 3 || !isConsonant(b, n-1) || isConsonant(b, n-2) || !isConsonant(b, n-3) {
		return false
	}
	switch b[n-1] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

func hasSuffix(b []byte, s string) bool { return strings.HasSuffix(string(b), s) }

// replace swaps suffix s for r when the stem before it has measure > m.
func replace(b []byte, s, r string, m int) ([]byte, bool) {
	if !hasSuffix(b, s) {
		return b, false
	}
	stem := b[:len(b)-len(s)]
	if measure(stem) > m {
		return append(append([]byte{}, stem...), r...), true
	}
	return b, true
}

func step1a(b []byte) []byte {
	switch {
	case hasSuffix(b, "sses"):
		return b[:len(b)-2]
	case hasSuffix(b, "ies"):
		return b[:len(b)-2]
	case hasSuffix(b, "ss"):
		return b
	case hasSuffix(b, "s"):
		return b[:len(b)-1]
	}
	return b
}

func step1b(b []byte) []byte {
	if hasSuffix(b, "eed") {
		if measure(b[:len(b)-3]) > 0 {
			return b[:len(b)-1]
		}
		return b
	}
	var stem []byte
	switch {
	case hasSuffix(b, "ed") && hasVowel(b[:len(b)-2]):
		stem = b[:len(b)-2]
	case hasSuffix(b, "ing") && hasVowel(b[:len(b)-3]):
		stem = b[:len(b)-3]
	default:
		return b
	}
	switch {
	case hasSuffix(stem, "at"), hasSuffix(stem, "bl"), hasSuffix(stem, "iz"):
		return append(append([]byte{}, stem...), 'e')
	case doubleConsonant(stem):
		switch stem[len(stem)-1] {
		case 'l', 's', 'z':
			return stem
		}
		return stem[:len(stem)-1]
	case measure(stem) == 1 && cvc(stem):
		return append(append([]byte{}, stem...), 'e')
	}
	return stem
}

func step1c(b []byte) []byte {
	if hasSuffix(b, "y") && hasVowel(b[:len(b)-1]) {
		c := append([]byte{}, b...)
		c[len(c)-1] = 'i'
		return c
	}
	return b
}

var step2Rules = [][2]string{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"}, {"abli", "able"},
	{"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"}, {"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"},
	{"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
}

var step3Rules = [][2]string{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

func applyRules(b []byte, rules [][2]string) []byte {
	// The longest matching suffix decides; only it is tried.
	best := -1
	for i, r := range rules {
		if hasSuffix(b, r[0]) && (best < 0 || len(r[0]) > len(rules[best][0])) {
			best = i
		}
	}
	if best < 0 {
		return b
	}
	out, _ := replace(b, rules[best][0], rules[best][1], 0)
	return out
}

func step2(b []byte) []byte { return applyRules(b, step2Rules) }
func step3(b []byte) []byte { return applyRules(b, step3Rules) }

var step4Suffixes = []string{"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou",
	"ism", "ate", "iti", "ous", "ive", "ize"}

func step4(b []byte) []byte {
	best := ""
	for _, s := range step4Suffixes {
		if hasSuffix(b, s) && len(s) > len(best) {
			best = s
		}
	}
	if best == "" {
		return b
	}
	stem := b[:len(b)-len(best)]
	if measure(stem) <= 1 {
		return b
	}
	if best == "ion" && (len(stem) == 0 || (stem[len(stem)-1] != 's' && stem[len(stem)-1] != 't')) {
		return b
	}
	return stem
}

func step5(b []byte) []byte {
	if hasSuffix(b, "e") {
		stem := b[:len(b)-1]
		if m := measure(stem); m > 1 || (m == 1 && !cvc(stem)) {
			b = stem
		}
	}
	if measure(b) > 1 && doubleConsonant(b) && b[len(b)-1] == 'l' {
		b = b[:len(b)-1]
	}
	return b
}
