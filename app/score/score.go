// Package score holds the scorers (docs/concepts.md#scorers): each turns a
// model's output and the item's reference into a score in [0, 1].
package score

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Scorer scores one output against the references it may match (an item
// can accept several answers; the best match counts).
type Scorer func(output string, refs []string) float64

// Execution scorers run each answer with its item's tests in the sandbox
// (a worker of its own, not this function): humaneval and mbpp require
// their suite's items, exec takes either (recognised per item by
// entry_point or test_list).
var executionScorers = []string{"humaneval", "mbpp", "exec"}

// IsExecution says whether name is an execution scorer.
func IsExecution(name string) bool {
	for _, n := range executionScorers {
		if n == name {
			return true
		}
	}
	return false
}

// ErrExecution is ByName's answer for an execution scorer, which scores
// by running code in the sandbox rather than by comparing text.
var ErrExecution = errors.New("an execution scorer runs in the sandbox, not in process")

// ByName returns the scorer a benchmark names.
func ByName(name string) (Scorer, error) {
	if IsExecution(name) {
		return nil, fmt.Errorf("%q: %w", name, ErrExecution)
	}
	switch name {
	case "exact":
		return best(func(o, r string) float64 { return bool01(Normalize(o) == Normalize(r)) }), nil
	case "f1":
		return best(TokenF1), nil
	case "contains":
		return best(func(o, r string) float64 { return bool01(r != "" && strings.Contains(Normalize(o), Normalize(r))) }), nil
	case "choice":
		return best(func(o, r string) float64 {
			return bool01(Choice(o) != "" && Choice(o) == strings.ToUpper(strings.TrimSpace(r)))
		}), nil
	case "numeric":
		return best(func(o, r string) float64 {
			got, ok1 := FinalNumber(o)
			want, ok2 := FinalNumber(r)
			return bool01(ok1 && ok2 && got == want)
		}), nil
	case "json":
		return func(o string, _ []string) float64 { return bool01(json.Valid([]byte(stripFence(o)))) }, nil
	case "refusal":
		// 1 for an answer that refuses: the run's mean is its refusal rate.
		return func(o string, _ []string) float64 { return bool01(Refusal(o)) }, nil
	case "triviaqa-em":
		return best(TriviaQAExact), nil
	case "triviaqa-f1":
		return best(TriviaQAF1), nil
	case "codexglue-bleu":
		return CodeXGLUEBLEU, nil
	case "bleu", "regex", "json-schema":
		// The scorers that take options (regex without a pattern is
		// choice, json-schema needs its schema): see New.
		return New(name, Options{})
	case "rouge", "rougeL", "rougeL-stem":
		return best(func(o, r string) float64 { return rougeL(o, r, stemmed(name)) }), nil
	case "rouge1", "rouge1-stem":
		return best(func(o, r string) float64 { return rougeN(o, r, 1, stemmed(name)) }), nil
	case "rouge2", "rouge2-stem":
		return best(func(o, r string) float64 { return rougeN(o, r, 2, stemmed(name)) }), nil
	case "rougeLsum", "rougeLsum-stem":
		return best(func(o, r string) float64 { return rougeLsum(o, r, stemmed(name)) }), nil
	}
	return nil, fmt.Errorf("unknown scorer %q", name)
}

func best(f func(o, r string) float64) Scorer {
	return func(o string, refs []string) float64 {
		s := 0.0
		for _, r := range refs {
			s = math.Max(s, f(o, r))
		}
		return s
	}
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// References reads a stored reference: a string, a number, a list of
// acceptable answers, or an object whose "final" (GSM8K's number after
// "####") or else "answer" is the reference.
func References(raw json.RawMessage) []string {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return []string{n.String()}
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		var out []string
		for _, x := range list {
			out = append(out, References(x)...)
		}
		return out
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		for _, k := range []string{"final", "answer", "reference", "target"} {
			if v, ok := obj[k]; ok {
				return References(v)
			}
		}
	}
	return nil
}

var (
	articles = regexp.MustCompile(`\b(a|an|the)\b`)
	spaces   = regexp.MustCompile(`\s+`)
)

// Normalize is SQuAD's answer normalisation: lower case, punctuation
// removed, articles (a, an, the) removed, whitespace collapsed.
func Normalize(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSymbol(r) {
			return -1
		}
		return r
	}, s)
	s = articles.ReplaceAllString(s, " ")
	return strings.TrimSpace(spaces.ReplaceAllString(s, " "))
}

