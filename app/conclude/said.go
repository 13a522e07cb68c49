package conclude

import "strings"

// Said is one of this package's sentences as a code and its values, for a
// page to word in its reader's language. The code is the sentence's
// catalogue key (compare.said.basis_paired), so no map keeps the two
// together; a code stored before codes were keys carries no area and
// reads by Key's rule.
type Said struct {
	Code string
	// Args are name/value pairs filling the message's placeholders; a
	// value is a string, an int, an int64, a Dec, a Said or a []Said.
	Args []any
}

// Dec is a number a page writes with Places decimals, in its reader's
// language.
type Dec struct {
	V      float64
	Places int
	// Trim drops trailing zeros (and the decimal sign with them).
	Trim bool
}

// trimmed is v with at most two decimals and no trailing zeros, as
// trimFloat writes it.
func trimmed(v float64) Dec { return Dec{V: v, Places: 2, Trim: true} }

// tokensSaid is n output tokens, in the singular for one, as
// outputTokens writes it.
func tokensSaid(n float64) Said {
	if n == 1 {
		return say("capacity.said.one_output_token")
	}
	return say("capacity.said.output_tokens", "N", trimmed(n))
}

// Key is the catalogue key of a sentence's code: the code itself, or for
// a code kept before codes were keys (a regression's stored detail:
// "regression_latency") the comparison's message of that name, dashes
// read as underscores.
func Key(code string) string {
	if strings.Contains(code, ".") {
		return code
	}
	return "compare.said." + strings.ReplaceAll(code, "-", "_")
}

func say(code string, args ...any) Said { return Said{Code: code, Args: args} }

// Say is a Said for callers outside the package that build a sentence
// the same pages word (a handler's measurement problem).
func Say(code string, args ...any) Said { return say(code, args...) }

// dec is v written with places decimals.
func dec(v float64, places int) Dec { return Dec{V: v, Places: places} }

// Signed is a number a page writes with a sign (+0.120, −0.050) and
// Places decimals.
type Signed struct {
	V      float64
	Places int
}

func signed(v float64, places int) Signed { return Signed{V: v, Places: places} }

// P is a p-value a page writes with three significant digits (%.3g).
type P float64

func pval(p float64) P { return P(p) }

// Sig is a number a page writes with Digits significant digits (%.4g);
// Digits 0 writes it as %g does. Plus writes its sign also when positive
// (%+.3g: a difference).
type Sig struct {
	V      float64
	Digits int
	Plus   bool `json:"Plus,omitempty"`
}

// AndList is a list a page joins as "a, b and c" in its reader's
// language; each item is a value as in Said.Args.
type AndList []any

// Pct is the size of a relative difference a page writes as FormatPct
// does: "0.6 %", "12 %".
type Pct float64

// labelSaid is Label as a Said (or the model's name, which is data).
func labelSaid(x Candidate, among []Candidate) any {
	sameModel, sameTarget, sameConfig := 0, 0, 0
	for _, y := range among {
		if y.Model == x.Model {
			sameModel++
			if y.Runtime == x.Runtime && y.Hardware == x.Hardware {
				sameTarget++
				if y.Engine == x.Engine {
					sameConfig++
				}
			}
		}
	}
	switch {
	case x.Model == "":
		return say("recommend.said.label_run", "Run", x.RunID)
	case sameModel <= 1:
		return x.Model
	case sameTarget <= 1:
		return say("recommend.said.label_target", "Model", x.Model, "Runtime", x.Runtime, "Hardware", x.Hardware)
	case sameConfig <= 1:
		// Configurations of one target differ only in their engine
		// settings, so the settings name them.
		return say("recommend.said.label_config", "Model", x.Model, "Runtime", x.Runtime, "Hardware", x.Hardware, "Engine", engineSaid(x.Engine))
	}
	return say("recommend.said.label_model_run", "Model", x.Model, "Run", x.RunID)
}

// LabelSaid is Label for a page to word.
func LabelSaid(x Candidate, among []Candidate) any { return labelSaid(x, among) }

func labelsSaid(xs, among []Candidate) AndList {
	out := make(AndList, len(xs))
	for i, x := range xs {
		out[i] = labelSaid(x, among)
	}
	return out
}

// valueSaid is FormatValue as a Said.
func valueSaid(c Criterion, v float64) Said {
	switch c {
	case Quality:
		return say("recommend.said.value_quality", "V", dec(v, 3))
	case Speed:
		return say("recommend.said.value_speed", "V", dec(v, 1))
	case Latency:
		return say("recommend.said.value_latency", "V", dec(v, 0))
	case Cost:
		return say("recommend.said.value_cost", "V", dec(v, 3))
	case Goodput:
		return say("recommend.said.value_goodput", "V", dec(v*100, 1))
	}
	return say("recommend.said.value_other", "V", Sig{V: v})
}

// figuresSaid is " (A vs B unit)" of a phrase, as a Said.
func figuresSaid(c Criterion, a, b float64) Said {
	switch c {
	case Quality:
		return say("recommend.said.figures_quality", "A", dec(a, 3), "B", dec(b, 3))
	case Speed:
		return say("recommend.said.figures_speed", "A", dec(a, 1), "B", dec(b, 1))
	case Latency:
		return say("recommend.said.figures_latency", "A", dec(a, 0), "B", dec(b, 0))
	case Goodput:
		return say("recommend.said.figures_goodput", "A", dec(a*100, 1), "B", dec(b*100, 1))
	}
	return say("recommend.said.figures_cost", "A", dec(a, 3), "B", dec(b, 3))
}

// PhraseSaid is PhraseThan as a Said; b is the other candidate's label
// (nil: not named).
func (m Margin) PhraseSaid(b any) Said {
	if !m.Measured {
		return Said{}
	}
	named := b != nil
	var fig any = ""
	if !m.Tie || !m.Relative {
		fig = figuresSaid(m.Criterion, m.A, m.B)
	}
	var how string
	switch {
	case m.Better == 0:
		how = "equal"
	case m.Criterion == Quality && m.Tie && m.Better > 0:
		how = "ns_better"
	case m.Criterion == Quality && m.Tie:
		how = "ns_worse"
	case m.Better > 0:
		how = "better"
	default:
		how = "worse"
	}
	code := phraseKey(m.Criterion, how, named)
	// Against a figure of zero there is no relative margin: the figures
	// stand for it.
	var pct any = ""
	if m.Relative {
		pct = Pct(m.Pct)
	}
	args := []any{"Pct", pct, "Figures", fig}
	if named {
		args = append(args, "B", b)
	}
	return say(code, args...)
}

// engineSaid names a configuration's engine settings: their text
// (jobs.Engine.Key, data), or the runtime's defaults when none were set.
func engineSaid(key string) any {
	if key == "" {
		return say("recommend.said.engine_defaults")
	}
	return key
}
