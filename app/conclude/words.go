package conclude

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ruckus/ruckus/app/i18n"
)

// In is the sentence in l's language from the catalogue: the one wording
// of every sentence the engine says, for a page (its reader's language)
// and for the API (English), so no sentence is written twice. A code
// without a message shows as itself, so a gap is visible.
func (s Said) In(l *i18n.Localizer) string {
	if s.Code == "" {
		return ""
	}
	args := make([]any, 0, len(s.Args))
	for i := 0; i+1 < len(s.Args); i += 2 {
		args = append(args, s.Args[i], wordValue(l, s.Args[i+1]))
	}
	return l.T(Key(s.Code), args...)
}

// English is the sentence as the API gives it: the catalogue's English.
func English(s Said) string { return s.In(i18n.Default().Lang("en")) }

func wordValue(l *i18n.Localizer, v any) string {
	switch x := v.(type) {
	case string:
		return x
	case Dec:
		if x.Trim {
			return DecimalSign(l, strconv.FormatFloat(math.Round(x.V*100)/100, 'f', -1, 64))
		}
		return DecimalSign(l, fmt.Sprintf("%.*f", x.Places, x.V))
	case Signed:
		return DecimalSign(l, fmt.Sprintf("%+.*f", x.Places, x.V))
	case P:
		return DecimalSign(l, fmt.Sprintf("%.3g", float64(x)))
	case Sig:
		switch {
		case x.Plus:
			return DecimalSign(l, fmt.Sprintf("%+.*g", x.Digits, x.V))
		case x.Digits == 0:
			return DecimalSign(l, strconv.FormatFloat(x.V, 'g', -1, 64))
		}
		return DecimalSign(l, fmt.Sprintf("%.*g", x.Digits, x.V))
	case Pct:
		return DecimalSign(l, FormatPct(float64(x)))
	case AndList:
		parts := make([]string, len(x))
		for i, v := range x {
			parts[i] = wordValue(l, v)
		}
		return JoinAnd(l, parts)
	case Said:
		return x.In(l)
	case []Said:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = s.In(l)
		}
		return strings.Join(parts, "; ")
	}
	return fmt.Sprint(v)
}

// DecimalSign swaps a formatted number's decimal point for l's decimal
// sign.
func DecimalSign(l *i18n.Localizer, s string) string {
	if l.Code() == "de" {
		return strings.ReplaceAll(s, ".", ",")
	}
	return s
}

// JoinAnd joins "a", "a and b", "a, b and c" in l's language.
func JoinAnd(l *i18n.Localizer, parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return l.T("recommend.list_and", "Rest", strings.Join(parts[:len(parts)-1], ", "), "Last", parts[len(parts)-1])
}