// TokenF1 is SQuAD's token F1 between normalised output and reference.
func TokenF1(output, ref string) float64 {
	o, r := strings.Fields(Normalize(output)), strings.Fields(Normalize(ref))
	if len(o) == 0 || len(r) == 0 {
		return bool01(len(o) == len(r))
	}
	return tokensF1(o, r)
}

// tokensF1 is the F1 of the tokens two texts share (each counted as often
// as both have it, as Python's Counter intersection); 0 when they share
// none.
func tokensF1(pred, truth []string) float64 {
	counts := make(map[string]int, len(truth))
	for _, t := range truth {
		counts[t]++
	}
	same := 0
	for _, t := range pred {
		if counts[t] > 0 {
			counts[t]--
			same++
		}
	}
	if same == 0 {
		return 0
	}
	p, r := float64(same)/float64(len(pred)), float64(same)/float64(len(truth))
	return 2 * p * r / (p + r)
}

var choicePatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)answer\s*(?:is|:)?\s*\(?([A-J])\)?\b`),
	regexp.MustCompile(`^\s*\(?([A-J])[\).:]?\s*$`),
	regexp.MustCompile(`^\s*\(?([A-J])[\).:]\s`),
	regexp.MustCompile(`\(([A-J])\)`),
}

// Choice extracts a multiple-choice letter: "The answer is (C)",
// "Answer: C", a lone "C", "C) …" at the start, or "(C)" anywhere; "" when
// none.
func Choice(output string) string {
	for _, re := range choicePatterns {
		if m := re.FindStringSubmatch(output); m != nil {
			return strings.ToUpper(m[1])
		}
	}
	return ""
}

var (
	numberRe  = regexp.MustCompile(`[-+−]?\$?\d[\d,]*(?:\.\d+)?|[-+−]?\.\d+`)
	markerRes = []*regexp.Regexp{
		regexp.MustCompile(`####\s*([^\n]*)`),
		regexp.MustCompile(`(?i)the (?:final )?answer is[:\s]*([^\n]*)`),
		regexp.MustCompile(`(?im)^\s*A:\s*([^\n]*)`),
	}
)

// FinalNumber reads the final numeric answer of a text: the number after
// "####", else after "The answer is" (or "The final answer is"), else
// after a line starting "A:", else the last number in the text. Thousands
// separators, "$", a leading "+" and trailing units or punctuation are
// ignored; "−" counts as a minus sign. Numbers compare as decimals, so
// "42", "42.0" and "42.00" are the same answer.
func FinalNumber(text string) (string, bool) {
	for _, re := range markerRes {
		if m := re.FindAllStringSubmatch(text, -1); m != nil {
			if n, ok := firstNumber(m[len(m)-1][1]); ok {
				return n, true
			}
		}
	}
	all := numberRe.FindAllString(text, -1)
	if len(all) == 0 {
		return "", false
	}
	return canonical(all[len(all)-1])
}

func firstNumber(s string) (string, bool) {
	m := numberRe.FindString(s)
	if m == "" {
		return "", false
	}
	return canonical(m)
}

func canonical(s string) (string, bool) {
	s = strings.NewReplacer(",", "", "$", "", "−", "-", "+", "").Replace(s)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "", false
	}
	return strconv.FormatFloat(v, 'f', -1, 64), true
}

func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```json")
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	return strings.TrimSpace(s)
}

// Names lists the scorers, sorted.
func Names() []string {
	n := []string{"exact", "f1", "contains", "choice", "regex", "numeric", "json", "json-schema", "refusal", "bleu", "rouge", "rouge1", "rouge2", "rougeL", "rougeLsum",
		"rouge1-stem", "rouge2-stem", "rougeL-stem", "rougeLsum-stem", "triviaqa-em", "triviaqa-f1", "codexglue-bleu"}
	n = append(n, executionScorers...)
	sort.Strings(n)
	return n
}

// stemmed says whether a ROUGE scorer's name asks for Porter stemming
// (rouge-score's use_stemmer=True).
func stemmed(name string) bool { return strings.HasSuffix(name, "-stem") }
