package bench

import (
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/ruckus/ruckus/app/sandbox"
	"github.com/ruckus/ruckus/app/score"
)

// codeAnswer is the simulated answer to a code item scored by execution:
// right, the item's canonical solution (HumanEval's canonical_solution,
// which continues the prompt; MBPP's code, the whole program); wrong, a
// body that runs and fails its tests. false when the scorer does not
// execute, or the item keeps no canonical solution (the runtime then
// streams filler).
func codeAnswer(scorer string, ref json.RawMessage, right bool) (string, bool) {
	if !score.IsExecution(scorer) {
		return "", false
	}
	want := scorer
	if want == "exec" {
		want = ""
	}
	t, err := sandbox.ParseTask(ref, "", want)
	if err != nil || strings.TrimSpace(t.Canonical) == "" {
		return "", false
	}
	if right {
		return t.Canonical, true
	}
	if t.Suite == sandbox.SuiteMBPP {
		// The tests call the function by its name: a function of that
		// name that returns nothing fails their asserts.
		if m := defName.FindStringSubmatch(t.Canonical); m != nil {
			return "def " + m[1] + "(*args, **kwargs):\n    return None\n", true
		}
		return "pass\n", true
	}
	return "    return None\n", true
}

// defName finds the first function a Python program defines.
var defName = regexp.MustCompile(`(?m)^def\s+([A-Za-z_][A-Za-z_0-9]*)\s*\(`)

// patternAnswer writes a text that the regex pattern matches, with value
// where its first capture group goes: the answer a model gives in the
// form the pattern reads ("#### 42" for GSM8K's usual `#### (\-?[0-9\.\,]+)`).
// The text is the shortest the pattern's syntax tree gives: optional and
// repeated parts left out or taken as few times as allowed, the first
// alternative, a class's space or first character. false when the
// pattern does not compile.
func patternAnswer(pattern, value string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	writeShortest(&b, re, value)
	return b.String(), true
}

func writeShortest(b *strings.Builder, re *syntax.Regexp, value string) {
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		b.WriteRune(classRune(re.Rune))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte(' ')
	case syntax.OpCapture:
		if re.Cap == 1 {
			b.WriteString(value)
			return
		}
		writeShortest(b, re.Sub[0], value)
	case syntax.OpPlus:
		writeShortest(b, re.Sub[0], value)
	case syntax.OpRepeat:
		for range re.Min {
			writeShortest(b, re.Sub[0], value)
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			writeShortest(b, s, value)
		}
	case syntax.OpAlternate:
		writeShortest(b, re.Sub[0], value)
	}
	// Star, quest, empty matches and the anchors write nothing.
}

// classRune picks a character of a class given as ranges: a space when
// the class has one (so "\s+" reads as a space), else a letter or digit,
// else its first character.
func classRune(ranges []rune) rune {
	in := func(c rune) bool {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= c && c <= ranges[i+1] {
				return true
			}
		}
		return false
	}
	for _, c := range []rune{' ', 'a', 'A', '0'} {
		if in(c) {
			return c
		}
	}
	if len(ranges) == 0 {
		return ' '
	}
	return ranges[0]
}

// regexAnswer is the answer to an item scored by a regex pattern: right,
// the reference in the pattern's form; wrong, another value (a near-miss
// number, another letter, a perturbed text) in the same form. GSM8K's
// worked solution, when the reference keeps it, comes first, as a model's
// reasoning does.
func regexAnswer(pattern, worked, want string, right bool, r *rand.Rand) string {
	value := want
	if !right {
		switch {
		case choiceLetter(want) != "":
			value = otherLetter(choiceLetter(want), r)
		default:
			if n, ok := score.FinalNumber(want); ok && len(strings.Fields(want)) == 1 {
				value = wrongNumber(n, r)
			} else {
				value = textAnswer(want, nil, false, r)
			}
		}
	}
	form, ok := patternAnswer(pattern, value)
	if !ok {
		return value
	}
	if i := strings.LastIndex(worked, "####"); i >= 0 {
		worked = strings.TrimRight(worked[:i], " \n")
	}
	if worked == "" {
		return form
	}
	return worked + "\n" + form
}
