package judge

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Verdicts a judgment records.
const (
	// Rated: a single grading with a rating on the scale.
	Rated = "rated"
	// A, B and Tie: a pairwise verdict, from the first run's side.
	A   = "A"
	B   = "B"
	Tie = "tie"
	// Unparseable: the judge answered, but no verdict could be read; no
	// score is guessed.
	Unparseable = "unparseable"
	// NoAnswer: the judge run ended without judging the item (cancelled,
	// stopped by a limit).
	NoAnswer = "no answer"
	// RequestFailed: the request to the judge failed, or (single) the
	// judged run's own request had failed.
	RequestFailed = "request failed"
)

// MaxRationaleRunes bounds a stored rationale; MaxRawBytes the judge's
// answer as kept.
const (
	MaxRationaleRunes = 4000
	MaxRawBytes       = 32 << 10
)

// The rating forms MT-Bench's judge reads: "[[N]]", else "[N]", N a
// non-negative number with an optional fraction (fastchat/llm_judge
// common.py one_score_pattern and its backup). The first match counts.
var (
	ratingPattern       = regexp.MustCompile(`\[\[(\d+\.?\d*)\]\]`)
	ratingPatternBackup = regexp.MustCompile(`\[(\d+\.?\d*)\]`)
	pairPattern         = regexp.MustCompile(`\[\[([ABC])\]\]`)
)

// Rating is a single grading read from a judge's answer.
type Rating struct {
	// OK is false when no rating could be read; Why says what was wrong.
	OK     bool
	Why    string
	Rating float64
	// Score is the rating normalised to [0, 1] on the scale.
	Score     float64
	Rationale string
}

// ParseRating reads a rating on the scale lo..hi from a judge's answer, as
// MT-Bench does ("[[N]]", else "[N]", the first one found). Unlike
// MT-Bench, a rating outside the scale is not a rating: the verdict is
// unparseable and no score is guessed.
func ParseRating(text string, lo, hi int) Rating {
	m := ratingPattern.FindStringSubmatchIndex(text)
	if m == nil {
		m = ratingPatternBackup.FindStringSubmatchIndex(text)
	}
	if m == nil {
		return Rating{Why: fmt.Sprintf("no rating in the form [[N]] (N from %d to %d)", lo, hi), Rationale: rationale(text, nil)}
	}
	v, err := strconv.ParseFloat(text[m[2]:m[3]], 64)
	if err != nil || math.IsInf(v, 0) {
		return Rating{Why: fmt.Sprintf("the rating %q is not a number", clipRunes(text[m[2]:m[3]], 40)), Rationale: rationale(text, m)}
	}
	if v < float64(lo) || v > float64(hi) {
		return Rating{Why: fmt.Sprintf("the rating %s is outside the scale %d to %d", strconv.FormatFloat(v, 'f', -1, 64), lo, hi),
			Rationale: rationale(text, m)}
	}
	return Rating{OK: true, Rating: v, Score: Normalise(v, lo, hi), Rationale: rationale(text, m)}
}

// Normalise maps a rating on lo..hi to [0, 1]: (r − lo) / (hi − lo).
func Normalise(r float64, lo, hi int) float64 {
	return (r - float64(lo)) / float64(hi-lo)
}

// Pair is a pairwise verdict read from a judge's answer, in the order the
// answers were shown: A means the answer shown first.
type Pair struct {
	OK        bool
	Why       string
	Verdict   string // A, B or Tie
	Rationale string
}

// ParsePair reads "[[A]]", "[[B]]" or "[[C]]" (a tie) from a judge's
// answer. MT-Bench takes the first of A, B, C present; here every marker
// in the answer must agree (as Arena-Hard reads its verdicts), so an
// answer naming two different verdicts is unparseable rather than read
// in A's favour.
func ParsePair(text string) Pair {
	all := pairPattern.FindAllStringSubmatchIndex(text, -1)
	if len(all) == 0 {
		return Pair{Why: "no verdict in the form [[A]], [[B]] or [[C]]", Rationale: rationale(text, nil)}
	}
	first := text[all[0][2]:all[0][3]]
	for _, m := range all[1:] {
		if text[m[2]:m[3]] != first {
			return Pair{Why: "the answer gives more than one verdict", Rationale: rationale(text, nil)}
		}
	}
	v := map[string]string{"A": A, "B": B, "C": Tie}[first]
	return Pair{OK: true, Verdict: v, Rationale: rationale(text, all[len(all)-1])}
}

// ratingLine is a verdict's usual lead-in, dropped with it.
var ratingLine = regexp.MustCompile(`(?i)(final\s+)?(rating|verdict)\s*:?\s*\**\s*$`)

// rationale is the judge's answer without the verdict marker at m (nil:
// the whole answer), trimmed and bounded.
func rationale(text string, m []int) string {
	if m != nil {
		head := ratingLine.ReplaceAllString(strings.TrimRight(text[:m[0]], " \t*"), "")
		text = strings.TrimSpace(head) + "\n" + strings.TrimSpace(text[m[1]:])
	}
	return clipRunes(strings.TrimSpace(strings.ToValidUTF8(text, "\uFFFD")), MaxRationaleRunes)
}

// clipRunes keeps at most n runes of s, marking the cut.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for i = range s {
		if k == n {
			break
		}
		k++
	}
	return s[:i] + "…"
}

// ClipRaw bounds a judge's answer as kept: valid UTF-8, at most
// MaxRawBytes (cut on a character boundary).
func ClipRaw(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= MaxRawBytes {
		return s
	}
	cut := MaxRawBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Outcome is a pair's reconciled verdict, from the first run's side.
type Outcome struct {
	Verdict string // A, B or Tie; "" when an order could not be read
	// Inconsistent: the two orders disagreed, so the pair counts as a tie.
	Inconsistent bool
	// Unparsed: an order had no readable verdict, so the pair has none.
	Unparsed bool
	Why      string
}

// Swap turns a verdict given with the second run shown first into the
// first run's side.
func Swap(v string) string {
	switch v {
	case A:
		return B
	case B:
		return A
	}
	return v
}

// Reconcile combines the verdicts of the two orders, both already from the
// first run's side (ab: first run shown first; ba: shown second, after
// Swap). Agreement gives that verdict; disagreement is a tie, said so (as
// MT-Bench counts an inconsistent pair). When either order has no readable
// verdict the pair has none: one order alone is what position bias
// decides, so it is not taken for the pair's verdict.
func Reconcile(ab, ba Pair) Outcome {
	switch {
	case !ab.OK && !ba.OK:
		return Outcome{Unparsed: true, Why: "neither order gave a readable verdict"}
	case !ab.OK:
		return Outcome{Unparsed: true, Why: "the order with the first run shown first gave no readable verdict"}
	case !ba.OK:
		return Outcome{Unparsed: true, Why: "the order with the second run shown first gave no readable verdict"}
	case ab.Verdict == ba.Verdict:
		return Outcome{Verdict: ab.Verdict, Why: "both orders agree"}
	}
	return Outcome{Verdict: Tie, Inconsistent: true,
		Why: fmt.Sprintf("inconsistent across orders (first run shown first: %s; shown second: %s), counted as a tie",
			sideWord(ab.Verdict), sideWord(ba.Verdict))}
}

func sideWord(v string) string {
	switch v {
	case A:
		return "the first run better"
	case B:
		return "the second run better"
	}
	return "a tie"
}
